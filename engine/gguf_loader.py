"""Read a Llama-family model out of a GGUF file (llama.cpp's format) with the `gguf` package.

Metadata keys and tensor names follow the GGUF spec (github.com/ggml-org/ggml, docs/gguf.md)
and llama.cpp's `convert_hf_to_gguf.py`. Quantized tensors are dequantized with
`gguf.quants.dequantize` (numpy), then cast to the requested dtype.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from engine.errors import ModelLoadError
from engine.model_config import ModelConfig

Progress = Callable[[str, float], None]

SUPPORTED_ARCHITECTURES = ("llama",)
_GGUF_MAGIC = b"GGUF"


def open_gguf(path: str) -> Any:
    """Open and parse a GGUF file's header (tensors stay memory-mapped).

    Returns a `gguf.GGUFReader`. Raises ModelLoadError if the file is missing, unreadable,
    not a GGUF file, or truncated/corrupt.
    """
    import gguf

    if not os.path.isfile(path):
        raise ModelLoadError(f"model file not found: {path}")
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise ModelLoadError(f"cannot read model file {path}: {e}") from e
    if magic != _GGUF_MAGIC:
        raise ModelLoadError(f"not a GGUF file (bad magic {magic!r}, expected {_GGUF_MAGIC!r}): {path}")
    try:
        return gguf.GGUFReader(path)
    except Exception as e:  # the reader raises ValueError, struct errors, IndexError... on corrupt files
        raise ModelLoadError(f"corrupt or unsupported GGUF file {path}: {e}") from e


def metadata_value(reader: Any, key: str, default: Any = None) -> Any:
    """The value of one metadata key (str, int, float, bool or list), or `default` if absent."""
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def _required(reader: Any, key: str) -> Any:
    value = metadata_value(reader, key)
    if value is None:
        raise ModelLoadError(f"GGUF metadata lacks {key!r}")
    return value


def config_from_gguf(reader: Any) -> ModelConfig:
    """ModelConfig from `general.architecture` and the `<arch>.*` hyper-parameter keys.

    Raises ModelLoadError for an unsupported architecture, a missing key, or RoPE scaling
    (not implemented).
    """
    arch = _required(reader, "general.architecture")
    if arch not in SUPPORTED_ARCHITECTURES:
        raise ModelLoadError(f"unsupported architecture {arch!r} (supported: {', '.join(SUPPORTED_ARCHITECTURES)})")
    scaling = metadata_value(reader, f"{arch}.rope.scaling.type", "none")
    if scaling not in ("none", "linear") or (scaling == "linear" and metadata_value(
            reader, f"{arch}.rope.scaling.factor", 1.0) != 1.0):
        raise ModelLoadError(f"RoPE scaling {scaling!r} is not supported")
    if "rope_freqs.weight" in {t.name for t in reader.tensors}:
        raise ModelLoadError("per-frequency RoPE factors (rope_freqs.weight, Llama 3.1 scaling) are not supported")
    hidden = int(_required(reader, f"{arch}.embedding_length"))
    heads = int(_required(reader, f"{arch}.attention.head_count"))
    vocab = metadata_value(reader, f"{arch}.vocab_size")
    if vocab is None:
        vocab = len(_required(reader, "tokenizer.ggml.tokens"))
    return ModelConfig(
        architecture=arch,
        vocab_size=int(vocab),
        hidden_size=hidden,
        intermediate_size=int(_required(reader, f"{arch}.feed_forward_length")),
        num_hidden_layers=int(_required(reader, f"{arch}.block_count")),
        num_attention_heads=heads,
        num_key_value_heads=int(metadata_value(reader, f"{arch}.attention.head_count_kv", heads)),
        head_dim=int(metadata_value(reader, f"{arch}.rope.dimension_count", hidden // heads)),
        rope_theta=float(metadata_value(reader, f"{arch}.rope.freq_base", 10000.0)),
        rms_norm_eps=float(_required(reader, f"{arch}.attention.layer_norm_rms_epsilon")),
        max_position_embeddings=int(_required(reader, f"{arch}.context_length")),
        tie_word_embeddings="output.weight" not in {t.name for t in reader.tensors},
    )


def unpermute_rope(weight: np.ndarray, num_heads: int) -> np.ndarray:
    """Undo llama.cpp's Q/K row permutation: [num_heads * head_dim, in] -> same shape.

    llama.cpp's converter reorders each head's rows from the "rotate half" layout (pairs
    (j, j + head_dim/2)) to the interleaved layout (pairs (2j, 2j+1)) its RoPE kernel uses:
    `w.reshape(n_head, 2, head_dim // 2, in).swapaxes(1, 2)`. This is its inverse.
    """
    rows = weight.shape[0]
    half = rows // num_heads // 2
    w = weight.reshape(num_heads, half, 2, *weight.shape[1:])  # [heads, head_dim/2, 2, in]
    return w.swapaxes(1, 2).reshape(weight.shape)  # [heads, 2, head_dim/2, in] -> [rows, in]


def load_gguf_weights(reader: Any, config: ModelConfig, dtype: torch.dtype, device: str,
                      progress: Progress | None = None) -> dict[str, torch.Tensor]:
    """Dequantize every tensor into our parameter names (see `expected_parameter_shapes`).

    Q/K rows are un-permuted (`unpermute_rope`), Q/K/V and gate/up are concatenated for the
    fused projections. Returns tensors on `device` in `dtype`. Raises ModelLoadError for a
    missing tensor, a tensor of the wrong shape, or a quantization type `gguf` cannot dequantize.
    """
    tensors = {t.name: t for t in reader.tensors}
    n_layers = config.num_hidden_layers

    def get(name: str, shape: tuple[int, ...], num_heads: int | None = None) -> torch.Tensor:
        array = _dequantize(tensors, name)
        if tuple(array.shape) != shape:
            raise ModelLoadError(f"GGUF tensor {name} has shape {tuple(array.shape)}, expected {shape}")
        if num_heads is not None:
            array = unpermute_rope(array, num_heads)
        array = np.ascontiguousarray(array)
        if not array.flags.writeable:  # F32 tensors come straight from the read-only memory map
            array = array.copy()
        return torch.from_numpy(array).to(device=device, dtype=dtype)

    h, inter = config.hidden_size, config.intermediate_size
    weights = {
        "embed_tokens.weight": get("token_embd.weight", (config.vocab_size, h)),
        "norm.weight": get("output_norm.weight", (h,)),
    }
    if not config.tie_word_embeddings:
        weights["lm_head.weight"] = get("output.weight", (config.vocab_size, h))
    for i in range(n_layers):
        if progress is not None:
            progress(f"dequantizing layer {i + 1}/{n_layers}", 0.1 + 0.7 * i / n_layers)
        b, p = f"blk.{i}.", f"layers.{i}."
        weights[p + "input_layernorm.weight"] = get(b + "attn_norm.weight", (h,))
        weights[p + "post_attention_layernorm.weight"] = get(b + "ffn_norm.weight", (h,))
        weights[p + "self_attn.qkv_proj.weight"] = torch.cat([
            get(b + "attn_q.weight", (config.q_size, h), config.num_attention_heads),
            get(b + "attn_k.weight", (config.kv_size, h), config.num_key_value_heads),
            get(b + "attn_v.weight", (config.kv_size, h)),
        ])  # [q_size + 2 * kv_size, hidden]
        weights[p + "self_attn.o_proj.weight"] = get(b + "attn_output.weight", (h, config.q_size))
        weights[p + "mlp.gate_up_proj.weight"] = torch.cat([
            get(b + "ffn_gate.weight", (inter, h)), get(b + "ffn_up.weight", (inter, h))])  # [2 * inter, hidden]
        weights[p + "mlp.down_proj.weight"] = get(b + "ffn_down.weight", (h, inter))
    return weights


def _dequantize(tensors: dict[str, Any], name: str) -> np.ndarray:
    """float32 array in PyTorch order ([out, in]): GGUF lists dims innermost-first, numpy outermost-first."""
    from gguf.quants import dequantize

    tensor = tensors.get(name)
    if tensor is None:
        raise ModelLoadError(f"GGUF file lacks tensor {name}")
    try:
        array = dequantize(tensor.data, tensor.tensor_type)
    except NotImplementedError as e:
        raise ModelLoadError(f"cannot dequantize {name} of type {tensor.tensor_type.name}: {e}") from e
    return array.astype(np.float32, copy=False)
