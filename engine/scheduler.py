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
    """FCFS scheduler with one token budget per step and chunked prefill.

    Each step: running decodes first (one token each), then running sequences still
    prefilling, then waiting sequences in arrival order, while the batch has fewer than
    max_num_seqs sequences, tokens remain in max_num_batched_tokens and the KV pool has blocks.
    A prompt longer than the remaining budget is prefilled in chunks over several steps.
    When a running sequence cannot get a block, the most recently admitted one is preempted
    by recompute (its blocks freed, it goes back to the front of the queue), as in vLLM V1.
    """

    def __init__(self, block_manager: BlockManager, max_num_seqs: int,
                 max_num_batched_tokens: int) -> None:
        self.block_manager = block_manager
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []

    def add(self, seq: Sequence) -> None:
        seq.status = SequenceStatus.WAITING
        self.waiting.append(seq)

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self) -> SchedulerOutput:
        out = SchedulerOutput()
        budget = self.max_num_batched_tokens
        queue = ([s for s in self.running if s.num_uncomputed_tokens == 1]
                 + [s for s in self.running if s.num_uncomputed_tokens > 1])
        while queue and budget > 0:
            seq = queue.pop(0)
            n = min(seq.num_uncomputed_tokens, budget)
            target = seq.num_computed_tokens + n
            while not self.block_manager.can_allocate(seq, target):
                victim = queue.pop() if queue else seq
                self._preempt(victim)
                out.preempted.append(victim)
                if victim is seq:
                    break
            else:
                self.block_manager.allocate(seq, target)
                out.scheduled.append(ScheduledSequence(seq, n))
                budget -= n
        if out.preempted:
            # The pool is short; admitting new prompts now would only preempt again.
            return out
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            n = min(seq.num_uncomputed_tokens, budget)
            if not self.block_manager.can_allocate(seq, seq.num_computed_tokens + n):
                break
            self.block_manager.allocate(seq, seq.num_computed_tokens + n)
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            out.scheduled.append(ScheduledSequence(seq, n))
            budget -= n
        return out

    def _preempt(self, seq: Sequence) -> None:
        self.block_manager.free(seq)
        seq.num_computed_tokens = 0
        seq.status = SequenceStatus.WAITING
        self.running.remove(seq)
        self.waiting.appendleft(seq)

    def finish(self, seq: Sequence, reason: str) -> None:
        """Retire `seq` (running or waiting) and return its blocks to the pool at once."""
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
            seq.status = SequenceStatus.FINISHED
        self.block_manager.reset()
        return seqs
