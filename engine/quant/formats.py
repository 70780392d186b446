"""Packed weight formats of the CPU fast path, and the repack from GGUF blocks into them.

Formats (the layout the kernels in engine/csrc read; see cpu_kernels.h):
- "f32", "f16", "bf16": row-major values [n, k].
- "q4": uint8 codes [n, k/2] (byte j of a 32-element block: element j in the low nibble,
  j + 16 in the high one), fp16 scale d and offset m [n, k/32]; w = d * q + m.
  Q4_0 (m = -8d), Q4_1 and Q4_K (d = d_super * scale, m = -dmin * min per 32-element
  sub-block) repack into it without changing a code.
- "q8": int8 codes [n, k], fp16 scale d [n, k/16]; w = d * q. Q8_0 (its one scale per 32 given
  to both halves), Q6_K (d_super * scale per 16-element sub-block) and `quantize_int8` of a
  float matrix repack into it.
Block layouts of the GGUF types follow ggml's ggml-common.h and the reference dequantizers in
ggml-quants.c (llama.cpp). The K-quant scales become products rounded to fp16 (relative error
<= 2**-11, far below the 4- and 6-bit code steps).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

FORMATS = ("f32", "f16", "bf16", "q4", "q8")
FORMAT_CODES = {name: i for i, name in enumerate(FORMATS)}  # the C enum Format
ACT_BLOCK = 32  # activations are quantized per 32 elements, so k % 32 == 0 for q4 / q8


class UnsupportedFormatError(ValueError):
    """A tensor type the fast path has no repack for."""


@dataclass
class PackedWeight:
    """One weight matrix [n, k] (out x in) in a kernel format; tensors are contiguous CPU."""

    format: str
    n: int
    k: int
    data: torch.Tensor
    d: torch.Tensor | None = None
    m: torch.Tensor | None = None
    panels: bool = False  # q4 / q8: rows interleaved in panels of 8 (the kernels' layout)

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.data, self.d, self.m) if t is not None)

    def tensors(self) -> tuple[torch.Tensor | None, ...]:
        return self.data, self.d, self.m

    def select_rows(self, index: np.ndarray) -> PackedWeight:
        """The matrix with rows reordered/selected by `index` (int64 [n']); row layout only."""
        if self.panels:
            raise ValueError("select_rows needs the row layout")
        idx = torch.from_numpy(np.ascontiguousarray(index, dtype=np.int64))
        pick = (lambda t: None if t is None else t.index_select(0, idx).contiguous())
        return PackedWeight(self.format, len(index), self.k, pick(self.data), pick(self.d), pick(self.m))

    def dequantize(self) -> torch.Tensor:
        """float32 [n, k]: the reference the kernels are tested against."""
        if self.panels:
            return self.to_rows().dequantize()
        if self.format == "f32":
            return self.data.clone()
        if self.format in ("f16", "bf16"):
            return self.data.float()
        if self.format == "q4":
            codes = self.data.view(self.n, self.k // 32, 16)
            q = torch.cat([codes & 0x0F, codes >> 4], dim=-1).float()  # [n, k/32, 32]
            return (q * self.d.float()[..., None] + self.m.float()[..., None]).reshape(self.n, self.k)
        codes = self.data.view(self.n, self.k // 16, 16).float()
        return (codes * self.d.float()[..., None]).reshape(self.n, self.k)


    def to_panels(self) -> PackedWeight:
        """q4 / q8 in the kernels' layout: panels of 8 rows interleaved (cpu_kernels.h); n is
        padded to a multiple of 8 with zero rows. Float formats are returned unchanged."""
        if self.format not in ("q4", "q8") or self.panels:
            return self
        pad = -self.n % 8
        padded = (lambda t: None if t is None else torch.cat([t, t.new_zeros(pad, *t.shape[1:])]))
        data, d, m = padded(self.data), padded(self.d), padded(self.m)
        panels, nb = (self.n + pad) // 8, self.k // 32
        if self.format == "q4":
            codes = torch.cat([data.view(panels, 8, nb, 16) & 0x0F, data.view(panels, 8, nb, 16) >> 4], dim=-1)
            groups = codes.view(panels, 8, nb, 8, 4).permute(0, 2, 3, 1, 4)  # [P, nb, group, row, 4]
            packed = groups[:, :, :4] | (groups[:, :, 4:] << 4)  # [P, nb, 4, 8, 4]
            return PackedWeight("q4", self.n, self.k, packed.contiguous().view(-1),
                                d.view(panels, 8, nb).transpose(1, 2).contiguous().view(-1),
                                m.view(panels, 8, nb).transpose(1, 2).contiguous().view(-1), panels=True)
        groups = data.view(panels, 8, nb, 8, 4).permute(0, 2, 3, 1, 4)  # [P, nb, group, row, 4]
        scales = d.view(panels, 8, nb, 2).permute(0, 2, 3, 1)  # [P, nb, half, row]
        return PackedWeight("q8", self.n, self.k, groups.contiguous().view(-1),
                            scales.contiguous().view(-1), panels=True)

    def to_rows(self) -> PackedWeight:
        """The inverse of to_panels (padding dropped)."""
        if not self.panels:
            return self
        panels, nb = -(-self.n // 8), self.k // 32
        if self.format == "q4":
            packed = self.data.view(panels, nb, 4, 8, 4)
            groups = torch.cat([packed & 0x0F, packed >> 4], dim=2)  # [P, nb, 8 groups, row, 4]
            codes = groups.permute(0, 3, 1, 2, 4).reshape(panels * 8, nb, 32)[: self.n]
            data = (codes[..., :16] | (codes[..., 16:] << 4)).reshape(self.n, self.k // 2)
            unpanel = (lambda t: t.view(panels, nb, 8).transpose(1, 2).reshape(panels * 8, nb)[: self.n])
            return PackedWeight("q4", self.n, self.k, data.contiguous(), unpanel(self.d).contiguous(),
                                unpanel(self.m).contiguous())
        codes = self.data.view(panels, nb, 8, 8, 4).permute(0, 3, 1, 2, 4).reshape(panels * 8, self.k)
        d = self.d.view(panels, nb, 2, 8).permute(0, 3, 1, 2).reshape(panels * 8, nb * 2)
        return PackedWeight("q8", self.n, self.k, codes[: self.n].contiguous(), d[: self.n].contiguous())


def concat_rows(parts: list[PackedWeight]) -> PackedWeight:
    """Stack matrices of one format and width along n (a fused projection)."""
    first = parts[0]
    if any(p.panels for p in parts):
        raise ValueError("concat_rows needs the row layout")
    if any(p.format != first.format or p.k != first.k for p in parts):
        raise ValueError("concat_rows needs one format and one k")
    cat = (lambda ts: None if ts[0] is None else torch.cat(ts).contiguous())
    return PackedWeight(first.format, sum(p.n for p in parts), first.k, cat([p.data for p in parts]),
                        cat([p.d for p in parts]), cat([p.m for p in parts]))


def _fp16(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float16))


def _half(raw: np.ndarray) -> np.ndarray:
    """fp16 fields (pairs of bytes) -> float32."""
    return np.ascontiguousarray(raw).view(np.float16).astype(np.float32)


def _q4(n: int, k: int, codes: np.ndarray, d: np.ndarray, m: np.ndarray) -> PackedWeight:
    """codes: uint8 [n, k/32, 32] in [0, 15], element order; d, m: float [n, k/32]."""
    packed = (codes[..., :16] | (codes[..., 16:] << 4)).astype(np.uint8).reshape(n, k // 2)
    return PackedWeight("q4", n, k, torch.from_numpy(np.ascontiguousarray(packed)),
                        _fp16(d.reshape(n, k // 32)), _fp16(m.reshape(n, k // 32)))


def _q8(n: int, k: int, codes: np.ndarray, d: np.ndarray) -> PackedWeight:
    """codes: int8-valued [n, k]; d: float [n, k/16]."""
    return PackedWeight("q8", n, k, torch.from_numpy(np.ascontiguousarray(codes.reshape(n, k), dtype=np.int8)),
                        _fp16(d.reshape(n, k // 16)))


def _blocks(raw: np.ndarray, n: int, block_bytes: int) -> np.ndarray:
    return np.ascontiguousarray(raw).reshape(n, -1, block_bytes)


def _from_q4_0(raw: np.ndarray, n: int, k: int) -> PackedWeight:
    b = _blocks(raw, n, 18)
    d = _half(b[..., 0:2])[..., 0]
    qs = b[..., 2:18]
    codes = np.concatenate([qs & 0x0F, qs >> 4], axis=-1)
    return _q4(n, k, codes, d, -8.0 * d)


def _from_q4_1(raw: np.ndarray, n: int, k: int) -> PackedWeight:
    b = _blocks(raw, n, 20)
    d, m = _half(b[..., 0:2])[..., 0], _half(b[..., 2:4])[..., 0]
    qs = b[..., 4:20]
    return _q4(n, k, np.concatenate([qs & 0x0F, qs >> 4], axis=-1), d, m)


def _k_scales(scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_K's 12 bytes -> 8 six-bit scales and 8 six-bit mins (ggml's get_scale_min_k4)."""
    s = scales.astype(np.int32)
    sc = np.empty(s.shape[:-1] + (8,), np.int32)
    mn = np.empty_like(sc)
    sc[..., :4] = s[..., 0:4] & 63
    mn[..., :4] = s[..., 4:8] & 63
    sc[..., 4:] = (s[..., 8:12] & 0x0F) | ((s[..., 0:4] >> 6) << 4)
    mn[..., 4:] = (s[..., 8:12] >> 4) | ((s[..., 4:8] >> 6) << 4)
    return sc, mn


def _from_q4_k(raw: np.ndarray, n: int, k: int) -> PackedWeight:
    b = _blocks(raw, n, 144)  # d, dmin (fp16), scales[12], qs[128] per 256 elements
    d, dmin = _half(b[..., 0:2]), _half(b[..., 2:4])  # [n, nb, 1]
    sc, mn = _k_scales(b[..., 4:16])  # [n, nb, 8]
    qs = b[..., 16:144].reshape(n, -1, 4, 32)  # 4 chunks of 64 elements
    codes = np.stack([qs & 0x0F, qs >> 4], axis=3).reshape(n, -1, 8, 32)  # sub-block order
    return _q4(n, k, codes.reshape(n, k // 32, 32), (d * sc).reshape(n, -1), (-dmin * mn).reshape(n, -1))


def _from_q8_0(raw: np.ndarray, n: int, k: int) -> PackedWeight:
    b = _blocks(raw, n, 34)
    d = _half(b[..., 0:2])  # [n, nb, 1]
    codes = b[..., 2:34].view(np.int8)
    return _q8(n, k, codes, np.repeat(d, 2, axis=-1))


def _from_q6_k(raw: np.ndarray, n: int, k: int) -> PackedWeight:
    b = _blocks(raw, n, 210)  # ql[128], qh[64], scales[16] (int8), d (fp16) per 256 elements
    ql, qh = b[..., 0:128].reshape(n, -1, 2, 64), b[..., 128:192].reshape(n, -1, 2, 32)
    sc = b[..., 192:208].view(np.int8).astype(np.float32)
    d = _half(b[..., 208:210])
    lo = np.concatenate([ql[..., :32] & 0x0F, ql[..., 32:] & 0x0F, ql[..., :32] >> 4, ql[..., 32:] >> 4], axis=-1)
    hi = np.concatenate([qh & 3, (qh >> 2) & 3, (qh >> 4) & 3, (qh >> 6) & 3], axis=-1)
    codes = (lo.astype(np.int16) | (hi.astype(np.int16) << 4)) - 32  # [n, nb, 2, 128]
    return _q8(n, k, codes.reshape(n, k), (d * sc).reshape(n, -1))


_REPACK = {"Q4_0": (_from_q4_0, 32), "Q4_1": (_from_q4_1, 32), "Q4_K": (_from_q4_k, 256),
           "Q8_0": (_from_q8_0, 32), "Q6_K": (_from_q6_k, 256)}


def from_gguf(raw: np.ndarray, type_name: str, n: int, k: int) -> PackedWeight:
    """Repack one GGUF tensor [n, k] (raw: its bytes, rows outermost) into a kernel format.

    type_name: the GGMLQuantizationType name. F32/F16/BF16 keep their values; Q4_0, Q4_1,
    Q4_K -> "q4"; Q8_0, Q6_K -> "q8". Raises UnsupportedFormatError for any other type.
    """
    if type_name == "F32":
        return PackedWeight("f32", n, k, torch.from_numpy(np.array(raw, dtype=np.float32).reshape(n, k)))
    if type_name in ("F16", "BF16"):
        values = np.array(raw).view(np.uint16 if type_name == "BF16" else np.float16).reshape(n, k)
        t = torch.from_numpy(values.copy())
        return PackedWeight(type_name.lower(), n, k, t.view(torch.bfloat16) if type_name == "BF16" else t)
    if type_name not in _REPACK:
        raise UnsupportedFormatError(f"no CPU kernel for GGUF type {type_name}")
    fn, block = _REPACK[type_name]
    if k % block:
        raise UnsupportedFormatError(f"{type_name} row of {k} elements is not whole blocks of {block}")
    return fn(np.asarray(raw).view(np.uint8), n, k)


def quantize_int8(weight: torch.Tensor) -> PackedWeight:
    """A float matrix [n, k] -> "q8": symmetric int8 per 16 elements, scale = max|w| / 127
    (rounded to fp16 first, so the codes match the stored scale). Needs k % 32 == 0."""
    n, k = weight.shape
    if k % ACT_BLOCK:
        raise UnsupportedFormatError(f"int8 needs rows of whole 32-element blocks, got {k}")
    w = weight.detach().float().reshape(n, k // 16, 16)
    d = (w.abs().amax(-1) / 127.0).half()  # [n, k/16]
    inv = torch.where(d.float() > 0, 1.0 / d.float(), torch.zeros(()))
    codes = torch.round(w * inv[..., None]).clamp_(-127, 127).to(torch.int8)
    return PackedWeight("q8", n, k, codes.reshape(n, k).contiguous(), d.contiguous())


def from_float(weight: torch.Tensor) -> PackedWeight:
    """A float32/float16/bfloat16 matrix kept in its dtype (no quantization)."""
    name = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}.get(weight.dtype)
    if name is None:
        raise UnsupportedFormatError(f"no CPU kernel for dtype {weight.dtype}")
    n, k = weight.shape
    return PackedWeight(name, n, k, weight.detach().contiguous())
