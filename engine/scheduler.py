"""Continuous batching: which sequences compute how many tokens in the next step."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from engine.block_manager import BlockManager
from engine.sequence import Sequence, SequenceStatus


@dataclass
class ScheduledSequence:
    """`seq` computes tokens [num_computed_tokens, num_computed_tokens + num_new_tokens)."""

    seq: Sequence
    num_new_tokens: int

    @property
    def is_sampling(self) -> bool:
        """The chunk reaches the sequence's last token, so this step samples its next token."""
        return self.seq.num_computed_tokens + self.num_new_tokens == self.seq.num_tokens


@dataclass
class SchedulerOutput:
    scheduled: list[ScheduledSequence] = field(default_factory=list)
    preempted: list[Sequence] = field(default_factory=list)

    @property
    def num_batched_tokens(self) -> int:
        return sum(s.num_new_tokens for s in self.scheduled)

    @property
    def is_empty(self) -> bool:
        return not self.scheduled


class Scheduler:
    """FCFS scheduler with one token budget per step, chunked prefill and prefix caching.

    Each step: running decodes first (one token each), then running sequences still
    prefilling, then waiting sequences in arrival order, while the batch has fewer than
    max_num_seqs running sequences, tokens remain in max_num_batched_tokens and the KV pool has
    blocks. One sequence prefills at most long_prefill_token_threshold tokens per step (None:
    only the budget limits it), so a long prompt is split into chunks across steps while
    decoders keep getting a token every step. max_prefill_tokens_during_decode caps the prompt
    tokens of all sequences together in a step that also runs decodes (None: no extra cap): a
    step's latency grows with its prefill tokens, so the cap bounds the decoders' inter-token
    latency while a prefill that runs alone still takes big chunks. A waiting sequence starts from its longest
    cached prefix (BlockManager.get_computed_blocks). The head of the queue is never
    overtaken (strict FCFS). The samples of a request with n > 1 share the prompt's blocks:
    a sample waits at the head of the queue while a running sample of the same request is
    still writing the prompt's full blocks, then takes them from the prefix cache.

    Preemption by recompute, as in vLLM v1: when a running sequence cannot get a block, the
    most recently admitted running sequence is preempted (blocks released, progress reset to
    0, generated tokens kept, back to the front of the queue); if that is the sequence itself,
    it waits. The oldest running sequence is never preempted for a younger one, and one
    sequence alone always fits the pool (the engine checks max_model_len against it), so every
    workload finishes.
    """

    def __init__(self, block_manager: BlockManager, max_num_seqs: int,
                 max_num_batched_tokens: int, long_prefill_token_threshold: int | None = None,
                 max_prefill_tokens_during_decode: int | None = None) -> None:
        self.block_manager = block_manager
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.long_prefill_token_threshold = long_prefill_token_threshold
        self.max_prefill_tokens_during_decode = max_prefill_tokens_during_decode
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []   # in admission order
        self.num_preemptions = 0

    def add(self, seq: Sequence) -> None:
        seq.status = SequenceStatus.WAITING
        self.waiting.append(seq)

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def _chunk(self, num_tokens: int, budget: int) -> int:
        n = min(num_tokens, budget)
        if self.long_prefill_token_threshold is not None:
            n = min(n, self.long_prefill_token_threshold)
        return n

    def schedule(self) -> SchedulerOutput:
        out = SchedulerOutput()
        budget = self.max_num_batched_tokens
        items: dict[int, ScheduledSequence] = {}   # id(seq) -> its entry this step
        decodes = [s for s in self.running if s.num_uncomputed_tokens == 1]
        queue = decodes + [s for s in self.running if s.num_uncomputed_tokens > 1]
        # Prompt tokens this step may still take (all sequences together); a budget of its own
        # only when decoders share the step.
        cap = self.max_prefill_tokens_during_decode
        prefill_left = cap if cap is not None and decodes else budget
        for seq in queue:
            if budget <= 0:
                break
            if seq.status is not SequenceStatus.RUNNING:  # preempted earlier in this step
                continue
            is_prefill = seq.num_uncomputed_tokens > 1
            if is_prefill and prefill_left <= 0:
                continue
            n = self._chunk(seq.num_uncomputed_tokens, min(budget, prefill_left) if is_prefill else budget)
            target = seq.num_computed_tokens + n
            while not self.block_manager.can_allocate(seq, target):
                victim = self.running[-1]
                self._preempt(victim)
                out.preempted.append(victim)
                if (entry := items.pop(id(victim), None)) is not None:
                    out.scheduled.remove(entry)
                    budget += entry.num_new_tokens
                if victim is seq:
                    break
            else:
                self.block_manager.allocate(seq, target)
                entry = ScheduledSequence(seq, n)
                items[id(seq)] = entry
                out.scheduled.append(entry)
                budget -= n
                if is_prefill:
                    prefill_left -= n
        if out.preempted:
            # The pool is short; admitting new prompts now would only preempt again.
            return out
        while self.waiting and min(budget, prefill_left) > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            computed = self.block_manager.get_computed_blocks(seq)
            if self._awaits_sibling_prefill(seq, len(computed)):
                break
            num_computed = len(computed) * self.block_manager.block_size
            n = self._chunk(seq.num_tokens - num_computed, min(budget, prefill_left))
            if not self.block_manager.can_allocate(seq, num_computed + n, computed):
                break
            self.block_manager.allocate(seq, num_computed + n, computed)
            seq.num_computed_tokens = num_computed
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            out.scheduled.append(ScheduledSequence(seq, n))
            budget -= n
            prefill_left -= n
        return out

    def _awaits_sibling_prefill(self, seq: Sequence, num_computed_blocks: int) -> bool:
        """Whether `seq`, a sample of a request with n > 1 (SamplingParams.n), should wait
        for a running sample of the same request to finish writing the prompt's full blocks,
        so that it takes them from the prefix cache instead of computing and holding its own
        copy. The sibling is running and older, so it keeps progressing (or is preempted,
        and then no one waits for it): the wait always ends."""
        if (seq.parent_request_id is None or seq.num_output_tokens
                or not self.block_manager.enable_prefix_caching):
            return False
        shareable = (seq.num_prompt_tokens - 1) // self.block_manager.block_size
        if num_computed_blocks >= shareable:
            return False
        return any(r.parent_request_id == seq.parent_request_id and r.num_cached_blocks < shareable
                   for r in self.running)

    def _preempt(self, seq: Sequence) -> None:
        self.block_manager.free(seq)
        seq.num_computed_tokens = 0
        seq.status = SequenceStatus.WAITING
        self.running.remove(seq)
        self.waiting.appendleft(seq)
        self.num_preemptions += 1

    def timed_out(self, now: float, queue_timeout_s: float | None) -> list[Sequence]:
        """Waiting sequences never scheduled whose wait (now - arrival, seconds) exceeds
        queue_timeout_s (None: no limit). They stay queued; the caller finishes them."""
        if queue_timeout_s is None:
            return []
        return [s for s in self.waiting if s.metrics.first_scheduled_time is None
                and now - s.metrics.arrival_time > queue_timeout_s]

    def finish(self, seq: Sequence, reason: str) -> None:
        """Retire `seq` (running or waiting) and release its blocks at once."""
        if seq.status is SequenceStatus.RUNNING:
            self.running.remove(seq)
        elif seq.status is SequenceStatus.WAITING:
            self.waiting.remove(seq)
        self.block_manager.free(seq)
        seq.status = SequenceStatus.FINISHED
        seq.finish_reason = reason

    def clear(self) -> list[Sequence]:
        """Drop every sequence and reset the pool (after a step failed mid-way); returns them."""
        seqs = list(self.running) + list(self.waiting)
        self.running.clear()
        self.waiting.clear()
        for seq in seqs:
            seq.block_table = []
            seq.num_cached_blocks = 0
            seq.status = SequenceStatus.FINISHED
        self.block_manager.reset()
        return seqs
