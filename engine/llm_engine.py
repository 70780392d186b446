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
from engine.errors import (DuplicateRequestError, InvalidPromptError,
                           InvalidSamplingParamsError, PromptTooLongError)
from engine.loader import LoadedModel, load_model
from engine.model_runner import ModelRunner, kv_block_bytes
from engine.outputs import RequestMetrics, RequestOutput
from engine.sampler import sample
from engine.sampling_params import SamplingParams
from engine.scheduler import ScheduledSequence, Scheduler
from engine.sequence import Sequence, SequenceStatus

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
        block_bytes = kv_block_bytes(self.model_config, config.block_size, param.dtype)
        num_blocks = config.num_kv_blocks or max(
            1, int(config.kv_cache_memory_gib * 2**30) // block_bytes)
        context = self.model_config.max_position_embeddings
        # One sequence must always fit the pool, or preemption could never make room for it.
        self.max_model_len = min(config.max_model_len or context, context,
                                 num_blocks * config.block_size)
        self.block_manager = BlockManager(num_blocks, config.block_size)
        self.scheduler = Scheduler(self.block_manager, config.max_num_seqs,
                                   config.max_num_batched_tokens)
        self.model_runner = ModelRunner(loaded.model, self.model_config, num_blocks,
                                        config.block_size, self.device, param.dtype)
        logger.info("engine: %s, max_model_len %d, max_num_seqs %d, max_num_batched_tokens %d",
                    self.model_name, self.max_model_len, config.max_num_seqs,
                    config.max_num_batched_tokens)
        # Reentrant: an abandoned stream's __del__ may call abort_request from any thread,
        # including this one while it holds the lock.
        self._lock = threading.RLock()
        self._live: dict[str, Sequence] = {}   # every unfinished request, inbox included
        self._inbox: list[Sequence] = []
        self._abort_ids: list[str] = []
        self._ids = itertools.count()

    @classmethod
    def from_config(cls, config: EngineConfig, progress=None) -> LLMEngine:
        """Load the model named by `config` (ModelLoadError on failure) and build an engine.

        progress(message, fraction) is called while loading.
        """
        dtype = getattr(torch, config.dtype) if config.dtype else None
        loaded = load_model(config.model, device=config.device, dtype=dtype, progress=progress)
        return cls(loaded, config)

    # -- requests --------------------------------------------------------------------------

    def add_request(self, request_id: str, prompt: str | list[int],
                    params: SamplingParams | None = None) -> None:
        """Queue a request. `prompt` is text (special tokens in it are parsed) or token ids.

        Raises, before anything is queued: InvalidSamplingParamsError, InvalidPromptError
        (empty, or ids outside the vocabulary), PromptTooLongError (prompt + 1 token exceeds
        max_model_len), DuplicateRequestError. max_tokens is clipped so that prompt + output
        fit max_model_len; reaching that limit finishes with "length".
        """
        arrival = time.monotonic()
        seq = self._make_sequence(request_id, prompt, params or SamplingParams(), arrival)
        with self._lock:
            if request_id in self._live:
                raise DuplicateRequestError(f"request id {request_id!r} is already in use")
            self._live[request_id] = seq
            self._inbox.append(seq)

    def _make_sequence(self, request_id: str, prompt: str | list[int], params: SamplingParams,
                       arrival: float) -> Sequence:
        if not isinstance(request_id, str) or not request_id:
            raise InvalidPromptError(f"request_id must be a non-empty string, got {request_id!r}")
        if not isinstance(params, SamplingParams):
            raise InvalidSamplingParamsError(f"params must be SamplingParams, got {type(params).__name__}")
        params = dataclasses.replace(params, stop=list(params.stop),
                                     stop_token_ids=list(params.stop_token_ids))
        params.validate(self.tokenizer.vocab_size)
        prompt_ids = self._prompt_token_ids(prompt)
        if len(prompt_ids) + 1 > self.max_model_len:
            raise PromptTooLongError(
                f"prompt has {len(prompt_ids)} tokens; with one generated token it exceeds the "
                f"window of {self.max_model_len} tokens")
        stop_ids = frozenset(params.stop_token_ids)
        if not params.ignore_eos:
            stop_ids |= self.tokenizer.stop_token_ids
        generator = None
        if params.seed is not None and not params.is_greedy:
            generator = torch.Generator(device=self.device).manual_seed(params.seed)
        return Sequence(
            request_id=request_id, prompt_token_ids=prompt_ids, params=params,
            max_tokens=min(params.max_tokens, self.max_model_len - len(prompt_ids)),
            stop_token_ids=stop_ids,
            detokenizer=IncrementalDetokenizer(self.tokenizer, params.stop),
            metrics=RequestMetrics(arrival_time=arrival), generator=generator)

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

    def step(self) -> list[RequestOutput]:
        """Run one step; returns one event per request that aborted, sampled or failed."""
        with self._lock:
            inbox, self._inbox = self._inbox, []
            abort_ids, self._abort_ids = self._abort_ids, []
        for seq in inbox:
            self.scheduler.add(seq)
        outputs = [self._finish(seq, "abort") for rid in abort_ids
                   if (seq := self._live.get(rid)) is not None and not seq.is_finished]

        batch = self.scheduler.schedule()
        if batch.is_empty:
            return outputs
        now = time.monotonic()
        for item in batch.scheduled:
            if item.seq.metrics.first_scheduled_time is None:
                item.seq.metrics.first_scheduled_time = now
        sampling = [item.seq for item in batch.scheduled if item.is_sampling]
        try:
            token_ids = self._forward_and_sample(batch.scheduled, sampling)
        except Exception as exc:  # noqa: BLE001 - one bad batch must not take the server down
            logger.exception("step failed; failing %d requests", len(batch.scheduled))
            outputs += [self._finish(item.seq, "error", error=f"engine step failed: {exc}")
                        for item in batch.scheduled]
            return outputs
        for item in batch.scheduled:
            item.seq.num_computed_tokens += item.num_new_tokens
        now = time.monotonic()
        outputs += [self._append_token(seq, tok, now) for seq, tok in zip(sampling, token_ids)]
        return outputs

    def _forward_and_sample(self, scheduled: list[ScheduledSequence],
                            sampling: list[Sequence]) -> list[int]:
        logits = self.model_runner.execute(scheduled)
        if not sampling:
            return []
        token_ids = sample(
            logits,
            temperatures=[s.params.temperature for s in sampling],
            top_ks=[s.params.top_k for s in sampling],
            top_ps=[s.params.top_p for s in sampling],
            generators=[s.generator for s in sampling])
        return token_ids.tolist()

    def _append_token(self, seq: Sequence, token_id: int, now: float) -> RequestOutput:
        seq.output_token_ids.append(token_id)
        seq.metrics.num_output_tokens = seq.num_output_tokens
        if seq.metrics.first_token_time is None:
            seq.metrics.first_token_time = now
        reason = None
        delta = ""
        if token_id in seq.stop_token_ids:
            reason = "stop"  # EOS / end-of-turn / stop_token_ids: no text
        else:
            delta = seq.detokenizer.add_token(token_id)
            if seq.detokenizer.stopped:
                reason = "stop"
        if reason is None and seq.num_output_tokens >= seq.max_tokens:
            reason = "length"
        if reason is not None:
            return self._finish(seq, reason, delta=delta, new_token_ids=[token_id])
        return self._output(seq, delta, [token_id])

    def _finish(self, seq: Sequence, reason: str, delta: str = "",
                new_token_ids: list[int] | None = None, error: str | None = None) -> RequestOutput:
        delta += seq.detokenizer.finish()
        if seq.detokenizer.stopped:
            reason = "stop"
        self.scheduler.finish(seq, reason)
        seq.metrics.finished_time = time.monotonic()
        with self._lock:
            self._live.pop(seq.request_id, None)
        return self._output(seq, delta, new_token_ids or [], error=error)

    def _output(self, seq: Sequence, delta: str, new_token_ids: list[int],
                error: str | None = None) -> RequestOutput:
        return RequestOutput(
            request_id=seq.request_id, delta=delta, new_token_ids=new_token_ids,
            finished=seq.is_finished, finish_reason=seq.finish_reason,
            num_prompt_tokens=seq.num_prompt_tokens, num_output_tokens=seq.num_output_tokens,
            text=seq.detokenizer.text, metrics=dataclasses.replace(seq.metrics), error=error)

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
            seq.metrics.finished_time = time.monotonic()
            with self._lock:
                self._live.pop(seq.request_id, None)
            outputs.append(self._output(seq, delta, [], error=error))
        return outputs

    # -- offline convenience ---------------------------------------------------------------

    def generate(self, prompts: str | list[int] | SequenceABC[str | list[int]],
                 params: SamplingParams | SequenceABC[SamplingParams] | None = None,
                 ) -> list[RequestOutput]:
        """Run `prompts` to completion (batched together); one merged output per prompt, in order.

        A merged output has delta == text (the whole reply) and new_token_ids holding every
        generated token id. A single prompt may be a str or a list of ints.
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
        tokens: dict[str, list[int]] = {rid: [] for rid in ids}
        final: dict[str, RequestOutput] = {}
        while len(final) < len(ids):
            for out in self.step():
                if out.request_id in tokens:
                    tokens[out.request_id] += out.new_token_ids
                    if out.finished:
                        final[out.request_id] = out
        return [dataclasses.replace(final[rid], delta=final[rid].text, new_token_ids=tokens[rid])
                for rid in ids]
