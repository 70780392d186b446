"""Triton kernels for the CUDA path, each beside its plain-PyTorch reference in engine.attention.

Importing this package never imports Triton; the kernel modules (`kv_cache_write`,
`paged_attention`, `prefill_attention`) do, so import them only after `triton_available()`.
The same kernels run on CPU tensors under `TRITON_INTERPRET=1` (set before Triton is imported),
which is how CI checks them against the references.
"""

from __future__ import annotations

import functools
import importlib.util

import torch


@functools.cache
def triton_available() -> bool:
    """True when the `triton` package can be imported (it is an optional dependency)."""
    return importlib.util.find_spec("triton") is not None


def use_triton(tensor: torch.Tensor) -> bool:
    """Whether the attention dispatch should run the Triton kernels for `tensor`: on CUDA with
    Triton installed. CPU tensors always take the PyTorch references."""
    return tensor.is_cuda and triton_available()
