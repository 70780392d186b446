"""The one backend module that knows the in-process engine: a TextGenerator over AsyncLLMEngine.

Maps backend.generator's GenerationParams to engine SamplingParams, the engine's typed errors to
backend.generator errors, and engine RequestOutput events to TextDelta / GenerationDone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence

from backend.generator import (ChatMessage, GenerationDone, GenerationError, GenerationEvent,
                               GenerationParams, GeneratorUnavailable, InvalidGenerationParams,
                               PromptTooLong, TextDelta)
from engine import (AsyncLLMEngine, ChatTemplateError, EngineConfig, EngineError,
                    EngineNotRunningError, InvalidSamplingParamsError, LLMEngine, ModelLoadError,
                    PromptTooLongError, RequestOutput, SamplingParams, encode_conversation)


def to_sampling_params(params: GenerationParams) -> SamplingParams:
    """Field for field; `stop` becomes a list (cache_salt goes to add_request instead).
    Range checks are the engine's."""
    return SamplingParams(max_tokens=params.max_tokens, temperature=params.temperature,
                          top_p=params.top_p, top_k=params.top_k, seed=params.seed,
                          stop=list(params.stop))


class EngineTextGenerator:
    """backend.generator.TextGenerator over the in-process AsyncLLMEngine.

    model_name: the model's name. context_length: the engine's window (max_model_len), tokens.
    Call start() before streaming and shutdown() at exit.
    """

    def __init__(self, engine: AsyncLLMEngine) -> None:
        self._engine = engine
        self.model_name: str = engine.engine.model_name
        self.context_length: int = engine.engine.max_model_len

    def start(self) -> None:
        self._engine.start()

    def shutdown(self) -> None:
        """Abort every stream (each ends with finish_reason "abort") and stop the step loop."""
        self._engine.shutdown()

    def _prompt_ids(self, messages: Sequence[ChatMessage]) -> list[int]:
        llm = self._engine.engine
        try:
            # Contents are tokenized literally: text a user typed is data, never control.
            return encode_conversation(
                llm.chat_template, llm.tokenizer,
                [{"role": m.role, "content": m.content} for m in messages], add_generation_prompt=True)
        except ChatTemplateError as exc:
            raise GenerationError(f"cannot render the chat template: {exc}") from exc

    def count_prompt_tokens(self, messages: Sequence[ChatMessage]) -> int:
        """Tokens of `messages` after the chat template, generation prompt included."""
        return len(self._prompt_ids(messages))

    def stream(self, request_id: str, messages: Sequence[ChatMessage],
               params: GenerationParams) -> AsyncIterator[GenerationEvent]:
        """Validate and queue at once (raising InvalidGenerationParams, PromptTooLong,
        GeneratorUnavailable or GenerationError); returns the event stream. Call from a running
        event loop. Closing the stream early aborts the request."""
        if not self._engine.is_running:
            raise GeneratorUnavailable("the engine is not running")
        prompt_ids = self._prompt_ids(messages)
        try:
            events = self._engine.add_request(request_id, prompt_ids, to_sampling_params(params),
                                              cache_salt=params.cache_salt)
        except InvalidSamplingParamsError as exc:
            raise InvalidGenerationParams(str(exc)) from exc
        except PromptTooLongError as exc:
            raise PromptTooLong(str(exc)) from exc
        except EngineNotRunningError as exc:
            raise GeneratorUnavailable(str(exc)) from exc
        except EngineError as exc:  # duplicate request id, empty prompt
            raise GenerationError(str(exc)) from exc
        return _GenerationStream(events)

    async def abort(self, request_id: str) -> None:
        self._engine.abort(request_id)


class _GenerationStream:
    """RequestOutput events -> TextDelta (non-empty deltas) then one GenerationDone.

    aclose() (and cancellation, and dropping it) reach the engine stream, which aborts.
    """

    def __init__(self, events: AsyncIterator[RequestOutput]) -> None:
        self._events = events
        self._pending: list[GenerationEvent] = []
        self._done = False

    def __aiter__(self) -> _GenerationStream:
        return self

    async def __anext__(self) -> GenerationEvent:
        while not self._pending:
            if self._done:
                raise StopAsyncIteration
            out = await self._events.__anext__()
            if out.delta:
                self._pending.append(TextDelta(out.delta))
            if out.finished:
                self._done = True
                self._pending.append(_done_event(out))
        return self._pending.pop(0)

    async def aclose(self) -> None:
        self._done = True
        self._pending.clear()
        await self._events.aclose()


def _done_event(out: RequestOutput) -> GenerationDone:
    m = out.metrics
    return GenerationDone(finish_reason=out.finish_reason or "error",
                          prompt_tokens=out.num_prompt_tokens,
                          completion_tokens=out.num_output_tokens, queue_ms=m.queue_ms,
                          ttft_ms=m.ttft_ms, decode_tokens_per_s=m.decode_tokens_per_s,
                          error=out.error)


# The server's engine settings where they differ from EngineConfig's. On CPU one forward pass
# over 2,048 prompt tokens takes seconds, and every decoding user waits for it: a smaller step
# budget and prefill chunk keep their inter-token latency near a fraction of a second while a
# long prompt prefills. A request queued for five minutes ends with a typed error.
SERVER_ENGINE_DEFAULTS = {
    "max_num_batched_tokens": 512,
    "long_prefill_token_threshold": 256,
    "queue_timeout_s": 300.0,
}


def create_generator(model_path: str | None, progress: Callable[[str, float], None] | None = None,
                     **engine_options) -> EngineTextGenerator:
    """Load the model (None: the packaged SmolLM2 GGUF) and build a generator, not yet started.

    progress(message, fraction) is called while loading. engine_options are EngineConfig
    fields (num_kv_blocks, max_num_seqs...). Raises GeneratorUnavailable if the model cannot
    be loaded.
    """
    try:
        config = EngineConfig(model=model_path, **{**SERVER_ENGINE_DEFAULTS, **engine_options})
        llm = LLMEngine.from_config(config, progress)
    except ModelLoadError as exc:
        raise GeneratorUnavailable(f"cannot load the model: {exc}") from exc
    return EngineTextGenerator(AsyncLLMEngine(llm))
