"""The one seam between the chat services and a text-generation engine.

`backend` talks to a :class:`TextGenerator`; only `backend.engine_adapter` knows the in-process
engine. A test can pass any object with this shape (a scripted fake), and a deployment could pass
an adapter for a remote OpenAI-compatible server instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import AsyncIterator, Protocol, Sequence, runtime_checkable

# Finish reasons, as in the OpenAI API and vLLM.
FINISH_STOP = "stop"  # end-of-turn token, EOS or a stop string
FINISH_LENGTH = "length"  # max_tokens reached (or the context window filled)
FINISH_ABORT = "abort"  # stopped by the user, the socket closed, or the server shut down
FINISH_ERROR = "error"  # the engine failed this request


@dataclass(frozen=True)
class ChatMessage:
    """One chat-template message. role: "system" | "user" | "assistant"."""

    role: str
    content: str


@dataclass(frozen=True)
class GenerationParams:
    """Sampling parameters for one reply.

    temperature 0 means greedy. top_k None disables top-k; top_p 1.0 disables top-p.
    seed None means nondeterministic. stop: strings that end the reply (not included in it).
    cache_salt: prefix-cache key; requests reuse each other's cached prompt KV only when their
    salts are equal (the chat service passes one per user). None: the generator's default.
    """

    max_tokens: int = 512
    temperature: float = 0.7
    top_p: float = 1.0
    top_k: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    cache_salt: str | None = None


@dataclass(frozen=True)
class TextDelta:
    """New reply text. Never holds a broken UTF-8 character or any part of a stop string."""

    text: str


@dataclass(frozen=True)
class GenerationDone:
    """The last event of every stream, whatever the ending.

    Times in milliseconds (monotonic clock); decode speed in tokens per second.
    `error` is a human-readable reason when finish_reason is "error".
    """

    finish_reason: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    queue_ms: float | None = None
    ttft_ms: float | None = None
    decode_tokens_per_s: float | None = None
    error: str | None = None


GenerationEvent = TextDelta | GenerationDone


class GenerationError(Exception):
    """Base of errors a generator raises *before* a stream starts (nothing was queued)."""

    code = "generation_error"


class InvalidGenerationParams(GenerationError, ValueError):
    """A sampling parameter is out of range; the message names it."""

    code = "invalid_params"


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

    def count_prompt_tokens(self, messages: Sequence[ChatMessage]) -> int:
        """Tokens of `messages` after the chat template with the generation prompt appended."""
        ...

    def stream(
        self, request_id: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> AsyncIterator[GenerationEvent]:
        """Generate a reply to `messages`.

        A plain (not async) method: it validates `params` and the prompt length at once and
        raises a :class:`GenerationError` subclass before anything is queued; the request is
        queued in the engine when this returns. The iterator yields TextDelta events,
        then exactly one GenerationDone. Closing the iterator early (``aclose()``, task
        cancellation) aborts the request in the engine and frees its KV blocks.
        """
        ...

    async def abort(self, request_id: str) -> None:
        """Abort a running or queued request; its stream then ends with finish_reason "abort".
        Unknown or finished ids are ignored."""
        ...
