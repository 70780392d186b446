"""Triton kernel: causal attention of a mixed batch (prefill chunks and decodes) over paged KV.

Same contract as the reference `engine.attention.paged_attention` on any batch. Each query
chunk attends to its sequence's cached context (a prefix-cache hit or earlier chunks of a
chunked prefill) and to itself causally, all read from the cache through the block table,
so this step's K/V must already be written. Tiling and online softmax follow FlashAttention-2
(Dao, 2023): one program per (query tile of BLOCK_M tokens, sequence, query head), walking K/V
in tiles of BLOCK_N positions up to the tile's last query position.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from engine.kernels._checks import check_index, check_paged_query, next_power_of_2
from engine.kernels.paged_attention import load_kv_tile


@triton.jit
def _paged_prefill_kernel(
    out_ptr, query_ptr, cache_ptr, block_tables_ptr, seq_lens_ptr, query_start_loc_ptr, scale,
    query_stride_t, query_stride_h, out_stride_t, out_stride_h,
    cache_stride_kv, cache_stride_block, cache_stride_slot, cache_stride_h,
    block_tables_stride_s, block_size, query_group, head_dim,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
    DOT_FLOAT32: tl.constexpr, IEEE: tl.constexpr,
):
    tile = tl.program_id(0)
    seq = tl.program_id(1).to(tl.int64)
    head = tl.program_id(2)
    q_start = tl.load(query_start_loc_ptr + seq)
    query_len = tl.load(query_start_loc_ptr + seq + 1) - q_start
    if tile * BLOCK_M >= query_len:
        return
    seq_len = tl.load(seq_lens_ptr + seq)
    context_len = seq_len - query_len
    kv_head = head // query_group
    m = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    n = tl.arange(0, BLOCK_N)
    d = tl.arange(0, BLOCK_D)
    m_mask = m < query_len
    d_mask = d < head_dim
    q_pos = context_len + m  # [BLOCK_M]; padded rows still see position 0, so no row is empty
    rows = (q_start + m).to(tl.int64)
    q = tl.load(query_ptr + rows[:, None] * query_stride_t + head * query_stride_h + d[None, :],
                mask=m_mask[:, None] & d_mask[None, :], other=0.0)  # [BLOCK_M, BLOCK_D]
    if DOT_FLOAT32:
        q = q.to(tl.float32)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    kv_end = tl.minimum(seq_len, context_len + (tile + 1) * BLOCK_M)
    for start in range(0, kv_end, BLOCK_N):
        pos = start + n
        n_mask = pos < seq_len
        k, v = load_kv_tile(cache_ptr, block_tables_ptr, seq, kv_head, pos, n_mask, d, d_mask,
                            block_tables_stride_s, block_size, cache_stride_kv,
                            cache_stride_block, cache_stride_slot, cache_stride_h)
        k = k.to(q.dtype)  # [BLOCK_N, BLOCK_D]
        v = v.to(q.dtype)
        if IEEE:
            s = tl.dot(q, tl.trans(k), input_precision="ieee")
        else:
            s = tl.dot(q, tl.trans(k))
        s = s * scale  # [BLOCK_M, BLOCK_N], float32
        causal = (pos[None, :] <= q_pos[:, None]) & n_mask[None, :]
        s = tl.where(causal, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if IEEE:
            pv = tl.dot(p.to(v.dtype), v, input_precision="ieee")
        else:
            pv = tl.dot(p.to(v.dtype), v)
        acc = acc * alpha[:, None] + pv
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(out_ptr + rows[:, None] * out_stride_t + head * out_stride_h + d[None, :],
             out.to(out_ptr.dtype.element_ty), mask=m_mask[:, None] & d_mask[None, :])


def paged_prefill_attention(query: torch.Tensor, kv_cache: torch.Tensor, block_tables: torch.Tensor,
                            seq_lens: torch.Tensor, query_start_loc: torch.Tensor,
                            max_query_len: int, block_size: int, scale: float) -> torch.Tensor:
    """Causal attention of ragged query chunks over their sequences' paged K/V.

    query: [num_tokens, num_heads, head_dim], float32/bfloat16/float16, unit stride on head_dim;
        sequence i's tokens are rows query_start_loc[i]..query_start_loc[i+1]-1, at positions
        seq_lens[i] - query_len_i .. seq_lens[i] - 1 (earlier positions are cached context).
    kv_cache: contiguous [2, num_blocks, block_size, num_kv_heads, head_dim], already holding
        this step's K/V; num_heads must be a multiple of num_kv_heads.
    block_tables: int32 [num_seqs, max_blocks_per_seq]. seq_lens: int64 [num_seqs].
    query_start_loc: int64 [num_seqs + 1]. max_query_len: host int, the longest chunk (sizes
        the grid without a device sync).
    Returns [num_tokens, num_heads, head_dim] in query's dtype. float32 matmuls are exact
    (IEEE) on CUDA; bfloat16/float16 matmuls accumulate in float32. Under the CPU interpreter
    every matmul is float32, because Triton 3.9's interpreter computes bfloat16 tl.dot wrongly.
    Raises ValueError on a wrong shape, dtype, stride or device.
    """
    num_tokens, num_heads, num_kv_heads, head_dim, device = check_paged_query(
        query, kv_cache, block_size, block_tables, seq_lens)
    check_index("query_start_loc", query_start_loc, 1, (torch.int64, torch.int32), device)
    num_seqs = seq_lens.shape[0]
    if block_tables.shape[0] != num_seqs or query_start_loc.shape[0] != num_seqs + 1:
        raise ValueError(f"seq_lens has {num_seqs} sequences, block_tables "
                         f"{block_tables.shape[0]}, query_start_loc {query_start_loc.shape[0]} "
                         "(needs num_seqs + 1)")
    if max_query_len < 1 or max_query_len > max(num_tokens, 1):
        raise ValueError(f"max_query_len {max_query_len} out of range for {num_tokens} tokens")
    out = torch.empty_like(query, memory_format=torch.contiguous_format)
    if num_tokens == 0:
        return out
    if head_dim < 16:
        raise ValueError(f"head_dim must be >= 16 for tl.dot, got {head_dim}")
    block_m = 16 if max_query_len <= 16 else 32
    block_n = 32
    on_cuda = query.is_cuda
    grid = (triton.cdiv(max_query_len, block_m), num_seqs, num_heads)
    _paged_prefill_kernel[grid](
        out, query, kv_cache, block_tables, seq_lens, query_start_loc, float(scale),
        query.stride(0), query.stride(1), out.stride(0), out.stride(1),
        kv_cache.stride(0), kv_cache.stride(1), kv_cache.stride(2), kv_cache.stride(3),
        block_tables.stride(0), block_size, num_heads // num_kv_heads, head_dim,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=next_power_of_2(head_dim),
        DOT_FLOAT32=not on_cuda, IEEE=on_cuda and query.dtype == torch.float32,
    )
    return out
