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
