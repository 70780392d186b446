"""One request's grammar state, and the per-step token bitmask of a batch.

A bitmask row is int32 [ceil(vocab / 32)]: token t is allowed iff bit t % 32 of word t // 32
is set (llguidance's layout, as xgrammar's and vLLM's).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import llguidance
import torch


class GrammarMatcher:
    """Where one sampled sequence is in its grammar (wraps an llguidance.LLMatcher).

    num_consumed: tokens accepted so far; the engine keeps it equal to the sequence's number of
    output tokens (rolling back if the sequence ever drops some).
    """

    def __init__(self, matcher: llguidance.LLMatcher) -> None:
        self._matcher = matcher
        self.num_consumed = 0

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


_executor: llguidance.LLExecutor | None = None
_executor_lock = threading.Lock()


def _get_executor() -> llguidance.LLExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = llguidance.LLExecutor()
        return _executor


def bitmask_words(vocab_size: int) -> int:
    return (vocab_size + 31) // 32


def fill_bitmask(matchers: Sequence[GrammarMatcher], vocab_size: int) -> torch.Tensor:
    """The next-token bitmask of each matcher: int32 [len(matchers), ceil(vocab_size / 32)] on
    the CPU. Several matchers are filled in parallel on llguidance's thread pool (the GIL is
    released)."""
    words = bitmask_words(vocab_size)
    bitmask = torch.zeros((len(matchers), words), dtype=torch.int32)
    if len(matchers) == 1:
        matchers[0].raw.unsafe_compute_mask_ptr(bitmask.data_ptr(), words * 4)
    elif matchers:
        _get_executor().unsafe_compute_mask_ptr(
            [(m.raw, i) for i, m in enumerate(matchers)], bitmask.data_ptr(), words * 4,
            len(matchers))
    return bitmask


_SHIFTS: dict[torch.device, torch.Tensor] = {}


def unpack_bitmask(bitmask: torch.Tensor, vocab_size: int,
                   device: torch.device | str = "cpu") -> torch.Tensor:
    """int32 bitmask [k, words] -> bool allowed [k, vocab_size] on `device` (the bitmask is
    copied there first: 32x fewer bytes than the bool mask)."""
    device = torch.device(device)
    shifts = _SHIFTS.get(device)
    if shifts is None:
        shifts = _SHIFTS[device] = torch.arange(32, dtype=torch.int32, device=device)
    words = bitmask.to(device, non_blocking=True)
    bits = (words[:, :, None] >> shifts) & 1  # [k, words, 32]
    return bits.view(bitmask.shape[0], -1)[:, :vocab_size].bool()
