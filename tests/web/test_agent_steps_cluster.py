"""An agent run on process A watched from a socket on process B (REDIS_URL, two real apps on one
database and one Redis, as tests/web/test_live.py): B's socket gets the same agent_step frames,
in the same order with the deltas, as a socket on A attached at the same moment, an attach
mid-run on B gets each step's latest state first, and a page B serves after the end shows the
stored steps. The model is scripted (tests/web/test_agent_runs.py); the calculator runs."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import replace
from typing import Any, Iterator

import pytest
from starlette.testclient import TestClient

from backend.rag import HashingEmbedder
from web.app import create_app

from .conftest import use_session, wait_until
from .test_agent_runs import CALC, ScriptedModel, send, tools_on
from .test_agent_steps_stored import steps_on
from .test_live import ORIGIN, Process, live_subscribers, two_people

ACCOUNT_EVENTS = ("turn", "conversation")  # of the send, on every socket of the account


@contextmanager
def two_agent_processes(settings, redis_url: str, model: ScriptedModel) -> Iterator[tuple[Process, Process]]:
    """Processes A (its model: `model`) and B, both started and subscribed before any reply."""
    processes = []
    with ExitStack() as stack:
        for name, generator in (("a", model), ("b", ScriptedModel([]))):
            app = create_app(replace(settings, redis_url=redis_url, instance_name=name), generator=generator,
                             embedder=HashingEmbedder())
            processes.append(Process(stack.enter_context(TestClient(app, follow_redirects=False)), generator))
        wait_until(lambda: live_subscribers(redis_url) == 2, what="both processes subscribed")
        yield processes[0], processes[1]


def frame(ws) -> dict[str, Any]:
    """The next frame that is not an account event."""
    while True:
        received = ws.receive_json()
        if received["type"] not in ACCOUNT_EVENTS:
            return received


def frames_until_done(ws) -> list[dict[str, Any]]:
    frames = [frame(ws)]
    while frames[-1]["type"] not in ("done", "error"):
        frames.append(frame(ws))
    return frames


@pytest.mark.parametrize("hold, first_steps", [
    ((0, 1), [(0, "model", "running")]),  # B watches the run from its first step
    ((1, 1), [(0, "model", "done"), (1, "tool", "done"), (2, "model", "running")]),  # B attaches mid-run
], ids=["from-the-first-step", "mid-run"])
def test_a_socket_on_b_gets_the_agent_steps_of_a_run_on_a(settings, redis_url, hold, first_steps) -> None:
    model = ScriptedModel([[CALC], ["The answer ", "is 42."]], hold=hold)
    with two_agent_processes(settings, redis_url, model) as (a, b):
        people = two_people(a)
        use_session(a.client, people["bob"])
        use_session(b.client, people["bob"])
        conversation_id = tools_on(a.client, people["bob"])
        with ExitStack() as stack:
            sender = stack.enter_context(a.client.websocket_connect("/ws", headers=ORIGIN))
            ack = send(sender, conversation_id)
            message_id = ack["assistant_message_id"]
            assert model.held.wait(10)
            on_a = stack.enter_context(a.client.websocket_connect("/ws", headers=ORIGIN))
            on_b = stack.enter_context(b.client.websocket_connect("/ws", headers=ORIGIN))
            firsts = []
            for ws in (on_a, on_b):
                ws.send_json({"type": "attach", "message_id": message_id, "seq": 0})
                firsts.append([frame(ws) for _ in first_steps])  # read: both attached before the release
            local_first, relayed_first = firsts
            assert relayed_first == local_first
            assert [(f["type"], f["index"], f["kind"], f["status"]) for f in relayed_first] == [
                ("agent_step", *step) for step in first_steps]
            model.gate.set()
            local_rest, relayed_rest = frames_until_done(on_a), frames_until_done(on_b)
            sent = frames_until_done(sender)
        assert relayed_rest == local_rest  # the same frames, steps and deltas in the same order
        relayed = relayed_first + relayed_rest
        tool = [f for f in relayed if f["type"] == "agent_step" and f["kind"] == "tool" and f["status"] == "done"]
        assert [(c["tool"], c["status"], c["summary"]) for c in tool[0]["calls"]] == [
            ("calculator", "ok", "Calculated 6 * 7 = 42")]
        assert relayed[-1] == sent[-1] and relayed[-1]["content"] == "The answer is 42."
        # A page B serves after the end: the stored steps, in the reply.
        assert b.client.get(f"/c/{conversation_id}").status_code == 200
        [step] = steps_on(b.client.get(f"/c/{conversation_id}").text)[message_id]["steps"]
        assert step["summary"] == "Calculated 6 * 7 = 42"
