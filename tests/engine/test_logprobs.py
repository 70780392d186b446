"""Per-token logprobs on the real model agree with log_softmax of transformers' logits: the
sampled token's logprob and rank, the top-N alternatives (ids, text, values, sorted); they are
raw logprobs (temperature does not change them)."""

from __future__ import annotations

import pytest
import torch

from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def engine(loaded_model) -> LLMEngine:
    return LLMEngine(loaded_model, EngineConfig(num_kv_blocks=64, max_model_len=1024))


def reference_logprobs(hf_reference, prompt_ids: list[int], output_ids: list[int]) -> torch.Tensor:
    """log_softmax of transformers' logits at each generated position: float32 [len(output), vocab]."""
    ids = torch.tensor([prompt_ids + output_ids])
    with torch.no_grad():
        logits = hf_reference.model(ids).logits[0].float()
    return logits[len(prompt_ids) - 1:len(prompt_ids) - 1 + len(output_ids)].log_softmax(-1)


@pytest.mark.parametrize("temperature", [0.0, 1.5])
def test_logprobs_match_transformers(loaded_model, hf_reference, engine, temperature):
    prompt = loaded_model.chat_template.render([{"role": "user", "content": "Name a planet."}])
    prompt_ids = loaded_model.tokenizer.encode(prompt)
    out = engine.generate(prompt_ids, SamplingParams(max_tokens=6, temperature=temperature, seed=5,
                                                     logprobs=5, ignore_eos=True))[0]
    assert len(out.logprobs) == len(out.new_token_ids) == 6
    ref = reference_logprobs(hf_reference, prompt_ids, out.new_token_ids)
    for j, (token, entry) in enumerate(zip(out.new_token_ids, out.logprobs)):
        assert entry.sampled.token_id == token
        assert entry.sampled.token == hf_reference.tokenizer.decode([token])
        assert entry.sampled.logprob == pytest.approx(ref[j, token].item(), abs=2e-3)
        # rank = 1 + tokens strictly more likely, up to the float noise between the two models
        surely_above = int((ref[j] > ref[j, token] + 1e-3).sum())
        maybe_above = int((ref[j] > ref[j, token] - 1e-3).sum())
        assert surely_above + 1 <= entry.sampled.rank <= maybe_above + 1
        values, ids = ref[j].topk(5)
        assert [t.token_id for t in entry.top] == ids.tolist()
        assert [t.logprob for t in entry.top] == pytest.approx(values.tolist(), abs=2e-3)
        assert [t.rank for t in entry.top] == [1, 2, 3, 4, 5]
        assert all(a.logprob >= b.logprob for a, b in zip(entry.top, entry.top[1:]))
        if temperature == 0:
            assert entry.sampled.rank == 1
            assert entry.sampled.logprob == entry.top[0].logprob


def test_logprobs_absent_unless_asked_and_zero_means_sampled_only(loaded_model, engine):
    outs = engine.generate(["Hello", "Hello"], [SamplingParams(max_tokens=2, temperature=0),
                                                SamplingParams(max_tokens=2, temperature=0,
                                                               logprobs=0)])
    assert outs[0].logprobs is None
    assert len(outs[1].logprobs) == 2 and all(e.top == [] for e in outs[1].logprobs)
    assert outs[1].new_token_ids == outs[0].new_token_ids
