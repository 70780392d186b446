"""RequestMetrics.prefill_chunks: one (start, end, tokens) per step that computed prompt tokens,
ordered, covering the whole prompt, before the first token (the backend's trace spans read them)."""

from __future__ import annotations

from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams


def test_chunks_cover_the_prompt_in_order_before_the_first_token(tiny_model):
    engine = LLMEngine(tiny_model, EngineConfig(num_kv_blocks=64, max_model_len=512, enable_prefix_caching=False,
                                                long_prefill_token_threshold=16))
    prompt = list(range(5, 45))  # 40 tokens: chunks of 16, 16, 8
    engine.add_request("r", prompt, SamplingParams(max_tokens=3, temperature=0, ignore_eos=True))
    final = None
    while engine.has_unfinished_requests():
        for out in engine.step():
            if out.finished:
                final = out
    assert final is not None
    m = final.metrics
    assert [n for _s, _e, n in m.prefill_chunks] == [16, 16, 8]
    bounds = [t for s, e, _n in m.prefill_chunks for t in (s, e)]
    assert bounds == sorted(bounds)
    assert m.arrival_time <= m.first_scheduled_time == m.prefill_chunks[0][0]
    assert m.prefill_chunks[-1][1] <= m.first_token_time <= m.finished_time
