"""Read a Llama-family model from a Hugging Face directory.

Expected files: config.json, *.safetensors (one file or shards), tokenizer.json,
tokenizer_config.json; optional generation_config.json (extra EOS ids) and chat_template.jinja.
Parameter names are those of transformers' `LlamaForCausalLM`.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Callable
from typing import Any

import torch

from engine.errors import ModelLoadError
from engine.model_config import ModelConfig

Progress = Callable[[str, float], None]

_SUPPORTED_MODEL_TYPES = ("llama",)


def read_json(path: str, required: bool = True) -> dict[str, Any]:
    """Parsed JSON object at `path`; {} if absent and not required. Raises ModelLoadError."""
    if not os.path.isfile(path):
        if required:
            raise ModelLoadError(f"model directory lacks {os.path.basename(path)}: {path}")
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError) as e:
        raise ModelLoadError(f"cannot parse {path}: {e}") from e
    if not isinstance(value, dict):
        raise ModelLoadError(f"{path} is not a JSON object")
    return value


def config_from_hf(path: str) -> ModelConfig:
    """ModelConfig from `<path>/config.json` (transformers 4 `rope_theta`/`rope_scaling` or
    transformers 5 `rope_parameters`). Raises ModelLoadError for a missing key, an unsupported
    model type, attention/MLP biases, or RoPE scaling."""
    raw = read_json(os.path.join(path, "config.json"))
    model_type = raw.get("model_type")
    if model_type not in _SUPPORTED_MODEL_TYPES:
        raise ModelLoadError(f"unsupported model_type {model_type!r} in {path}/config.json "
                             f"(supported: {', '.join(_SUPPORTED_MODEL_TYPES)})")
    if raw.get("attention_bias") or raw.get("mlp_bias"):
        raise ModelLoadError("attention/MLP biases are not supported")
    rope = raw.get("rope_parameters") or raw.get("rope_scaling") or {}
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    if rope_type != "default":
        raise ModelLoadError(f"RoPE scaling {rope_type!r} is not supported")
    try:
        hidden, heads = int(raw["hidden_size"]), int(raw["num_attention_heads"])
        return ModelConfig(
            architecture=model_type,
            vocab_size=int(raw["vocab_size"]),
            hidden_size=hidden,
            intermediate_size=int(raw["intermediate_size"]),
            num_hidden_layers=int(raw["num_hidden_layers"]),
            num_attention_heads=heads,
            num_key_value_heads=int(raw.get("num_key_value_heads") or heads),
            head_dim=int(raw.get("head_dim") or hidden // heads),
            rope_theta=float(raw.get("rope_theta") or rope.get("rope_theta") or 10000.0),
            rms_norm_eps=float(raw.get("rms_norm_eps", 1e-6)),
            max_position_embeddings=int(raw.get("max_position_embeddings", 2048)),
            tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
        )
    except KeyError as e:
        raise ModelLoadError(f"{path}/config.json lacks {e.args[0]!r}") from e


def load_hf_weights(path: str, config: ModelConfig, dtype: torch.dtype, device: str,
                    progress: Progress | None = None) -> dict[str, torch.Tensor]:
    """Tensors of every `*.safetensors` in `path`, renamed to our parameter names, Q/K/V and
    gate/up fused. Raises ModelLoadError when no safetensors file exists or a tensor is missing."""
    from safetensors.torch import load_file

    files = sorted(glob.glob(os.path.join(path, "*.safetensors")))
    if not files:
        raise ModelLoadError(f"model directory has no *.safetensors file: {path}")
    raw: dict[str, torch.Tensor] = {}
    for i, file in enumerate(files):
        if progress is not None:
            progress(f"reading {os.path.basename(file)}", 0.1 + 0.6 * i / len(files))
        try:
            raw.update(load_file(file))
        except Exception as e:
            raise ModelLoadError(f"cannot read {file}: {e}") from e

    def get(name: str) -> torch.Tensor:
        tensor = raw.get(name)
        if tensor is None:
            raise ModelLoadError(f"checkpoint in {path} lacks tensor {name}")
        return tensor.to(device=device, dtype=dtype)

    weights = {"embed_tokens.weight": get("model.embed_tokens.weight"), "norm.weight": get("model.norm.weight")}
    if not config.tie_word_embeddings:
        weights["lm_head.weight"] = get("lm_head.weight")
    for i in range(config.num_hidden_layers):
        h, p = f"model.layers.{i}.", f"layers.{i}."
        weights[p + "input_layernorm.weight"] = get(h + "input_layernorm.weight")
        weights[p + "post_attention_layernorm.weight"] = get(h + "post_attention_layernorm.weight")
        weights[p + "self_attn.qkv_proj.weight"] = torch.cat(
            [get(h + f"self_attn.{n}_proj.weight") for n in ("q", "k", "v")])  # [q_size + 2 * kv_size, hidden]
        weights[p + "self_attn.o_proj.weight"] = get(h + "self_attn.o_proj.weight")
        weights[p + "mlp.gate_up_proj.weight"] = torch.cat(
            [get(h + "mlp.gate_proj.weight"), get(h + "mlp.up_proj.weight")])  # [2 * inter, hidden]
        weights[p + "mlp.down_proj.weight"] = get(h + "mlp.down_proj.weight")
    return weights


def chat_template_from_hf(path: str, tokenizer_config: dict[str, Any]) -> str | None:
    """The template source: `chat_template.jinja` if present, else tokenizer_config's
    `chat_template` (a string, or a list of {"name", "template"} where "default" is used)."""
    jinja_file = os.path.join(path, "chat_template.jinja")
    if os.path.isfile(jinja_file):
        with open(jinja_file, encoding="utf-8") as f:
            return f.read()
    template = tokenizer_config.get("chat_template")
    if isinstance(template, list):
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("default")
    return template if isinstance(template, str) else None


def generation_eos_ids(path: str) -> list[int]:
    """EOS ids listed in generation_config.json (an int or a list), [] if none."""
    eos = read_json(os.path.join(path, "generation_config.json"), required=False).get("eos_token_id")
    if eos is None:
        return []
    return [int(i) for i in (eos if isinstance(eos, list) else [eos])]
