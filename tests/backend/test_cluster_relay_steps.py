"""An agent run's step events through the reply relay (backend/cluster/relay.py) against a real
redis-server: a viewer on another process gets them in order with the deltas, and one attaching
mid-run gets each step's latest event first, exactly as a local viewer of the LiveReply does."""

from __future__ import annotations

import asyncio
import time
import json
import uuid

import pytest
import redis

from backend.agent.events import AgentStepEvent, CallView, step_from_frame
from backend.chat.events import ChatFailed, Delta, final_to_dict
from backend.cluster import relay as relay_module
from backend.cluster.relay import ReplyRelay

from .test_cluster_relay import _done, _drain, _reply, _with_relays

RUN = "run-1"


def _steps(message_id: str) -> list[AgentStepEvent]:
    """A run's events in publication order: model 0 (running, done), tool 1 (running, done),
    model 2 (running)."""
    calls = (CallView("calculator", '{"expression": "6 * 7"}', "running"),)
    done_calls = (CallView("calculator", '{"expression": "6 * 7"}', "ok", "Calculated 6 * 7 = 42",
                           "6 * 7 = 42 <b>\"quoted\"</b> ✓"),)
    return [AgentStepEvent(message_id, RUN, 0, "model", "running"),
            AgentStepEvent(message_id, RUN, 0, "model", "done", '<tool_call>[{"name": "calculator"}]</tool_call>'),
            AgentStepEvent(message_id, RUN, 1, "tool", "running", calls=calls),
            AgentStepEvent(message_id, RUN, 1, "tool", "done", "Calculated 6 * 7 = 42", done_calls),
            AgentStepEvent(message_id, RUN, 2, "model", "running")]


async def _opened(b: ReplyRelay, message_id: str, after_seq: int, entries: int, raw: redis.Redis):
    """B's viewer once the mirror has written `entries` entries (it writes asynchronously)."""
    deadline = time.monotonic() + 30.0  # generous: CI's two cores may be busy
    while raw.xlen(b.key(message_id)) < entries and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert raw.xlen(b.key(message_id)) == entries
    remote = await b.open(message_id, after_seq)
    assert remote is not None
    return remote


def test_a_frame_round_trips_and_a_bad_one_is_refused() -> None:
    for event in _steps("m"):
        assert step_from_frame(json.loads(json.dumps(event.frame()))) == event
    for bad in (None, [], {"type": "delta"}, {"type": "agent_step", "index": "1"},
                {"type": "agent_step", "index": 1, "calls": [{"tool": 3}]}, {"type": "agent_step", "index": True}):
        with pytest.raises(ValueError):
            step_from_frame(bad)


def test_a_remote_viewer_gets_the_steps_in_order_with_the_deltas_as_a_local_one(redis_url: str) -> None:
    raw = redis.Redis.from_url(redis_url)

    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        reply = _reply()
        reply._mirror = a.mirror(reply.message_id)  # noqa: SLF001 - as ChatService._start passes it
        remote = await _opened(b, reply.message_id, 0, 1, raw)
        local = reply.attach(0)
        steps = _steps(reply.message_id)
        for step in steps[:4]:
            reply.publish_step(step)
        reply.publish_step(steps[4])
        reply.add("The answer ")
        reply.publish_step(AgentStepEvent(reply.message_id, RUN, 2, "model", "done", "The answer is 42."))
        reply.add("is 42.")
        reply.markdown.finish()
        reply.end(_done(reply))
        local_events, remote_events = await _drain(local), await _drain(remote)
        assert remote_events == local_events
        kinds = [type(e).__name__ for e in remote_events]
        assert kinds == ["AgentStepEvent"] * 5 + ["Delta", "AgentStepEvent", "Delta", "Done"]
        assert remote_events[:5] == steps

    asyncio.run(_with_relays(redis_url, body))
    raw.close()


@pytest.mark.parametrize("after_seq", [0, 1, 2])
def test_an_attach_mid_run_on_another_process_gets_the_steps_latest_events_first(redis_url: str, after_seq: int) -> None:
    raw = redis.Redis.from_url(redis_url)

    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        reply = _reply()
        reply._mirror = a.mirror(reply.message_id)  # noqa: SLF001
        steps = _steps(reply.message_id)
        for step in steps[:4]:
            reply.publish_step(step)
        reply.add("The answer ")
        reply.publish_step(steps[4])
        reply.add("is ")
        local = reply.attach(after_seq)
        remote = await _opened(b, reply.message_id, after_seq, 1 + 5 + 2, raw)
        later = AgentStepEvent(reply.message_id, RUN, 2, "model", "done", "The answer is 42.")
        reply.publish_step(later)
        reply.add("42.")
        reply.markdown.finish()
        reply.end(_done(reply))
        local_events, remote_events = await _drain(local), await _drain(remote)
        assert remote_events == local_events
        # Each step once, as its latest event, in index order; then the catch-up delta, if any.
        assert remote_events[:3] == [steps[1], steps[3], steps[4]]
        rest = [later, "Delta", "Done"]
        assert [e if isinstance(e, AgentStepEvent) else type(e).__name__ for e in remote_events[3:]] == (
            ["Delta"] + rest if after_seq < 2 else rest)

    asyncio.run(_with_relays(redis_url, body))
    raw.close()


def test_a_page_ahead_of_the_stream_is_not_held_by_a_step_entry_after_its_seq(redis_url: str, monkeypatch) -> None:
    """The page saw seq 1; the stream's last entry is a step written after it: open() has
    reached the page's seq and returns at once, not after CATCH_UP_WAIT_S."""
    monkeypatch.setattr(relay_module, "CATCH_UP_WAIT_S", 120.0)
    raw = redis.Redis.from_url(redis_url)

    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        message_id = uuid.uuid4().hex
        key = a.key(message_id)
        raw.xadd(key, {"seq": 0})
        raw.xadd(key, {"seq": 1, "text": "one "})
        step = _steps(message_id)[0]
        raw.xadd(key, {"step": json.dumps(step.frame())})
        remote = await asyncio.wait_for(b.open(message_id, 1), 10)
        assert remote is not None and remote.seq == 1
        assert remote._pending == [step]  # noqa: SLF001 - the step, no text to catch up

    asyncio.run(_with_relays(redis_url, body))
    raw.close()


def test_an_unreadable_step_entry_is_skipped_and_the_text_goes_on(redis_url: str) -> None:
    raw = redis.Redis.from_url(redis_url)

    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        message_id = uuid.uuid4().hex
        key = a.key(message_id)
        raw.xadd(key, {"seq": 0})
        remote = await b.open(message_id, 0)
        raw.xadd(key, {"step": "{not json"})
        raw.xadd(key, {"step": json.dumps({"type": "agent_step", "index": "x"})})
        raw.xadd(key, {"seq": 1, "text": "one"})
        raw.xadd(key, {"final": json.dumps(final_to_dict(ChatFailed("x", "y", None, message_id)))})
        events = await _drain(remote)
        assert [(e.seq, e.text) for e in events if isinstance(e, Delta)] == [(1, "one")]

    asyncio.run(_with_relays(redis_url, body))
    raw.close()
