"""Llama-family decoder on the CPU over packed (mostly quantized) weights: the fast path.

The same model as engine.models.llama (the float32 reference) with the same call signature, run
by the C++ library in engine/csrc: one call per step does every layer (RMSNorm, Q/K/V, RoPE,
KV write, paged attention, O, SwiGLU, residuals) with weights kept in their packed formats
(engine.quant.formats) and activations quantized per 32-element block to int8 for the
quantized matmuls, as llama.cpp does. Attention and the KV cache stay float32.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import torch
from torch import nn

from engine.attention import AttentionMetadata
from engine.model_config import ModelConfig
from engine.models.llama import RotaryEmbedding
from engine.quant import native
from engine.quant.formats import PackedWeight


@dataclass
class PackedLayer:
    """One decoder layer's weights. qkv / gate_up: the parts of each fused projection, in row
    order (Q, K, V and gate, up), one part when they share a format."""

    attn_norm: torch.Tensor
    ffn_norm: torch.Tensor
    qkv: list[PackedWeight]
    o: PackedWeight
    gate_up: list[PackedWeight]
    down: PackedWeight


class QuantizedLlamaForCausalLM(nn.Module):
    """forward / compute_logits as LlamaForCausalLM, on CPU, through engine.quant.native.

    Norm weights are float32 parameters (so the engine sees a float32 CPU model); the packed
    matrices are plain tensors kept alive here. Raises native.NativeUnavailable at build time
    when the kernel library cannot be loaded.
    """

    def __init__(self, config: ModelConfig, embed: PackedWeight, lm_head: PackedWeight,
                 final_norm: torch.Tensor, layers: list[PackedLayer]) -> None:
        super().__init__()
        self.lib = native.load()
        self.config = config
        self.norm_weight = nn.Parameter(final_norm.float().contiguous(), requires_grad=False)
        self.norms = nn.ParameterList(
            nn.Parameter(t.float().contiguous(), requires_grad=False)
            for layer in layers for t in (layer.attn_norm, layer.ffn_norm))
        self.embed = embed.to_panels()
        self.lm_head = self.embed if lm_head is embed else lm_head.to_panels()
        self.layers = [PackedLayer(self.norms[2 * i], self.norms[2 * i + 1],
                                   [w.to_panels() for w in layer.qkv], layer.o.to_panels(),
                                   [w.to_panels() for w in layer.gate_up], layer.down.to_panels())
                       for i, layer in enumerate(layers)]
        self.rotary = RotaryEmbedding(config.head_dim, config.max_position_embeddings, config.rope_theta)
        self._desc: native.ModelDesc | None = None
        self._desc_key: tuple[int, ...] = ()
        self._layer_array = None

    @property
    def weight_bytes(self) -> int:
        """Resident bytes of every weight (packed matrices, norms), counting a tied head once."""
        mats = [self.embed] + ([] if self.lm_head is self.embed else [self.lm_head])
        for layer in self.layers:
            mats += [*layer.qkv, layer.o, *layer.gate_up, layer.down]
        norms = sum(p.numel() * p.element_size() for p in self.parameters())
        return sum(w.nbytes for w in mats) + norms

    def _model_desc(self, kv_caches: list[torch.Tensor]) -> native.ModelDesc:
        """The C description of the model, rebuilt when the KV pool changes."""
        key = tuple(t.data_ptr() for t in kv_caches)
        if self._desc is not None and key == self._desc_key:
            return self._desc
        c = self.config
        if len(kv_caches) != c.num_hidden_layers:
            raise ValueError(f"need {c.num_hidden_layers} KV caches, got {len(kv_caches)}")
        for kv in kv_caches:
            if kv.dtype != torch.float32 or kv.device.type != "cpu" or not kv.is_contiguous():
                raise ValueError("the CPU fast path needs contiguous float32 CPU KV caches")
        array = (native.LayerWeights * c.num_hidden_layers)()
        for i, (layer, kv) in enumerate(zip(self.layers, kv_caches)):
            entry = array[i]
            entry.attn_norm, entry.ffn_norm = layer.attn_norm.data_ptr(), layer.ffn_norm.data_ptr()
            for j, part in enumerate(layer.qkv):
                entry.qkv[j] = native.qweight(part)
            entry.num_qkv = len(layer.qkv)
            entry.o = native.qweight(layer.o)
            for j, part in enumerate(layer.gate_up):
                entry.gate_up[j] = native.qweight(part)
            entry.num_gate_up = len(layer.gate_up)
            entry.down = native.qweight(layer.down)
            entry.kv_cache = kv.data_ptr()
        num_blocks, block_size = kv_caches[0].shape[1], kv_caches[0].shape[2]
        desc = native.ModelDesc(
            num_layers=c.num_hidden_layers, hidden=c.hidden_size, num_heads=c.num_attention_heads,
            num_kv_heads=c.num_key_value_heads, head_dim=c.head_dim, intermediate=c.intermediate_size,
            vocab=c.vocab_size, max_positions=c.max_position_embeddings, block_size=block_size,
            num_blocks=num_blocks, eps=c.rms_norm_eps, attn_scale=c.head_dim ** -0.5,
            rope_cos=self.rotary.cos.data_ptr(), rope_sin=self.rotary.sin.data_ptr(),
            final_norm=self.norm_weight.data_ptr(), embed=native.qweight(self.embed),
            lm_head=native.qweight(self.lm_head),
            layers=ctypes.cast(array, ctypes.POINTER(native.LayerWeights)))
        self._desc, self._desc_key, self._layer_array = desc, key, array
        return desc

    @torch.inference_mode()
    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor,
                kv_caches: list[torch.Tensor], metadata: AttentionMetadata) -> torch.Tensor:
        """One step over a flattened batch, as LlamaForCausalLM.forward: int64 input_ids and
        positions [num_tokens]; kv_caches one float32 [2, num_blocks, block_size, kv_heads,
        head_dim] per layer, written at metadata.slot_mapping. Returns float32 final-norm hidden
        states [num_tokens, hidden_size]. Raises ValueError on ids, positions, slots or block
        tables out of range (nothing is written then)."""
        desc = self._model_desc(kv_caches)
        ids = input_ids.to(torch.int64).contiguous()
        pos = positions.to(torch.int64).contiguous()
        slots = metadata.slot_mapping.to(torch.int64).contiguous()
        starts = metadata.query_start_loc.to(torch.int64).contiguous()
        seq_lens = metadata.seq_lens.to(torch.int64).contiguous()
        tables = metadata.block_tables.to(torch.int32).contiguous()
        num_tokens = ids.numel()
        if not (pos.numel() == slots.numel() == num_tokens) or starts.numel() != seq_lens.numel() + 1:
            raise ValueError("input_ids, positions, slot_mapping and query_start_loc disagree")
        out = torch.empty(num_tokens, self.config.hidden_size, dtype=torch.float32)
        native.check(self.lib.crescent_forward(
            ctypes.byref(desc), num_tokens, ids.data_ptr(), pos.data_ptr(), slots.data_ptr(),
            seq_lens.numel(), starts.data_ptr(), seq_lens.data_ptr(), tables.data_ptr(),
            tables.shape[1], out.data_ptr()))
        return out

    @torch.inference_mode()
    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """[n, hidden_size] -> float32 [n, vocab_size] through the packed LM head."""
        return native.linear(self.lm_head, hidden)
