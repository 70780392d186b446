"""The one backend module that knows the in-process engine: a TextGenerator over AsyncLLMEngine.

Maps backend.generator's GenerationParams to engine SamplingParams, the engine's typed errors to
backend.generator errors, and engine RequestOutput events to TextDelta / GenerationDone.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Protocol

from backend.generator import (ChatMessage, EngineTimeline, GenerationDone, GenerationError, GenerationEvent,
                               GenerationParams, GeneratorStats, GeneratorUnavailable,
                               InvalidGenerationParams, InvalidOutputConstraint, PromptTooLong,
                               TextDelta, TokenLogprob, ToolFunction)
from backend.output_constraint import OutputConstraint, constraint_param
from backend.tool_prompt import plain_messages, template_inputs
from engine import (AsyncLLMEngine, ChatTemplateError, EngineConfig, EngineError,
                    EngineNotRunningError, EngineStats, InvalidPromptError,
                    InvalidSamplingParamsError, InvalidStructuredOutputError, LLMEngine, Logprob,
                    ModelLoadError, PromptTooLongError, RequestMetrics, RequestOutput,
                    SamplingParams, StructuredOutputParams, TokenLogprobs, ToolCallGrammar,
                    encode_conversation)


class Tokenizer(Protocol):
    """What logprob conversion needs of engine.tokenizer.Tokenizer."""

    stop_token_ids: frozenset[int]

    def token_bytes(self, token_id: int) -> bytes: ...


def to_sampling_params(params: GenerationParams) -> SamplingParams:
    """Field for field; `stop` becomes a list (cache_salt goes to add_request instead; tools
    went into the prompt). Range checks are the engine's."""
    extra = {}
    if params.structured_output is not None:
        extra["structured_output"] = to_structured_output(params.structured_output)
    return SamplingParams(max_tokens=params.max_tokens, temperature=params.temperature,
                          top_p=params.top_p, top_k=params.top_k, seed=params.seed,
                          stop=list(params.stop), presence_penalty=params.presence_penalty,
                          frequency_penalty=params.frequency_penalty, logprobs=params.logprobs,
                          n=params.n, **extra)


def to_structured_output(constraint: OutputConstraint) -> StructuredOutputParams:
    """backend OutputConstraint -> engine StructuredOutputParams, field for field."""
    tools = constraint.tool_calls
    return StructuredOutputParams(
        json=constraint.json, json_object=constraint.json_object, regex=constraint.regex,
        choice=constraint.choice, grammar=constraint.grammar,
        tool_calls=None if tools is None else ToolCallGrammar(
            begin=tools.begin, end=tools.end, functions=tools.functions, required=tools.required,
            parallel=tools.parallel))


def _params_error(params: GenerationParams, exc: InvalidSamplingParamsError) -> InvalidGenerationParams:
    """The engine's refusal of `params` as the backend's error (a constraint's names its parameter)."""
    if params.structured_output is not None and isinstance(exc, InvalidStructuredOutputError):
        param = constraint_param(params.structured_output, str(exc))
        return InvalidOutputConstraint(f"{param}: {exc}", param)
    return InvalidGenerationParams(str(exc))


def to_generator_stats(stats: EngineStats) -> GeneratorStats:
    return GeneratorStats(
        running=stats.num_running, waiting=stats.num_waiting,
        kv_blocks_used=stats.num_kv_blocks_used, kv_blocks_total=stats.num_kv_blocks_total,
        kv_usage=stats.kv_cache_usage, prefix_cache_queries=stats.prefix_cache_queries,
        prefix_cache_hits=stats.prefix_cache_hits, preemptions=stats.num_preemptions,
        prompt_tokens_total=stats.num_prompt_tokens,
        generation_tokens_total=stats.num_generation_tokens,
        kv_host_blocks_offloaded=stats.num_kv_host_blocks_offloaded,
        kv_host_blocks_restored=stats.num_kv_host_blocks_restored,
        kv_host_blocks_dropped=stats.num_kv_host_blocks_dropped)


class EngineTextGenerator:
    """backend.generator.TextGenerator over the in-process AsyncLLMEngine.

    model_name: the model's name. context_length: the engine's window (max_model_len), tokens.
    Call start() before streaming and shutdown() at exit.
    """

    # Prompts just counted (in a worker thread, by count_prompt_tokens) and about to be streamed
    # (on the event loop): their ids are kept so that stream() does not render and tokenize the
    # conversation again on the loop. Keyed by the frozen messages and tools themselves.
    RECENT_PROMPTS = 32

    def __init__(self, engine: AsyncLLMEngine) -> None:
        self._engine = engine
        self.model_name: str = engine.engine.model_name
        self.context_length: int = engine.engine.max_model_len
        self._recent: OrderedDict[tuple[Any, ...], list[int]] = OrderedDict()
        self._recent_lock = threading.Lock()

    def start(self) -> None:
        self._engine.start()

    def shutdown(self) -> None:
        """Abort every stream (each ends with finish_reason "abort") and stop the step loop."""
        self._engine.shutdown()

    def _prompt_ids(self, messages: Sequence[ChatMessage], tools: Sequence[ToolFunction] = (),
                    continue_final_message: bool = False) -> list[int]:
        """The conversation's prompt ids, from the recent-prompt memo when counted just before."""
        key = (tuple(messages), tuple(tools), continue_final_message)
        with self._recent_lock:
            ids = self._recent.get(key)
            if ids is not None:
                self._recent.move_to_end(key)
                return list(ids)
        ids = self._render_prompt(messages, tools, continue_final_message)
        with self._recent_lock:
            self._recent[key] = ids
            while len(self._recent) > self.RECENT_PROMPTS:
                self._recent.popitem(last=False)
        return list(ids)

    def _render_prompt(self, messages: Sequence[ChatMessage], tools: Sequence[ToolFunction],
                       continue_final_message: bool) -> list[int]:
        llm = self._engine.engine
        template = llm.chat_template
        # Tools, tool calls and tool results: through the template when it takes `tools`, else
        # written as text (backend.tool_prompt).
        if getattr(template, "takes_tools", False):
            chat, definitions = template_inputs(messages, tools)
        else:
            chat = [{"role": m.role, "content": m.content} for m in plain_messages(messages, tools)]
            definitions = None
        try:
            # Contents are tokenized literally: text a user typed is data, never control.
            return encode_conversation(
                template, llm.tokenizer, chat, add_generation_prompt=not continue_final_message,
                continue_final_message=continue_final_message, tools=definitions)
        except ChatTemplateError as exc:
            raise GenerationError(f"cannot render the chat template: {exc}") from exc

    def count_prompt_tokens(self, messages: Sequence[ChatMessage], tools: Sequence[ToolFunction] = ()) -> int:
        """Tokens of `messages` and `tools` after the chat template, generation prompt included."""
        return len(self._prompt_ids(messages, tools))

    def count_text_tokens(self, text: str) -> int:
        """Tokens of `text` as stream_prompt encodes it (special-token text parsed, BOS added
        where the model's tokenizer asks for it)."""
        return len(self._raw_prompt_ids(text))

    def _raw_prompt_ids(self, text: str) -> list[int]:
        # A raw prompt starts with BOS where the tokenizer's metadata says add_bos_token, as in
        # llama.cpp and vLLM, and never with two (Tokenizer.encode).
        return self._engine.engine.tokenizer.encode(text, add_special_tokens=True)

    def stream(self, request_id: str, messages: Sequence[ChatMessage],
               params: GenerationParams) -> AsyncIterator[GenerationEvent]:
        """Validate and queue at once (raising InvalidGenerationParams, PromptTooLong,
        GeneratorUnavailable or GenerationError); returns the event stream. Call from a running
        event loop. Closing the stream early aborts the request."""
        if not self._engine.is_running:
            raise GeneratorUnavailable("the engine is not running")
        return self._queue(request_id, self._prompt_ids(messages, params.tools, params.continue_final_message),
                           params)

    def stream_prompt(self, request_id: str, prompt: str,
                      params: GenerationParams) -> AsyncIterator[GenerationEvent]:
        """As stream(), for a raw text prompt; special-token text in it becomes special tokens,
        and BOS goes first where the model's tokenizer says add_bos_token."""
        if not self._engine.is_running:
            raise GeneratorUnavailable("the engine is not running")
        if not isinstance(prompt, str) or not prompt:
            raise InvalidGenerationParams("prompt must be a non-empty string")
        return self._queue(request_id, self._raw_prompt_ids(prompt), params)

    def prepare(self, params: GenerationParams) -> None:
        """Compile what `params` need before it is queued (its output constraint), so that
        stream() on the event loop finds it cached: call it from a worker thread (thread-safe;
        a new grammar takes milliseconds to seconds to build). Raises InvalidOutputConstraint
        (naming the request parameter) or InvalidGenerationParams; nothing is queued."""
        if params.structured_output is None:
            return
        try:
            self._engine.engine.grammar_compiler.matcher(to_structured_output(params.structured_output))
        except InvalidSamplingParamsError as exc:
            raise _params_error(params, exc) from exc

    def _queue(self, request_id: str, prompt: str | list[int],
               params: GenerationParams) -> AsyncIterator[GenerationEvent]:
        try:
            events = self._engine.add_request(request_id, prompt, to_sampling_params(params),
                                              cache_salt=params.cache_salt)
        except InvalidSamplingParamsError as exc:
            raise _params_error(params, exc) from exc
        except PromptTooLongError as exc:
            raise PromptTooLong(str(exc)) from exc
        except InvalidPromptError as exc:
            raise InvalidGenerationParams(str(exc)) from exc
        except EngineNotRunningError as exc:
            raise GeneratorUnavailable(str(exc)) from exc
        except EngineError as exc:  # duplicate request id
            raise GenerationError(str(exc)) from exc
        return _GenerationStream(events, self._engine.engine.tokenizer, params.n)

    def stats(self) -> GeneratorStats:
        """The engine's statistics as of its last step (thread-safe)."""
        return to_generator_stats(self._engine.stats())

    async def abort(self, request_id: str) -> None:
        self._engine.abort(request_id)


class _GenerationStream:
    """RequestOutput events -> TextDelta (non-empty deltas) and one GenerationDone per sample,
    each carrying its sample's index; the stream ends after the n-th GenerationDone.

    Logprobs of tokens whose text the detokenizer held back wait (per sample) for the delta that
    releases it; those of end-of-turn tokens (no text) are dropped. aclose() (and cancellation,
    and dropping it) reach the engine stream, which aborts every sample.
    """

    def __init__(self, events: AsyncIterator[RequestOutput], tokenizer: Tokenizer, n: int = 1) -> None:
        self._events = events
        self._tokenizer = tokenizer
        self._pending: list[GenerationEvent] = []
        self._held_logprobs: dict[int, list[TokenLogprob]] = {}
        self._unfinished = n

    def __aiter__(self) -> _GenerationStream:
        return self

    async def __anext__(self) -> GenerationEvent:
        while not self._pending:
            if self._unfinished <= 0:
                raise StopAsyncIteration
            out = await self._events.__anext__()
            held = self._held_logprobs.setdefault(out.index, [])
            held += self._logprobs_of(out)
            if out.delta:
                self._pending.append(TextDelta(out.delta, tuple(held), index=out.index))
                held.clear()
            if out.finished:
                self._unfinished -= 1
                self._pending.append(_done_event(out))
        return self._pending.pop(0)

    def _logprobs_of(self, out: RequestOutput) -> list[TokenLogprob]:
        if not out.logprobs:
            return []
        stop_ids = self._tokenizer.stop_token_ids
        return [to_token_logprob(lp, self._tokenizer) for lp in out.logprobs
                if lp.sampled.token_id not in stop_ids]

    async def aclose(self) -> None:
        self._unfinished = 0
        self._pending.clear()
        await self._events.aclose()


def to_token_logprob(entry: TokenLogprobs | Logprob, tokenizer: Tokenizer) -> TokenLogprob:
    """Engine logprobs (a generated token with its top alternatives, or one alternative) ->
    backend TokenLogprob with the token's raw bytes."""
    if isinstance(entry, TokenLogprobs):
        top = tuple(to_token_logprob(t, tokenizer) for t in entry.top)
        return dataclasses.replace(to_token_logprob(entry.sampled, tokenizer), top=top)
    return TokenLogprob(token=entry.token, logprob=entry.logprob,
                        bytes=tuple(tokenizer.token_bytes(entry.token_id)))


def timings(m: RequestMetrics) -> dict[str, float | tuple[float, ...] | None]:
    """GenerationDone's timing fields from one request's engine metrics (milliseconds)."""
    times = m.token_times
    itl = tuple((b - a) * 1000.0 for a, b in zip(times, times[1:]))
    return {
        "queue_ms": m.queue_ms, "ttft_ms": m.ttft_ms, "decode_tokens_per_s": m.decode_tokens_per_s,
        "e2e_ms": None if m.finished_time is None else (m.finished_time - m.arrival_time) * 1000.0,
        "tpot_ms": (times[-1] - times[0]) * 1000.0 / (len(times) - 1) if len(times) > 1 else None,
        "itl_ms": itl,
    }


def to_timeline(m: RequestMetrics) -> EngineTimeline:
    """The engine's monotonic timestamps (s) as nanoseconds since the Unix epoch, by the offset
    between the two clocks now."""
    offset = time.time_ns() - time.monotonic_ns()

    def ns(t: float) -> int:
        return int(t * 1e9) + offset

    def opt(t: float | None) -> int | None:
        return None if t is None else ns(t)

    return EngineTimeline(arrival_ns=ns(m.arrival_time), scheduled_ns=opt(m.first_scheduled_time),
                          first_token_ns=opt(m.first_token_time), finished_ns=opt(m.finished_time),
                          prefill_chunks=tuple((ns(a), ns(b), n) for a, b, n in m.prefill_chunks))


def _done_event(out: RequestOutput) -> GenerationDone:
    return GenerationDone(finish_reason=out.finish_reason or "error",
                          prompt_tokens=out.num_prompt_tokens,
                          completion_tokens=out.num_output_tokens, error=out.error,
                          error_code=out.error_code, index=out.index, timeline=to_timeline(out.metrics),
                          **timings(out.metrics))


# The server's engine settings where they differ from EngineConfig's. On CPU one forward pass
# over 2,048 prompt tokens takes seconds, and every decoding user waits for it. Measured on the
# project's 2-core machines with the CPU fast path (the default): a decode step of a few streams
# takes ~10 ms and each prompt token added to it ~1.3 ms, so while anyone is decoding a step
# takes at most 16 prompt tokens (ITL within ~3x of its median; the float32 path's ~60 ms steps
# would afford ~48); a prompt that runs alone takes 512-token steps (fast TTFT).
# A request queued for five minutes ends with a typed error.
SERVER_ENGINE_DEFAULTS = {
    "max_num_batched_tokens": 512,
    "max_prefill_tokens_during_decode": 16,
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
