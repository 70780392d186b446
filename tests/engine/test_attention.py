"""paged_attention / write_kv_cache against a dense causal attention computed independently.

The oracle gathers nothing through block tables: it keeps each sequence's K/V as one contiguous
tensor, repeats KV heads for GQA, and does softmax(Q K^T * scale + causal mask) V in float64.
"""

from __future__ import annotations

import math
import random

import pytest
import torch

from engine import attention
from engine.attention import make_attention_metadata, paged_attention, positions_for, write_kv_cache


def dense_causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """q: [query_len, H, D] for the last query_len positions; k, v: [seq_len, H_kv, D] -> [query_len, H, D]."""
    query_len, num_heads, _ = q.shape
    seq_len, num_kv_heads, _ = k.shape
    group = num_heads // num_kv_heads
    k = k.double().repeat_interleave(group, dim=1).transpose(0, 1)  # [H, seq_len, D]
    v = v.double().repeat_interleave(group, dim=1).transpose(0, 1)  # [H, seq_len, D]
    scores = torch.einsum("qhd,hkd->hqk", q.double(), k) * scale  # [H, query_len, seq_len]
    q_pos = torch.arange(seq_len - query_len, seq_len)[:, None]
    scores = scores.masked_fill(torch.arange(seq_len)[None, :] > q_pos, float("-inf"))
    return torch.einsum("hqk,hkd->qhd", scores.softmax(-1), v)  # [query_len, H, D]


def run_step(cases: list[tuple[int, int]], block_size: int, num_heads: int, num_kv_heads: int,
             head_dim: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """cases: (cached_len, query_len) per sequence. Returns (paged output, dense output)."""
    gen = torch.Generator().manual_seed(seed)
    rng = random.Random(seed)
    seq_lens = [c + q for c, q in cases]
    query_lens = [q for _, q in cases]
    blocks_needed = [math.ceil(s / block_size) for s in seq_lens]
    num_blocks = sum(blocks_needed) + 3  # spare blocks that belong to nobody
    ids = list(range(num_blocks))
    rng.shuffle(ids)  # non-contiguous, out-of-order block ids
    tables, taken = [], 0
    for n in blocks_needed:
        tables.append(ids[taken:taken + n])
        taken += n
    # Stale values everywhere: anything read outside a sequence's own positions would show.
    kv_cache = torch.randn(2, num_blocks, block_size, num_kv_heads, head_dim, generator=gen) * 30
    full_k = [torch.randn(s, num_kv_heads, head_dim, generator=gen) for s in seq_lens]
    full_v = [torch.randn(s, num_kv_heads, head_dim, generator=gen) for s in seq_lens]
    # Earlier steps: the cached prefix of every sequence is already in the pool.
    for (cached, _), table, k, v in zip(cases, tables, full_k, full_v):
        if cached:
            old = make_attention_metadata([cached], [cached], [table], block_size)
            write_kv_cache(k[:cached], v[:cached], kv_cache, old.slot_mapping)
    meta = make_attention_metadata(seq_lens, query_lens, tables, block_size)
    new_k = torch.cat([k[c:] for (c, _), k in zip(cases, full_k)])  # [num_tokens, H_kv, D]
    new_v = torch.cat([v[c:] for (c, _), v in zip(cases, full_v)])
    write_kv_cache(new_k, new_v, kv_cache, meta.slot_mapping)
    query = torch.randn(sum(query_lens), num_heads, head_dim, generator=gen)
    scale = head_dim ** -0.5
    out = paged_attention(query, kv_cache, meta, scale)
    starts = meta.query_start_loc_host
    expected = torch.cat([
        dense_causal_attention(query[starts[i]:starts[i + 1]], full_k[i], full_v[i], scale)
        for i in range(len(cases))])
    return out, expected


MIXED_BATCHES = {
    "one_prefill": [(0, 7)],
    "ragged_prefills": [(0, 1), (0, 17), (0, 5), (0, 33)],
    "decodes": [(4, 1), (15, 1), (16, 1), (0, 1), (40, 1)],
    "prefill_chunks_after_cache": [(16, 16), (5, 9), (31, 2)],
    "mixed_chunk_and_decode": [(12, 1), (0, 20), (7, 1), (16, 8), (33, 1)],
    # Lengths spread far enough that decodes run as several length groups, listed out of order.
    "decodes_of_spread_lengths": [(600, 1), (3, 1), (300, 1), (0, 1), (450, 1), (10, 1), (609, 1), (1, 1)],
    "spread_decodes_with_a_chunk": [(600, 1), (2, 1), (40, 24), (300, 1), (5, 1), (0, 9), (580, 1)],
}


@pytest.mark.parametrize("block_size", [1, 4, 16])
@pytest.mark.parametrize("num_heads,num_kv_heads", [(4, 4), (6, 2), (9, 3), (8, 1)])
@pytest.mark.parametrize("batch", list(MIXED_BATCHES))
def test_paged_attention_equals_dense(block_size: int, num_heads: int, num_kv_heads: int, batch: str) -> None:
    seed = hash((block_size, num_heads, batch)) % 10_000
    out, expected = run_step(MIXED_BATCHES[batch], block_size, num_heads, num_kv_heads, 32, seed)
    assert out.shape == expected.shape
    torch.testing.assert_close(out.double(), expected, atol=2e-5, rtol=1e-5)


def test_decodes_of_spread_lengths_run_as_several_groups_covering_every_row() -> None:
    seq_lens = [601, 4, 301, 1, 451, 11, 610, 2]
    tables = [list(range(s)) for s in seq_lens]  # block_size 1
    meta = make_attention_metadata(seq_lens, [1] * len(seq_lens), tables, block_size=1)
    groups = attention._single_query_groups(meta)
    assert len(groups) > 1
    rows = sorted(r for g in groups for r in g.rows.tolist())
    assert rows == list(range(len(seq_lens)))
    for g in groups:  # each group pads only to its own longest sequence
        assert g.max_len == max(seq_lens[r] for r in g.rows.tolist())
    same = make_attention_metadata([9] * 4, [1] * 4, [[0] * 9] * 4, block_size=1)
    (group,) = attention._single_query_groups(same)
    assert group.rows is None and group.mask is None


@pytest.mark.parametrize("seed", range(6))
def test_random_batches(seed: int) -> None:
    rng = random.Random(seed)
    cases = [(rng.choice([0, 0, rng.randrange(1, 50)]), rng.choice([1, 1, rng.randrange(1, 30)]))
             for _ in range(rng.randrange(1, 7))]
    out, expected = run_step(cases, rng.choice([2, 8, 16]), 8, rng.choice([1, 2, 4, 8]), 64, seed)
    torch.testing.assert_close(out.double(), expected, atol=2e-5, rtol=1e-5)


def test_write_kv_cache_touches_only_the_mapped_slots() -> None:
    kv_cache = torch.zeros(2, 6, 4, 2, 8)
    meta = make_attention_metadata([6], [3], [[5, 2]], block_size=4)  # positions 3, 4, 5
    assert meta.slot_mapping.tolist() == [5 * 4 + 3, 2 * 4 + 0, 2 * 4 + 1]
    key, value = torch.randn(3, 2, 8), torch.randn(3, 2, 8)
    write_kv_cache(key, value, kv_cache, meta.slot_mapping)
    torch.testing.assert_close(kv_cache[0, 5, 3], key[0])
    torch.testing.assert_close(kv_cache[1, 2, :2], value[1:])
    written = torch.zeros(6, 4, dtype=torch.bool)
    written[5, 3] = written[2, 0] = written[2, 1] = True
    assert (kv_cache[:, ~written] == 0).all()


def test_write_kv_cache_casts_to_cache_dtype() -> None:
    kv_cache = torch.zeros(2, 2, 4, 1, 4, dtype=torch.bfloat16)
    key = torch.randn(1, 1, 4)
    write_kv_cache(key, key, kv_cache, torch.tensor([5]))
    torch.testing.assert_close(kv_cache[0, 1, 1], key[0].to(torch.bfloat16))


def test_metadata_fields() -> None:
    meta = make_attention_metadata([5, 9, 1], [5, 1, 1], [[3, 0], [1, 4, 7], [2]], block_size=4)
    assert meta.query_start_loc.tolist() == [0, 5, 6, 7]
    assert meta.query_start_loc_host == [0, 5, 6, 7]
    assert meta.seq_lens.tolist() == [5, 9, 1] and meta.seq_lens.dtype == torch.int64
    assert meta.block_tables.dtype == torch.int32
    assert meta.block_tables.tolist() == [[3, 0, 0], [1, 4, 7], [2, 0, 0]]
    assert meta.slot_mapping.tolist() == [12, 13, 14, 15, 0, 7 * 4 + 0, 2 * 4 + 0]
    assert not meta.is_decode_only
    assert make_attention_metadata([3, 4], [1, 1], [[0], [1]], 4).is_decode_only
    assert positions_for([5, 9], [2, 1]).tolist() == [3, 4, 8]


@pytest.mark.parametrize("seq_lens,query_lens,tables,block_size", [
    ([4], [5], [[0]], 8),          # more new tokens than the sequence holds
    ([4], [0], [[0]], 8),          # a sequence with no new token
    ([9], [1], [[0]], 8),          # block table too short
    ([4, 4], [1], [[0], [1]], 8),  # lists of different lengths
    ([], [], [], 8),               # empty batch
    ([4], [1], [[0]], 0),          # bad block size
])
def test_metadata_rejects_inconsistent_input(seq_lens, query_lens, tables, block_size) -> None:
    with pytest.raises(ValueError):
        make_attention_metadata(seq_lens, query_lens, tables, block_size)


def test_paged_attention_rejects_bad_gqa_shapes() -> None:
    meta = make_attention_metadata([1], [1], [[0]], 4)
    with pytest.raises(ValueError):
        paged_attention(torch.randn(1, 5, 8), torch.zeros(2, 1, 4, 2, 8), meta, 1.0)
