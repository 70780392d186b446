"""The one seam between the chat services and a text-generation engine.

`backend` talks to a :class:`TextGenerator`; only `backend.engine_adapter` knows the in-process
engine. A test can pass any object with this shape (a scripted fake), and a deployment could pass
an adapter for a remote OpenAI-compatible server instead.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import AsyncIterator, Protocol, Sequence, runtime_checkable

from backend.output_constraint import OutputConstraint

# Finish reasons, as in the OpenAI API and vLLM.
FINISH_STOP = "stop"  # end-of-turn token, EOS or a stop string
FINISH_LENGTH = "length"  # max_tokens reached (or the context window filled)
FINISH_ABORT = "abort"  # stopped by the user, the socket closed, or the server shut down
FINISH_ERROR = "error"  # the engine failed this request
# GenerationDone.error_code values (stable, for programs; `error` is for people).
ERROR_QUEUE_TIMEOUT = "queue_timeout"  # waited in the engine's queue past its deadline


@dataclass(frozen=True)
class ToolCall:
    """A function call an assistant made. id: the caller's handle for its result ("call_...");
    arguments: a JSON object as text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolFunction:
    """A function the model may call. parameters: the JSON Schema of its arguments, as JSON text."""

    name: str
    description: str | None
    parameters: str


@dataclass(frozen=True)
class ChatMessage:
    """One chat-template message. role: "system" | "user" | "assistant" | "tool".

    tool_calls: the calls an assistant message made (its content may then be ""). A "tool"
    message is a call's result: tool_call_id names the call, name its function. How these reach
    the prompt is backend.tool_prompt's business.
    """

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class GenerationParams:
    """Sampling parameters for one reply.

    temperature 0 means greedy. top_k None disables top-k; top_p 1.0 disables top-p.
    seed None means nondeterministic. stop: strings that end the reply (not included in it).
    cache_salt: prefix-cache key; requests reuse each other's cached prompt KV only when their
    salts are equal (the chat service passes one per user). None: the generator's default.
    presence_penalty / frequency_penalty: in [-2, 2], OpenAI semantics (once per token present
    in the output so far / once per occurrence). logprobs: None for none; k in [0, 20] for the
    sampled token's logprob plus the k most likely alternatives, on every TextDelta.
    n: independent samples of one prompt in [1, 16], run by the engine as one request (shared
    prompt, one abort); events carry the sample's index; a seeded sample i uses seed + i.
    continue_final_message: the last message is an assistant reply to resume: the chat template
    is rendered with it as the open assistant turn and no generation prompt (as
    `continue_final_message=True` in transformers' apply_chat_template); the reply's text
    goes on from there. The prompt counts of count_prompt_tokens stay an upper bound.
    tools: functions the model is told it may call (rendered into the prompt; backend.tool_prompt).
    structured_output: a constraint the reply's text follows, enforced while decoding.
    """

    max_tokens: int = 512
    temperature: float = 0.7
    top_p: float = 1.0
    top_k: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    cache_salt: str | None = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    logprobs: int | None = None
    n: int = 1
    continue_final_message: bool = False
    tools: tuple[ToolFunction, ...] = ()
    structured_output: OutputConstraint | None = None


@dataclass(frozen=True)
class TokenLogprob:
    """One token's log-probability (natural log) in the model's raw distribution at its step.

    token: the token's own text (a piece of a multi-byte character reads as U+FFFD); bytes: its
    raw bytes (join them across tokens to rebuild such a character). top: the k most likely
    tokens at that step, most likely first (empty for the entries of `top` themselves).
    """

    token: str
    logprob: float
    bytes: tuple[int, ...]
    top: tuple[TokenLogprob, ...] = ()


@dataclass(frozen=True)
class TextDelta:
    """New reply text. Never holds a broken UTF-8 character or any part of a stop string.

    logprobs (only with GenerationParams.logprobs set): one entry per generated token whose
    text this delta releases, in order. A token whose text is held back (part of a character,
    a possible stop-string prefix) rides with the delta that releases it; tokens whose text is
    never emitted (end-of-turn, a stop string) carry none.
    index: the sample (GenerationParams.n) it belongs to.
    """

    text: str
    logprobs: tuple[TokenLogprob, ...] = ()
    index: int = 0


@dataclass(frozen=True)
class EngineTimeline:
    """When the engine worked on one request, in nanoseconds since the Unix epoch (converted
    from the engine's monotonic clock when the request ended; for trace spans).

    arrival_ns: queued. scheduled_ns: its first step. first_token_ns: its first token sampled.
    finished_ns: it ended. prefill_chunks: (start_ns, end_ns, prompt tokens) of each step that
    computed prompt tokens, in order.
    """

    arrival_ns: int
    scheduled_ns: int | None = None
    first_token_ns: int | None = None
    finished_ns: int | None = None
    prefill_chunks: tuple[tuple[int, int, int], ...] = ()


@dataclass(frozen=True)
class GenerationDone:
    """The last event of every sample of a stream, whatever the ending (one per index).

    Times in milliseconds (monotonic clock); decode speed in tokens per second.
    `error` is a human-readable reason when finish_reason is "error"; error_code a stable code
    for programs when there is one (ERROR_QUEUE_TIMEOUT). index: the sample it ends.
    e2e_ms: arrival to finish. tpot_ms: mean time per output token after the first (None with
    fewer than two tokens). itl_ms: the gaps between consecutive output tokens, in order.
    """

    finish_reason: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    queue_ms: float | None = None
    ttft_ms: float | None = None
    decode_tokens_per_s: float | None = None
    error: str | None = None
    e2e_ms: float | None = None
    tpot_ms: float | None = None
    itl_ms: tuple[float, ...] = ()
    index: int = 0
    error_code: str | None = None
    timeline: EngineTimeline | None = None  # for traces (backend/tracing.py)


GenerationEvent = TextDelta | GenerationDone


@dataclass(frozen=True)
class GeneratorStats:
    """A snapshot of the generator's engine (for metrics and the admin page).

    running / waiting: requests holding KV blocks / queued. kv_usage = kv_blocks_used /
    kv_blocks_total, in [0, 1]. prefix_cache_queries / hits: prompt tokens looked up in the
    prefix cache / found there. The *_total counters and preemptions count since start-up.
    kv_host_blocks_offloaded / restored / dropped: KV blocks copied into the engine's host tier
    on eviction / copied back on a prefix hit / lost from it (counters, 0 when it is off).
    """

    running: int
    waiting: int
    kv_blocks_used: int
    kv_blocks_total: int
    kv_usage: float
    prefix_cache_queries: int
    prefix_cache_hits: int
    preemptions: int
    prompt_tokens_total: int
    generation_tokens_total: int
    kv_host_blocks_offloaded: int = 0
    kv_host_blocks_restored: int = 0
    kv_host_blocks_dropped: int = 0


class GenerationError(Exception):
    """Base of errors a generator raises *before* a stream starts (nothing was queued)."""

    code = "generation_error"


class InvalidGenerationParams(GenerationError, ValueError):
    """A sampling parameter is out of range; the message names it."""

    code = "invalid_params"


class InvalidOutputConstraint(InvalidGenerationParams):
    """GenerationParams.structured_output cannot be compiled (an unsatisfiable or unsupported
    schema, a bad regular expression or grammar). param: the request field it came from."""

    code = "invalid_output_constraint"

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.param = param


class PromptTooLong(GenerationError):
    """The prompt plus max_tokens cannot fit the model's context window."""

    code = "prompt_too_long"


class GeneratorUnavailable(GenerationError):
    """The engine is not running (still loading, or stopped)."""

    code = "unavailable"


@runtime_checkable
class TextGenerator(Protocol):
    """What the chat services need from a model.

    Attributes:
        model_name: shown to users and in the API.
        context_length: the model's window in tokens (prompt + completion).
    """

    model_name: str
    context_length: int

    def count_prompt_tokens(self, messages: Sequence[ChatMessage],
                            tools: Sequence[ToolFunction] = ()) -> int:
        """Tokens of `messages` (and `tools`, as GenerationParams.tools puts them in the prompt)
        after the chat template with the generation prompt appended."""
        ...

    def stream(
        self, request_id: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> AsyncIterator[GenerationEvent]:
        """Generate a reply to `messages`.

        A plain (not async) method: it validates `params` and the prompt length at once and
        raises a :class:`GenerationError` subclass before anything is queued; the request is
        queued in the engine when this returns. The iterator yields TextDelta events and
        exactly one GenerationDone per sample (params.n of them, told apart by `index`), then
        ends. Closing the iterator early (``aclose()``, task
        cancellation) aborts the request in the engine and frees its KV blocks.
        """
        ...

    def stream_prompt(
        self, request_id: str, prompt: str, params: GenerationParams
    ) -> AsyncIterator[GenerationEvent]:
        """Like :meth:`stream`, for a raw text prompt (no chat template; /v1/completions).

        Special-token text in `prompt` (e.g. "<|im_start|>") is parsed as those tokens: the
        caller owns the whole prompt. Raises as :meth:`stream` (an empty prompt is
        InvalidGenerationParams).
        """
        ...

    def count_text_tokens(self, text: str) -> int:
        """Tokens of `text` as :meth:`stream_prompt` would encode it."""
        ...

    def stats(self) -> GeneratorStats | None:
        """The engine's live statistics, or None when the generator has none to give."""
        ...

    async def abort(self, request_id: str) -> None:
        """Abort a running or queued request; its stream then ends with finish_reason "abort".
        Unknown or finished ids are ignored."""
        ...


def count_text(generator: TextGenerator, text: str) -> int:
    """`text`'s tokens by `generator.count_text_tokens`, or its whitespace-separated words when
    the generator cannot count (for accounting a reply or a step cut before its final event, and
    for reserving room: never raises). Blocking (it tokenizes): call it off the event loop."""
    if not text:
        return 0
    try:
        return int(generator.count_text_tokens(text))
    except Exception:
        return len(text.split())


async def prepare(generator: TextGenerator, params: GenerationParams) -> None:
    """Build what `params` need before stream() queues them (an output constraint's grammar:
    milliseconds to seconds), in a worker thread, so the event loop never waits on it: the
    generator's optional `prepare(params)` (backend.engine_adapter's), a no-op for generators
    without one. Raises what that raises (InvalidOutputConstraint, InvalidGenerationParams)."""
    method = getattr(generator, "prepare", None)
    if method is not None and params.structured_output is not None:
        await asyncio.to_thread(method, params)
