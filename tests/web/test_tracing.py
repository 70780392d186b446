"""Traces through the app (backend/tracing.py): the spans of one chat turn, a /v1 request's own
trace, log lines during a turn, the stored trace id, the admin waterfall and who may open it."""

from __future__ import annotations

import html
import json
import logging
import time
import uuid
from dataclasses import replace
from typing import Any, AsyncIterator, Iterator

import pytest
from starlette.testclient import TestClient

from backend import tracing
from backend.generator import EngineTimeline, GenerationDone, GenerationEvent, GenerationParams, TextDelta
from backend.rag import HashingEmbedder
from backend.settings import Settings
from web.app import create_app

from .conftest import FakeGenerator, app_state, sign_up, use_session, user_id, wait_until

# The stages of a chat turn, in the order they start.
TURN_STAGES = ["ws.receive", "persistence.read", "retrieval", "prompt.assemble", "admission",
               "persistence.store_question", "chat.reply", "engine.queue", "engine.prefill",
               "engine.prefill.chunk", "engine.decode", "persistence.final_write"]


class TimedFake(FakeGenerator):
    """The scripted generator, its final events carrying an engine timeline as the real
    adapter's do: queued at stream(), two prefill chunks, decode from the first token."""

    def _events(self, request_id: str, prompt_tokens: int, params: GenerationParams) -> AsyncIterator[GenerationEvent]:
        arrival = time.time_ns()
        logging.getLogger("tests.tracing.fake").info("queued %s", request_id)
        inner = super()._events(request_id, prompt_tokens, params)

        async def timed() -> AsyncIterator[GenerationEvent]:
            first: int | None = None
            async for event in inner:
                logging.getLogger("tests.tracing.fake").info("%s of %s", type(event).__name__, request_id)
                now = time.time_ns()
                if isinstance(event, TextDelta) and first is None:
                    first = now
                if isinstance(event, GenerationDone):
                    first = first or now
                    middle = (arrival + first) // 2
                    event = replace(event, timeline=EngineTimeline(
                        arrival_ns=arrival, scheduled_ns=arrival + 1000, first_token_ns=first, finished_ns=now,
                        prefill_chunks=((arrival + 1000, middle, 16), (middle, first, prompt_tokens - 16))))
                yield event

        return timed()


@pytest.fixture
def fake() -> FakeGenerator:
    return TimedFake()


@pytest.fixture
def client(settings: Settings, fake: FakeGenerator) -> Iterator[TestClient]:
    app = create_app(replace(settings, trace_store_size=50), generator=fake, embedder=HashingEmbedder())
    with TestClient(app, follow_redirects=False) as test_client:
        yield test_client


def chat_turn(client: TestClient, text: str = "hello there") -> dict[str, Any]:
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": None, "text": text})
        frames = []
        while not frames or frames[-1]["type"] not in ("done", "error"):
            frames.append(ws.receive_json())
    assert frames[-1]["type"] == "done", frames[-1]
    return {"ack": frames[0], "done": frames[-1]}


def spans_of(trace_id: str, root: str) -> list[Any]:
    """The trace's spans once its root has ended (the pump ends it after the last frame)."""
    store = tracing.store()
    assert store is not None
    return wait_until(lambda: (s := store.get(trace_id)) and any(x.name == root for x in s) and s,
                      what=f"the {root} span of {trace_id}")


def stored_trace_id(client: TestClient, conversation_id: str, message_id: str) -> str | None:
    view = client.get(f"/api/conversations/{conversation_id}").json()
    return next(m for m in view["messages"] if m["id"] == message_id)["trace_id"]


def test_a_chat_turns_spans_cover_every_stage_in_order_under_one_trace(client):
    sign_up(client, "alice")
    turn = chat_turn(client)
    trace_id = stored_trace_id(client, turn["ack"]["conversation_id"], turn["done"]["message_id"])
    assert tracing.valid_trace_id(trace_id) and turn["done"]["trace_id"] == trace_id  # the live Info panel's link
    spans = spans_of(trace_id, "chat.turn")
    by_name = {s.name: s for s in spans}
    assert set(TURN_STAGES) | {"chat.turn"} <= set(by_name)
    assert {tracing.trace.format_trace_id(s.context.trace_id) for s in spans} == {trace_id}
    # In order: each stage starts no earlier than the one before it ends (or, for the engine
    # inside the reply, starts).
    firsts = {name: min(s.start_time for s in spans if s.name == name) for name in TURN_STAGES}
    assert [firsts[n] for n in TURN_STAGES] == sorted(firsts[n] for n in TURN_STAGES), firsts
    sequential = ["ws.receive", "retrieval", "prompt.assemble", "admission", "persistence.store_question"]
    for before, after in zip(sequential, sequential[1:]):
        assert by_name[before].end_time <= by_name[after].start_time, (before, after)
    assert by_name["engine.decode"].end_time <= by_name["persistence.final_write"].start_time
    # Parents: the turn holds the stages before the reply and the reply; the reply holds the
    # engine's spans and the final write; the chunks are the prefill's.
    root = by_name["chat.turn"]
    assert root.parent is None

    def parent(name: str) -> str:
        pid = by_name[name].parent.span_id
        return next(s.name for s in spans if s.context.span_id == pid)

    for name in ("ws.receive", "retrieval", "prompt.assemble", "admission", "persistence.store_question", "chat.reply"):
        assert parent(name) == "chat.turn", name
    for name in ("engine.queue", "engine.prefill", "engine.decode", "persistence.final_write"):
        assert parent(name) == "chat.reply", name
    chunks = [s for s in spans if s.name == "engine.prefill.chunk"]
    assert len(chunks) == 2 and all(c.parent.span_id == by_name["engine.prefill"].context.span_id for c in chunks)
    assert by_name["engine.decode"].attributes["completion_tokens"] == 4


def test_each_turn_and_each_v1_request_has_its_own_trace(client):
    token = sign_up(client, "alice")
    first, second = chat_turn(client, "one"), chat_turn(client, "two")
    ids = {stored_trace_id(client, t["ack"]["conversation_id"], t["done"]["message_id"]) for t in (first, second)}
    _, secret = app_state(client).api_keys.create_key(user_id(client, token), "tests")
    use_session(client, None)
    response = client.post("/v1/chat/completions", headers={"Authorization": f"Bearer {secret}"},
                           json={"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200, response.text
    v1_id = response.headers["x-trace-id"]
    assert len(ids | {v1_id}) == 3
    spans = spans_of(v1_id, "v1.request")
    names = [s.name for s in spans]
    assert {"v1.request", "prompt.assemble", "admission", "engine.queue", "engine.prefill", "engine.decode"} <= set(names)
    root = next(s for s in spans if s.name == "v1.request")
    assert all(s.parent.span_id == root.context.span_id
               for s in spans if s.name in ("prompt.assemble", "admission", "engine.queue", "engine.decode"))


def test_a_streamed_v1_request_gets_its_engine_spans_too(client):
    token = sign_up(client, "alice")
    _, secret = app_state(client).api_keys.create_key(user_id(client, token), "tests")
    use_session(client, None)
    response = client.post("/v1/completions", headers={"Authorization": f"Bearer {secret}"},
                           json={"model": "fake-model", "prompt": "once upon", "stream": True})
    assert response.status_code == 200 and "[DONE]" in response.text
    spans = spans_of(response.headers["x-trace-id"], "v1.request")
    root = next(s for s in spans if s.name == "v1.request")
    decode = next(s for s in spans if s.name == "engine.decode")
    assert decode.parent.span_id == root.context.span_id


def test_log_lines_during_a_turn_carry_its_trace_id(client, caplog):
    caplog.set_level(logging.INFO, logger="tests.tracing.fake")
    sign_up(client, "alice")
    turn = chat_turn(client)
    trace_id = stored_trace_id(client, turn["ack"]["conversation_id"], turn["done"]["message_id"])
    lines = [r for r in caplog.records if r.name == "tests.tracing.fake"]
    assert lines and all(r.trace_id == trace_id for r in lines)


def test_log_lines_while_a_streamed_v1_body_is_sent_carry_its_trace_id(client, caplog):
    """The body of a streamed reply is iterated by the server after the handler returned, outside
    the handler's context: every event's log line still names the request's trace."""
    caplog.set_level(logging.INFO, logger="tests.tracing.fake")
    token = sign_up(client, "alice")
    _, secret = app_state(client).api_keys.create_key(user_id(client, token), "tests")
    response = client.post("/v1/completions", headers={"Authorization": f"Bearer {secret}"},
                           json={"model": "fake-model", "prompt": "once upon", "stream": True})
    assert response.status_code == 200 and "[DONE]" in response.text
    lines = [r for r in caplog.records if r.name == "tests.tracing.fake"]
    assert sum(r.getMessage().startswith("TextDelta") for r in lines) >= 3
    assert {r.trace_id for r in lines} == {response.headers["x-trace-id"]}


def test_the_admin_opens_a_replys_waterfall_from_its_info_panel(client):
    sign_up(client, "alice")  # the first account: an admin
    turn = chat_turn(client)
    conversation_id, message_id = turn["ack"]["conversation_id"], turn["done"]["message_id"]
    trace_id = stored_trace_id(client, conversation_id, message_id)
    spans_of(trace_id, "chat.turn")
    page = client.get(f"/c/{conversation_id}").text
    link = f'href="/admin/traces/{trace_id}"'
    assert link in page and 'class="timing trace-link"' in page
    response = client.get(f"/admin/traces/{trace_id}")
    assert response.status_code == 200
    body = response.text
    assert f'data-trace-id="{trace_id}"' in body
    rows = [part.split('"', 1)[0] for part in body.split('class="span-row')[1:]]
    assert len(rows) >= len(TURN_STAGES) + 1
    order = [name for name in (chunk.split('data-name="', 1)[1].split('"', 1)[0] for chunk in body.split('class="span-row')[1:])]
    assert order[0] == "chat.turn" and set(TURN_STAGES) <= set(order)
    assert order.index("ws.receive") < order.index("admission") < order.index("chat.reply") < order.index("engine.decode")
    assert "<script" not in body.split("<main", 1)[1]  # no script on the waterfall


def test_the_waterfall_escapes_span_names_and_attributes(client):
    sign_up(client, "alice")
    hostile = '<img src=x onerror="alert(1)">'
    root = tracing.start_root("<script>alert(1)</script>", {"text": hostile})
    with tracing.use(root), tracing.span("child", note=hostile):
        pass
    root.end()
    body = client.get(f"/admin/traces/{tracing.trace_id_of(root)}").text
    assert hostile not in body and "<script>alert(1)</script>" not in body
    assert html.escape(hostile, quote=True) in body or "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_only_admins_open_a_trace_and_ids_are_checked(client):
    alice = sign_up(client, "alice")
    turn = chat_turn(client)
    trace_id = stored_trace_id(client, turn["ack"]["conversation_id"], turn["done"]["message_id"])
    spans_of(trace_id, "chat.turn")
    bob = sign_up(client, "bob")
    use_session(client, bob)
    response = client.get(f"/admin/traces/{trace_id}", headers={"Accept": "text/html"})
    assert response.status_code == 403 and "chat.turn" not in response.text
    bob_turn = chat_turn(client)  # bob's own reply: no trace link for a non-admin
    page = client.get(f"/c/{bob_turn['ack']['conversation_id']}").text
    assert "/admin/traces/" not in page
    use_session(client, None)
    assert client.get(f"/admin/traces/{trace_id}").status_code == 303
    use_session(client, alice)
    for bad in ("A" * 32, "0" * 32, "abc", "g" * 32, "a" * 33):
        assert client.get(f"/admin/traces/{bad}", headers={"Accept": "text/html"}).status_code == 404, bad
    unknown = client.get("/admin/traces/" + "ab" * 16, headers={"Accept": "application/json"})
    assert unknown.status_code == 404 and json.loads(unknown.text)["error"]["code"] == "not_found"


def test_a_turn_that_fails_to_start_still_ends_its_root_span(client, monkeypatch):
    sign_up(client, "alice")
    store = tracing.store()
    assert store is not None
    store.clear()

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the chat service failed")

    monkeypatch.setattr(app_state(client).chat, "act", broken)
    try:
        with client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": None, "text": "x"})
            ws.receive_json()
    except Exception:  # noqa: BLE001 - the socket may close or answer an error: either is fine here
        pass
    # The root ended (an unended span is never exported, and its trace would leak in the SDK).
    wait_until(lambda: any(s.name == "chat.turn" for t in store.trace_ids() for s in store.get(t) or ()),
               what="the chat.turn root span exported")
