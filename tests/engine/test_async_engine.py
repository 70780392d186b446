"""AsyncLLMEngine: streams reach asyncio consumers; abort, disconnect and cancellation free the
request's KV blocks; validation is synchronous; a failing step does not stop the loop."""

from __future__ import annotations

import asyncio
import gc
import threading
import time

import pytest

from engine.async_engine import AsyncLLMEngine
from engine.config import EngineConfig
from engine.errors import (DuplicateRequestError, EngineNotRunningError, InvalidSamplingParamsError,
                           PromptTooLongError)
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams

pytestmark = pytest.mark.slow
NUM_BLOCKS = 64
LONG = SamplingParams(max_tokens=200, temperature=0, ignore_eos=True)


def chat(loaded_model, question: str) -> str:
    return loaded_model.chat_template.render([{"role": "user", "content": question}])


@pytest.fixture(scope="module")
def reference_engine(loaded_model) -> LLMEngine:
    return LLMEngine(loaded_model, EngineConfig(num_kv_blocks=NUM_BLOCKS, max_model_len=NUM_BLOCKS * 16))


@pytest.fixture(scope="module")
def async_engine(loaded_model):
    engine = AsyncLLMEngine(LLMEngine(loaded_model, EngineConfig(num_kv_blocks=NUM_BLOCKS, max_model_len=NUM_BLOCKS * 16)))
    engine.start()
    yield engine
    engine.shutdown()


async def wait_idle(engine: AsyncLLMEngine, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while engine.engine.has_unfinished_requests():
        assert time.monotonic() < deadline, "the request was never retired"
        await asyncio.sleep(0.02)


async def collect(stream):
    return [out async for out in stream]


async def test_streams_match_the_synchronous_engine(loaded_model, async_engine, reference_engine):
    questions = ["What is 2+2?", "Name a planet.", "Say hi."]
    params = SamplingParams(max_tokens=12, temperature=0)
    expected = [reference_engine.generate(chat(loaded_model, q), params)[0] for q in questions]
    streams = [async_engine.add_request(f"s{i}", chat(loaded_model, q), params)
               for i, q in enumerate(questions)]
    results = await asyncio.gather(*(collect(s) for s in streams))
    for events, ref in zip(results, expected):
        assert all(not e.finished for e in events[:-1]) and events[-1].finished
        assert [t for e in events for t in e.new_token_ids] == ref.new_token_ids
        assert "".join(e.delta for e in events) == events[-1].text == ref.text
        final = events[-1]
        assert final.finish_reason == ref.finish_reason
        assert final.num_output_tokens == ref.num_output_tokens
        assert final.metrics.ttft_ms is not None and final.metrics.queue_ms is not None
    await wait_idle(async_engine)
    assert async_engine.engine.num_free_blocks() == NUM_BLOCKS


async def test_abort_mid_decode_ends_the_stream_and_frees_blocks(loaded_model, async_engine):
    stream = async_engine.add_request("abort-me", chat(loaded_model, "Tell me a story."), LONG)
    events = []
    async for out in stream:
        events.append(out)
        if len(events) == 3:
            async_engine.abort("abort-me")
    assert events[-1].finish_reason == "abort" and 3 <= events[-1].num_output_tokens < 200
    await wait_idle(async_engine)
    assert async_engine.engine.num_free_blocks() == NUM_BLOCKS


async def test_aclose_aborts_the_request(loaded_model, async_engine):
    stream = async_engine.add_request("leave", chat(loaded_model, "Tell me a story."), LONG)
    await stream.__anext__()
    await stream.aclose()
    await wait_idle(async_engine)
    assert async_engine.engine.num_free_blocks() == NUM_BLOCKS


async def test_closing_before_the_first_event_aborts_the_queued_request(loaded_model, async_engine):
    stream = async_engine.add_request("early", chat(loaded_model, "Tell me a story."), LONG)
    await stream.aclose()
    await wait_idle(async_engine)
    assert async_engine.engine.num_free_blocks() == NUM_BLOCKS


async def test_cancelling_the_consumer_aborts_the_request(loaded_model, async_engine):
    stream = async_engine.add_request("cancel", chat(loaded_model, "Tell me a story."), LONG)
    first = asyncio.Event()

    async def consume():
        async for _ in stream:
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 20)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_idle(async_engine)
    assert async_engine.engine.num_free_blocks() == NUM_BLOCKS


async def test_dropping_the_stream_after_break_aborts_the_request(loaded_model, async_engine):
    async def consume_one():
        async for _ in async_engine.add_request("dropped", chat(loaded_model, "Tell me a story."), LONG):
            break

    await consume_one()
    gc.collect()
    await wait_idle(async_engine)
    assert async_engine.engine.num_free_blocks() == NUM_BLOCKS


async def test_validation_is_synchronous(loaded_model, async_engine):
    with pytest.raises(InvalidSamplingParamsError, match="top_p"):
        async_engine.add_request("bad", "hi", SamplingParams(top_p=0))
    with pytest.raises(PromptTooLongError):
        async_engine.add_request("huge", list(range(5, 5 + NUM_BLOCKS * 16)), SamplingParams())
    assert not async_engine.engine.has_unfinished_requests()


async def test_idle_loop_does_not_spin(async_engine):
    calls = 0
    original = async_engine.engine.step

    def counting_step():
        nonlocal calls
        calls += 1
        return original()

    async_engine.engine.step = counting_step
    try:
        await asyncio.sleep(0.3)
    finally:
        async_engine.engine.step = original
    assert calls == 0


async def test_a_raising_step_fails_requests_in_flight_and_the_loop_keeps_serving(loaded_model):
    engine = AsyncLLMEngine(LLMEngine(loaded_model, EngineConfig(num_kv_blocks=NUM_BLOCKS, max_model_len=NUM_BLOCKS * 16)))
    original = engine.engine.step
    state = {"raised": False}

    def step_once_broken():
        if not state["raised"]:
            state["raised"] = True
            raise RuntimeError("scheduler bug")
        return original()

    engine.engine.step = step_once_broken
    engine.start()
    try:
        events = await collect(engine.add_request("x", "Hello", LONG))
        assert [e.finish_reason for e in events] == ["error"] and "scheduler bug" in events[0].error
        assert engine.engine.num_free_blocks() == NUM_BLOCKS
        events = await collect(engine.add_request("y", "Hello", SamplingParams(max_tokens=3, temperature=0)))
        assert events[-1].finish_reason in ("stop", "length") and events[-1].num_output_tokens >= 1
    finally:
        engine.shutdown()


async def test_shutdown_aborts_streams_and_refuses_new_requests(loaded_model):
    engine = AsyncLLMEngine(LLMEngine(loaded_model, EngineConfig(num_kv_blocks=NUM_BLOCKS, max_model_len=NUM_BLOCKS * 16)))
    with pytest.raises(EngineNotRunningError):
        engine.add_request("early", "Hello", LONG)
    engine.start()
    stream = engine.add_request("s", chat(loaded_model, "Tell me a story."), LONG)
    await stream.__anext__()
    await asyncio.get_running_loop().run_in_executor(None, engine.shutdown)
    rest = await asyncio.wait_for(collect(stream), 10)
    assert rest[-1].finish_reason == "abort"
    with pytest.raises(EngineNotRunningError):
        engine.add_request("late", "Hello", LONG)


async def test_an_id_is_not_reused_before_its_last_event_is_delivered(loaded_model):
    # The engine forgets a finished request inside step(); its final event is handed to the
    # stream just after. An id reused in between must be refused, or the old request's final
    # event would end the new request's stream (and the new one's events be lost).
    engine = AsyncLLMEngine(LLMEngine(loaded_model, EngineConfig(num_kv_blocks=NUM_BLOCKS, max_model_len=NUM_BLOCKS * 16)))
    original = engine._dispatch
    gate, reached = threading.Event(), threading.Event()

    def slow_dispatch(outputs):
        if any(o.request_id == "x" and o.finished for o in outputs) and not gate.is_set():
            reached.set()
            gate.wait(20)
        original(outputs)

    engine._dispatch = slow_dispatch
    engine.start()
    try:
        first = engine.add_request("x", "Hello", SamplingParams(max_tokens=1, temperature=0))
        assert await asyncio.get_running_loop().run_in_executor(None, reached.wait, 20)
        assert not engine.engine.has_unfinished_requests()  # finished, its event not delivered
        with pytest.raises(DuplicateRequestError):
            engine.add_request("x", "Hello", SamplingParams(max_tokens=2, temperature=0))
        gate.set()
        events = await asyncio.wait_for(collect(first), 20)
        assert [e.num_output_tokens for e in events] == [1] and events[-1].finished
        again = await asyncio.wait_for(collect(engine.add_request(
            "x", "Hello", SamplingParams(max_tokens=2, temperature=0, ignore_eos=True))), 20)
        assert again[-1].num_output_tokens == 2  # the id is free once delivered
    finally:
        gate.set()
        engine.shutdown()
