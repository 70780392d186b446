"""A small Llama checkpoint written on the fly, for tests and scripts/gpu_check.py on machines
with no model file, no network and no `gguf` package.

`write_tiny_llama(path)` writes a Hugging Face directory that `engine.loader.load_model` reads:
config.json, model.safetensors (seeded random weights), tokenizer.json (a
byte-level BPE with no merges: one token per byte, plus ChatML's special tokens) and
tokenizer_config.json (ChatML template). Its attention has SmolLM2-135M's shapes (9 query heads,
3 KV heads, head dim 64, hidden 576, window 8,192), so kernels and CUDA graphs run at the real
model's shapes, with fewer layers and a 259-token vocabulary.

The LM head is separate from the embedding (tied random embeddings make every token predict
itself) and drawn with standard deviation 0.25, so logits spread over about +-15: a greedy
continuation depends on the context, yet not on rounding noise alone, and bfloat16 and float32
runs can be compared token by token.
"""

from __future__ import annotations

import json
import os

import torch

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
CHATML = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
          "{{ message['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def write_tiny_llama(path: str | os.PathLike, *, num_hidden_layers: int = 2,
                     max_position_embeddings: int = 8192, seed: int = 0) -> str:
    """Write the checkpoint into directory `path` (created if needed); returns `path` as str."""
    from safetensors.torch import save_file

    path = os.fspath(path)
    os.makedirs(path, exist_ok=True)
    vocab_size = _write_tokenizer(path)
    config = {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": vocab_size,
        "hidden_size": 576, "intermediate_size": 1536, "num_hidden_layers": num_hidden_layers,
        "num_attention_heads": 9, "num_key_value_heads": 3, "head_dim": 64,
        "rope_theta": 100000.0, "rms_norm_eps": 1e-5,
        "max_position_embeddings": max_position_embeddings, "tie_word_embeddings": False,
        "bos_token_id": None, "eos_token_id": vocab_size - 1, "torch_dtype": "float32",
    }
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    save_file(_random_weights(config, seed), os.path.join(path, "model.safetensors"))
    return path


def _random_weights(config: dict, seed: int) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    hidden, inter = config["hidden_size"], config["intermediate_size"]
    q_size = config["num_attention_heads"] * config["head_dim"]
    kv_size = config["num_key_value_heads"] * config["head_dim"]

    def normal(*shape: int, std: float | None = None) -> torch.Tensor:
        # 1 / sqrt(fan_in): each projection keeps its input's scale, so the layers move the
        # residual stream as much as the embedding does and the output depends on the context.
        return torch.randn(*shape, generator=gen) * (shape[1] ** -0.5 if std is None else std)

    weights = {"model.embed_tokens.weight": normal(config["vocab_size"], hidden, std=1.0),
               "model.norm.weight": torch.ones(hidden),
               "lm_head.weight": normal(config["vocab_size"], hidden, std=0.25)}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        weights.update({
            p + "input_layernorm.weight": torch.ones(hidden),
            p + "post_attention_layernorm.weight": torch.ones(hidden),
            p + "self_attn.q_proj.weight": normal(q_size, hidden),
            p + "self_attn.k_proj.weight": normal(kv_size, hidden),
            p + "self_attn.v_proj.weight": normal(kv_size, hidden),
            p + "self_attn.o_proj.weight": normal(hidden, q_size),
            p + "mlp.gate_proj.weight": normal(inter, hidden),
            p + "mlp.up_proj.weight": normal(inter, hidden),
            p + "mlp.down_proj.weight": normal(hidden, inter),
        })
    return weights


def _write_tokenizer(path: str) -> int:
    """tokenizer.json and tokenizer_config.json; returns the vocabulary size (259)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())  # one character per byte
    backend = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.add_special_tokens(list(SPECIAL_TOKENS))
    backend.save(os.path.join(path, "tokenizer.json"))
    with open(os.path.join(path, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": None, "eos_token": "<|im_end|>", "chat_template": CHATML}, f)
    return backend.get_vocab_size(with_added_tokens=True)
