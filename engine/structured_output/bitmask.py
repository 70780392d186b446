"""Token bitmasks: the per-step "which tokens may come next" of grammar-constrained rows.

Layout (llguidance's, as xgrammar's and vLLM's): a row is int32 [ceil(vocab / 32)]; token t is
allowed iff bit t % 32 of word t // 32 is set. Built on the CPU by the matchers
(engine.structured_output.matcher.fill_bitmask), applied to the logits by `apply_bitmask`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

_SHIFTS: dict[torch.device, torch.Tensor] = {}


def bitmask_words(vocab_size: int) -> int:
    """int32 words per row for a vocabulary of vocab_size tokens."""
    return (vocab_size + 31) // 32


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


def unpack_bitmask_numpy(bitmask: np.ndarray, vocab_size: int) -> np.ndarray:
    """int32 bitmask [k, words] (little-endian words) -> bool allowed [k, vocab_size]."""
    bits = np.unpackbits(np.ascontiguousarray(bitmask).view(np.uint8), axis=1, bitorder="little")
    return bits[:, :vocab_size].astype(bool)


def apply_bitmask(logits: torch.Tensor, rows: Sequence[int], bitmask: torch.Tensor) -> torch.Tensor:
    """Set to -inf, in place, every logit of row rows[j] whose token bitmask[j] does not allow.

    logits: float32 [n, vocab] (CPU or CUDA); rows: k row indices; bitmask: int32 [k, words]
    on the CPU. Other rows are not touched. On the CPU this runs in numpy, single-threaded: a
    few tens of microseconds per row, and no torch parallel region (which waits for a free core
    on a busy machine). Returns logits.
    """
    vocab = logits.shape[1]
    if logits.device.type == "cpu":
        x = logits.numpy()
        allowed = unpack_bitmask_numpy(bitmask.numpy(), vocab)
        for j, row in enumerate(rows):
            np.putmask(x[row], ~allowed[j], -np.inf)
        return logits
    index = torch.tensor(list(rows), dtype=torch.int64).to(logits.device, non_blocking=True)
    allowed = unpack_bitmask(bitmask, vocab, logits.device)
    logits[index] = logits[index].masked_fill(~allowed, float("-inf"))
    return logits
