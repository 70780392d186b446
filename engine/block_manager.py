"""Hands out fixed-size KV-cache blocks from a pool allocated once at start-up."""

from __future__ import annotations

from collections import deque

from engine.sequence import Sequence


class BlockManager:
    """Free list of KV block ids and each sequence's block table.

    A sequence holding n tokens in the cache needs ceil(n / block_size) blocks. Blocks are
    granted as the sequence grows (prefill chunk by chunk, then one slot per decode token) and
    all returned at once by `free`. Mirrors vLLM's / nano-vllm's BlockManager without prefix
    caching (that comes later).
    """

    def __init__(self, num_blocks: int, block_size: int) -> None:
        if num_blocks < 1 or block_size < 1:
            raise ValueError(f"num_blocks and block_size must be >= 1, got {num_blocks}, {block_size}")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self._free: deque[int] = deque(range(num_blocks))

    @property
    def num_free_blocks(self) -> int:
        return len(self._free)

    def num_blocks_needed(self, seq: Sequence, num_tokens: int) -> int:
        """Blocks `seq` must still get so that its cache holds `num_tokens` tokens."""
        needed = -(-num_tokens // self.block_size)
        return max(0, needed - len(seq.block_table))

    def can_allocate(self, seq: Sequence, num_tokens: int) -> bool:
        """Whether `seq` can grow to hold `num_tokens` tokens (cached + new) in the cache."""
        return self.num_blocks_needed(seq, num_tokens) <= len(self._free)

    def allocate(self, seq: Sequence, num_tokens: int) -> None:
        """Grow `seq.block_table` to hold `num_tokens` tokens.

        Raises RuntimeError when the pool is short (call can_allocate first).
        """
        needed = self.num_blocks_needed(seq, num_tokens)
        if needed > len(self._free):
            raise RuntimeError(f"KV pool exhausted: need {needed} blocks, {len(self._free)} free")
        seq.block_table.extend(self._free.popleft() for _ in range(needed))

    def can_append(self, seq: Sequence) -> bool:
        """Whether `seq` can take one more token (a decode step) in the cache."""
        return self.can_allocate(seq, seq.num_computed_tokens + 1)

    def append_slot(self, seq: Sequence) -> None:
        """Make room for one more token of `seq` (a new block when the last one is full)."""
        self.allocate(seq, seq.num_computed_tokens + 1)

    def free(self, seq: Sequence) -> None:
        """Return all of `seq`'s blocks to the pool; its block table becomes empty."""
        self._free.extend(seq.block_table)
        seq.block_table = []

    def reset(self) -> None:
        """Forget every grant (after a failed step left tables in an unknown state)."""
        self._free = deque(range(self.num_blocks))
