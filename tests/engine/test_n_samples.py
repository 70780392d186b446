"""n > 1: parallel samples of one request on the real model: n outputs under one id with
indices, seed + i per sample, greedy samples identical, abort of the id aborts every sample,
and the async front streams every sample through one iterator."""

from __future__ import annotations

import asyncio

import pytest

from engine.async_engine import AsyncLLMEngine
from engine.config import EngineConfig
from engine.errors import DuplicateRequestError
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams

pytestmark = pytest.mark.slow
NUM_BLOCKS = 64


def chat(loaded_model, question: str) -> str:
    return loaded_model.chat_template.render([{"role": "user", "content": question}])


@pytest.fixture(scope="module")
def engine(loaded_model) -> LLMEngine:
    return LLMEngine(loaded_model, EngineConfig(num_kv_blocks=NUM_BLOCKS, max_model_len=1024))


def test_seeded_samples_are_n_distinct_runs_with_seed_plus_index(loaded_model, engine):
    prompt = chat(loaded_model, "Invent a name for a bird.")
    params = SamplingParams(n=3, max_tokens=6, temperature=1.2, seed=10, ignore_eos=True)
    hits_before = engine.stats().prefix_cache_hits
    outs = engine.generate(prompt, params)
    # samples 1 and 2 take the prompt's full blocks written by sample 0
    num_prompt = outs[0].num_prompt_tokens
    assert engine.stats().prefix_cache_hits - hits_before >= 2 * ((num_prompt - 1) // 16) * 16 > 0
    assert [o.index for o in outs] == [0, 1, 2]
    assert len({o.request_id for o in outs}) == 1 and "#" not in outs[0].request_id
    assert all(len(o.new_token_ids) == 6 and o.finish_reason == "length" for o in outs)
    assert len({tuple(o.new_token_ids) for o in outs}) == 3
    single = SamplingParams(max_tokens=6, temperature=1.2, seed=12, ignore_eos=True)
    assert engine.generate(prompt, single)[0].new_token_ids == outs[2].new_token_ids
    assert engine.num_free_blocks() == NUM_BLOCKS and not engine.has_unfinished_requests()


def test_greedy_samples_are_identical(loaded_model, engine):
    outs = engine.generate(chat(loaded_model, "What is 2+2?"),
                           SamplingParams(n=3, max_tokens=5, temperature=0))
    assert len(outs) == 3 and outs[0].new_token_ids == outs[1].new_token_ids == outs[2].new_token_ids


def test_abort_of_the_request_aborts_every_sample(loaded_model, engine):
    engine.add_request("many", chat(loaded_model, "Tell me a story."),
                       SamplingParams(n=3, max_tokens=50, ignore_eos=True))
    with pytest.raises(DuplicateRequestError):
        engine.add_request("many", "hi", SamplingParams())
    with pytest.raises(DuplicateRequestError):
        engine.add_request("many#1", "hi", SamplingParams())
    seen = [o for o in engine.step() + engine.step()]
    assert {o.index for o in seen} == {0, 1, 2} and not any(o.finished for o in seen)
    engine.abort_request("many")
    final = engine.step()
    assert sorted(o.index for o in final) == [0, 1, 2]
    assert all(o.request_id == "many" and o.finish_reason == "abort" for o in final)
    assert not engine.has_unfinished_requests() and engine.num_free_blocks() == NUM_BLOCKS
    engine.add_request("many", "hi", SamplingParams(max_tokens=1))  # the id is free again
    assert engine.step()[0].finished


async def test_async_stream_yields_every_sample_then_ends(loaded_model):
    front = AsyncLLMEngine(LLMEngine(loaded_model, EngineConfig(num_kv_blocks=NUM_BLOCKS,
                                                                max_model_len=1024)))
    front.start()
    try:
        stream = front.add_request("a", chat(loaded_model, "Name a colour."),
                                   SamplingParams(n=2, max_tokens=4, temperature=0.8, seed=3,
                                                  ignore_eos=True))
        events = await asyncio.wait_for(_collect(stream), 60)
        finals = [e for e in events if e.finished]
        assert sorted(e.index for e in finals) == [0, 1] and events[-1].finished
        assert all(e.num_output_tokens == 4 for e in finals)
        # leaving early aborts every sample
        stream = front.add_request("b", "Once upon a time", SamplingParams(n=3, max_tokens=200,
                                                                           ignore_eos=True))
        await asyncio.wait_for(stream.__anext__(), 60)
        await stream.aclose()
        for _ in range(500):
            if not front.engine.has_unfinished_requests():
                break
            await asyncio.sleep(0.02)
        assert not front.engine.has_unfinished_requests()
        assert front.engine.num_free_blocks() == NUM_BLOCKS
    finally:
        front.shutdown()


async def _collect(stream):
    return [e async for e in stream]
