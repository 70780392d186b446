"""Build the CPU fast-path model from a GGUF file (blocks kept) or from float weights (int8).

GGUF tensor names, the Q/K row permutation and the fused projections are as in
engine.gguf_loader (which dequantizes for the float32 reference path); here each tensor is
repacked (engine.quant.formats) without dequantizing it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from engine.errors import ModelLoadError
from engine.gguf_loader import unpermute_rope
from engine.model_config import ModelConfig
from engine.models.llama_quantized import PackedLayer, QuantizedLlamaForCausalLM
from engine.quant.formats import (PackedWeight, UnsupportedFormatError, concat_rows, from_float,
                                  from_gguf, quantize_int8)

logger = logging.getLogger(__name__)

Progress = Callable[[str, float], None]


def _fused(parts: list[PackedWeight]) -> list[PackedWeight]:
    """One matrix when the parts share a format (one kernel call), else the parts."""
    if all(p.format == parts[0].format for p in parts):
        return [concat_rows(parts)]
    return parts


def gguf_tensor_bytes(reader: Any) -> int:
    """Bytes of every tensor in the file (the baseline for the resident-weight ratio)."""
    return sum(int(t.n_bytes) for t in reader.tensors)


def packed_model_from_gguf(reader: Any, config: ModelConfig, progress: Progress | None = None,
                           int8_floats: bool = False) -> QuantizedLlamaForCausalLM:
    """The fast-path model with every GGUF matrix in its own format (repacked, not dequantized).

    A type without a kernel (e.g. Q5_K) is dequantized with `gguf` and quantized to int8, with
    one log line; so are F32/F16/BF16 matrices when int8_floats. Raises ModelLoadError for a
    missing tensor or a wrong shape.
    """
    tensors = {t.name: t for t in reader.tensors}
    fallbacks: set[str] = set()

    def get(name: str, shape: tuple[int, int], num_heads: int | None = None) -> PackedWeight:
        t = tensors.get(name)
        if t is None:
            raise ModelLoadError(f"GGUF file lacks tensor {name}")
        n, k = (int(x) for x in reversed(t.shape))  # GGUF lists dims innermost first
        if (n, k) != shape:
            raise ModelLoadError(f"GGUF tensor {name} has shape {(n, k)}, expected {shape}")
        try:
            w = from_gguf(t.data, t.tensor_type.name, n, k)
        except UnsupportedFormatError:
            from gguf.quants import dequantize
            fallbacks.add(t.tensor_type.name)
            w = quantize_int8(torch.from_numpy(dequantize(t.data, t.tensor_type).astype(np.float32)))
        if int8_floats and w.format in ("f32", "f16", "bf16") and k % 32 == 0:
            w = quantize_int8(w.data)
        if num_heads is not None:
            w = w.select_rows(unpermute_rope(np.arange(n)[:, None], num_heads)[:, 0])
        return w

    def vector(name: str) -> torch.Tensor:
        t = tensors.get(name)
        if t is None:
            raise ModelLoadError(f"GGUF file lacks tensor {name}")
        return torch.from_numpy(np.array(t.data, dtype=np.float32).reshape(-1))

    c, h = config, config.hidden_size
    embed = get("token_embd.weight", (c.vocab_size, h))
    lm_head = embed if c.tie_word_embeddings else get("output.weight", (c.vocab_size, h))
    layers = []
    for i in range(c.num_hidden_layers):
        if progress is not None:
            progress(f"repacking layer {i + 1}/{c.num_hidden_layers}", 0.1 + 0.7 * i / c.num_hidden_layers)
        b = f"blk.{i}."
        layers.append(PackedLayer(
            attn_norm=vector(b + "attn_norm.weight"), ffn_norm=vector(b + "ffn_norm.weight"),
            qkv=_fused([get(b + "attn_q.weight", (c.q_size, h), c.num_attention_heads),
                        get(b + "attn_k.weight", (c.kv_size, h), c.num_key_value_heads),
                        get(b + "attn_v.weight", (c.kv_size, h))]),
            o=get(b + "attn_output.weight", (h, c.q_size)),
            gate_up=_fused([get(b + "ffn_gate.weight", (c.intermediate_size, h)),
                            get(b + "ffn_up.weight", (c.intermediate_size, h))]),
            down=get(b + "ffn_down.weight", (h, c.intermediate_size))))
    if fallbacks:
        logger.warning("no CPU kernel for GGUF types %s: those tensors were requantized to int8",
                       ", ".join(sorted(fallbacks)))
    return QuantizedLlamaForCausalLM(config, embed, lm_head, vector("output_norm.weight"), layers)


def packed_model_from_float(weights: dict[str, torch.Tensor], config: ModelConfig,
                            quantization: str) -> QuantizedLlamaForCausalLM:
    """The fast-path model from float weights named as `expected_parameter_shapes`.

    quantization "int8": matrices whose rows are whole 32-element blocks become int8 per 16
    elements (quantize_int8); others, and every matrix with "none", keep their float dtype.
    """
    def pack(name: str) -> PackedWeight:
        w = weights[name]
        if quantization == "int8" and w.shape[1] % 32 == 0:
            return quantize_int8(w)
        return from_float(w.float() if w.dtype not in (torch.float32, torch.float16, torch.bfloat16) else w)

    embed = pack("embed_tokens.weight")
    lm_head = embed if config.tie_word_embeddings else pack("lm_head.weight")
    layers = [PackedLayer(
        attn_norm=weights[f"layers.{i}.input_layernorm.weight"],
        ffn_norm=weights[f"layers.{i}.post_attention_layernorm.weight"],
        qkv=[pack(f"layers.{i}.self_attn.qkv_proj.weight")], o=pack(f"layers.{i}.self_attn.o_proj.weight"),
        gate_up=[pack(f"layers.{i}.mlp.gate_up_proj.weight")], down=pack(f"layers.{i}.mlp.down_proj.weight"))
        for i in range(config.num_hidden_layers)]
    return QuantizedLlamaForCausalLM(config, embed, lm_head, weights["norm.weight"], layers)
