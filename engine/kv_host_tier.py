"""A host-memory tier under the prefix cache: evicted KV blocks are kept there, not dropped.

When the block manager reuses a cached block (ref 0, hashed) for new tokens, its KV is copied
here first; a later prefix hit on that block's hash copies it back into a free device block
instead of recomputing it. This is the design of vLLM v1's KV offloading (the "CPU offloading
connector": offload on eviction, keyed by the block hash, LRU in the CPU tier, copies batched per
step) and of LMCache's local CPU backend; the code is ours.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable

import torch

from engine.config import EngineConfig
from engine.model_config import ModelConfig


class KVHostTier:
    """A fixed pool of `num_blocks` host blocks, each holding one device KV block, keyed by the
    block hash (engine.block_manager.hash_block_tokens: it chains the cache salt, so users with
    different salts never share an entry).

    Storage: one tensor `kv` [num_blocks, num_layers, 2 (K, V), block_size, num_kv_heads,
    head_dim] in the device pool's dtype, allocated once (pinned host memory when the device pool
    is on CUDA; on CPU a separate bounded pool standing for it), so its size is fixed:
    `nbytes` bytes. Block-major, so one block is contiguous (one DMA per block on CUDA).

    Copies are recorded by the block manager while it schedules (`offload` on eviction,
    `restore` on a prefix hit) and run by `flush(device_kv)`, which the model runner calls
    before each forward pass: first every offload of the step (one gather over all layers, then
    one index_copy into the tier on CPU, or one non_blocking copy per run of consecutive host
    blocks on CUDA), then every restore (the reverse: host blocks gathered, one index_copy into
    the device pool). A host block with a copy pending is pinned: LRU eviction skips it,
    so one step's copies never conflict. On CUDA the copies run on a side stream, non_blocking,
    ordered after the work already queued and before the next forward pass (stream waits, no
    host synchronisation).

    Counters (blocks, since start-up): num_offloaded (copied into the tier), num_restored
    (copied back), num_dropped (entries evicted by LRU to make room, plus evicted device
    blocks the tier could not take because every host block was pinned).
    """

    def __init__(self, num_blocks: int, block_shape: tuple[int, ...], dtype: torch.dtype,
                 device: torch.device | str = "cpu") -> None:
        if num_blocks < 1:
            raise ValueError(f"num_blocks must be >= 1, got {num_blocks}")
        self.num_blocks = num_blocks
        self.device = torch.device(device)  # the device pool's device
        pin = self.device.type == "cuda"
        self.kv = torch.empty((num_blocks, *block_shape), dtype=dtype, pin_memory=pin)
        self.kv.zero_()
        self._index: OrderedDict[bytes, int] = OrderedDict()   # hash -> host block, LRU first
        self._free: deque[int] = deque(range(num_blocks))
        self._pinned: set[int] = set()
        self._offloads: list[tuple[int, int]] = []   # (device block, host block), this step
        self._restores: list[tuple[int, int]] = []   # (host block, device block), this step
        self._stream = torch.cuda.Stream(self.device) if pin else None
        self.num_offloaded = 0
        self.num_restored = 0
        self.num_dropped = 0
        # Called with the device blocks whose restore failed (their KV is not there).
        self.on_restore_failed: Callable[[list[int]], None] | None = None

    @classmethod
    def from_config(cls, config: EngineConfig, model_config: ModelConfig, dtype: torch.dtype,
                    device: torch.device | str) -> KVHostTier | None:
        """The tier EngineConfig asks for (num_kv_host_blocks, else kv_host_cache_gib GiB of
        blocks), or None when it is disabled (0) or prefix caching is off (nothing to keep)."""
        if not config.enable_prefix_caching:
            return None
        c = model_config
        shape = (c.num_hidden_layers, 2, config.block_size, c.num_key_value_heads, c.head_dim)
        num = config.num_kv_host_blocks
        if num is None:
            elem = torch.empty((), dtype=dtype).element_size()
            block_bytes = elem * shape[0] * shape[1] * shape[2] * shape[3] * shape[4]
            num = int(config.kv_host_cache_gib * 2**30) // block_bytes
        return cls(num, shape, dtype, device) if num > 0 else None

    # -- state -----------------------------------------------------------------------------

    @property
    def nbytes(self) -> int:
        return self.kv.numel() * self.kv.element_size()

    @property
    def num_used_blocks(self) -> int:
        return len(self._index)

    def __contains__(self, block_hash: bytes) -> bool:
        return block_hash in self._index

    def hashes(self) -> list[bytes]:
        """The hashes held, least recently used first."""
        return list(self._index)

    def slot(self, block_hash: bytes) -> int | None:
        """The host block holding `block_hash`, or None."""
        return self._index.get(block_hash)

    # -- recording (the block manager, while scheduling) ----------------------------------

    def offload(self, device_block: int, block_hash: bytes) -> bool:
        """Keep `device_block`'s KV (hash `block_hash`) before the device block is reused.

        Already held: only marks it most recently used (the host copy is the same KV). Else
        takes a free host block or evicts the least recently used unpinned entry (counted as
        dropped) and records the copy for the next flush. Returns False when every host block
        is pinned by this step's copies (the KV is dropped, counted)."""
        if block_hash in self._index:
            self._index.move_to_end(block_hash)
            return True
        slot = self._take_slot()
        if slot is None:
            self.num_dropped += 1
            return False
        self._index[block_hash] = slot
        self._pinned.add(slot)
        self._offloads.append((device_block, slot))
        self.num_offloaded += 1
        return True

    def pin(self, block_hash: bytes) -> None:
        """Keep `block_hash`'s entry until the next flush (call before offloads that could
        evict it). Raises KeyError when it is not held."""
        self._pinned.add(self._index[block_hash])

    def restore(self, block_hash: bytes, device_block: int) -> None:
        """Record copying `block_hash`'s KV into `device_block` at the next flush; the entry
        stays (most recently used), so evicting the block again needs no copy.
        Raises KeyError when it is not held."""
        slot = self._index[block_hash]
        self._index.move_to_end(block_hash)
        self._pinned.add(slot)
        self._restores.append((slot, device_block))
        self.num_restored += 1

    def _take_slot(self) -> int | None:
        if self._free:
            return self._free.popleft()
        for block_hash, slot in self._index.items():   # least recently used first
            if slot not in self._pinned:
                del self._index[block_hash]
                self.num_dropped += 1
                return slot
        return None

    def cancel_pending(self) -> None:
        """Forget this step's copies without running them (the device pool was reset): entries
        whose offload never ran are removed, since their host block holds no KV."""
        for _, slot in self._offloads:
            self._forget_slot(slot)
        self._offloads.clear()
        self._restores.clear()
        self._pinned.clear()

    # -- copying (the model runner, before a forward pass) ---------------------------------

    @property
    def has_pending(self) -> bool:
        return bool(self._offloads or self._restores)

    @property
    def pending_restores(self) -> list[tuple[int, int]]:
        """(host block, device block) of each restore recorded since the last flush."""
        return list(self._restores)

    def flush(self, device_kv: torch.Tensor) -> None:
        """Run this step's copies against the device pool `device_kv` [num_layers, 2,
        num_device_blocks, block_size, num_kv_heads, head_dim]: offloads first, then restores.
        On failure the restored device blocks are reported to on_restore_failed and the error
        is raised; the pending copies are cleared either way."""
        offloads, restores = self._offloads, self._restores
        self._offloads, self._restores = [], []
        self._pinned.clear()
        if not (offloads or restores):
            return
        try:
            if self._stream is None:
                self._copy(device_kv, offloads, restores)
            else:
                current = torch.cuda.current_stream(self.device)
                self._stream.wait_stream(current)       # the KV being offloaded is written
                with torch.cuda.stream(self._stream):
                    self._copy(device_kv, offloads, restores)
                current.wait_stream(self._stream)       # the forward pass reads restored KV
        except Exception:
            if self.on_restore_failed is not None:
                self.on_restore_failed([d for _, d in restores])
            for _, slot in offloads:
                self._forget_slot(slot)
            raise

    def _forget_slot(self, slot: int) -> None:
        for block_hash, s in list(self._index.items()):
            if s == slot:
                del self._index[block_hash]
                self._free.append(slot)

    def _copy(self, device_kv: torch.Tensor, offloads: list[tuple[int, int]],
              restores: list[tuple[int, int]]) -> None:
        dev = device_kv.device
        if offloads:
            src = torch.tensor([d for d, _ in offloads], dtype=torch.int64, device=dev)
            gathered = device_kv.index_select(2, src).movedim(2, 0)   # [k, L, 2, bs, H, D]
            slots = [s for _, s in offloads]
            if dev.type == "cpu":
                self.kv.index_copy_(0, torch.tensor(slots, dtype=torch.int64), gathered)
            else:
                gathered = gathered.contiguous()
                for j, s, n in _runs(slots):
                    self.kv[s:s + n].copy_(gathered[j:j + n], non_blocking=True)
        if restores:
            dst = torch.tensor([d for _, d in restores], dtype=torch.int64, device=dev)
            slots = [s for s, _ in restores]
            if dev.type == "cpu":
                staged = self.kv.index_select(0, torch.tensor(slots, dtype=torch.int64))
            else:
                staged = torch.empty((len(slots), *self.kv.shape[1:]), dtype=self.kv.dtype, device=dev)
                for j, s, n in _runs(slots):
                    staged[j:j + n].copy_(self.kv[s:s + n], non_blocking=True)
            device_kv.index_copy_(2, dst, staged.movedim(0, 2))

    def synchronize(self) -> None:
        """Wait for the copies queued so far (CUDA); read `kv` on the host only after this."""
        if self._stream is not None:
            self._stream.synchronize()

    # -- checking --------------------------------------------------------------------------

    def check_invariants(self) -> None:
        """Raise RuntimeError unless every host block is exactly once free or held, and every
        pending copy's host block is pinned."""
        held = list(self._index.values())
        if len(set(held)) != len(held):
            raise RuntimeError("a host KV block holds two hashes")
        free = set(self._free)
        if len(free) != len(self._free) or free & set(held):
            raise RuntimeError("a host KV block is both free and held (or free twice)")
        if len(free) + len(held) != self.num_blocks:
            raise RuntimeError(f"host tier: {len(free)} free + {len(held)} held != {self.num_blocks}")
        pending = {s for _, s in self._offloads} | {s for s, _ in self._restores}
        if not pending <= self._pinned or not self._pinned <= set(held):
            raise RuntimeError("a host KV block with a pending copy is not pinned, or a pinned one is not held")


def _runs(slots: list[int]) -> list[tuple[int, int, int]]:
    """(first index in `slots`, first slot, length) of each run of consecutive slots."""
    runs: list[tuple[int, int, int]] = []
    for j, s in enumerate(slots):
        if runs and runs[-1][1] + runs[-1][2] == s:
            runs[-1] = (runs[-1][0], runs[-1][1], runs[-1][2] + 1)
        else:
            runs.append((j, s, 1))
    return runs
