"""The real engine's spans (slow): a generation's engine.queue, engine.prefill (its chunks) and
engine.decode come from the engine's own timings, in order, inside the wall-clock window of the
request, under the request's trace."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest

from backend import tracing
from backend.generation import Generations
from backend.generator import ChatMessage, GenerationDone, GenerationParams

pytestmark = pytest.mark.slow

SLACK_NS = 50_000_000  # the monotonic -> wall-clock conversion, measured when the request ends


def test_engine_prefill_and_decode_spans_have_sane_ordered_times(real_generator: Any):
    store = tracing.configure(10, env={}).store

    async def run() -> GenerationDone:
        generation = Generations(real_generator).admit("u1", "test", 40)
        generation.start(uuid.uuid4().hex, GenerationParams(max_tokens=12, temperature=0.0),
                         messages=[ChatMessage("user", f"Count from one to ten. ({uuid.uuid4().hex})")])
        done = None
        async for event in generation.events():
            if isinstance(event, GenerationDone):
                done = event
        await generation.close()
        assert done is not None
        return done

    before = time.time_ns()
    root = tracing.start_root("test.request")
    with tracing.use(root):
        done = asyncio.run(run())
    root.end()
    after = time.time_ns()
    spans = store.get(tracing.trace_id_of(root))
    by_name = {s.name: s for s in spans}
    queue, prefill, decode = by_name["engine.queue"], by_name["engine.prefill"], by_name["engine.decode"]
    chunks = [s for s in spans if s.name == "engine.prefill.chunk"]
    assert chunks and all(c.parent.span_id == prefill.context.span_id for c in chunks)
    assert 0 < sum(c.attributes["tokens"] for c in chunks) <= done.prompt_tokens
    times = [queue.start_time, queue.end_time]
    for c in chunks:
        times += [c.start_time, c.end_time]
    times += [decode.start_time, decode.end_time]
    assert times == sorted(times)
    assert queue.end_time == chunks[0].start_time == prefill.start_time and prefill.end_time == chunks[-1].end_time
    assert before - SLACK_NS <= queue.start_time and decode.end_time <= after + SLACK_NS
    assert decode.attributes["completion_tokens"] == done.completion_tokens > 0
    # ttft as the engine reported it matches the spans (arrival -> first token)
    assert abs((decode.start_time - queue.start_time) / 1e6 - done.ttft_ms) < 1.0
    tracing.configure(env={})
