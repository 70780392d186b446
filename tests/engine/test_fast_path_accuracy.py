"""The CPU fast path against our float32 path on the real model and the same weights.

Thresholds from the engine-speed issue: over 20 prompts (English, code, Chinese, Japanese,
emoji), teacher-forced along the float32 greedy continuation of 64 tokens, the top-1 token
agrees at >= 97% of positions; perplexity on a text sample stays within 1% of float32.
"""

from __future__ import annotations

import pytest

from engine.bench.accuracy import ACCURACY_PROMPTS, accuracy_report, full_logits

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(loaded_model, fast_model) -> dict:
    return accuracy_report(loaded_model, fast_model, continuation_len=64)


def test_prompts_cover_the_languages_the_issue_names() -> None:
    text = "".join(ACCURACY_PROMPTS)
    assert len(ACCURACY_PROMPTS) >= 20
    assert "def " in text and "日本" in text and "中国" in text and "🍕" in text


def test_top1_agreement_and_kl(report, record_figure) -> None:
    ours = report["ours"]
    record_figure("top1_agreement", ours["top1_agreement"])
    record_figure("mean_kl", ours["mean_kl"])
    assert ours["positions"] == 20 * 64
    assert ours["top1_agreement"] >= 0.97
    assert 0 < ours["mean_kl"] < 0.02  # nats; zero would mean we compared float32 with itself


def test_perplexity_within_one_percent(report, record_figure) -> None:
    record_figure("perplexity_ratio", report["ours"]["perplexity_ratio"])
    assert abs(report["ours"]["perplexity_ratio"] - 1) <= 0.01


def test_fast_logits_are_not_the_float32_logits(loaded_model, fast_model) -> None:
    # Guards the comparison itself: the two fixtures really are two different paths.
    ids = loaded_model.tokenizer.encode("The capital of France is")
    assert type(fast_model.model).__name__ == "QuantizedLlamaForCausalLM"
    assert not full_logits(loaded_model, ids).equal(full_logits(fast_model, ids))
