"""Hands out fixed-size KV-cache blocks from a pool allocated once, with prefix caching."""

from __future__ import annotations

import hashlib
import struct
from array import array
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence as SequenceABC
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.sequence import Sequence

if TYPE_CHECKING:
    from engine.kv_host_tier import KVHostTier


def hash_block_tokens(parent_hash: bytes | None, token_ids: SequenceABC[int],
                      extra_keys: tuple[str, ...] = ()) -> bytes:
    """SHA-256 (32 bytes) of one full block, chained to the block before it.

    parent_hash: the previous block's hash (None for a sequence's first block). token_ids:
    the block's block_size token ids. extra_keys: strings that must also match for a reuse
    (the cache salt, on the first block; chaining carries it to every later block). Every
    field is length-prefixed, so distinct inputs never serialize alike; a cryptographic hash
    makes a collision (and so a wrong-KV hit) practically impossible. vLLM v1's block hash.
    """
    h = hashlib.sha256()
    parent = parent_hash or b""
    h.update(struct.pack("<Q", len(parent)) + parent)
    tokens = array("q", token_ids).tobytes()
    h.update(struct.pack("<Q", len(tokens)) + tokens)
    for key in extra_keys:
        data = key.encode("utf-8")
        h.update(struct.pack("<Q", len(data)) + data)
    return h.digest()


@dataclass
class Block:
    """One KV block. ref_count: block tables holding it. block_hash: set once the block is
    full and its KV written (it is then in the prefix cache until evicted)."""

    block_id: int
    ref_count: int = 0
    block_hash: bytes | None = None


class BlockManager:
    """The KV block pool, each sequence's block table, and the prefix cache.

    A sequence holding n tokens in the cache needs ceil(n / block_size) blocks, granted as it
    grows (prefill chunk by chunk, then one slot per decode token) and all released by `free`.

    Prefix caching follows vLLM v1's design: a full block whose KV has been written is
    registered under hash_block_tokens(parent hash, its tokens, cache salt). A new or
    preempted sequence reuses the longest chain of cached blocks covering at most
    num_tokens - 1 of its tokens (the last token is always computed, to get its logits).
    Blocks are reference-counted; a released cached block stays cached (evictable) and is
    reused in least-recently-released order only when no never-cached free block is left.
    A block is never handed out while referenced.

    States: free (ref 0, no hash), cached (ref 0, hash: evictable), used (ref > 0).
    free + cached + used == num_blocks.

    host_tier (engine.kv_host_tier, optional): an evicted cached block's KV is offloaded there
    before its block is reused, and the prefix lookup continues into it: a block found only
    there is restored into a new block (its copy runs before the step's forward pass) instead
    of being recomputed. With it, get_computed_blocks may return block hashes (bytes) beside
    block ids.
    """

    def __init__(self, num_blocks: int, block_size: int, enable_prefix_caching: bool = True,
                 host_tier: KVHostTier | None = None) -> None:
        if num_blocks < 1 or block_size < 1:
            raise ValueError(f"num_blocks and block_size must be >= 1, got {num_blocks}, {block_size}")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self.prefix_cache_queries = 0   # tokens of admitted sequences looked up in the cache
        self.prefix_cache_hits = 0      # of those, tokens found cached
        self.host_tier = host_tier
        if host_tier is not None:
            host_tier.on_restore_failed = self._uncache
        self.reset()

    def reset(self) -> None:
        """Forget every grant and the whole prefix cache (after a failed step left tables in
        an unknown state). The query/hit counters are kept; the host tier keeps its entries
        (only copies not yet run are forgotten)."""
        if getattr(self, "host_tier", None) is not None:
            self.host_tier.cancel_pending()
        self.blocks = [Block(i) for i in range(self.num_blocks)]
        self._free: deque[int] = deque(range(self.num_blocks))
        self._evictable: OrderedDict[int, None] = OrderedDict()  # oldest release first
        self._cached: dict[bytes, int] = {}

    # -- counts ----------------------------------------------------------------------------

    @property
    def num_free_blocks(self) -> int:
        """Blocks a sequence can get now: never-cached free blocks plus evictable cached ones."""
        return len(self._free) + len(self._evictable)

    @property
    def num_uncached_free_blocks(self) -> int:
        return len(self._free)

    @property
    def num_cached_blocks(self) -> int:
        """Cached blocks no sequence holds (evictable)."""
        return len(self._evictable)

    @property
    def num_used_blocks(self) -> int:
        return self.num_blocks - self.num_free_blocks

    # -- prefix cache ----------------------------------------------------------------------

    def block_hash(self, seq: Sequence, index: int) -> bytes:
        """Chained hash of `seq`'s full block `index` (memoized in seq.block_hashes)."""
        hashes = seq.block_hashes
        bs = self.block_size
        while len(hashes) <= index:
            i = len(hashes)
            extra = (seq.cache_salt,) if i == 0 and seq.cache_salt is not None else ()
            hashes.append(hash_block_tokens(hashes[-1] if hashes else None,
                                            seq.token_ids_slice(i * bs, (i + 1) * bs), extra))
        return hashes[index]

    def get_computed_blocks(self, seq: Sequence) -> list[int | bytes]:
        """The longest cached prefix of `seq`'s tokens, at most (num_tokens - 1) // block_size
        blocks, one entry per block: its cached block id (int), or, when only the host tier
        holds it, its hash (bytes: `allocate` restores it into a new block). Looks only;
        `allocate` takes them."""
        if not self.enable_prefix_caching:
            return []
        found: list[int | bytes] = []
        tier = self.host_tier
        for i in range((seq.num_tokens - 1) // self.block_size):
            h = self.block_hash(seq, i)
            block_id = self._cached.get(h)
            if block_id is not None:
                found.append(block_id)
            elif tier is not None and h in tier:
                found.append(h)
            else:
                break
        return found

    def cache_full_blocks(self, seq: Sequence) -> None:
        """Register `seq`'s blocks that are full of computed tokens (call after the forward
        pass that wrote them). A block whose hash another block already holds stays private."""
        if not self.enable_prefix_caching:
            return
        num_full = min(seq.num_computed_tokens // self.block_size, len(seq.block_table))
        for i in range(seq.num_cached_blocks, num_full):
            block = self.blocks[seq.block_table[i]]
            h = self.block_hash(seq, i)
            if block.block_hash is None and h not in self._cached:
                block.block_hash = h
                self._cached[h] = block.block_id
        seq.num_cached_blocks = max(seq.num_cached_blocks, num_full)

    # -- grants ----------------------------------------------------------------------------

    def num_blocks_needed(self, seq: Sequence, num_tokens: int, num_computed_blocks: int = 0) -> int:
        """New blocks `seq` must still get so that its cache holds `num_tokens` tokens, after
        taking `num_computed_blocks` cached ones."""
        needed = -(-num_tokens // self.block_size)
        return max(0, needed - len(seq.block_table) - num_computed_blocks)

    def can_allocate(self, seq: Sequence, num_tokens: int,
                     computed_blocks: SequenceABC[int | bytes] = ()) -> bool:
        """Whether `seq` can grow to hold `num_tokens` tokens (cached + new), taking
        `computed_blocks` (from get_computed_blocks) first."""
        needed = self.num_blocks_needed(seq, num_tokens, len(computed_blocks))
        # Taking an evictable hit removes it from what new blocks can come from; a host-tier
        # hit needs a new block to be restored into.
        taken = sum(1 for b in computed_blocks
                    if isinstance(b, bytes) or self.blocks[b].ref_count == 0)
        return needed <= self.num_free_blocks - taken

    def allocate(self, seq: Sequence, num_tokens: int,
                 computed_blocks: SequenceABC[int | bytes] | None = None) -> None:
        """Grow `seq.block_table` to hold `num_tokens` tokens.

        computed_blocks: on admission (empty block table), the cached prefix from
        get_computed_blocks, shared by reference (host-tier hits restored into new blocks);
        the lookup is counted in the prefix-cache stats (num_tokens of the sequence queried,
        len(computed_blocks) * block_size hit).
        The caller sets seq.num_computed_tokens. Raises RuntimeError when the pool is short
        (call can_allocate first) or when computed_blocks is given to a non-empty table.
        """
        computed = list(computed_blocks or ())
        if not self.can_allocate(seq, num_tokens, computed):
            raise RuntimeError(f"KV pool exhausted: need {self.num_blocks_needed(seq, num_tokens, len(computed))}"
                               f" blocks, {self.num_free_blocks} free")
        if computed_blocks is not None:
            if seq.block_table:
                raise RuntimeError(f"{seq.request_id}: cached blocks can only start a block table")
            if self.enable_prefix_caching:
                self.prefix_cache_queries += seq.num_tokens
                self.prefix_cache_hits += len(computed) * self.block_size
            for block_id in computed:
                if not isinstance(block_id, bytes):
                    self._take(block_id)   # first, so no restore below can evict them
            for h in computed:
                if isinstance(h, bytes):
                    self.host_tier.pin(h)  # no offload below may drop it
            seq.block_table.extend(self._restore(b) if isinstance(b, bytes) else b
                                   for b in computed)
            seq.num_cached_blocks = len(computed)
        for _ in range(self.num_blocks_needed(seq, num_tokens)):
            seq.block_table.append(self._take(self._pop_free()))

    def can_append(self, seq: Sequence) -> bool:
        """Whether `seq` can take one more token (a decode step) in the cache."""
        return self.can_allocate(seq, seq.num_computed_tokens + 1)

    def append_slot(self, seq: Sequence) -> None:
        """Make room for one more token of `seq` (a new block when the last one is full)."""
        self.allocate(seq, seq.num_computed_tokens + 1)

    def free(self, seq: Sequence) -> None:
        """Release `seq`'s blocks; its block table becomes empty. Blocks nobody else holds
        become free, or evictable if cached: released tail first, so a prefix outlives its
        tails. Raises RuntimeError on a double free."""
        for block_id in reversed(seq.block_table):
            block = self.blocks[block_id]
            if block.ref_count < 1:
                raise RuntimeError(f"double free of KV block {block_id} by {seq.request_id}")
            block.ref_count -= 1
            if block.ref_count == 0:
                if block.block_hash is not None:
                    self._evictable[block_id] = None
                else:
                    self._free.append(block_id)
        seq.block_table = []
        seq.num_cached_blocks = 0

    def _pop_free(self) -> int:
        if self._free:
            return self._free.popleft()
        block_id, _ = self._evictable.popitem(last=False)  # least recently released
        block = self.blocks[block_id]
        if self.host_tier is not None:
            self.host_tier.offload(block_id, block.block_hash)  # copied before it is overwritten
        del self._cached[block.block_hash]
        block.block_hash = None
        return block_id

    def _restore(self, block_hash: bytes) -> int:
        """A new block, cached under `block_hash`, that the host tier's copy fills before the
        step's forward pass; taken by the caller's sequence."""
        block_id = self._pop_free()
        block = self.blocks[block_id]
        block.block_hash = block_hash
        self._cached[block_hash] = block_id
        self.host_tier.restore(block_hash, block_id)
        return self._take(block_id)

    def _uncache(self, block_ids: list[int]) -> None:
        """Drop `block_ids` from the prefix cache (their KV never arrived: a failed restore)."""
        for block_id in block_ids:
            block = self.blocks[block_id]
            if block.block_hash is None or self._cached.get(block.block_hash) != block_id:
                continue
            del self._cached[block.block_hash]
            block.block_hash = None
            if block_id in self._evictable:
                del self._evictable[block_id]
                self._free.append(block_id)

    def _take(self, block_id: int) -> int:
        block = self.blocks[block_id]
        if block.ref_count == 0:
            self._evictable.pop(block_id, None)
        block.ref_count += 1
        return block_id

    # -- checking --------------------------------------------------------------------------

    def check_invariants(self, block_tables: Iterable[SequenceABC[int]]) -> None:
        """Raise RuntimeError unless the pool is consistent with `block_tables` (every live
        sequence's table): ref counts equal table uses, no block both free and used, every
        block in exactly one state, the cache index matches the blocks' hashes."""
        uses = [0] * self.num_blocks
        for table in block_tables:
            if len(set(table)) != len(table):
                raise RuntimeError(f"a block table holds a block twice: {list(table)}")
            for block_id in table:
                uses[block_id] += 1
        free, evictable = set(self._free), set(self._evictable)
        if len(free) != len(self._free) or free & evictable:
            raise RuntimeError("a block is listed twice among the free blocks")
        for block in self.blocks:
            if block.ref_count != uses[block.block_id]:
                raise RuntimeError(f"block {block.block_id}: ref_count {block.ref_count}, "
                                   f"used by {uses[block.block_id]} tables")
            released = block.block_id in free or block.block_id in evictable
            if released == (block.ref_count > 0):
                raise RuntimeError(f"block {block.block_id}: ref_count {block.ref_count}, released {released}")
            if block.block_id in evictable and block.block_hash is None:
                raise RuntimeError(f"block {block.block_id} is evictable but not cached")
            if block.block_id in free and block.block_hash is not None:
                raise RuntimeError(f"block {block.block_id} is free but still cached")
            if block.block_hash is not None and self._cached.get(block.block_hash) != block.block_id:
                raise RuntimeError(f"block {block.block_id}: hash missing from the cache index")
        if len(self._cached) != sum(b.block_hash is not None for b in self.blocks):
            raise RuntimeError("the cache index names blocks that are not cached")
        if len(free) + len(evictable) + sum(1 for u in uses if u) != self.num_blocks:
            raise RuntimeError("free + cached + used != num_blocks")
        if self.host_tier is not None:
            self.host_tier.check_invariants()
            for host_block, block_id in self.host_tier.pending_restores:
                block = self.blocks[block_id]
                if block.block_hash is None or self.host_tier.slot(block.block_hash) != host_block:
                    raise RuntimeError(f"block {block_id}: a pending restore into it does not "
                                       "match its hash")
