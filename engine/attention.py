"""Paged attention, plain-PyTorch reference path.

The KV cache of one layer is a pool of fixed-size blocks, `[2, num_blocks, block_size,
num_kv_heads, head_dim]` (index 0 = K, 1 = V). A sequence owns a block table (the ids of its
blocks, in order); token position `p` of that sequence lives in slot
`block_table[p // block_size] * block_size + p % block_size`. This is the layout of vLLM's
PagedAttention (Kwon et al., "Efficient Memory Management for Large Language Model Serving with
PagedAttention", SOSP 2023). Triton kernels (engine.kernels) sit beside these functions with
the same signatures; on CUDA with Triton installed these functions dispatch to them, and
tests/engine/test_kernels.py checks kernel == reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from engine.kernels import use_triton


@dataclass
class AttentionMetadata:
    """One step's batch: sequences in order, each contributing `query_len >= 1` new tokens
    (a prefill chunk or one decode token). Built on the host once per step.

    slot_mapping: int64 [num_tokens]; KV slot of each new token = block_id * block_size + offset.
    query_start_loc: int64 [num_seqs + 1]; cumulative query lengths (starts at 0).
    seq_lens: int64 [num_seqs]; tokens in the KV cache after this step (cached + new).
    block_tables: int32 [num_seqs, max_blocks_per_seq]; padded with 0.
    query_start_loc_host / seq_lens_host: host copies for the reference path's loop.
    is_decode_only: every query_len == 1.
    """

    slot_mapping: torch.Tensor
    query_start_loc: torch.Tensor
    seq_lens: torch.Tensor
    block_tables: torch.Tensor
    block_size: int
    query_start_loc_host: list[int]
    seq_lens_host: list[int]
    is_decode_only: bool
    # The reference path's plan for single-query sequences, built on first use and shared by
    # every layer of the step (see _single_query_groups).
    _groups: list[_QueryGroup] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def num_seqs(self) -> int:
        return len(self.seq_lens_host)

    @property
    def num_tokens(self) -> int:
        return self.query_start_loc_host[-1]


def make_attention_metadata(
    seq_lens: Sequence[int],
    query_lens: Sequence[int],
    block_tables: Sequence[Sequence[int]],
    block_size: int,
    device: torch.device | str = "cpu",
) -> AttentionMetadata:
    """Build the metadata for one step from host lists.

    seq_lens[i]: tokens of sequence i in the KV cache after this step (cached + new).
    query_lens[i]: new tokens of sequence i in this step (1 for a decode, a chunk for prefill);
        they occupy positions seq_lens[i] - query_lens[i] .. seq_lens[i] - 1.
    block_tables[i]: block ids of sequence i, at least ceil(seq_lens[i] / block_size) of them.
    Returns tensors on `device`. The matching `positions` tensor for the model is
    `positions_for(seq_lens, query_lens)`.
    Raises ValueError on inconsistent lengths or a block table too short for its sequence.
    """
    if not (len(seq_lens) == len(query_lens) == len(block_tables)) or not seq_lens:
        raise ValueError("seq_lens, query_lens and block_tables must be non-empty and of equal length")
    if block_size <= 0:
        raise ValueError(f"block_size must be positive, got {block_size}")
    slots: list[int] = []
    starts = [0]
    for seq_len, query_len, table in zip(seq_lens, query_lens, block_tables):
        if not 1 <= query_len <= seq_len:
            raise ValueError(f"need 1 <= query_len <= seq_len, got query_len={query_len}, seq_len={seq_len}")
        if len(table) * block_size < seq_len:
            raise ValueError(f"block table of {len(table)} blocks cannot hold {seq_len} tokens "
                             f"at block_size {block_size}")
        for pos in range(seq_len - query_len, seq_len):
            slots.append(table[pos // block_size] * block_size + pos % block_size)
        starts.append(starts[-1] + query_len)
    max_blocks = max(len(t) for t in block_tables)
    padded = [list(t) + [0] * (max_blocks - len(t)) for t in block_tables]
    return AttentionMetadata(
        slot_mapping=torch.tensor(slots, dtype=torch.int64, device=device),
        query_start_loc=torch.tensor(starts, dtype=torch.int64, device=device),
        seq_lens=torch.tensor(list(seq_lens), dtype=torch.int64, device=device),
        block_tables=torch.tensor(padded, dtype=torch.int32, device=device),
        block_size=block_size,
        query_start_loc_host=starts,
        seq_lens_host=list(seq_lens),
        is_decode_only=all(q == 1 for q in query_lens),
    )


def positions_for(seq_lens: Sequence[int], query_lens: Sequence[int],
                  device: torch.device | str = "cpu") -> torch.Tensor:
    """int64 [num_tokens]: the position of every new token, sequences in order."""
    pos = [p for s, q in zip(seq_lens, query_lens) for p in range(s - q, s)]
    return torch.tensor(pos, dtype=torch.int64, device=device)


def write_kv_cache(key: torch.Tensor, value: torch.Tensor, kv_cache: torch.Tensor,
                   slot_mapping: torch.Tensor) -> None:
    """Store this step's K and V in one layer's cache, in place.

    key, value: [num_tokens, num_kv_heads, head_dim], cast to the cache's dtype.
    kv_cache: [2, num_blocks, block_size, num_kv_heads, head_dim].
    slot_mapping: int64 [num_tokens], every slot in [0, num_blocks * block_size).
    """
    if use_triton(kv_cache):  # CUDA with Triton: the kernel twin (engine.kernels)
        from engine.kernels import dispatch
        return dispatch.write_kv_cache(key, value, kv_cache, slot_mapping)
    num_kv_heads, head_dim = kv_cache.shape[-2:]
    flat = kv_cache.view(2, -1, num_kv_heads, head_dim)  # [2, num_slots, num_kv_heads, head_dim]
    flat[0].index_copy_(0, slot_mapping, key.to(kv_cache.dtype))
    flat[1].index_copy_(0, slot_mapping, value.to(kv_cache.dtype))


def paged_attention(query: torch.Tensor, kv_cache: torch.Tensor, metadata: AttentionMetadata,
                    scale: float) -> torch.Tensor:
    """Causal attention of this step's queries over K/V read through the block tables.

    query: [num_tokens, num_heads, head_dim] -> returns [num_tokens, num_heads, head_dim]
    (query's dtype). A query at position p = seq_len - query_len + i sees KV positions 0..p.
    Grouped-query attention: num_heads % num_kv_heads == 0; query head h reads KV head
    h // (num_heads // num_kv_heads), as in Hugging Face's `repeat_kv`.
    The KV of this step must already be written (`write_kv_cache`).
    """
    num_heads = query.shape[1]
    num_kv_heads = kv_cache.shape[-2]
    if query.dim() != 3 or kv_cache.dim() != 5 or num_heads % num_kv_heads:
        raise ValueError(f"bad shapes: query {tuple(query.shape)}, kv_cache {tuple(kv_cache.shape)}")
    if use_triton(query):  # CUDA with Triton: the kernel twin (engine.kernels)
        from engine.kernels import dispatch
        return dispatch.paged_attention(query, kv_cache, metadata, scale)
    if metadata.is_decode_only:
        return _decode_attention(query, kv_cache, metadata, scale)
    return _varlen_attention(query, kv_cache, metadata, scale)


def _gather_kv(kv_cache: torch.Tensor, block_ids: torch.Tensor, seq_len: int) -> torch.Tensor:
    """[2, seq_len, num_kv_heads, head_dim]: one sequence's K and V, in position order."""
    blocks = kv_cache[:, block_ids]  # [2, n_blocks, block_size, num_kv_heads, head_dim]
    return blocks.flatten(1, 2)[:, :seq_len]  # [2, n_blocks * block_size -> seq_len, kv_heads, head_dim]


@dataclass
class _QueryGroup:
    """Single-query sequences whose attention runs as one padded batch.

    rows: int64 [n], the query rows (token indices) of the group's sequences, or None when the
    group is every row of the step in order. block_ids: int64 [n, max_blocks], each row's block
    table cut (or padded with block 0) to the group's longest. max_len: the group's longest
    seq_len (the padded K/V length). mask: bool [n, 1, 1, max_len], True = attend (a position
    below the row's seq_len), or None when every row has seq_len == max_len.
    """

    rows: torch.Tensor | None
    block_ids: torch.Tensor
    max_len: int
    mask: torch.Tensor | None


# Cost model for grouping single-query sequences: padding a row by one KV position costs one
# unit, starting one more group (one more gather + SDPA call per layer) costs this many. Measured
# on a 2-core x86 CPU (float32, 3 KV heads x 64): ~0.1 us per padded position per layer against
# ~50 us of fixed cost per group per layer.
_GROUP_COST_POSITIONS = 512


def _split_points(lens: list[int]) -> list[int]:
    """Boundaries splitting ascending `lens` into contiguous groups that minimise
    sum(group size * group max) + _GROUP_COST_POSITIONS * number of groups (dynamic programming
    over the distinct lengths). Returns end indices (exclusive), the last being len(lens)."""
    ends = [i + 1 for i in range(len(lens)) if i + 1 == len(lens) or lens[i + 1] != lens[i]]
    best = [0.0] * (len(ends) + 1)  # best[j]: cost of covering lens[:ends[j - 1]]
    cut = [0] * (len(ends) + 1)
    for j in range(1, len(ends) + 1):
        end, longest = ends[j - 1], lens[ends[j - 1] - 1]
        options = ((best[i] + (end - (ends[i - 1] if i else 0)) * longest + _GROUP_COST_POSITIONS, i)
                   for i in range(j))
        best[j], cut[j] = min(options)
    points, j = [], len(ends)
    while j:
        points.append(ends[j - 1])
        j = cut[j]
    return points[::-1]


def _single_query_groups(metadata: AttentionMetadata) -> list[_QueryGroup]:
    """The step's single-query sequences (query_len == 1: decodes), grouped by length so that
    padding to a group's longest wastes little; built once per step, on first use."""
    if metadata._groups is not None:
        return metadata._groups
    starts, seq_lens, block_size = metadata.query_start_loc_host, metadata.seq_lens_host, metadata.block_size
    singles = [i for i in range(metadata.num_seqs) if starts[i + 1] - starts[i] == 1]
    singles.sort(key=lambda i: seq_lens[i])
    device = metadata.block_tables.device
    groups, begin = [], 0
    for end in _split_points([seq_lens[i] for i in singles]):
        members = singles[begin:end]
        lens = [seq_lens[i] for i in members]
        max_len = lens[-1]
        tables = metadata.block_tables[members, :-(-max_len // block_size)]
        in_order = members == list(range(metadata.num_seqs))
        rows = None if in_order else torch.tensor([starts[i] for i in members], device=device)
        mask = None
        if lens[0] != max_len:
            k_pos = torch.arange(max_len, device=device)
            mask = (k_pos[None, :] < torch.tensor(lens, device=device)[:, None])[:, None, None, :]
        groups.append(_QueryGroup(rows, tables.long(), max_len, mask))
        begin = end
    metadata._groups = groups
    return groups


def _varlen_attention(query: torch.Tensor, kv_cache: torch.Tensor, metadata: AttentionMetadata,
                      scale: float) -> torch.Tensor:
    # Sequences with several queries (prefill chunks) one at a time: their lengths are ragged
    # and the loop keeps the reference obviously correct. Single-query sequences (decodes mixed
    # into the batch) go through the batched decode path.
    out = torch.empty_like(query)
    block_size = metadata.block_size
    starts = metadata.query_start_loc_host
    for i, seq_len in enumerate(metadata.seq_lens_host):
        start, end = starts[i], starts[i + 1]
        query_len = end - start
        if query_len == 1:
            continue
        n_blocks = -(-seq_len // block_size)
        kv = _gather_kv(kv_cache, metadata.block_tables[i, :n_blocks].long(), seq_len)
        q = query[start:end].transpose(0, 1).unsqueeze(0)  # [1, num_heads, query_len, head_dim]
        k = kv[0].to(query.dtype).transpose(0, 1).unsqueeze(0)  # [1, num_kv_heads, seq_len, head_dim]
        v = kv[1].to(query.dtype).transpose(0, 1).unsqueeze(0)  # [1, num_kv_heads, seq_len, head_dim]
        if query_len == seq_len:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale, enable_gqa=True)
        else:
            q_pos = torch.arange(seq_len - query_len, seq_len, device=query.device)
            k_pos = torch.arange(seq_len, device=query.device)
            mask = k_pos[None, :] <= q_pos[:, None]  # [query_len, seq_len], True = attend
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale, enable_gqa=True)
        out[start:end] = o[0].transpose(0, 1)  # [query_len, num_heads, head_dim]
    for group in _single_query_groups(metadata):
        out.index_copy_(0, group.rows, _group_attention(query[group.rows], kv_cache, group, scale))
    return out


def _decode_attention(query: torch.Tensor, kv_cache: torch.Tensor, metadata: AttentionMetadata,
                      scale: float) -> torch.Tensor:
    # One query per sequence. Gathering every sequence's blocks padded to the longest block
    # table reads and copies mostly padding when lengths differ, so sequences are grouped by
    # length (_single_query_groups) and each group is padded only to its own longest.
    groups = _single_query_groups(metadata)
    if len(groups) == 1 and groups[0].rows is None:
        return _group_attention(query, kv_cache, groups[0], scale)
    out = torch.empty_like(query)
    for group in groups:
        out.index_copy_(0, group.rows, _group_attention(query[group.rows], kv_cache, group, scale))
    return out


def _group_attention(query: torch.Tensor, kv_cache: torch.Tensor, group: _QueryGroup,
                     scale: float) -> torch.Tensor:
    """query: [n, num_heads, head_dim], one query per sequence of `group` (each at its last
    position) -> [n, num_heads, head_dim]."""
    blocks = kv_cache[:, group.block_ids]  # [2, n, group_blocks, block_size, kv_heads, head_dim]
    kv = blocks.flatten(2, 3)[:, :, :group.max_len].to(query.dtype)  # [2, n, max_len, kv_heads, head_dim]
    k = kv[0].transpose(1, 2)  # [n, num_kv_heads, max_len, head_dim]
    v = kv[1].transpose(1, 2)  # [n, num_kv_heads, max_len, head_dim]
    q = query.unsqueeze(2)  # [n, num_heads, 1, head_dim]
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=group.mask, scale=scale, enable_gqa=True)
    return o.squeeze(2)  # [n, num_heads, head_dim]
