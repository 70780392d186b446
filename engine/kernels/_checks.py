"""Argument checks shared by the kernel launchers: host-side only (no device sync), so a
launcher can run inside a CUDA graph capture."""

from __future__ import annotations

import torch

FLOAT_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def next_power_of_2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def check_float(name: str, t: torch.Tensor) -> None:
    if t.dtype not in FLOAT_DTYPES:
        raise ValueError(f"{name} must be float32, bfloat16 or float16, got {t.dtype}")


def check_kv_cache(kv_cache: torch.Tensor) -> None:
    """kv_cache: [2, num_blocks, block_size, num_kv_heads, head_dim], contiguous."""
    if kv_cache.dim() != 5 or kv_cache.shape[0] != 2:
        raise ValueError(f"kv_cache must be [2, num_blocks, block_size, num_kv_heads, head_dim], "
                         f"got {tuple(kv_cache.shape)}")
    if not kv_cache.is_contiguous():
        raise ValueError("kv_cache must be contiguous")
    check_float("kv_cache", kv_cache)


def check_rows(name: str, t: torch.Tensor, num_heads: int, head_dim: int) -> None:
    """t: [num_tokens, num_heads, head_dim] with unit stride on head_dim (any token/head stride)."""
    if t.dim() != 3 or t.shape[1:] != (num_heads, head_dim):
        raise ValueError(f"{name} must be [num_tokens, {num_heads}, {head_dim}], got {tuple(t.shape)}")
    if t.stride(2) != 1:
        raise ValueError(f"{name} must have unit stride on head_dim, got strides {t.stride()}")
    check_float(name, t)


def check_index(name: str, t: torch.Tensor, dim: int, dtypes: tuple[torch.dtype, ...],
                device: torch.device) -> None:
    if t.dim() != dim or t.dtype not in dtypes:
        raise ValueError(f"{name} must be a {dim}-d tensor of {dtypes}, got {t.dim()}-d {t.dtype}")
    if t.device != device:
        raise ValueError(f"{name} is on {t.device}, expected {device}")
    if dim == 2 and t.stride(1) != 1:
        raise ValueError(f"{name} must have unit stride on its last dimension")
    if dim == 1 and t.numel() > 1 and t.stride(0) != 1:
        raise ValueError(f"{name} must be contiguous")


def check_same_device(**tensors: torch.Tensor) -> torch.device:
    devices = {name: t.device for name, t in tensors.items()}
    if len(set(devices.values())) != 1:
        raise ValueError(f"tensors on different devices: {devices}")
    return next(iter(devices.values()))


def check_paged_query(query: torch.Tensor, kv_cache: torch.Tensor, block_size: int,
                      block_tables: torch.Tensor, seq_lens: torch.Tensor,
                      ) -> tuple[int, int, int, int, torch.device]:
    """Checks shared by the paged attention launchers.

    query: [num_rows, num_heads, head_dim] (rows: sequences for decode, tokens for prefill);
    kv_cache as in check_kv_cache, with `block_size` tokens per block; num_heads a multiple of
    num_kv_heads. block_tables int32 [num_seqs, max_blocks]; seq_lens int32/int64 [num_seqs].
    Returns (num_rows, num_heads, num_kv_heads, head_dim, device).
    """
    check_kv_cache(kv_cache)
    _, _, cache_block_size, num_kv_heads, head_dim = kv_cache.shape
    if cache_block_size != block_size:
        raise ValueError(f"block_size {block_size} disagrees with kv_cache's {cache_block_size}")
    if query.dim() != 3 or query.shape[1] % num_kv_heads:
        raise ValueError(f"query must be [rows, num_heads, head_dim] with num_heads a multiple "
                         f"of num_kv_heads={num_kv_heads}, got {tuple(query.shape)}")
    num_rows, num_heads, _ = query.shape
    check_rows("query", query, num_heads, head_dim)
    device = check_same_device(query=query, kv_cache=kv_cache)
    check_index("block_tables", block_tables, 2, (torch.int32,), device)
    check_index("seq_lens", seq_lens, 1, (torch.int64, torch.int32), device)
    return num_rows, num_heads, num_kv_heads, head_dim, device
