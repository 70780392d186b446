"""web.ws: the chat WebSocket protocol, with the scripted fake generator and (slow) the real engine."""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import replace
from typing import Any, Iterator

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from backend.settings import Settings
from web.app import create_app
from web.ws import MAX_SENDS_IN_FLIGHT, BadFrame, PingFrame, SendFrame, StopFrame, parse_frame

from .conftest import FakeGenerator, app_state, sign_up, use_session, user_id, wait_until


def send_frame(text: str, conversation_id: str | None = None, client_msg_id: str | None = None) -> dict[str, Any]:
    return {
        "type": "send",
        "client_msg_id": client_msg_id or uuid.uuid4().hex,
        "conversation_id": conversation_id,
        "text": text,
    }


def receive_until(ws, kinds: tuple[str, ...] = ("done",), limit: int = 2000) -> list[dict[str, Any]]:
    """Frames up to and including the first whose type is in `kinds`."""
    frames = []
    for _ in range(limit):
        frame = ws.receive_json()
        frames.append(frame)
        if frame["type"] in kinds:
            return frames
    raise AssertionError(f"no {kinds} frame in {limit} frames")


def assert_alive(ws) -> None:
    """The socket still answers (and nothing else was queued before the answer)."""
    ws.send_json({"type": "ping"})
    assert ws.receive_json() == {"type": "pong"}


def stored_message(client: TestClient, conversation_id: str, message_id: str) -> dict[str, Any]:
    view = client.get(f"/api/conversations/{conversation_id}").json()
    return next(m for m in view["messages"] if m["id"] == message_id)


def fake_saw_abort(fake: FakeGenerator) -> bool:
    request_id = fake.requests[-1][0]
    return request_id in fake.abort_calls or request_id in fake.closed_early


# -- connection ---------------------------------------------------------------------------------


def test_unauthenticated_socket_is_closed_with_4401(client: TestClient) -> None:
    with pytest.raises(WebSocketDisconnect) as excinfo:
        with client.websocket_connect("/ws") as ws:
            ws.receive_json()
    assert excinfo.value.code == 4401


def test_cross_origin_upgrade_is_refused_with_4403(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with pytest.raises(WebSocketDisconnect) as excinfo:
        with client.websocket_connect("/ws", headers={"Origin": "http://evil.example"}) as ws:
            ws.send_json(send_frame("hi"))
            ws.receive_json()
    assert excinfo.value.code == 4403
    assert fake.requests == []


def test_same_origin_upgrade_is_accepted(client: TestClient) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws", headers={"Origin": "http://testserver"}) as ws:
        assert_alive(ws)


def test_logged_out_session_closes_the_socket_on_the_next_send(client: TestClient, fake: FakeGenerator) -> None:
    token = sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        app_state(client).auth.log_out(token)
        ws.send_json(send_frame("hi"))
        with pytest.raises(WebSocketDisconnect) as excinfo:
            ws.receive_json()
    assert excinfo.value.code == 4401
    assert fake.requests == []


# -- streaming ----------------------------------------------------------------------------------


def test_send_streams_ack_deltas_done_and_stores_the_reply(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        frame = send_frame("Say hello")
        ws.send_json(frame)
        frames = receive_until(ws)
        assert_alive(ws)

    ack, *deltas, done = frames
    assert ack["type"] == "ack"
    assert ack["client_msg_id"] == frame["client_msg_id"]
    assert ack["duplicate"] is False
    assert ack["conversation_id"] and ack["user_message_id"] and ack["assistant_message_id"]
    assert isinstance(ack["title"], str) and ack["title"]

    assert deltas and all(d["type"] == "delta" for d in deltas)
    assert [d["seq"] for d in deltas] == list(range(1, len(deltas) + 1))
    assert all(d["message_id"] == ack["assistant_message_id"] for d in deltas)
    assert "".join(d["text"] for d in deltas) == "".join(fake.tokens)
    assert "<strong>world</strong>" in "".join(d["committed_html"] for d in deltas) + deltas[-1]["tail_html"]

    assert done["type"] == "done"
    assert done["message_id"] == ack["assistant_message_id"]
    assert done["finish_reason"] == "stop"
    assert done["status"] == "complete"
    assert done["error"] is None
    assert "<strong>world</strong>" in done["html"]
    assert done["usage"]["completion_tokens"] == len(fake.tokens)
    assert done["usage"]["prompt_tokens"] > 0
    assert set(done["timings"]) == {"queue_ms", "ttft_ms", "decode_tokens_per_s", "total_ms"}
    assert done["timings"]["total_ms"] == 9.5  # the engine's arrival to finish (FakeGenerator's e2e_ms)

    # The generator saw the user's text as the last prompt message.
    assert fake.requests[-1][1][-1].role == "user"
    assert fake.requests[-1][1][-1].content == "Say hello"

    stored = stored_message(client, ack["conversation_id"], ack["assistant_message_id"])
    assert stored["role"] == "assistant"
    assert stored["content"] == "".join(fake.tokens)
    assert stored["status"] == "complete"
    assert stored["finish_reason"] == "stop"
    assert stored["total_ms"] == 9.5

    # The page shows the reply's timings, queue time first (the fake waited 1.5 ms, TTFT 2.5 ms),
    # its total time last (e2e 9.5 ms).
    page = client.get(f"/c/{ack['conversation_id']}").text
    assert ('<span class="timing">queue 2 ms</span><span class="timing">TTFT 2 ms</span>'
            '<span class="timing">100.0 tok/s</span><span class="timing">4 tokens</span>'
            '<span class="timing">total 10 ms</span>') in page


def test_a_finished_replys_footer_ends_with_its_total_time(client: TestClient, fake: FakeGenerator) -> None:
    # messages.total_ms is the footer's last figure ("N ms" under a second, else seconds); a reply
    # with no other figure (an answer the program wrote: no tokens, no queue or TTFT) shows it alone.
    from sqlalchemy import update

    from backend.models import Message

    sign_up(client, "admin")  # the first account is the admin: alice gets no Trace link
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("Say hello"))
        ack, *_ = receive_until(ws)
    footer = re.compile(r'<span class="timings" title="([^"]*)">(.*?)</span>\s*</footer>', re.S)
    with app_state(client).conversations._sessions() as db:
        db.execute(update(Message).where(Message.id == ack["assistant_message_id"]).values(total_ms=1234.5))
        db.commit()
    page = client.get(f"/c/{ack['conversation_id']}").text
    title, figures = footer.search(page).groups()
    assert title.endswith("tokens generated · total time of the reply")
    assert figures.endswith('<span class="timing">4 tokens</span><span class="timing">total 1.23 s</span>')
    with app_state(client).conversations._sessions() as db:
        db.execute(update(Message).where(Message.id == ack["assistant_message_id"]).values(
            total_ms=42.0, queue_ms=None, ttft_ms=None, decode_tokens_per_s=None, completion_tokens=0))
        db.commit()
    page = client.get(f"/c/{ack['conversation_id']}").text
    assert footer.search(page).group(2) == '<span class="timing">total 42 ms</span>'
    stored = stored_message(client, ack["conversation_id"], ack["assistant_message_id"])
    assert stored["total_ms"] == 42.0


def test_second_send_continues_the_conversation_with_its_history(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("first question"))
        ack = receive_until(ws)[0]
        ws.send_json(send_frame("second question", conversation_id=ack["conversation_id"]))
        frames = receive_until(ws)
    assert frames[0]["conversation_id"] == ack["conversation_id"]
    prompt = [(m.role, m.content) for m in fake.requests[-1][1] if m.role != "system"]
    assert prompt == [("user", "first question"), ("assistant", "".join(fake.tokens)), ("user", "second question")]


def test_length_limit_reported_in_done(settings: Settings, fake: FakeGenerator) -> None:
    short = Settings(database_url=settings.database_url, max_tokens=2, temperature=0.0)
    with TestClient(create_app(short, generator=fake), follow_redirects=False) as client:
        sign_up(client, "alice")
        with client.websocket_connect("/ws") as ws:
            ws.send_json(send_frame("hi"))
            done = receive_until(ws)[-1]
    assert done["finish_reason"] == "length"
    assert done["usage"]["completion_tokens"] == 2


def test_two_conversations_stream_on_one_socket(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        first, second = send_frame("one"), send_frame("two")
        ws.send_json(first)
        ws.send_json(second)
        frames: list[dict[str, Any]] = []
        while sum(f["type"] == "done" for f in frames) < 2:
            frames.append(ws.receive_json())
    acks = {f["client_msg_id"]: f for f in frames if f["type"] == "ack"}
    assert set(acks) == {first["client_msg_id"], second["client_msg_id"]}
    assert acks[first["client_msg_id"]]["conversation_id"] != acks[second["client_msg_id"]]["conversation_id"]
    for ack in acks.values():
        mine = [f for f in frames if f.get("message_id") == ack["assistant_message_id"]]
        assert [f["seq"] for f in mine if f["type"] == "delta"] == list(range(1, len(fake.tokens) + 1))
        assert mine[-1]["type"] == "done"


# -- stop, disconnect ---------------------------------------------------------------------------


def test_stop_mid_stream_ends_with_abort_and_stores_the_partial_reply(client: TestClient, fake: FakeGenerator) -> None:
    fake.hold_after = 2
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("tell me a story"))
        ack = ws.receive_json()
        deltas = [ws.receive_json(), ws.receive_json()]
        assert [d["type"] for d in deltas] == ["delta", "delta"]
        ws.send_json({"type": "stop", "message_id": ack["assistant_message_id"]})
        rest = receive_until(ws)
        assert_alive(ws)

    done = rest[-1]
    assert done["message_id"] == ack["assistant_message_id"]
    assert done["finish_reason"] == "abort"
    assert done["budget_ended"] is False  # stopped by the person: it can be continued
    partial = "".join(d["text"] for d in deltas + rest if d["type"] == "delta")
    assert partial == "".join(fake.tokens[:2])
    assert fake_saw_abort(fake)
    stored = stored_message(client, ack["conversation_id"], ack["assistant_message_id"])
    assert stored["finish_reason"] == "abort"
    assert stored["content"] == partial
    assert stored["status"] != "streaming"


def test_disconnect_mid_stream_aborts_the_generation_when_unwatched_replies_stop_at_once(
    client: TestClient, fake: FakeGenerator
) -> None:
    fake.hold_after = 2
    sign_up(client, "alice")
    app_state(client).runtime_settings.update({"unwatched_reply_s": 0}, actor_id=None)
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("tell me a story"))
        ack = ws.receive_json()
        ws.receive_json(), ws.receive_json()
    # The socket is gone; the generation must be aborted without anyone pressing stop.
    wait_until(lambda: fake_saw_abort(fake), what="the generator to see the abort")
    assert not fake._released.is_set()

    def settled() -> dict[str, Any] | None:
        message = stored_message(client, ack["conversation_id"], ack["assistant_message_id"])
        return message if message["finish_reason"] else None

    stored = wait_until(settled, what="the partial reply to be stored")
    assert stored["finish_reason"] == "abort"
    assert stored["content"] == "".join(fake.tokens[:2])
    assert stored["status"] != "streaming"


def test_stop_for_an_unknown_or_foreign_message_keeps_the_socket(client: TestClient) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "stop", "message_id": "0" * 32})
        assert_alive(ws)  # no error frame, no close: the pong is the next frame


# -- idempotency --------------------------------------------------------------------------------


def test_retried_client_msg_id_is_not_generated_or_stored_twice(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    frame = send_frame("only once")
    with client.websocket_connect("/ws") as ws:
        ws.send_json(frame)
        first = receive_until(ws)
    # A reconnecting client retries the same frame on a new socket.
    with client.websocket_connect("/ws") as ws:
        ws.send_json(frame)
        retry = receive_until(ws, kinds=("done", "error"))
        assert_alive(ws)

    assert len(fake.requests) == 1
    ack, retry_ack = first[0], retry[0]
    assert retry_ack["type"] == "ack" and retry_ack["duplicate"] is True
    for key in ("conversation_id", "user_message_id", "assistant_message_id"):
        assert retry_ack[key] == ack[key]
    assert retry[-1]["type"] == "done" and retry[-1]["finish_reason"] == "stop"
    messages = client.get(f"/api/conversations/{ack['conversation_id']}").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]


def test_same_client_msg_id_while_streaming_is_answered_once(client: TestClient, fake: FakeGenerator) -> None:
    fake.hold_after = 1
    sign_up(client, "alice")
    frame = send_frame("hello")
    with client.websocket_connect("/ws") as ws:
        ws.send_json(frame)
        assert ws.receive_json()["type"] == "ack"
        assert ws.receive_json()["type"] == "delta"
        ws.send_json(frame)
        assert_alive(ws)  # the duplicate queued nothing before the pong
        fake.release()
        frames = receive_until(ws)
        assert_alive(ws)
    assert all(f["type"] == "delta" for f in frames[:-1])
    assert frames[-1]["type"] == "done"
    assert len(fake.requests) == 1


# -- malformed frames and errors ----------------------------------------------------------------

BAD_FRAMES = [
    "not json",
    "[1, 2, 3]",
    '"send"',
    "{}",
    json.dumps({"type": "dance"}),
    json.dumps({"type": 7}),
    json.dumps({"type": "send", "conversation_id": None, "text": "no id"}),
    json.dumps({"type": "send", "client_msg_id": "a", "conversation_id": None}),
    json.dumps({"type": "send", "client_msg_id": "a", "conversation_id": None, "text": 42}),
    json.dumps({"type": "send", "client_msg_id": "a", "conversation_id": 5, "text": "hi"}),
    json.dumps({"type": "send", "client_msg_id": "x" * 65, "conversation_id": None, "text": "hi"}),
    json.dumps({"type": "send", "client_msg_id": "a", "conversation_id": "y" * 65, "text": "hi"}),
    json.dumps({"type": "send", "client_msg_id": "a", "conversation_id": None, "text": "z" * 32_001}),
    json.dumps({"type": "stop"}),
    json.dumps({"type": "stop", "message_id": ["m"]}),
    # Found by trying to break it: a lone surrogate failed in the database (and, in an id, the
    # error frame itself could not be encoded), and NUL reached the stored title.
    '{"type": "send", "client_msg_id": "a", "conversation_id": null, "text": "hi \\ud800 there"}',
    '{"type": "send", "client_msg_id": "\\ud800", "conversation_id": null, "text": "hi"}',
    json.dumps({"type": "send", "client_msg_id": "a", "conversation_id": None, "text": "nul\x00here"}),
    json.dumps({"type": "send", "client_msg_id": "a b", "conversation_id": None, "text": "hi"}),
    json.dumps({"type": "stop", "message_id": "<script>"}),
    "x" * 500_000,
]


def test_a_longest_text_escaped_as_ascii_is_a_valid_frame() -> None:
    text = "\U0001F600" * 32_000  # one emoji escapes to 12 JSON characters
    frame = parse_frame(json.dumps({"type": "send", "client_msg_id": "c", "conversation_id": None, "text": text}))
    assert isinstance(frame, SendFrame) and frame.text == text
    tabbed = parse_frame(json.dumps({"type": "send", "client_msg_id": "c", "conversation_id": None, "text": "a\tb\r\nc"}))
    assert tabbed.text == "a\tb\r\nc"


def test_malformed_frames_get_bad_frame_and_the_socket_stays_usable(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        for raw in BAD_FRAMES:
            ws.send_text(raw)
            reply = ws.receive_json()
            assert reply["type"] == "error", raw[:80]
            assert reply["code"] == "bad_frame", raw[:80]
            assert reply["message"]
        ws.send_bytes(b'{"type": "ping"}')
        assert ws.receive_json()["code"] == "bad_frame"
        assert_alive(ws)
        ws.send_json(send_frame("still works"))
        assert receive_until(ws)[-1]["finish_reason"] == "stop"
    assert len(fake.requests) == 1


def test_bad_frame_echoes_a_readable_client_msg_id(client: TestClient) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "send", "client_msg_id": "c-1", "conversation_id": None, "text": "z" * 32_001})
        reply = ws.receive_json()
    assert reply["code"] == "bad_frame"
    assert reply["client_msg_id"] == "c-1"


def test_text_of_exactly_the_limit_is_accepted(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("é" * 32_000, client_msg_id="i" * 64))
        frames = receive_until(ws, kinds=("done", "error"))
    assert frames[0]["type"] == "ack"
    assert fake.requests[-1][1][-1].content == "é" * 32_000


def test_a_domain_error_in_one_send_keeps_the_socket_and_other_sends(client: TestClient, fake: FakeGenerator) -> None:
    alice = sign_up(client, "alice")
    foreign = app_state(client).conversations.create_conversation(user_id(client, alice), "Alice only")
    use_session(client, None)
    sign_up(client, "bob")
    with client.websocket_connect("/ws") as ws:
        bad = send_frame("let me in", conversation_id=foreign.id)
        ws.send_json(bad)
        error = ws.receive_json()
        assert error["type"] == "error"
        assert error["code"] == "not_found"
        assert error["client_msg_id"] == bad["client_msg_id"]
        assert_alive(ws)
        ws.send_json(send_frame("my own"))
        assert receive_until(ws)[-1]["finish_reason"] == "stop"
    assert all(m.content != "let me in" for _, msgs, _ in fake.requests for m in msgs)


def test_sends_in_flight_per_socket_are_bounded(client: TestClient, fake: FakeGenerator) -> None:
    fake.hold_after = 0
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        for _ in range(MAX_SENDS_IN_FLIGHT):
            ws.send_json(send_frame("hold"))
        acks = [ws.receive_json() for _ in range(MAX_SENDS_IN_FLIGHT)]
        assert {a["type"] for a in acks} == {"ack"}
        extra = send_frame("one too many")
        ws.send_json(extra)
        refused = ws.receive_json()
        assert refused["type"] == "error" and refused["code"] == "too_many_requests"
        assert refused["client_msg_id"] == extra["client_msg_id"]
        fake.release()
        frames: list[dict[str, Any]] = []
        while sum(f["type"] == "done" for f in frames) < MAX_SENDS_IN_FLIGHT:
            frames.append(ws.receive_json())
    assert len(fake.requests) == MAX_SENDS_IN_FLIGHT


def test_a_rate_limited_send_gets_an_error_frame_with_the_wait(client: TestClient, fake: FakeGenerator) -> None:
    token = sign_up(client, "alice")
    app_state(client).runtime_settings.update({"requests_per_minute": 1}, actor_id=None)
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("first"))
        assert receive_until(ws)[-1]["status"] == "complete"
        second = send_frame("second")
        ws.send_json(second)
        refused = ws.receive_json()
        assert set(refused) == {"type", "code", "message", "retry_after_s", "client_msg_id"}
        assert (refused["type"], refused["code"], refused["client_msg_id"]) == ("error", "rate_limited", second["client_msg_id"])
        # The window is 60 s and the first request was a moment ago (wall clock: whole seconds).
        assert isinstance(refused["retry_after_s"], int) and 55 <= refused["retry_after_s"] <= 60
        assert_alive(ws)
    assert len(fake.requests) == 1
    assert [c.title for c in app_state(client).conversations.list_conversations(user_id(client, token))] == ["first"]


def test_a_full_queue_answers_overloaded_and_keeps_the_accepted_reply(settings: Settings) -> None:
    fake = FakeGenerator(hold_after=0)  # the first request waits for its first token
    app = create_app(replace(settings, max_waiting_requests=1), generator=fake)
    with TestClient(app, follow_redirects=False) as client:
        sign_up(client, "alice")
        with client.websocket_connect("/ws") as ws:
            ws.send_json(send_frame("first"))
            assert ws.receive_json()["type"] == "ack"
            wait_until(lambda: fake.requests, what="the first request to reach the generator")
            second = send_frame("second")
            ws.send_json(second)
            refused = ws.receive_json()
            assert (refused["code"], refused["retry_after_s"], refused["client_msg_id"]) == (
                "overloaded", 5, second["client_msg_id"],
            )  # fmt: skip
            fake.release()
            frames = receive_until(ws)
            assert "".join(f["text"] for f in frames if f["type"] == "delta") == "Hello, **world**!"
            assert frames[-1]["status"] == "complete"
            assert app_state(client).admission.snapshot()["rejected_total"] == 1
            # Nothing lost: the refused send goes through when the person retries it.
            ws.send_json(second)
            assert receive_until(ws)[-1]["status"] == "complete"


def test_parse_frame() -> None:
    assert parse_frame('{"type": "ping"}') == PingFrame()
    assert parse_frame('{"type": "stop", "message_id": "m"}') == StopFrame("m")
    assert parse_frame('{"type": "send", "client_msg_id": "c", "conversation_id": null, "text": ""}') == SendFrame(
        "c", None, ""
    )
    with pytest.raises(BadFrame):
        parse_frame('{"type": "send", "client_msg_id": "", "conversation_id": null, "text": "x"}')


def test_parse_frame_use_documents() -> None:
    base = '{"type": "send", "client_msg_id": "c", "conversation_id": null, "text": "x"'
    assert parse_frame(base + "}").use_documents is None
    assert parse_frame(base + ', "use_documents": null}').use_documents is None
    assert parse_frame(base + ', "use_documents": true}').use_documents is True
    assert parse_frame(base + ', "use_documents": false}').use_documents is False
    for bad in ('"yes"', "1", "[]"):
        with pytest.raises(BadFrame) as raised:
            parse_frame(base + f', "use_documents": {bad}}}')
        assert raised.value.client_msg_id == "c"


def add_ready_document(client: TestClient, token: str, name: str, text: str) -> int:
    """Upload and index synchronously; returns the id of the document's first chunk."""
    from sqlalchemy import select

    from backend.models import DocumentChunk

    documents = app_state(client).documents
    view = documents.upload(user_id(client, token), name, text.encode())
    view = documents.ingest(view.id, text.encode())
    assert view.status == "ready"
    with documents.session_factory() as db:
        return db.scalars(select(DocumentChunk.id).where(DocumentChunk.document_id == view.id)).first()


def test_use_documents_puts_sources_in_done_and_in_the_stored_conversation(client: TestClient, fake: FakeGenerator) -> None:
    token = sign_up(client, "alice")
    chunk_id = add_ready_document(client, token, "heron.md", "# Pond\n\nThe blue heron visits the pond at seven.")
    with client.websocket_connect("/ws") as ws:
        ws.send_json({**send_frame("When does the heron visit the pond?"), "use_documents": True})
        ack, *_, done = receive_until(ws)
        # The next send without the field keeps the conversation's setting.
        ws.send_json(send_frame("And the heron again?", ack["conversation_id"]))
        second = receive_until(ws)[-1]
    assert done["type"] == "done" and done["status"] == "complete"
    assert [(s["n"], s["chunk_id"], s["name"], s["version"], s["heading_path"]) for s in done["sources"]] == [
        (1, chunk_id, "heron.md", 1, "Pond")
    ]
    assert second["sources"] and second["sources"][0]["chunk_id"] == chunk_id
    prompt = fake.requests[0][1][-1].content
    assert "<<<SOURCES" in prompt and "> The blue heron visits the pond at seven." in prompt
    view = client.get(f"/api/conversations/{ack['conversation_id']}").json()
    assert view["use_documents"] is True
    user_message, reply = view["messages"][:2]
    assert user_message["content"] == "When does the heron visit the pond?" and user_message["sources"] == []
    assert reply["sources"] == done["sources"]
    assert client.get("/api/conversations").json()["conversations"][0]["use_documents"] is True


def test_without_use_documents_the_prompt_has_no_sources(client: TestClient, fake: FakeGenerator) -> None:
    token = sign_up(client, "alice")
    add_ready_document(client, token, "heron.md", "The blue heron visits the pond at seven.")
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("When does the heron visit the pond?"))
        done = receive_until(ws)[-1]
        ws.send_json({**send_frame("again"), "use_documents": "yes"})
        bad = ws.receive_json()
    assert done["sources"] == [] and "SOURCES" not in fake.requests[0][1][-1].content
    assert (bad["type"], bad["code"]) == ("error", "bad_frame") and len(fake.requests) == 1


# -- the real engine (slow) ---------------------------------------------------------------------


def _real_client(database_url: str, generator: Any, max_tokens: int) -> Iterator[TestClient]:
    settings = Settings(database_url=database_url, max_tokens=max_tokens, temperature=0.0)
    with TestClient(create_app(settings, generator=generator), follow_redirects=False) as client:
        sign_up(client, "alice")
        yield client


@pytest.fixture
def real_client(database_url: str, real_generator: Any) -> Iterator[TestClient]:
    yield from _real_client(database_url, real_generator, max_tokens=24)


@pytest.fixture
def real_client_long(database_url: str, real_generator: Any) -> Iterator[TestClient]:
    """Replies long enough (256 tokens: seconds on CPU) that a stop surely lands mid-stream."""
    yield from _real_client(database_url, real_generator, max_tokens=LONG_REPLY_TOKENS)


LONG_REPLY_TOKENS = 256
COUNTING_PROMPT = "Count from one to two hundred, writing every number in words."


@pytest.mark.slow
def test_real_engine_streams_and_stores_a_reply(real_client: TestClient) -> None:
    with real_client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("What is the capital of France? Answer in one word."))
        ack, *deltas, done = receive_until(ws, kinds=("done", "error"))
    assert ack["type"] == "ack" and done["type"] == "done", done
    assert [d["seq"] for d in deltas] == list(range(1, len(deltas) + 1))
    text = "".join(d["text"] for d in deltas)
    assert text.strip()
    assert done["finish_reason"] in ("stop", "length")
    assert 0 < done["usage"]["completion_tokens"] <= 24
    assert done["timings"]["ttft_ms"] is not None and done["timings"]["ttft_ms"] > 0
    stored = stored_message(real_client, ack["conversation_id"], ack["assistant_message_id"])
    assert stored["content"] == text
    assert stored["status"] == "complete"


@pytest.mark.slow
def test_real_engine_stop_mid_stream(real_client_long: TestClient) -> None:
    real_client = real_client_long
    with real_client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame(COUNTING_PROMPT))
        ack = ws.receive_json()
        first = ws.receive_json()
        assert first["type"] == "delta"
        ws.send_json({"type": "stop", "message_id": ack["assistant_message_id"]})
        rest = receive_until(ws, kinds=("done", "error"))
        assert_alive(ws)
    done = rest[-1]
    assert done["finish_reason"] == "abort", done
    assert done["usage"]["completion_tokens"] is None or done["usage"]["completion_tokens"] < LONG_REPLY_TOKENS
    text = "".join(d["text"] for d in [first] + rest if d["type"] == "delta")
    stored = stored_message(real_client, ack["conversation_id"], ack["assistant_message_id"])
    assert stored["finish_reason"] == "abort"
    assert stored["content"] == text


@pytest.mark.slow
def test_real_engine_disconnect_aborts_and_frees_the_request_when_unwatched_replies_stop(
        real_client_long: TestClient) -> None:
    real_client = real_client_long
    app_state(real_client).runtime_settings.update({"unwatched_reply_s": 0}, actor_id=None)
    with real_client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame(COUNTING_PROMPT))
        ack = ws.receive_json()
        assert ws.receive_json()["type"] == "delta"

    def settled() -> dict[str, Any] | None:
        message = stored_message(real_client, ack["conversation_id"], ack["assistant_message_id"])
        return message if message["finish_reason"] else None

    stored = wait_until(settled, timeout=30, what="the aborted reply to be stored")
    assert stored["finish_reason"] == "abort"
    assert stored["completion_tokens"] is None or stored["completion_tokens"] < LONG_REPLY_TOKENS
    # The same generator serves the next request: the aborted one left nothing stuck.
    with real_client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("Say hi."))
        assert receive_until(ws, kinds=("done", "error"))[-1]["type"] == "done"


@pytest.mark.slow
def test_real_engine_duplicate_and_malformed_frames(real_client: TestClient) -> None:
    frame = send_frame("Say hi.")
    with real_client.websocket_connect("/ws") as ws:
        ws.send_text("{not json")
        assert ws.receive_json()["code"] == "bad_frame"
        ws.send_json(frame)
        first = receive_until(ws, kinds=("done", "error"))
        ws.send_json(frame)
        retry = receive_until(ws, kinds=("done", "error"))
    assert first[0]["duplicate"] is False and retry[0]["duplicate"] is True
    assert not any(f["type"] == "delta" for f in retry)
    messages = real_client.get(f"/api/conversations/{first[0]['conversation_id']}").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]


# -- a real server and a real WebSocket client --------------------------------------------------
# TestClient simulates the ASGI messages; uvicorn and the `websockets` client check the parts it
# cannot: the refused handshake, the close code on the wire, and a TCP connection that drops.


@pytest.fixture
def live_server(settings: Settings, fake: FakeGenerator) -> Iterator[tuple[str, FakeGenerator]]:
    import socket
    import threading
    import time

    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        create_app(settings, generator=fake), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    yield f"127.0.0.1:{port}", fake
    server.should_exit = True
    thread.join(timeout=10)


def _live_login(address: str) -> str:
    import httpx

    with httpx.Client(base_url=f"http://{address}") as http:
        # As a browser would: the sign-up page sets the CSRF cookie and embeds the token.
        page = http.get("/signup", headers={"Accept": "text/html"})
        token = re.search(r'<meta name="csrf-token" content="([^"]*)">', page.text)
        assert token, "no csrf-token meta tag on /signup"
        response = http.post(
            "/signup",
            data={"username": "alice", "password": "a long enough password", "csrf_token": token.group(1)},
        )
        assert response.status_code == 303
        return response.cookies["crescent_session"]


def test_live_server_refuses_cross_origin_and_unauthenticated_sockets(live_server) -> None:
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.sync.client import connect

    address, _fake = live_server
    token = _live_login(address)
    cookie = {"Cookie": f"crescent_session={token}"}
    with pytest.raises(InvalidStatus) as refused:
        connect(f"ws://{address}/ws", origin="http://evil.example", additional_headers=cookie, open_timeout=5)
    assert refused.value.response.status_code == 403

    with connect(f"ws://{address}/ws", origin=f"http://{address}", open_timeout=5) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401


def test_live_server_dropped_connection_keeps_the_reply_and_a_new_socket_resumes_it(live_server) -> None:
    import httpx
    from websockets.sync.client import connect

    address, fake = live_server
    fake.hold_after = 2
    token = _live_login(address)
    cookie = {"Cookie": f"crescent_session={token}"}
    with connect(f"ws://{address}/ws", origin=f"http://{address}", additional_headers=cookie, open_timeout=5) as ws:
        ws.send(json.dumps(send_frame("a long story")))
        ack = json.loads(ws.recv(timeout=5))
        deltas = [json.loads(ws.recv(timeout=5)) for _ in range(2)]
        assert [d["type"] for d in deltas] == ["delta", "delta"]
        # Drop the TCP connection without a closing handshake, like a closed laptop lid.
        ws.socket.shutdown(2)
    time.sleep(0.3)
    assert not fake_saw_abort(fake)  # nobody watches it, and it goes on
    with connect(f"ws://{address}/ws", origin=f"http://{address}", additional_headers=cookie, open_timeout=5) as ws:
        # From seq 1, so the catch-up delta (seq 2, reset) tells that the attach landed before the
        # reply is let go: released earlier, it could end before the socket attached.
        ws.send(json.dumps({"type": "attach", "message_id": ack["assistant_message_id"], "seq": 1}))
        catch_up = json.loads(ws.recv(timeout=5))
        assert (catch_up["type"], catch_up["seq"], catch_up["text"]) == ("delta", 2, deltas[1]["text"]), catch_up
        fake.release()
        frames = []
        while not frames or frames[-1]["type"] != "done":
            frames.append(json.loads(ws.recv(timeout=5)))
    text = "".join(d["text"] for d in deltas) + "".join(f["text"] for f in frames if f["type"] == "delta")
    with httpx.Client(base_url=f"http://{address}", cookies={"crescent_session": token}) as http:
        view = http.get(f"/api/conversations/{ack['conversation_id']}").json()
    stored = next(m for m in view["messages"] if m["id"] == ack["assistant_message_id"])
    assert (stored["status"], stored["finish_reason"]) == ("complete", "stop") == (frames[-1]["status"], "stop")
    assert stored["content"] == text == "".join(fake.tokens)


@pytest.mark.slow
def test_real_engine_queue_deadline_ends_a_waiting_send_with_a_typed_error(database_url: str) -> None:
    """One sequence at a time and a 0.1 s queue deadline: a second send waits behind a reply (up
    to 1,024 tokens, stopped once the second has ended) and must end with an error, not hang. (The
    counting prompt's greedy reply ends by itself after about 50 tokens, 0.48 s on an idle 2-core
    machine: at a 0.5 s deadline the second send was sometimes admitted, and the test waited
    forever for the first reply's end, which it had already read.)"""
    adapter = pytest.importorskip("backend.engine_adapter", reason="backend.engine_adapter not written yet")
    generator = adapter.create_generator(None, max_num_seqs=1, queue_timeout_s=0.1)
    generator.start()
    try:
        settings = Settings(database_url=database_url, max_tokens=1024, temperature=0.0)
        with TestClient(create_app(settings, generator=generator), follow_redirects=False) as client:
            sign_up(client, "alice")
            with client.websocket_connect("/ws") as ws:
                ws.send_json(send_frame(COUNTING_PROMPT))
                first = ws.receive_json()
                assert first["type"] == "ack" and ws.receive_json()["type"] == "delta"
                ws.send_json(send_frame("Say hi."))
                frames = receive_until(ws, kinds=("ack",))
                second = frames[-1]
                first_done = [f for f in frames if f["type"] == "done" and f.get("message_id") == first["assistant_message_id"]]
                while True:  # the first reply's deltas interleave (and on a loaded machine it may end first)
                    frame = ws.receive_json()
                    if frame["type"] == "done" and frame.get("message_id") == first["assistant_message_id"]:
                        first_done.append(frame)
                    if frame["type"] in ("done", "error") and frame.get("message_id") == second["assistant_message_id"]:
                        break
                if not first_done:  # a Stop for a reply that has ended gets no frame: only while it runs
                    ws.send_json({"type": "stop", "message_id": first["assistant_message_id"]})
                    first_done = [f for f in receive_until(ws, kinds=("done", "error")) if f["type"] == "done"]
            assert frame["type"] == "done", frame
            assert (frame["status"], frame["finish_reason"]) == ("error", "error")
            assert "queue" in frame["error"] and "queue_timeout:" in frame["error"]
            assert first_done and first_done[-1]["message_id"] == first["assistant_message_id"]
            stored = stored_message(client, second["conversation_id"], second["assistant_message_id"])
            assert (stored["status"], stored["finish_reason"]) == ("error", "error")
            assert app_state(client).admission.snapshot()["waiting_requests"] == 0
    finally:
        generator.shutdown()


@pytest.mark.slow
def test_real_engine_answers_with_the_right_chunk_cited(real_client: TestClient) -> None:
    """The whole path for real: the MiniLM embedder indexes two documents, the question is
    retrieved against them, and the stored sources name the chunk that answers it."""
    token = real_client.cookies.get("crescent_session")
    heron = add_ready_document(real_client, token, "birds.md",
                               "# Birds\n\nThe grey heron nests in tall trees near the lake every spring.")
    add_ready_document(real_client, token, "cooking.md",
                       "# Bread\n\nKnead the dough for ten minutes, then let it rise for an hour.")
    with real_client.websocket_connect("/ws") as ws:
        ws.send_json({**send_frame("Where does the grey heron nest?"), "use_documents": True})
        ack, *_, done = receive_until(ws, kinds=("done", "error"))
    assert done["type"] == "done" and done["status"] == "complete", done
    assert done["sources"] and done["sources"][0]["chunk_id"] == heron
    assert done["sources"][0]["name"] == "birds.md"
    stored = stored_message(real_client, ack["conversation_id"], ack["assistant_message_id"])
    assert stored["sources"] == done["sources"]


def test_a_send_frame_carries_the_browsers_time_zone_when_it_is_a_known_one():
    base = '{"type": "send", "client_msg_id": "c", "conversation_id": null, "text": "hi"'
    assert parse_frame(base + ', "timezone": "Asia/Tokyo"}').timezone == "Asia/Tokyo"
    # a hint: unknown, malformed or too long falls back to UTC (None), never an error
    for zone in ("Mars/Olympus", "../../etc/passwd", "x" * 100, ""):
        assert parse_frame(base + f', "timezone": "{zone}"}}').timezone is None, zone
    assert parse_frame(base + "}").timezone is None
    with pytest.raises(BadFrame):
        parse_frame(base + ', "timezone": 9}')


def test_a_reply_stopped_before_its_first_word_lists_no_sources(client: TestClient, fake: FakeGenerator) -> None:
    # New-user pass: Stop during "Thinking…" left an empty reply listing "Sources: [1] prices.txt v1 [2] terms.txt v1".
    token = sign_up(client, "alice")
    add_ready_document(client, token, "heron.md", "# Pond\n\nThe blue heron visits the pond at seven.")
    fake.hold_after = 0
    with client.websocket_connect("/ws") as ws:
        ws.send_json({**send_frame("When does the heron visit the pond?"), "use_documents": True})
        ack = ws.receive_json()
        ws.send_json({"type": "stop", "message_id": ack["assistant_message_id"]})
        done = receive_until(ws)[-1]
    assert done["type"] == "done" and done["finish_reason"] == "abort"
    assert done["sources"] == []
    stored = stored_message(client, ack["conversation_id"], ack["assistant_message_id"])
    assert stored["content"] == "" and stored["sources"] == []
