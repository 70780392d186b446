"""Llama-family decoder in plain PyTorch, over a paged KV cache.

Architecture of Touvron et al., "LLaMA" (2023) as implemented by Hugging Face's
`modeling_llama.py` (the numerical reference our tests compare against): pre-norm RMSNorm
(Zhang & Sennrich 2019), rotary position embeddings in the "rotate half" (GPT-NeoX) layout
(Su et al. 2021), grouped-query attention (Ainslie et al. 2023), SwiGLU feed-forward
(Shazeer 2020), optionally tied input/output embeddings.

Tokens are flattened across sequences (`[num_tokens, ...]`, no padding); which token belongs
to which sequence, and where its K/V live, is in `AttentionMetadata`. Q/K/V and gate/up
projections are fused into one matmul each, which matters on a 2-core CPU.
"""

from __future__ import annotations

import torch
from torch import nn

from engine.attention import AttentionMetadata, paged_attention, write_kv_cache
from engine.model_config import ModelConfig


class RMSNorm(nn.Module):
    """y = x / sqrt(mean(x^2) + eps) * weight, computed in float32 as Hugging Face's LlamaRMSNorm."""

    def __init__(self, hidden_size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


class RotaryEmbedding(nn.Module):
    """cos/sin tables for every position up to max_position_embeddings, float32.

    inv_freq[j] = theta ** (-2j / head_dim); angle(p, j) = p * inv_freq[j]; both halves of the
    head share the angles ("rotate half" layout).
    """

    def __init__(self, head_dim: int, max_positions: int, theta: float) -> None:
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
        angles = torch.outer(torch.arange(max_positions, dtype=torch.float32), inv_freq)  # [max_pos, head_dim/2]
        angles = torch.cat((angles, angles), dim=-1)  # [max_pos, head_dim]
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def tables(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """(cos, sin), each [num_tokens, 1, head_dim] in `dtype`, for int64 positions [num_tokens].
        The model looks them up once per step; every layer reuses them."""
        return (self.cos[positions].unsqueeze(1).to(dtype), self.sin[positions].unsqueeze(1).to(dtype))

    def forward(self, positions: torch.Tensor, q: torch.Tensor, k: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """q: [num_tokens, num_heads, head_dim], k: [num_tokens, num_kv_heads, head_dim]."""
        cos, sin = self.tables(positions, q.dtype)
        return _rotate(q, cos, sin), _rotate(k, cos, sin)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x: [num_tokens, heads, head_dim]; cos, sin: [num_tokens, 1, head_dim]."""
    return x * cos + _rotate_half(x) * sin


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.num_kv_heads = config.num_key_value_heads
        self.head_dim = config.head_dim
        self.q_size, self.kv_size = config.q_size, config.kv_size
        self.scale = self.head_dim ** -0.5
        self.qkv_proj = nn.Linear(config.hidden_size, self.q_size + 2 * self.kv_size, bias=False)
        self.o_proj = nn.Linear(self.q_size, config.hidden_size, bias=False)

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor],
                kv_cache: torch.Tensor, metadata: AttentionMetadata) -> torch.Tensor:
        """rope: (cos, sin) of this step's positions, RotaryEmbedding.tables."""
        qkv = self.qkv_proj(x)  # [num_tokens, q_size + 2 * kv_size]
        # Q and K heads side by side are rotated in one pass (the same elementwise arithmetic).
        qk = _rotate(qkv[:, :self.q_size + self.kv_size].view(-1, self.num_heads + self.num_kv_heads,
                                                              self.head_dim), *rope)
        q, k = qk.split([self.num_heads, self.num_kv_heads], dim=1)  # [num_tokens, heads, head_dim]
        v = qkv[:, self.q_size + self.kv_size:].view(-1, self.num_kv_heads, self.head_dim)
        write_kv_cache(k, v, kv_cache, metadata.slot_mapping)
        out = paged_attention(q, kv_cache, metadata, self.scale)  # [num_tokens, num_heads, head_dim]
        return self.o_proj(out.reshape(-1, self.q_size))  # [num_tokens, hidden]


class LlamaMLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.intermediate_size = config.intermediate_size
        self.gate_up_proj = nn.Linear(config.hidden_size, 2 * config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).split(self.intermediate_size, dim=-1)  # 2 x [num_tokens, inter]
        return self.down_proj(nn.functional.silu(gate) * up)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.self_attn = LlamaAttention(config)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.mlp = LlamaMLP(config)

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor],
                kv_cache: torch.Tensor, metadata: AttentionMetadata) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), rope, kv_cache, metadata)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaForCausalLM(nn.Module):
    """Llama decoder + LM head. Parameters named as listed by `expected_parameter_shapes`."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(LlamaDecoderLayer(config) for _ in range(config.num_hidden_layers))
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.rotary = RotaryEmbedding(config.head_dim, config.max_position_embeddings, config.rope_theta)
        self.lm_head = (None if config.tie_word_embeddings
                        else nn.Linear(config.hidden_size, config.vocab_size, bias=False))
        self.lm_head_float32: torch.Tensor | None = None  # keep_float32_lm_head

    def rebuild_buffers(self, device: torch.device | str) -> None:
        """Recompute the RoPE tables on `device` (after building the model on the meta device),
        and the float32 copy of a bfloat16/float16 LM head (see compute_logits)."""
        c = self.config
        self.rotary = RotaryEmbedding(c.head_dim, c.max_position_embeddings, c.rope_theta).to(device)
        self.keep_float32_lm_head()

    def keep_float32_lm_head(self) -> None:
        """Keep a float32 copy of the LM head weight when it is bfloat16 or float16 (CUDA's
        default dtype), made once here (at load, before the KV pool takes the free memory)
        rather than cast at every step: 49,152 x 576 x 4 bytes = 113 MB for SmolLM2."""
        weight = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        is_half = weight.dtype in (torch.bfloat16, torch.float16)
        self.lm_head_float32 = weight.float() if is_half else None

    @torch.inference_mode()
    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor,
                kv_caches: list[torch.Tensor], metadata: AttentionMetadata) -> torch.Tensor:
        """One step over a flattened batch.

        input_ids, positions: int64 [num_tokens]. kv_caches: one tensor per layer,
        [2, num_blocks, block_size, num_kv_heads, head_dim], written in place at
        metadata.slot_mapping. Returns the final-norm hidden states [num_tokens, hidden_size]
        in the model's dtype.
        """
        if len(kv_caches) != len(self.layers):
            raise ValueError(f"need {len(self.layers)} KV caches, got {len(kv_caches)}")
        x = self.embed_tokens(input_ids)  # [num_tokens, hidden]
        rope = self.rotary.tables(positions, x.dtype)
        for layer, kv_cache in zip(self.layers, kv_caches):
            x = layer(x, rope, kv_cache, metadata)
        return self.norm(x)

    @torch.inference_mode()
    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """[n, hidden_size] -> float32 [n, vocab_size], computed in float32 whatever the model's
        dtype: a bfloat16 matmul output rounds logits of 16-32 to steps of 0.125, enough to
        change the argmax, so a half-precision model multiplies its hidden states, upcast,
        by lm_head_float32."""
        weight = self.lm_head_float32
        if weight is None:
            weight = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        return nn.functional.linear(hidden.to(weight.dtype), weight).float()


def expected_parameter_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every parameter a loader must supply, for checking a checkpoint."""
    shapes: dict[str, tuple[int, ...]] = {
        "embed_tokens.weight": (config.vocab_size, config.hidden_size),
        "norm.weight": (config.hidden_size,),
    }
    if not config.tie_word_embeddings:
        shapes["lm_head.weight"] = (config.vocab_size, config.hidden_size)
    for i in range(config.num_hidden_layers):
        p = f"layers.{i}."
        shapes[p + "input_layernorm.weight"] = (config.hidden_size,)
        shapes[p + "post_attention_layernorm.weight"] = (config.hidden_size,)
        shapes[p + "self_attn.qkv_proj.weight"] = (config.q_size + 2 * config.kv_size, config.hidden_size)
        shapes[p + "self_attn.o_proj.weight"] = (config.hidden_size, config.q_size)
        shapes[p + "mlp.gate_up_proj.weight"] = (2 * config.intermediate_size, config.hidden_size)
        shapes[p + "mlp.down_proj.weight"] = (config.hidden_size, config.intermediate_size)
    return shapes
