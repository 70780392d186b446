"""Logits are computed in float32 whatever the model's dtype (LlamaForCausalLM.compute_logits),
from a float32 copy of the LM head made once at load."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from engine.model_config import ModelConfig
from engine.models.llama import LlamaForCausalLM


def _model(dtype: torch.dtype, tie: bool) -> LlamaForCausalLM:
    config = ModelConfig(architecture="llama", vocab_size=1000, hidden_size=64,
                         intermediate_size=128, num_hidden_layers=1, num_attention_heads=4,
                         num_key_value_heads=2, head_dim=16, rope_theta=10000.0,
                         rms_norm_eps=1e-5, max_position_embeddings=64, tie_word_embeddings=tie)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        for weight in (model.embed_tokens.weight, model.lm_head and model.lm_head.weight):
            if weight is not None:
                weight.normal_(std=2.0)  # logits of tens, as a trained model's
    model = model.to(dtype)
    model.rebuild_buffers("cpu")  # as the loader does after loading the weights
    return model.eval()


@pytest.mark.parametrize("tie", [True, False])
def test_bfloat16_model_computes_logits_in_float32(tie):
    model = _model(torch.bfloat16, tie)
    weight = model.embed_tokens.weight if tie else model.lm_head.weight
    hidden = torch.randn(5, 64, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    logits = model.compute_logits(hidden)
    assert logits.dtype == torch.float32 and logits.shape == (5, 1000)
    assert torch.equal(logits, F.linear(hidden.float(), weight.float()))
    # What the old path gave (a bfloat16 matmul, then the cast) is measurably coarser.
    exact = F.linear(hidden.double(), weight.double())
    old = F.linear(hidden, weight).float()
    assert (old.double() - exact).abs().max() > 10 * (logits.double() - exact).abs().max()


def test_the_float32_copy_is_made_once_at_load_not_per_step():
    model = _model(torch.bfloat16, tie=True)
    copy = model.lm_head_float32
    assert copy is not None and copy.dtype == torch.float32
    assert torch.equal(copy, model.embed_tokens.weight.float())
    hidden = torch.ones(2, 64, dtype=torch.bfloat16)
    model.compute_logits(hidden)
    model.compute_logits(hidden)
    assert model.lm_head_float32 is copy


def test_a_float32_model_keeps_no_copy():
    model = _model(torch.float32, tie=True)
    assert model.lm_head_float32 is None
    hidden = torch.randn(3, 64)
    assert torch.equal(model.compute_logits(hidden), F.linear(hidden, model.embed_tokens.weight))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_bfloat16_logits_on_cuda_are_float32(tiny_model_dir, record_figure):
    from engine.loader import load_model

    model = load_model(tiny_model_dir, device="cuda", dtype=torch.bfloat16).model
    assert model.lm_head_float32.dtype == torch.float32 and model.lm_head_float32.is_cuda
    weight = model.lm_head.weight
    hidden = torch.randn(32, weight.shape[1], device="cuda").to(torch.bfloat16)
    exact = F.linear(hidden.double(), weight.double())
    logits = model.compute_logits(hidden)
    assert logits.dtype == torch.float32
    error = (logits.double() - exact).abs().max().item()
    old_error = (F.linear(hidden, weight).double() - exact).abs().max().item()
    record_figure("logits_max_abs_error", error, dtype="bfloat16 model, float32 logits",
                  bfloat16_logits_error=old_error)
    assert error < old_error / 10
