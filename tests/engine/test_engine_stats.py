"""Live engine stats and per-request timestamps; the queue timeout."""

from __future__ import annotations

import asyncio

import pytest

from engine.async_engine import AsyncLLMEngine
from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams
from engine.stats import EngineStats

pytestmark = pytest.mark.slow


def make_engine(loaded_model, **kwargs) -> LLMEngine:
    return LLMEngine(loaded_model, EngineConfig(num_kv_blocks=32, max_model_len=512, **kwargs))


def test_stats_follow_a_request_from_queue_to_cache(loaded_model):
    engine = make_engine(loaded_model)
    prompt = loaded_model.tokenizer.encode("Tell me about the moon and the tides, please.")
    assert engine.stats() == EngineStats(0, 0, 0, 0, 32, 32, 0, 0, 0, 0, 0, 0)
    engine.add_request("a", prompt, SamplingParams(max_tokens=5, temperature=0, ignore_eos=True))
    assert engine.stats().num_waiting == 1
    engine.step()
    s = engine.stats()
    assert (s.num_running, s.num_waiting, s.num_steps) == (1, 0, 1)
    assert s.num_kv_blocks_used == -(-len(prompt) // 16) and s.num_prompt_tokens == len(prompt)
    assert s.num_generation_tokens == 1 and s.prefix_cache_queries == len(prompt)
    assert s.num_kv_blocks_used + s.num_kv_blocks_cached + s.num_kv_blocks_free == 32
    while engine.has_unfinished_requests():
        engine.step()
    s = engine.stats()
    assert (s.num_running, s.num_kv_blocks_used, s.num_generation_tokens, s.num_steps) == (0, 0, 5, 5)
    assert s.num_prompt_tokens == len(prompt)          # decode tokens are not prompt tokens
    assert s.num_kv_blocks_cached == (len(prompt) + 4) // 16   # full blocks stay cached
    assert s.num_kv_blocks_free == 32 - s.num_kv_blocks_cached
    assert s.kv_cache_usage == 0.0 and s.prefix_cache_hit_rate == 0.0


def test_each_token_is_timestamped(loaded_model):
    engine = make_engine(loaded_model)
    engine.add_request("t", "Count: one, two,", SamplingParams(max_tokens=6, temperature=0, ignore_eos=True))
    events = []
    while engine.has_unfinished_requests():
        events += engine.step()
    m = events[-1].metrics
    assert len(m.token_times) == 6 == events[-1].num_output_tokens
    assert m.token_times == sorted(m.token_times)
    assert m.arrival_time <= m.first_scheduled_time <= m.token_times[0] == m.first_token_time
    assert m.token_times[-1] <= m.finished_time
    # Earlier events carry a snapshot, not the live list.
    assert [len(e.metrics.token_times) for e in events] == [1, 2, 3, 4, 5, 6]


def test_a_request_waiting_past_the_queue_timeout_ends_with_a_typed_error(loaded_model):
    engine = make_engine(loaded_model, max_num_seqs=1, queue_timeout_s=30.0)
    params = SamplingParams(max_tokens=3, temperature=0, ignore_eos=True)
    engine.add_request("first", "Hello", params)
    engine.add_request("late", "Hello there", params)
    engine.add_request("patient", "Hi", params)
    engine.step()
    engine._live["late"].metrics.arrival_time -= 60.0  # as if it had queued for a minute
    finals = {}
    while engine.has_unfinished_requests():
        finals.update({o.request_id: o for o in engine.step() if o.finished})
    assert finals["late"].finish_reason == "error" and finals["late"].error.startswith("queue_timeout:")
    assert finals["late"].error_code == "queue_timeout"
    assert finals["late"].num_output_tokens == 0
    assert finals["first"].finish_reason == finals["patient"].finish_reason == "length"
    assert engine.num_free_blocks() == 32


async def test_async_front_reads_stats_while_streaming(loaded_model):
    front = AsyncLLMEngine(make_engine(loaded_model))
    front.start()
    try:
        seen = []
        stream = front.add_request("s", "Once upon a time", SamplingParams(max_tokens=6, temperature=0, ignore_eos=True))
        async for _ in stream:
            seen.append(front.stats())
        await asyncio.sleep(0)
        assert any(s.num_running == 1 for s in seen)
        assert all(s.num_kv_blocks_used + s.num_kv_blocks_cached + s.num_kv_blocks_free == 32 for s in seen)
        assert seen[-1].num_generation_tokens == 6
    finally:
        front.shutdown()
