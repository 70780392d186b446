"""ctypes bindings of the CPU kernel library (engine/csrc, built by engine.quant.build).

`load()` returns the library or raises NativeUnavailable; everything else here needs it. The
library's functions return 0 or a negative code, mapped to ValueError with the code's meaning.
"""

from __future__ import annotations

import ctypes
import functools
import os

import torch

from engine.quant.build import BuildError, library_path
from engine.quant.formats import FORMAT_CODES, PackedWeight

_ERRORS = {
    -1: "a token id outside the vocabulary",
    -2: "a position outside the window or past its sequence's length",
    -3: "a KV slot outside the pool",
    -4: "a block table too short for its sequence or a block id outside the pool",
    -5: "inconsistent shapes",
    -6: "an instruction set this CPU or build lacks",
}


class NativeUnavailable(RuntimeError):
    """The kernel library cannot be built or loaded on this machine."""


class QWeight(ctypes.Structure):
    """Mirror of crescent::QWeight (cpu_kernels.h)."""

    _fields_ = [("format", ctypes.c_int32), ("n", ctypes.c_int32), ("k", ctypes.c_int32),
                ("pad_", ctypes.c_int32), ("data", ctypes.c_void_p), ("d", ctypes.c_void_p),
                ("m", ctypes.c_void_p)]


class LayerWeights(ctypes.Structure):
    """Mirror of crescent::LayerWeights (llama_cpu.cpp)."""

    _fields_ = [("attn_norm", ctypes.c_void_p), ("ffn_norm", ctypes.c_void_p),
                ("qkv", QWeight * 3), ("num_qkv", ctypes.c_int32), ("pad0_", ctypes.c_int32),
                ("o", QWeight), ("gate_up", QWeight * 2), ("num_gate_up", ctypes.c_int32),
                ("pad1_", ctypes.c_int32), ("down", QWeight), ("kv_cache", ctypes.c_void_p)]


class ModelDesc(ctypes.Structure):
    """Mirror of crescent::ModelDesc (llama_cpu.cpp)."""

    _fields_ = [(name, ctypes.c_int32) for name in (
        "num_layers", "hidden", "num_heads", "num_kv_heads", "head_dim", "intermediate", "vocab",
        "max_positions", "block_size", "num_blocks")] + [
        ("eps", ctypes.c_float), ("attn_scale", ctypes.c_float),
        ("rope_cos", ctypes.c_void_p), ("rope_sin", ctypes.c_void_p), ("final_norm", ctypes.c_void_p),
        ("embed", QWeight), ("lm_head", QWeight), ("layers", ctypes.POINTER(LayerWeights))]


def ptr(t: torch.Tensor | None) -> int | None:
    return None if t is None else t.data_ptr()


def qweight(w: PackedWeight) -> QWeight:
    """The C view of `w` (the caller keeps `w` alive while the view is used); q4 / q8 must be
    in the panel layout (PackedWeight.to_panels)."""
    if w.format in ("q4", "q8") and not w.panels:
        raise ValueError("q4 / q8 weights must be in the panel layout (to_panels)")
    for t in w.tensors():
        if t is not None and (t.device.type != "cpu" or not t.is_contiguous()):
            raise ValueError("packed weights must be contiguous CPU tensors")
    return QWeight(FORMAT_CODES[w.format], w.n, w.k, 0, ptr(w.data), ptr(w.d), ptr(w.m))


@functools.cache
def load() -> ctypes.CDLL:
    """Build if needed, load and configure the library (threads = torch.get_num_threads()).

    Raises NativeUnavailable with the reason (no compiler, build error, load error).
    """
    if os.environ.get("CRESCENT_DISABLE_NATIVE") == "1":
        raise NativeUnavailable("disabled by CRESCENT_DISABLE_NATIVE=1")
    try:
        lib = ctypes.CDLL(str(library_path(build=True)))
    except (BuildError, OSError) as e:
        raise NativeUnavailable(str(e)) from e
    lib.crescent_isa.restype = ctypes.c_char_p
    lib.crescent_set_isa.argtypes = [ctypes.c_char_p]
    lib.crescent_set_num_threads.argtypes = [ctypes.c_int]
    lib.crescent_linear.argtypes = [ctypes.POINTER(QWeight), ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    lib.crescent_logits.argtypes = [ctypes.POINTER(ModelDesc), ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    lib.crescent_forward.argtypes = [
        ctypes.POINTER(ModelDesc), ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
        ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.crescent_attention.argtypes = [
        ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_int, ctypes.c_float,
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
        ctypes.c_void_p]
    lib.crescent_set_num_threads(torch.get_num_threads())
    return lib


def check(code: int) -> None:
    """Raise ValueError for a negative return code of the library."""
    if code != 0:
        raise ValueError(f"CPU kernel refused its input: {_ERRORS.get(code, f'error {code}')}")


def isa() -> str:
    """The instruction set the kernels run with: "avx2" or "scalar"."""
    return load().crescent_isa().decode()


def set_isa(name: str) -> None:
    """Force "avx2" or "scalar" (tests). Raises ValueError when the CPU or build lacks it."""
    check(load().crescent_set_isa(name.encode()))


def set_num_threads(n: int) -> None:
    load().crescent_set_num_threads(int(n))


def attention(q: torch.Tensor, kv_cache: torch.Tensor, kv_head: int, block_table: torch.Tensor,
              ctx: torch.Tensor, scale: float) -> torch.Tensor:
    """One attention tile of the fast path (crescent_forward's attention, one task of it).

    q: float32 [nrows, head_dim], query rows that read KV head `kv_head`; kv_cache: float32
    [2, num_blocks, block_size, num_kv_heads, head_dim] (one layer's pool); block_table: int32
    [n] of the sequence; ctx: int [nrows], row r attends positions 0..ctx[r]-1.
    Returns float32 [nrows, head_dim] = softmax(scale * q K^T) V per row. Raises ValueError
    for a bad shape, a ctx outside the block table or a block outside the pool.
    """
    if q.dim() != 2 or kv_cache.dim() != 5 or q.shape[1] != kv_cache.shape[-1] or ctx.shape != (q.shape[0],):
        raise ValueError(f"bad shapes: q {tuple(q.shape)}, kv_cache {tuple(kv_cache.shape)}, ctx {tuple(ctx.shape)}")
    _, num_blocks, block_size, num_kv_heads, head_dim = kv_cache.shape
    if not 0 <= kv_head < num_kv_heads:
        raise ValueError(f"kv_head {kv_head} outside 0..{num_kv_heads - 1}")
    q = q.detach().to(torch.float32).contiguous()
    cache = kv_cache.detach().to(torch.float32).contiguous()
    table = block_table.to(torch.int32).contiguous()
    lens = ctx.to(torch.int32).contiguous()
    out = torch.empty_like(q)
    flat = cache.view(2, num_blocks * block_size, num_kv_heads * head_dim)
    check(load().crescent_attention(q.shape[0], head_dim, block_size, num_blocks * block_size,
                                    num_kv_heads * head_dim, kv_head, scale, q.data_ptr(), lens.data_ptr(),
                                    flat[0].data_ptr(), flat[1].data_ptr(), table.data_ptr(), table.numel(),
                                    out.data_ptr()))
    return out


def linear(weight: PackedWeight, x: torch.Tensor) -> torch.Tensor:
    """y = x @ W^T with W in its packed format; x: float32 [m, k] -> float32 [m, n].

    Quantized formats quantize x per 32 elements to int8 first (as llama.cpp's Q8_0).
    Raises ValueError on a shape mismatch.
    """
    if x.dim() != 2 or x.shape[1] != weight.k:
        raise ValueError(f"x of shape {tuple(x.shape)} does not match a weight of k={weight.k}")
    x = x.detach().to(torch.float32).contiguous()
    y = torch.empty(x.shape[0], weight.n, dtype=torch.float32)
    w = qweight(weight)
    check(load().crescent_linear(ctypes.byref(w), x.shape[0], x.data_ptr(), y.data_ptr()))
    return y
