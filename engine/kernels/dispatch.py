"""The Triton path with the reference signatures of engine.attention: `write_kv_cache` and
`paged_attention(query, kv_cache, metadata, scale)`, choosing the decode kernel for a
decode-only batch and the prefill kernel otherwise."""

from __future__ import annotations

import torch

from engine.attention import AttentionMetadata
from engine.kernels.kv_cache_write import write_kv_cache
from engine.kernels.paged_attention import paged_decode_attention
from engine.kernels.prefill_attention import paged_prefill_attention

__all__ = ["paged_attention", "write_kv_cache"]


def paged_attention(query: torch.Tensor, kv_cache: torch.Tensor, metadata: AttentionMetadata,
                    scale: float) -> torch.Tensor:
    """Triton twin of engine.attention.paged_attention: same shapes, dtypes and semantics.

    query: [num_tokens, num_heads, head_dim] -> [num_tokens, num_heads, head_dim].
    Reads only host fields of `metadata` that are fixed for a decode batch of a given size, so a
    decode step can be captured in a CUDA graph. Raises ValueError as the launchers do.
    """
    if metadata.is_decode_only:
        return paged_decode_attention(query, kv_cache, metadata.block_tables, metadata.seq_lens,
                                      metadata.block_size, scale)
    starts = metadata.query_start_loc_host
    max_query_len = max(b - a for a, b in zip(starts, starts[1:]))
    return paged_prefill_attention(query, kv_cache, metadata.block_tables, metadata.seq_lens,
                                   metadata.query_start_loc, max_query_len,
                                   metadata.block_size, scale)
