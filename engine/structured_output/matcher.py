"""One request's grammar state (GrammarMatcher), and filling the batch's token bitmask
(layout: engine.structured_output.bitmask)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import llguidance
import numpy as np
import torch

from engine.structured_output.bitmask import bitmask_words, unpack_bitmask


class GrammarMatcher:
    """Where one sampled sequence is in its grammar (wraps an llguidance.LLMatcher).

    num_consumed: tokens accepted so far; the engine keeps it equal to the sequence's number of
    output tokens (rolling back if the sequence ever drops some).
    """

    def __init__(self, matcher: llguidance.LLMatcher) -> None:
        self._matcher = matcher
        self.num_consumed = 0
        self.failed_reason: str | None = None  # set by fail(): the engine ends the sequence

    def fail(self, reason: str) -> None:
        """Mark the matcher failed (e.g. its mask could not be computed); `reason` is kept
        short (short_error)."""
        self.failed_reason = short_error(reason)

    @property
    def raw(self) -> llguidance.LLMatcher:
        return self._matcher

    def consume(self, token_id: int) -> bool:
        """Advance past `token_id`. False if the grammar does not allow it (the matcher is then
        in an error state for good: `error` says why)."""
        ok = self._matcher.consume_token(token_id)
        if ok:
            self.num_consumed += 1
        return ok

    def rollback(self, num_tokens: int) -> None:
        """Forget the last `num_tokens` accepted tokens (0 <= num_tokens <= num_consumed)."""
        if not 0 <= num_tokens <= self.num_consumed:
            raise ValueError(f"cannot roll back {num_tokens} of {self.num_consumed} tokens")
        if num_tokens and not self._matcher.rollback(num_tokens):
            raise RuntimeError(f"grammar rollback failed: {self._matcher.get_error()}")
        self.num_consumed -= num_tokens

    def is_accepting(self) -> bool:
        """The output so far is a complete sentence of the grammar (EOS is allowed now)."""
        return self._matcher.is_accepting()

    def is_terminated(self) -> bool:
        """Nothing but EOS can follow (the output is complete), or the matcher is in error."""
        return self._matcher.is_stopped()

    @property
    def error(self) -> str:
        """Why the matcher is in an error state; empty when it is not."""
        return self._matcher.get_error()

    def allowed_token_ids(self, vocab_size: int) -> list[int]:
        """The ids allowed next (decoded from one bitmask row; for tests and debugging)."""
        bitmask = fill_bitmask([self], vocab_size)
        return unpack_bitmask(bitmask, vocab_size)[0].nonzero().flatten().tolist()


MAX_ERROR_CHARS = 200


def short_error(text: str) -> str:
    """llguidance's error text without its `<state>` dump (parser state, grammar text), on one
    line, at most MAX_ERROR_CHARS characters."""
    line = " ".join(text.split("<state>", 1)[0].split())
    return line if len(line) <= MAX_ERROR_CHARS else line[:MAX_ERROR_CHARS - 3] + "..."


_executor: llguidance.LLExecutor | None = None
_executor_lock = threading.Lock()


def _get_executor() -> llguidance.LLExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = llguidance.LLExecutor()
        return _executor


def fill_bitmask(matchers: Sequence[GrammarMatcher], vocab_size: int) -> torch.Tensor:
    """The next-token bitmask of each matcher: int32 [len(matchers), ceil(vocab_size / 32)] on
    the CPU. Several matchers are filled in parallel on llguidance's thread pool (the GIL is
    released)."""
    words = bitmask_words(vocab_size)
    # numpy's zeros: torch's would open a parallel region for a large batch.
    bitmask = torch.from_numpy(np.zeros((len(matchers), words), dtype=np.int32))
    if len(matchers) == 1:
        matchers[0].raw.unsafe_compute_mask_ptr(bitmask.data_ptr(), words * 4)
    elif matchers:
        _get_executor().unsafe_compute_mask_ptr(
            [(m.raw, i) for i, m in enumerate(matchers)], bitmask.data_ptr(), words * 4,
            len(matchers))
    return bitmask
