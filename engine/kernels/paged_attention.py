"""Triton kernel: paged decode attention (one new query token per sequence), GQA-aware.

Same contract as the reference `engine.attention.paged_attention` on a decode-only batch. One
program per (sequence, KV head) handles that head's whole group of query heads, so each K/V
tile is read once per group (the grouping of vLLM's PagedAttention v1 kernel and of
FlashDecoding-style GQA packing). K/V positions are walked in tiles of BLOCK_N tokens; each
position's slot is found through the block table, so the tile size is independent of the
cache's block size. Softmax is online (Milakov & Gimelshein, "Online normalizer calculation
for softmax", 2018), accumulated in float32.

Graph-safe: the launcher reads no device value, so it can be captured in a CUDA graph.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from engine.kernels._checks import check_paged_query, next_power_of_2


@triton.jit
def load_kv_tile(cache_ptr, block_tables_ptr, seq, kv_head, pos, n_mask, d, d_mask,
                 block_tables_stride_s, block_size, cache_stride_kv, cache_stride_block,
                 cache_stride_slot, cache_stride_h):
    """K and V ([BLOCK_N, BLOCK_D], in the cache's dtype, 0 where masked) of KV head `kv_head`
    at positions `pos` ([BLOCK_N], valid where n_mask) of sequence `seq`, read through its
    block table. Shared by the decode and prefill kernels."""
    block_id = tl.load(block_tables_ptr + seq * block_tables_stride_s + pos // block_size,
                       mask=n_mask, other=0).to(tl.int64)
    offset = (block_id * cache_stride_block + (pos % block_size) * cache_stride_slot
              + kv_head * cache_stride_h)  # [BLOCK_N]
    kv_mask = n_mask[:, None] & d_mask[None, :]
    k = tl.load(cache_ptr + offset[:, None] + d[None, :], mask=kv_mask, other=0.0)
    v = tl.load(cache_ptr + cache_stride_kv + offset[:, None] + d[None, :], mask=kv_mask,
                other=0.0)
    return k, v


@triton.jit
def _paged_decode_kernel(
    out_ptr, query_ptr, cache_ptr, block_tables_ptr, seq_lens_ptr, scale,
    query_stride_t, query_stride_h, out_stride_t, out_stride_h,
    cache_stride_kv, cache_stride_block, cache_stride_slot, cache_stride_h,
    block_tables_stride_s, block_size, query_group, head_dim,
    BLOCK_G: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    seq = tl.program_id(0).to(tl.int64)
    kv_head = tl.program_id(1)
    g = tl.arange(0, BLOCK_G)
    n = tl.arange(0, BLOCK_N)
    d = tl.arange(0, BLOCK_D)
    heads = kv_head * query_group + g  # query heads of this KV head's group
    g_mask = g < query_group
    d_mask = d < head_dim
    q_mask = g_mask[:, None] & d_mask[None, :]
    q = tl.load(query_ptr + seq * query_stride_t + heads[:, None] * query_stride_h + d[None, :],
                mask=q_mask, other=0.0).to(tl.float32)  # [BLOCK_G, BLOCK_D]
    seq_len = tl.load(seq_lens_ptr + seq)

    m_i = tl.full([BLOCK_G], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    for start in range(0, seq_len, BLOCK_N):
        pos = start + n
        n_mask = pos < seq_len
        k, v = load_kv_tile(cache_ptr, block_tables_ptr, seq, kv_head, pos, n_mask, d, d_mask,
                            block_tables_stride_s, block_size, cache_stride_kv,
                            cache_stride_block, cache_stride_slot, cache_stride_h)
        k = k.to(tl.float32)  # [BLOCK_N, BLOCK_D]
        v = v.to(tl.float32)
        # A group of <= 8 rows is below tl.dot's 16-row minimum; a broadcast product is exact.
        s = tl.sum(q[:, None, :] * k[None, :, :], axis=2) * scale  # [BLOCK_G, BLOCK_N]
        s = tl.where(n_mask[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])  # [BLOCK_G, BLOCK_N]
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
        m_i = m_new
    # seq_len 0 (a padded CUDA-graph row) leaves l_i 0: write zeros, not NaN.
    out = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    tl.store(out_ptr + seq * out_stride_t + heads[:, None] * out_stride_h + d[None, :],
             out.to(out_ptr.dtype.element_ty), mask=q_mask)


def paged_decode_attention(query: torch.Tensor, kv_cache: torch.Tensor, block_tables: torch.Tensor,
                           seq_lens: torch.Tensor, block_size: int, scale: float) -> torch.Tensor:
    """Attention of one query token per sequence over its K/V, read through its block table.

    query: [num_seqs, num_heads, head_dim], float32/bfloat16/float16, unit stride on head_dim.
    kv_cache: contiguous [2, num_blocks, block_size, num_kv_heads, head_dim]; num_heads must be
        a multiple of num_kv_heads (query head h reads KV head h // (num_heads // num_kv_heads)).
    block_tables: int32 [num_seqs, max_blocks_per_seq]. seq_lens: int64 [num_seqs], tokens of
        each sequence in the cache including this step's (0 gives a zero output row).
    Returns [num_seqs, num_heads, head_dim] in query's dtype; softmax accumulates in float32.
    Raises ValueError on a wrong shape, dtype, stride or device.
    """
    num_seqs, num_heads, num_kv_heads, head_dim, _ = check_paged_query(
        query, kv_cache, block_size, block_tables, seq_lens)
    if block_tables.shape[0] != num_seqs or seq_lens.shape[0] != num_seqs:
        raise ValueError(f"query has {num_seqs} sequences, block_tables {block_tables.shape[0]}, "
                         f"seq_lens {seq_lens.shape[0]}")
    out = torch.empty_like(query, memory_format=torch.contiguous_format)
    if num_seqs == 0:
        return out
    query_group = num_heads // num_kv_heads
    block_g, block_d = next_power_of_2(query_group), next_power_of_2(head_dim)
    # Keep the [BLOCK_G, BLOCK_N, BLOCK_D] products near 8K floats (registers of 4 warps).
    block_n = max(8, min(64, 8192 // (block_g * block_d)))  # a power of 2
    _paged_decode_kernel[(num_seqs, num_kv_heads)](
        out, query, kv_cache, block_tables, seq_lens, float(scale),
        query.stride(0), query.stride(1), out.stride(0), out.stride(1),
        kv_cache.stride(0), kv_cache.stride(1), kv_cache.stride(2), kv_cache.stride(3),
        block_tables.stride(0), block_size, query_group, head_dim,
        BLOCK_G=block_g, BLOCK_N=block_n, BLOCK_D=block_d,
    )
    return out
