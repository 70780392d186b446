"""Triton kernel: store this step's K and V into one layer's paged KV cache by slot mapping.

Same contract as the reference `engine.attention.write_kv_cache` (vLLM's `reshape_and_cache`
in role), plus one extension: a negative slot skips its token, so padded rows of a CUDA-graph
batch write nothing.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from engine.kernels._checks import (
    check_index, check_kv_cache, check_rows, check_same_device, next_power_of_2,
)


@triton.jit
def _write_kv_cache_kernel(
    key_ptr, value_ptr, cache_ptr, slot_mapping_ptr,
    key_stride_t, key_stride_h, value_stride_t, value_stride_h,
    cache_stride_kv, cache_stride_slot, cache_stride_h,
    num_kv_heads, head_dim,
    BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # One program per token: all its KV heads at once.
    token = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_mapping_ptr + token).to(tl.int64)
    h = tl.arange(0, BLOCK_H)[:, None]
    d = tl.arange(0, BLOCK_D)[None, :]
    mask = (h < num_kv_heads) & (d < head_dim)
    if slot >= 0:
        # Through float32, rounding to nearest even as torch's .to() does on CUDA (Triton
        # 3.9's CPU interpreter truncates float32 -> bfloat16 regardless).
        k = tl.load(key_ptr + token * key_stride_t + h * key_stride_h + d, mask=mask).to(tl.float32)
        v = tl.load(value_ptr + token * value_stride_t + h * value_stride_h + d,
                    mask=mask).to(tl.float32)
        dst = cache_ptr + slot * cache_stride_slot + h * cache_stride_h + d
        out_ty = cache_ptr.dtype.element_ty
        tl.store(dst, k.to(out_ty, fp_downcast_rounding="rtne"), mask=mask)
        tl.store(dst + cache_stride_kv, v.to(out_ty, fp_downcast_rounding="rtne"), mask=mask)


def write_kv_cache(key: torch.Tensor, value: torch.Tensor, kv_cache: torch.Tensor,
                   slot_mapping: torch.Tensor) -> None:
    """Store K and V in one layer's cache, in place (Triton).

    key, value: [num_tokens, num_kv_heads, head_dim], float32/bfloat16/float16, unit stride on
        head_dim; cast to the cache's dtype.
    kv_cache: contiguous [2, num_blocks, block_size, num_kv_heads, head_dim].
    slot_mapping: int64 (or int32) [num_tokens]; slot = block_id * block_size + offset, in
        [0, num_blocks * block_size); a negative slot skips that token. Slots are not
        range-checked on the device (that would need a sync).
    Raises ValueError on a wrong shape, dtype, stride or device.
    """
    check_kv_cache(kv_cache)
    _, _, _, num_kv_heads, head_dim = kv_cache.shape
    check_rows("key", key, num_kv_heads, head_dim)
    check_rows("value", value, num_kv_heads, head_dim)
    device = check_same_device(key=key, value=value, kv_cache=kv_cache)
    check_index("slot_mapping", slot_mapping, 1, (torch.int64, torch.int32), device)
    num_tokens = key.shape[0]
    if value.shape[0] != num_tokens or slot_mapping.shape[0] != num_tokens:
        raise ValueError(f"key, value and slot_mapping disagree on num_tokens: {num_tokens}, "
                         f"{value.shape[0]}, {slot_mapping.shape[0]}")
    if num_tokens == 0:
        return
    _write_kv_cache_kernel[(num_tokens,)](
        key, value, kv_cache, slot_mapping,
        key.stride(0), key.stride(1), value.stride(0), value.stride(1),
        kv_cache.stride(0), kv_cache.stride(2), kv_cache.stride(3),
        num_kv_heads, head_dim,
        BLOCK_H=next_power_of_2(num_kv_heads), BLOCK_D=next_power_of_2(head_dim),
    )
