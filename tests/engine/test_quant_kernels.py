"""CPU fast-path kernels (engine/csrc) against their references.

Each repack equals gguf's own dequantizer; each matmul equals "dequantize, then float32 matmul"
within a bound derived from the format: activations are rounded to int8 per 32-element block
(error <= max|x_block| / 254 per element), so |y - y_ref| <= sum over blocks of that error
times sum |w| over the block, plus float32 accumulation slack.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from engine.quant import build, formats, native

GGUF_TYPES = ["Q4_0", "Q4_1", "Q4_K", "Q8_0", "Q6_K", "F32", "F16", "BF16"]
K_QUANTS = {"Q4_K", "Q6_K"}
M_VALUES = [1, 2, 3, 7, 16, 33, 64, 300]
# SmolLM2's projections (fused Q/K/V, O, fused gate/up, down) and odd shapes (n not a multiple
# of the 8-row panel, small k).
MODEL_SHAPES = [(960, 576), (576, 576), (3072, 576), (576, 1536)]
ODD_SHAPES = [(13, 96), (100, 64), (1, 32)]
K_QUANT_SHAPES = [(576, 1536), (13, 256), (70, 512)]


def shapes_for(type_name: str) -> list[tuple[int, int]]:
    return K_QUANT_SHAPES if type_name in K_QUANTS else MODEL_SHAPES + ODD_SHAPES


def _set_fp16(raw: np.ndarray, offset: int, values: np.ndarray) -> None:
    raw[..., offset:offset + 2] = values.astype(np.float16)[..., None].view(np.uint8)


def random_gguf_tensor(type_name: str, n: int, k: int, seed: int = 0) -> np.ndarray:
    """A tensor [n, k] as the gguf reader gives it: raw block bytes per row (random codes, sane
    fp16 scales) for quantized types, values for float types."""
    import gguf

    rng = np.random.default_rng(seed)
    if type_name in ("F32", "F16"):
        return rng.standard_normal((n, k)).astype(np.float32 if type_name == "F32" else np.float16)
    if type_name == "BF16":
        return (rng.standard_normal((n, k)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    block, block_bytes = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[type_name]]
    raw = rng.integers(0, 256, size=(n, k // block, block_bytes), dtype=np.uint8)
    scale = (lambda lo, hi: rng.uniform(lo, hi, size=raw.shape[:2]))
    if type_name == "Q4_0":
        _set_fp16(raw, 0, scale(0.002, 0.02))
    elif type_name == "Q4_1":
        _set_fp16(raw, 0, scale(0.002, 0.02))
        _set_fp16(raw, 2, scale(-0.15, 0.0))
    elif type_name == "Q8_0":
        _set_fp16(raw, 0, scale(1e-4, 2e-3))
    elif type_name == "Q4_K":
        _set_fp16(raw, 0, scale(1e-4, 5e-4))
        _set_fp16(raw, 2, scale(1e-4, 5e-4))
    elif type_name == "Q6_K":
        _set_fp16(raw, 208, scale(1e-5, 1e-4))
    return raw.reshape(n, -1)


def gguf_reference(raw: np.ndarray, type_name: str) -> torch.Tensor:
    """float32 [n, k] by gguf's dequantizer (float types: the values)."""
    if type_name == "BF16":
        return torch.from_numpy((raw.astype(np.uint32) << 16).view(np.float32).copy())
    if type_name in ("F32", "F16"):
        return torch.from_numpy(raw.astype(np.float32))
    import gguf
    from gguf.quants import dequantize
    return torch.from_numpy(dequantize(raw, gguf.GGMLQuantizationType[type_name]).astype(np.float32))


def packed(type_name: str, n: int, k: int, seed: int = 0) -> tuple[formats.PackedWeight, torch.Tensor]:
    raw = random_gguf_tensor(type_name, n, k, seed)
    return formats.from_gguf(raw, type_name, n, k).to_panels(), gguf_reference(raw, type_name)


def format_bound(x: torch.Tensor, w: torch.Tensor, quantized: bool) -> torch.Tensor:
    """Largest |kernel - x @ w.T| the format allows, [m, n]."""
    slack = 2e-5 * (x.abs() @ w.abs().T) + 1e-6
    if not quantized:
        return slack
    m, k = x.shape
    step = x.view(m, k // 32, 32).abs().amax(-1) / 254.0  # [m, k/32]: max rounding error
    w_l1 = w.abs().view(w.shape[0], k // 32, 32).sum(-1)  # [n, k/32]
    return step @ w_l1.T * 1.0001 + slack


@pytest.fixture(autouse=True)
def _avx2_when_present():
    yield
    if native.load() and "avx2" in cpu_flags() and {"fma", "f16c"} <= cpu_flags():
        native.set_isa("avx2")


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


@pytest.mark.parametrize("type_name", GGUF_TYPES)
def test_repack_equals_gguf_dequantize(type_name: str) -> None:
    for n, k in shapes_for(type_name):
        raw = random_gguf_tensor(type_name, n, k, seed=n + k)
        ref = gguf_reference(raw, type_name)
        rows = formats.from_gguf(raw, type_name, n, k)
        panels = rows.to_panels()
        # K-quant scales are products rounded to fp16 (relative error <= 2**-11).
        atol = float(ref.abs().max()) * 2**-10 if type_name in K_QUANTS else 0.0
        torch.testing.assert_close(rows.dequantize(), ref, atol=atol, rtol=0)
        torch.testing.assert_close(panels.dequantize(), ref, atol=atol, rtol=0)
        if rows.format in ("q4", "q8"):
            assert torch.equal(panels.to_rows().data, rows.data)


@pytest.mark.parametrize("type_name", GGUF_TYPES)
@pytest.mark.parametrize("m", M_VALUES)
def test_kernel_equals_dequantize_then_float32(type_name: str, m: int) -> None:
    gen = torch.Generator().manual_seed(m)
    for n, k in shapes_for(type_name):
        w, _ = packed(type_name, n, k, seed=n * k)
        ref_w = w.dequantize()
        x = torch.randn(m, k, generator=gen) * 3
        y = native.linear(w, x)
        assert y.shape == (m, n)
        err = (y - x @ ref_w.T).abs()
        bound = format_bound(x, ref_w, w.format in ("q4", "q8"))
        assert bool((err <= bound).all()), f"{type_name} m={m} n={n} k={k}: max excess {float((err - bound).max())}"


@pytest.mark.parametrize("type_name", ["Q4_1", "Q4_K", "Q8_0", "Q6_K"])
def test_exact_int8_activations_leave_only_float_rounding(type_name: str) -> None:
    # Activations that are already int8 codes with max 127 per block quantize exactly, so the
    # kernel must equal the float32 product up to accumulation rounding.
    n, k = shapes_for(type_name)[0]
    w, _ = packed(type_name, n, k)
    x = torch.randint(-127, 128, (5, k), generator=torch.Generator().manual_seed(1)).float()
    x.view(5, k // 32, 32)[:, :, 0] = 127.0
    ref_w = w.dequantize()
    y = native.linear(w, x)
    torch.testing.assert_close(y, x @ ref_w.T, rtol=0, atol=float(2e-6 * (x.abs() @ ref_w.abs().T).max()))


@pytest.mark.skipif(not {"avx2", "fma", "f16c"} <= cpu_flags(), reason="CPU lacks AVX2/FMA/F16C")
@pytest.mark.parametrize("type_name", GGUF_TYPES)
def test_scalar_and_avx2_kernels_agree(type_name: str) -> None:
    n, k = (13, 256) if type_name in K_QUANTS else (100, 64)
    w, ref_w = packed(type_name, n, k, seed=3)
    for m in (1, 3, 33):
        x = torch.randn(m, k, generator=torch.Generator().manual_seed(m))
        native.set_isa("avx2")
        fast = native.linear(w, x)
        native.set_isa("scalar")
        slow = native.linear(w, x)
        torch.testing.assert_close(fast, slow, rtol=0, atol=float(1e-5 * (x.abs() @ ref_w.abs().T).max()))


@pytest.mark.parametrize("type_name", ["Q4_1", "Q8_0", "F32"])
def test_each_row_is_independent_of_the_batch(type_name: str) -> None:
    # Batch invariance: a row's result is bit-identical alone, in a batch of 7, and of 300.
    w, _ = packed(type_name, 960, 576)
    x = torch.randn(300, 576, generator=torch.Generator().manual_seed(0))
    together = native.linear(w, x)
    for i in (0, 5, 299):
        assert torch.equal(native.linear(w, x[i:i + 1]), together[i:i + 1])
    assert torch.equal(native.linear(w, x[:7]), together[:7])


def test_linear_rejects_a_mismatched_input() -> None:
    w, _ = packed("Q4_1", 16, 64)
    with pytest.raises(ValueError, match="does not match"):
        native.linear(w, torch.zeros(2, 65))
    with pytest.raises(ValueError, match="panel layout"):
        native.qweight(formats.from_gguf(random_gguf_tensor("Q4_1", 16, 64), "Q4_1", 16, 64))


def test_unsupported_gguf_type_is_a_typed_error() -> None:
    with pytest.raises(formats.UnsupportedFormatError, match="Q5_K"):
        formats.from_gguf(np.zeros((2, 176), np.uint8), "Q5_K", 2, 256)
    with pytest.raises(formats.UnsupportedFormatError, match="whole blocks"):
        formats.from_gguf(np.zeros((2, 144), np.uint8), "Q4_K", 2, 250)


def test_int8_quantization_of_a_float_matrix() -> None:
    w = torch.randn(70, 96, generator=torch.Generator().manual_seed(0))
    q = formats.quantize_int8(w)
    # Per 16 elements: |w - deq| <= scale / 2 with scale = max|w| / 127 (fp16-rounded).
    step = w.view(70, 6, 16).abs().amax(-1, keepdim=True) / 127 * (1 + 2**-10)
    assert bool(((q.dequantize().view(70, 6, 16) - w.view(70, 6, 16)).abs() <= step / 2 + 1e-7).all())
    with pytest.raises(formats.UnsupportedFormatError):
        formats.quantize_int8(torch.randn(4, 40))


def test_dispatch_follows_the_cpu_flags() -> None:
    expected = "avx2" if {"avx2", "fma", "f16c"} <= cpu_flags() else "scalar"
    assert native.isa() == expected
    with pytest.raises(ValueError, match="instruction set"):
        native.set_isa("avx512-of-the-future")


def test_scalar_is_chosen_when_forced_by_the_environment() -> None:
    env = {**os.environ, "CRESCENT_CPU_ISA": "scalar"}
    out = subprocess.run([sys.executable, "-c", "from engine.quant import native; print(native.isa())"],
                         env=env, capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "scalar"


def test_no_compiler_is_a_build_error(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(build, "compiler", lambda: None)
    with pytest.raises(build.BuildError, match="no C\\+\\+ compiler"):
        build.library_path(build=True)


def test_a_failing_compiler_is_a_build_error(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(build, "BUILD_DIR", tmp_path)
    monkeypatch.setattr(build, "compiler", lambda: "false")  # exits 1 without output
    with pytest.raises(build.BuildError, match="compiling the CPU kernels failed"):
        build.library_path(build=True)


def test_loader_falls_back_to_float32_with_one_log_line(tiny_model_dir: str) -> None:
    script = ("import logging; logging.basicConfig(level=logging.WARNING)\n"
              "from engine.loader import load_model\n"
              f"m = load_model({tiny_model_dir!r}, quantization='int8')\n"
              "print('PATH', m.quantization, type(m.model).__name__)\n")
    env = {**os.environ, "CRESCENT_DISABLE_NATIVE": "1"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    assert "PATH none LlamaForCausalLM" in out.stdout
    warnings = [line for line in out.stderr.splitlines() if "CPU fast path unavailable" in line]
    assert len(warnings) == 1 and "float32" in warnings[0]


def test_a_float_checkpoint_quantized_to_int8_at_load(tiny_model_dir: str, tiny_model) -> None:
    from engine.bench.accuracy import full_logits
    from engine.loader import load_model

    assert tiny_model.quantization == "none"  # "auto" keeps a float checkpoint on the float path
    int8 = load_model(tiny_model_dir, quantization="int8")
    assert int8.quantization == "int8" and type(int8.model).__name__ == "QuantizedLlamaForCausalLM"
    model = int8.model
    for layer in model.layers:
        assert [w.format for w in layer.qkv + [layer.o] + layer.gate_up + [layer.down]] == ["q8"] * 4
    assert model.lm_head.format == "q8" and model.lm_head.n == tiny_model.config.vocab_size  # 259: padded panels
    float_bytes = sum(p.numel() * p.element_size() for p in tiny_model.model.parameters())
    assert int8.weight_bytes < 0.35 * float_bytes
    ids = list(range(3, 200, 3))
    ref, got = full_logits(tiny_model, ids), full_logits(int8, ids)
    agree = (ref.argmax(-1) == got.argmax(-1)).float().mean().item()
    assert agree >= 0.9, agree
    assert (got - ref).abs().max() < 0.05 * ref.abs().max()
