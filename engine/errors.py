"""Typed errors raised by the engine.

Every error the engine raises on purpose derives from `EngineError`, so callers (the backend
adapter) can map the whole family in one place. Classes are added here append-only.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""


class ModelLoadError(EngineError):
    """The model (weights, config, tokenizer or chat template) could not be loaded.

    The message names the path and what was wrong with it (missing file, not a GGUF file,
    unsupported architecture or tensor type, missing tensor...).
    """


class ChatTemplateError(EngineError):
    """The chat template could not be rendered for these messages.

    Raised for malformed messages and for `raise_exception(...)` calls inside the template
    (for example a template that rejects a conversation not alternating user/assistant).
    """


# --- runtime half (requests, scheduling, serving) ---


class InvalidSamplingParamsError(EngineError, ValueError):
    """A sampling parameter is out of range or of the wrong type; the message names the field.

    Raised by `SamplingParams.validate` before the request is queued.
    """


class InvalidStructuredOutputError(InvalidSamplingParamsError):
    """SamplingParams.structured_output is malformed or cannot be compiled: not exactly one
    constraint set, a schema that is not JSON or is unsatisfiable, a bad regular expression or
    grammar, a tool with a malformed argument schema. The message names the field
    ("structured_output.json", "structured_output.tool_calls.functions[1]", ...) and the
    compiler's reason.

    Raised by `LLMEngine.add_request` (and so `AsyncLLMEngine.add_request`) before anything is
    queued.
    """


class InvalidPromptError(EngineError, ValueError):
    """The prompt is empty, or holds token ids outside the vocabulary."""


class PromptTooLongError(EngineError, ValueError):
    """The prompt plus max_tokens cannot fit the engine's window (max_model_len) or the KV
    pool; the message gives the numbers.

    Raised before the request takes any KV block.
    """


class DuplicateRequestError(EngineError, ValueError):
    """A request with this id is already queued or running."""


class EngineNotRunningError(EngineError):
    """The async engine's step loop is not running (not started yet, or shut down)."""


class EngineConfigError(EngineError, ValueError):
    """An EngineConfig value is out of range (block size, pool size, batch limits...)."""


class QueueTimeoutError(EngineError):
    """A request waited in the queue longer than EngineConfig.queue_timeout_s.

    Not raised: the request's last event has finish_reason "error", error_code
    QueueTimeoutError.code ("queue_timeout") and error=str(this) for people.
    """

    code = "queue_timeout"

    def __init__(self, waited_s: float, limit_s: float) -> None:
        super().__init__(f"{self.code}: waited {waited_s:.3f} s in the queue, "
                         f"longer than queue_timeout_s={limit_s}")
