"""The synchronous engine: requests in, one continuous-batching step at a time, events out."""

from __future__ import annotations

import dataclasses
import itertools
import logging
import threading
import time
from collections.abc import Sequence as SequenceABC

import torch

from engine.block_manager import BlockManager
from engine.config import EngineConfig
from engine.detokenizer import IncrementalDetokenizer
from engine.errors import (DuplicateRequestError, EngineConfigError, InvalidPromptError,
                           InvalidSamplingParamsError, PromptTooLongError, QueueTimeoutError)
from engine.kv_host_tier import KVHostTier
from engine.loader import LoadedModel, load_model
from engine.model_runner import ModelRunner, determine_num_kv_blocks, kv_block_bytes
from engine.outputs import Logprob, RequestMetrics, RequestOutput, TokenLogprobs
from engine.sampler import SamplerOutput, SamplingMetadata, sample
from engine.sampling_params import SamplingParams
from engine.scheduler import ScheduledSequence, Scheduler
from engine.sequence import Sequence, SequenceStatus
from engine.stats import EngineStats
from engine.structured_output.compiler import GrammarCompiler
from engine.structured_output.decoding import advance, allowed_tokens, is_complete

logger = logging.getLogger(__name__)


class LLMEngine:
    """Paged-KV engine with continuous batching, driven by `step()` from one thread.

    `add_request` and `abort_request` may be called from any thread: they only touch an inbox
    under a lock, which `step()` drains at the step boundary. `step()` then: applies aborts,
    schedules (decodes first, then prefill chunks, within max_num_seqs, the token budget and the
    free KV blocks), builds the inputs on the host, runs one forward pass, samples, detokenizes,
    and frees the blocks of every request that finished.
    """

    def __init__(self, loaded: LoadedModel, config: EngineConfig | None = None) -> None:
        self.config = config = config or EngineConfig()
        self.model_config = loaded.config
        self.tokenizer = loaded.tokenizer
        self.chat_template = loaded.chat_template
        self.model_name = loaded.model_name
        param = next(loaded.model.parameters())
        self.device = param.device
        num_blocks = determine_num_kv_blocks(config, self.model_config, param.dtype, self.device)
        self.max_model_len = _resolve_max_model_len(
            config, self.model_config.max_position_embeddings, num_blocks,
            kv_block_bytes(self.model_config, config.block_size, param.dtype))
        self.kv_host_tier = KVHostTier.from_config(config, self.model_config, param.dtype, self.device)
        self.block_manager = BlockManager(num_blocks, config.block_size,
                                          enable_prefix_caching=config.enable_prefix_caching,
                                          host_tier=self.kv_host_tier)
        self.scheduler = Scheduler(self.block_manager, config.max_num_seqs,
                                   config.max_num_batched_tokens,
                                   long_prefill_token_threshold=config.long_prefill_token_threshold,
                                   max_prefill_tokens_during_decode=config.max_prefill_tokens_during_decode)
        self._num_prompt_tokens = 0
        self._num_generation_tokens = 0
        self._num_steps = 0
        self.model_runner = ModelRunner(loaded.model, self.model_config, num_blocks,
                                        config.block_size, self.device, param.dtype,
                                        max_num_seqs=config.max_num_seqs, host_tier=self.kv_host_tier)
        logger.info("engine: %s, max_model_len %d, max_num_seqs %d, max_num_batched_tokens %d",
                    self.model_name, self.max_model_len, config.max_num_seqs,
                    config.max_num_batched_tokens)
        # Reentrant: an abandoned stream's __del__ may call abort_request from any thread,
        # including this one while it holds the lock.
        self._lock = threading.RLock()
        self._live: dict[str, Sequence] = {}   # every unfinished request, inbox included
        self._inbox: list[Sequence] = []
        self._abort_ids: list[str] = []
        self._groups: dict[str, set[str]] = {}  # request id -> its unfinished samples' ids (n > 1)
        self._ids = itertools.count()
        self._stats = self._snapshot_stats()
        # SamplingParams.structured_output: compiled on add_request's thread, cached.
        self.grammar_compiler = GrammarCompiler(self.tokenizer, self.model_config.vocab_size)

    @classmethod
    def from_config(cls, config: EngineConfig, progress=None) -> LLMEngine:
        """Load the model named by `config` (ModelLoadError on failure) and build an engine.

        progress(message, fraction) is called while loading.
        """
        dtype = getattr(torch, config.dtype) if config.dtype else None
        loaded = load_model(config.model, device=config.device, dtype=dtype, progress=progress,
                            quantization=config.quantization)
        return cls(loaded, config)

    # -- requests --------------------------------------------------------------------------

    def add_request(self, request_id: str, prompt: str | list[int],
                    params: SamplingParams | None = None, *, cache_salt: str | None = None) -> None:
        """Queue a request. `prompt` is text (special tokens in it are parsed) or token ids.

        cache_salt: an extra prefix-cache key (e.g. per user): requests reuse each other's
        cached KV blocks only when their salts are equal (None is a salt of its own).

        Raises, before anything is queued: InvalidSamplingParamsError, InvalidStructuredOutputError
        (its subclass: params.structured_output is malformed or cannot be compiled; compiling
        a new constraint takes milliseconds to seconds, on this thread; repeats are cached),
        InvalidPromptError (empty, or ids outside the vocabulary, or a cache_salt that is not a
        str), PromptTooLongError (prompt + max_tokens exceeds max_model_len),
        DuplicateRequestError.
        """
        arrival = time.monotonic()
        if cache_salt is not None and not isinstance(cache_salt, str):
            raise InvalidPromptError(f"cache_salt must be a str or None, got {type(cache_salt).__name__}")
        seq = self._make_sequence(request_id, prompt, params or SamplingParams(), arrival)
        seq.cache_salt = cache_salt
        seqs = [seq] if seq.params.n == 1 else [self._make_sample(seq, i) for i in range(seq.params.n)]
        if len(seqs) > 1:
            seq.grammar = None  # each sample has its own matcher
        with self._lock:
            for rid in {request_id} | {s.request_id for s in seqs}:
                if rid in self._live or rid in self._groups:
                    raise DuplicateRequestError(f"request id {rid!r} is already in use")
            for s in seqs:
                self._live[s.request_id] = s
            if seq.params.n > 1:
                self._groups[request_id] = {s.request_id for s in seqs}
            self._inbox.extend(seqs)

    def _make_sequence(self, request_id: str, prompt: str | list[int], params: SamplingParams,
                       arrival: float) -> Sequence:
        if not isinstance(request_id, str) or not request_id:
            raise InvalidPromptError(f"request_id must be a non-empty string, got {request_id!r}")
        if not isinstance(params, SamplingParams):
            raise InvalidSamplingParamsError(f"params must be SamplingParams, got {type(params).__name__}")
        params.validate(self.tokenizer.vocab_size)
        # A private copy, so the caller mutating its params later cannot change the request.
        params = dataclasses.replace(params, stop=list(params.stop),
                                     stop_token_ids=list(params.stop_token_ids),
                                     logit_bias=dict(params.logit_bias))
        prompt_ids = self._prompt_token_ids(prompt)
        if len(prompt_ids) + params.max_tokens > self.max_model_len:
            raise PromptTooLongError(
                f"prompt has {len(prompt_ids)} tokens; with max_tokens={params.max_tokens} that is "
                f"{len(prompt_ids) + params.max_tokens}, more than the window of "
                f"{self.max_model_len} tokens (max_model_len)")
        stop_ids = frozenset(params.stop_token_ids)
        if not params.ignore_eos:
            stop_ids |= self.tokenizer.stop_token_ids
        generator = None
        if params.seed is not None and not params.is_greedy:
            generator = torch.Generator(device=self.device).manual_seed(params.seed)
        grammar = None
        if params.structured_output is not None:
            grammar = self.grammar_compiler.matcher(params.structured_output)
        return Sequence(
            request_id=request_id, prompt_token_ids=prompt_ids, params=params,
            stop_token_ids=stop_ids,
            detokenizer=IncrementalDetokenizer(self.tokenizer, params.stop, params.min_tokens),
            metrics=RequestMetrics(arrival_time=arrival), generator=generator, grammar=grammar)

    def _make_sample(self, seq: Sequence, index: int) -> Sequence:
        """Sample `index` of a request with n > 1: its own Sequence "{request_id}#{index}" with
        n = 1 and, when seeded, seed + index (so the samples differ), reported under the
        request's id (vLLM v1's fan-out of parallel sampling). The samples share the prompt's
        full KV blocks through the prefix cache: the scheduler admits the others once the
        first has written them (with prefix caching off, each computes its own)."""
        params = dataclasses.replace(
            seq.params, n=1, seed=None if seq.params.seed is None else seq.params.seed + index)
        child = self._make_sequence(f"{seq.request_id}#{index}", seq.prompt_token_ids, params,
                                    seq.metrics.arrival_time)
        child.cache_salt = seq.cache_salt
        child.parent_request_id = seq.request_id
        child.sample_index = index
        return child

    def _prompt_token_ids(self, prompt: str | list[int]) -> list[int]:
        if isinstance(prompt, str):
            ids = self.tokenizer.encode(prompt)
        elif isinstance(prompt, (list, tuple)):
            ids = list(prompt)
            vocab = self.tokenizer.vocab_size
            if not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < vocab for t in ids):
                raise InvalidPromptError(f"prompt token ids must be ints in [0, {vocab})")
        else:
            raise InvalidPromptError(f"prompt must be a str or a list of token ids, got {type(prompt).__name__}")
        if not ids:
            raise InvalidPromptError("prompt is empty")
        return ids

    def abort_request(self, request_id: str) -> None:
        """Abort at the next step boundary (queued, prefilling or decoding); the request's last
        event then has finish_reason "abort" and its blocks return to the pool. Unknown or
        finished ids are ignored."""
        with self._lock:
            if request_id in self._live:
                self._abort_ids.append(request_id)
            self._abort_ids.extend(self._groups.get(request_id, ()))  # every sample of it

    def abort_all_requests(self) -> None:
        """Abort every unfinished request at the next step boundary."""
        with self._lock:
            self._abort_ids.extend(self._live)

    def has_unfinished_requests(self) -> bool:
        with self._lock:
            return bool(self._live)

    def num_free_blocks(self) -> int:
        return self.block_manager.num_free_blocks

    # -- the step --------------------------------------------------------------------------

    def stats(self) -> EngineStats:
        """Live statistics as of the last step boundary (requests added since count as
        waiting). Thread-safe: the async front calls it from the event loop."""
        with self._lock:
            return dataclasses.replace(self._stats, num_waiting=self._stats.num_waiting + len(self._inbox))

    def _snapshot_stats(self) -> EngineStats:
        bm = self.block_manager
        return EngineStats(
            num_running=len(self.scheduler.running), num_waiting=len(self.scheduler.waiting),
            num_kv_blocks_used=bm.num_used_blocks, num_kv_blocks_cached=bm.num_cached_blocks,
            num_kv_blocks_free=bm.num_uncached_free_blocks, num_kv_blocks_total=bm.num_blocks,
            prefix_cache_queries=bm.prefix_cache_queries, prefix_cache_hits=bm.prefix_cache_hits,
            num_preemptions=self.scheduler.num_preemptions,
            num_prompt_tokens=self._num_prompt_tokens,
            num_generation_tokens=self._num_generation_tokens, num_steps=self._num_steps,
            **_host_tier_stats(self.kv_host_tier))

    def step(self) -> list[RequestOutput]:
        """Run one step; returns one event per request that aborted, sampled or failed."""
        try:
            return self._step()
        finally:
            snapshot = self._snapshot_stats()
            with self._lock:
                self._stats = snapshot

    def _step(self) -> list[RequestOutput]:
        with self._lock:
            inbox, self._inbox = self._inbox, []
            abort_ids, self._abort_ids = self._abort_ids, []
        for seq in inbox:
            self.scheduler.add(seq)
        outputs = [self._finish(seq, "abort") for rid in abort_ids
                   if (seq := self._live.get(rid)) is not None and not seq.is_finished]
        now = time.monotonic()
        outputs += [self._finish(seq, "error", error=str(QueueTimeoutError(
                        now - seq.metrics.arrival_time, self.config.queue_timeout_s)),
                                 error_code=QueueTimeoutError.code)
                    for seq in self.scheduler.timed_out(now, self.config.queue_timeout_s)]

        batch = self.scheduler.schedule()
        if batch.is_empty:
            return outputs
        now = time.monotonic()
        for item in batch.scheduled:
            if item.seq.metrics.first_scheduled_time is None:
                item.seq.metrics.first_scheduled_time = now
        sampling = [item.seq for item in batch.scheduled if item.is_sampling]
        try:
            token_ids, logprobs = self._forward_and_sample(batch.scheduled, sampling)
        except Exception as exc:  # noqa: BLE001 - one bad batch must not take the server down
            logger.exception("step failed; failing %d requests", len(batch.scheduled))
            outputs += [self._finish(item.seq, "error", error=f"engine step failed: {exc}")
                        for item in batch.scheduled]
            return outputs
        self._num_steps += 1
        self._num_generation_tokens += len(token_ids)
        started, now = now, time.monotonic()
        for item in batch.scheduled:
            if not (item.num_new_tokens == 1 and item.is_sampling and item.seq.num_output_tokens):
                self._num_prompt_tokens += item.num_new_tokens  # not a decode token
                item.seq.metrics.prefill_chunks.append((started, now, item.num_new_tokens))
            item.seq.num_computed_tokens += item.num_new_tokens
            self.block_manager.cache_full_blocks(item.seq)  # their KV is written now
        outputs += [self._append_token(seq, tok, now, lp)
                    for seq, tok, lp in zip(sampling, token_ids, logprobs)]
        return outputs

    def _forward_and_sample(self, scheduled: list[ScheduledSequence], sampling: list[Sequence],
                            ) -> tuple[list[int], list[TokenLogprobs | None]]:
        # The grammar masks depend only on the tokens so far: built before the forward pass
        # (on CUDA they are ready when the logits are; on CPU they do not run while the
        # kernels' threads wind down).
        constrained = [i for i, s in enumerate(sampling) if s.grammar is not None]
        allowed = (allowed_tokens([sampling[i] for i in constrained], constrained,
                                  self.model_config.vocab_size) if constrained else None)
        logits = self.model_runner.execute(scheduled)
        if not sampling:
            return [], []
        meta = SamplingMetadata.build(
            [s.params for s in sampling], [s.prompt_token_ids for s in sampling],
            [s.output_token_ids for s in sampling], [s.stop_token_ids for s in sampling],
            [s.generator for s in sampling], self.model_config.vocab_size, self.device)
        meta.allowed = allowed
        out = sample(logits, meta)
        return out.sampled_token_ids.tolist(), self._token_logprobs(out, sampling)

    def _token_logprobs(self, out: SamplerOutput, sampling: list[Sequence],
                        ) -> list[TokenLogprobs | None]:
        """Per sampling sequence, its TokenLogprobs when its params ask for logprobs, else None."""
        if out.logprobs is None:
            return [None] * len(sampling)
        values, ids, ranks = out.logprobs.tolist(), out.logprob_token_ids.tolist(), out.ranks.tolist()
        result: list[TokenLogprobs | None] = []
        for i, seq in enumerate(sampling):
            k = seq.params.logprobs
            if k is None:
                result.append(None)
                continue
            top_values = values[i][1:k + 1]
            top = [Logprob(t, self.tokenizer.decode([t]), v, top_values.index(v) + 1)
                   for t, v in zip(ids[i][1:k + 1], top_values)]
            sampled = Logprob(ids[i][0], self.tokenizer.decode([ids[i][0]]), values[i][0], ranks[i])
            result.append(TokenLogprobs(sampled=sampled, top=top))
        return result

    def _append_token(self, seq: Sequence, token_id: int, now: float,
                      logprobs: TokenLogprobs | None = None) -> RequestOutput:
        seq.output_token_ids.append(token_id)
        seq.metrics.num_output_tokens = seq.num_output_tokens
        seq.metrics.token_times.append(now)
        if seq.metrics.first_token_time is None:
            seq.metrics.first_token_time = now
        reason = None
        delta = ""
        if seq.grammar is not None and (error := advance(seq.grammar, token_id)) is not None:
            # The grammar failed (a limit hit mid-decode): end this request alone; never emit
            # a token the grammar refused.
            return self._finish(seq, "error", error=error, logprobs=logprobs)
        if token_id in seq.stop_token_ids:
            reason = "stop"  # EOS / end-of-turn / stop_token_ids: no text
        else:
            delta = seq.detokenizer.add_token(token_id)
            if seq.detokenizer.stopped:
                reason = "stop"
        if reason is None and seq.grammar is not None and is_complete(seq.grammar):
            reason = "stop"  # the output is complete: nothing but EOS may follow
        if reason is None and seq.num_output_tokens >= seq.max_tokens:
            reason = "length"
        if reason is not None:
            return self._finish(seq, reason, delta=delta, new_token_ids=[token_id],
                                logprobs=logprobs)
        return self._output(seq, delta, [token_id], logprobs=logprobs)

    def _finish(self, seq: Sequence, reason: str, delta: str = "",
                new_token_ids: list[int] | None = None, error: str | None = None,
                logprobs: TokenLogprobs | None = None, error_code: str | None = None) -> RequestOutput:
        delta += seq.detokenizer.finish()
        if seq.detokenizer.stopped:
            reason = "stop"
        self.scheduler.finish(seq, reason)
        seq.grammar = None  # free the matcher
        seq.metrics.finished_time = time.monotonic()
        with self._lock:
            self._forget(seq)
        return self._output(seq, delta, new_token_ids or [], error=error, logprobs=logprobs,
                            error_code=error_code)

    def _forget(self, seq: Sequence) -> None:
        """Drop a finished sequence from the live requests (and its group). Hold self._lock."""
        self._live.pop(seq.request_id, None)
        group = self._groups.get(seq.parent_request_id) if seq.parent_request_id else None
        if group is not None:
            group.discard(seq.request_id)
            if not group:
                del self._groups[seq.parent_request_id]

    def _output(self, seq: Sequence, delta: str, new_token_ids: list[int],
                error: str | None = None, logprobs: TokenLogprobs | None = None,
                error_code: str | None = None) -> RequestOutput:
        return RequestOutput(
            request_id=seq.parent_request_id or seq.request_id, index=seq.sample_index,
            logprobs=None if seq.params.logprobs is None else [logprobs] if logprobs else [], delta=delta, new_token_ids=new_token_ids,
            finished=seq.is_finished, finish_reason=seq.finish_reason,
            num_prompt_tokens=seq.num_prompt_tokens, num_output_tokens=seq.num_output_tokens,
            text=seq.detokenizer.text,
            metrics=dataclasses.replace(seq.metrics, token_times=list(seq.metrics.token_times),
                                        prefill_chunks=list(seq.metrics.prefill_chunks)),
            error=error, error_code=error_code)

    def fail_all(self, error: str) -> list[RequestOutput]:
        """Finish every unfinished request with "error" and reset the KV pool.

        For a step that raised outside the forward pass, when the scheduler's state can no
        longer be trusted. Returns their final events.
        """
        with self._lock:
            inbox, self._inbox = self._inbox, []
            self._abort_ids = []
        seqs = self.scheduler.clear() + inbox
        outputs = []
        for seq in seqs:
            delta = seq.detokenizer.finish()
            seq.status = SequenceStatus.FINISHED
            seq.finish_reason = "error"
            seq.grammar = None
            seq.metrics.finished_time = time.monotonic()
            with self._lock:
                self._forget(seq)
            outputs.append(self._output(seq, delta, [], error=error))
        snapshot = self._snapshot_stats()
        with self._lock:
            self._stats = snapshot
        return outputs

    # -- offline convenience ---------------------------------------------------------------

    def generate(self, prompts: str | list[int] | SequenceABC[str | list[int]],
                 params: SamplingParams | SequenceABC[SamplingParams] | None = None,
                 ) -> list[RequestOutput]:
        """Run `prompts` to completion (batched together); one merged output per prompt and
        sample, in order (prompt by prompt; a prompt whose params have n > 1 gives n outputs,
        index 0 to n - 1).

        A merged output has delta == text (the whole reply), new_token_ids holding every
        generated token id and, with logprobs asked, logprobs holding one entry per token.
        A single prompt may be a str or a list of ints.
        """
        if isinstance(prompts, str) or (isinstance(prompts, list) and prompts
                                        and isinstance(prompts[0], int)):
            prompts = [prompts]
        prompts = list(prompts)
        if params is None or isinstance(params, SamplingParams):
            params = [params or SamplingParams()] * len(prompts)
        if len(params) != len(prompts):
            raise InvalidSamplingParamsError(
                f"got {len(params)} SamplingParams for {len(prompts)} prompts")
        ids = [f"generate-{next(self._ids)}" for _ in prompts]
        try:
            for rid, prompt, p in zip(ids, prompts, params):
                self.add_request(rid, prompt, p)
        except Exception:
            for rid in ids:
                self.abort_request(rid)
            raise
        keys = [(rid, i) for rid, p in zip(ids, params) for i in range(p.n)]
        tokens: dict[tuple[str, int], list[int]] = {key: [] for key in keys}
        logprobs: dict[tuple[str, int], list[TokenLogprobs]] = {key: [] for key in keys}
        final: dict[tuple[str, int], RequestOutput] = {}
        while len(final) < len(keys):
            for out in self.step():
                key = (out.request_id, out.index)
                if key in tokens:
                    tokens[key] += out.new_token_ids
                    logprobs[key] += out.logprobs or []
                    if out.finished:
                        final[key] = out
        return [dataclasses.replace(
                    final[key], delta=final[key].text, new_token_ids=tokens[key],
                    logprobs=None if final[key].logprobs is None else logprobs[key])
                for key in keys]


def _host_tier_stats(tier: KVHostTier | None) -> dict[str, int]:
    if tier is None:
        return {}
    return {"num_kv_host_blocks_offloaded": tier.num_offloaded,
            "num_kv_host_blocks_restored": tier.num_restored,
            "num_kv_host_blocks_dropped": tier.num_dropped,
            "num_kv_host_blocks_used": tier.num_used_blocks,
            "num_kv_host_blocks_total": tier.num_blocks}


def _resolve_max_model_len(config: EngineConfig, context_length: int, num_blocks: int,
                           block_bytes: int) -> int:
    """config.max_model_len (None: the model's context length), checked against the context
    length and the KV pool: one sequence must always fit the pool, or preemption could never
    make room for it. Raises EngineConfigError with the sizes otherwise."""
    max_model_len = config.max_model_len or context_length
    if max_model_len > context_length:
        raise EngineConfigError(
            f"max_model_len={max_model_len} exceeds the model's context length {context_length}")
    capacity = num_blocks * config.block_size
    if max_model_len > capacity:
        need = -(-max_model_len // config.block_size)
        raise EngineConfigError(
            f"the KV pool ({num_blocks} blocks of {config.block_size} tokens = {capacity} tokens, "
            f"{num_blocks * block_bytes} bytes) cannot hold one max_model_len={max_model_len} "
            f"sequence; give it at least {need} blocks ({need * block_bytes / 2**30:.3f} GiB: "
            f"num_kv_blocks or kv_cache_memory_gib) or lower max_model_len to {capacity} or less")
    return max_model_len
