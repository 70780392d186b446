"""Crescent's inference engine: paged KV cache, continuous batching, streaming.

Public API: LLMEngine (synchronous, step by step), AsyncLLMEngine (step loop on a background
thread, asyncio streams), EngineConfig, SamplingParams, RequestOutput, RequestMetrics,
load_model, default_model_path, StructuredOutputParams and ToolCallGrammar
(SamplingParams.structured_output), and the typed errors (all derive from EngineError).
"""

from __future__ import annotations

from engine.async_engine import AsyncLLMEngine
from engine.chat_template import encode_conversation
from engine.config import EngineConfig
from engine.errors import (ChatTemplateError, DuplicateRequestError, EngineConfigError, EngineError,
                           EngineNotRunningError, InvalidPromptError, InvalidSamplingParamsError,
                           InvalidStructuredOutputError, ModelLoadError, PromptTooLongError,
                           QueueTimeoutError)
from engine.llm_engine import LLMEngine
from engine.loader import default_model_path, load_model
from engine.outputs import Logprob, RequestMetrics, RequestOutput, TokenLogprobs
from engine.sampling_params import SamplingParams
from engine.stats import EngineStats
from engine.structured_output import StructuredOutputParams, ToolCallGrammar

__all__ = [
    "AsyncLLMEngine", "ChatTemplateError", "DuplicateRequestError", "EngineConfig",
    "EngineConfigError", "EngineError", "EngineNotRunningError", "InvalidPromptError",
    "InvalidSamplingParamsError", "LLMEngine", "ModelLoadError", "PromptTooLongError",
    "RequestMetrics", "RequestOutput", "SamplingParams", "default_model_path", "load_model",
    "EngineStats", "QueueTimeoutError", "encode_conversation",
    "Logprob", "TokenLogprobs",
    "InvalidStructuredOutputError", "StructuredOutputParams", "ToolCallGrammar",
]
