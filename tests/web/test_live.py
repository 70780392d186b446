"""Ending an account's live work at once (backend/live.py): disabling a user aborts his chat
replies and /v1 generations in the engine and closes his sockets with 4401; a password change
(or a log-out) closes the other sessions' sockets and stops the replies streaming there. With
two processes sharing Redis (REDIS_URL) the same holds across them, Stop and deleting a
conversation reach a reply running on the other one, and the periodic re-check makes up for a
lost event (backend/cluster)."""

from __future__ import annotations

import json
import threading
import uuid
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from typing import Any, Iterator

import pytest
import redis
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from backend.chat.service import REASON_DELETED
from backend.cluster import recheck
from backend.live import KIND_SOCKET, REASON_DISABLED
from backend.rag import HashingEmbedder
from backend.settings import Settings
from web.app import create_app
from web.session import SESSION_COOKIE

from .conftest import PASSWORD, FakeGenerator, app_state, csrf_field, csrf_headers, sign_up, use_session, user_id, wait_until

ORIGIN = {"Origin": "http://testserver"}
MODEL = "fake-model"


@pytest.fixture
def holding(fake: FakeGenerator) -> FakeGenerator:
    fake.hold_after = 1  # one delta, then it waits until released or aborted
    return fake


@pytest.fixture
def people(client: TestClient) -> dict[str, Any]:
    """alice (the first account: admin) and bob, with their session tokens and ids."""
    alice = sign_up(client, "alice")
    use_session(client, None)
    bob = sign_up(client, "bob")
    return {"alice": alice, "bob": bob, "bob_id": user_id(client, bob)}


def log_in(client: TestClient, username: str) -> str:
    use_session(client, None)
    response = client.post("/login", data={"username": username, "password": PASSWORD, **csrf_field(client)})
    assert response.status_code == 303, response.text
    return response.cookies[SESSION_COOKIE]


def start_reply(ws) -> str:
    """Send a message; return the reply's message id once its first delta arrived."""
    ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": None, "text": "hi"})
    ack = ws.receive_json()
    assert ack["type"] == "ack", ack
    assert ws.receive_json()["type"] == "delta"
    return ack["assistant_message_id"]


def close_code(ws) -> int:
    """Read until the server closes the socket; its close code."""
    with pytest.raises(WebSocketDisconnect) as caught:
        for _ in range(100):
            ws.receive_json()
    return caught.value.code


def stored(client: TestClient, message_id: str) -> tuple[str, str | None]:
    from backend.models import Message

    with app_state(client).chat._sessions() as db:  # noqa: SLF001 - the stored row is the oracle
        row = db.get(Message, message_id)
        return row.status, row.error


def disable(client: TestClient, people: dict[str, Any]) -> None:
    use_session(client, people["alice"])
    response = client.post(f"/admin/api/users/{people['bob_id']}/status", json={"status": "disabled"},
                           headers=csrf_headers(client))
    assert response.status_code == 200, response.text


def test_disabling_aborts_his_chat_reply_and_closes_his_socket(client, holding, people) -> None:
    use_session(client, people["bob"])
    with client.websocket_connect("/ws", headers=ORIGIN) as ws:
        message_id = start_reply(ws)
        disable(client, people)
        assert message_id in holding.abort_calls  # before the admin's answer, not minutes later
        assert close_code(ws) == 4401
    wait_until(lambda: stored(client, message_id)[0] != "streaming", what="the reply stored")
    assert stored(client, message_id) == ("interrupted", REASON_DISABLED)
    assert app_state(client).chat.live.count(people["bob_id"]) == 0


def test_disabling_aborts_his_v1_stream_with_every_choice(client, holding, people) -> None:
    _, secret = app_state(client).api_keys.create_key(people["bob_id"], "script")
    result: dict[str, Any] = {}

    def stream() -> None:
        response = client.post("/v1/chat/completions", headers={"Authorization": f"Bearer {secret}"},
                               content=json.dumps({"model": MODEL, "stream": True, "n": 2,
                                                   "messages": [{"role": "user", "content": "hi"}]}))
        result["status"], result["text"] = response.status_code, response.text

    worker = threading.Thread(target=stream)
    worker.start()
    try:
        wait_until(lambda: len(holding.requests) == 1, what="the request (n = 2) queued")
        ids = [rid for rid, _, _ in holding.requests]
        wait_until(lambda: app_state(client).chat.live.count(people["bob_id"]) == 1, what="the run registered")
        disable(client, people)
        assert set(ids) <= set(holding.abort_calls)
    finally:
        holding.release()
        worker.join(15)
    assert result["status"] == 200
    assert '"code":"account_disabled"' in result["text"] and result["text"].endswith("data: [DONE]\n\n")
    # Each choice ended: its stream yielded an abort, or the server closed it first (closing a
    # stream aborts the request in the engine); neither would hold for a choice still running.
    assert all(all(holding.finished.get(f"{rid}#{i}") == "abort" for i in (0, 1)) or rid in holding.closed_early
               for rid in ids)
    assert app_state(client).chat.live.count(people["bob_id"]) == 0


def test_a_password_change_closes_the_other_sessions_sockets_and_their_replies_go_on(client, holding, people) -> None:
    other = log_in(client, "bob")  # a second session (another browser)
    use_session(client, other)
    with client.websocket_connect("/ws", headers=ORIGIN) as elsewhere:
        message_id = start_reply(elsewhere)
        use_session(client, people["bob"])
        with client.websocket_connect("/ws", headers=ORIGIN) as here:
            response = client.post("/api/account/password", headers=csrf_headers(client),
                                   json={"current_password": PASSWORD, "new_password": "a brand new password"})
            assert response.status_code == 200, response.text
            assert close_code(elsewhere) == 4401
            here.send_json({"type": "ping"})
            assert here.receive_json() == {"type": "pong"}  # this session's socket stays
    # The reply is the account's, not that socket's: it goes on, and this session can watch it.
    assert message_id not in holding.abort_calls
    holding.release()
    wait_until(lambda: stored(client, message_id)[0] != "streaming", what="the reply stored")
    assert stored(client, message_id) == ("complete", None)


def test_logging_out_closes_that_sessions_sockets(client, people) -> None:
    use_session(client, people["bob"])
    with client.websocket_connect("/ws", headers=ORIGIN) as ws:
        ws.send_json({"type": "ping"})
        assert ws.receive_json() == {"type": "pong"}
        assert client.post("/logout", data=csrf_field(client)).status_code == 303
        assert close_code(ws) == 4401


# --- Two processes (REDIS_URL): the events reach the other process ------------------------------
# Two apps on one database and one Redis, each in its own TestClient (its own event loop and
# thread), stand for two server processes.

NO_BACKSTOP = 3600.0  # a re-check interval that leaves the events alone to do the work


@dataclass
class Process:
    client: TestClient
    fake: FakeGenerator

    @property
    def state(self):
        return app_state(self.client)


def live_subscribers(redis_url: str) -> int:
    raw = redis.Redis.from_url(redis_url)
    try:
        channel = "crescent:live"
        return dict(raw.pubsub_numsub(channel)).get(channel.encode(), 0)
    finally:
        raw.close()


@contextmanager
def two_processes(settings: Settings, redis_url: str) -> Iterator[tuple[Process, Process]]:
    """Processes A and B (both started before any reply: a start marks the replies left
    streaming as interrupted), subscribed to the live-work channel."""
    processes = []
    with ExitStack() as stack:
        for name in ("a", "b"):
            fake = FakeGenerator()
            app = create_app(replace(settings, redis_url=redis_url, instance_name=name), generator=fake,
                             embedder=HashingEmbedder())
            processes.append(Process(stack.enter_context(TestClient(app, follow_redirects=False)), fake))
        wait_until(lambda: live_subscribers(redis_url) == 2, what="both processes subscribed")
        yield processes[0], processes[1]


def open_sockets(process: Process, user: str) -> int:
    """`user`'s chat sockets on `process` not yet ended (closing: waits for the client's read)."""
    return sum(1 for e in process.state.chat.live.entries()
               if e.user_id == user and e.kind == KIND_SOCKET and not e.end.__self__._closed)  # noqa: SLF001


def until_done(ws) -> dict[str, Any]:
    """Read frames until the done frame; returns it."""
    for _ in range(1000):
        frame = ws.receive_json()
        if frame["type"] == "done":
            return frame
    raise AssertionError("no done frame")


def two_people(a: Process) -> dict[str, Any]:
    """alice (admin) and bob, signed up on A; their sessions work on both (one database)."""
    client = a.client
    alice = sign_up(client, "alice")
    use_session(client, None)
    bob = sign_up(client, "bob")
    return {"alice": alice, "bob": bob, "bob_id": user_id(client, bob)}


def test_disabling_on_a_ends_his_reply_and_socket_on_b(settings, redis_url, monkeypatch) -> None:
    monkeypatch.setattr(recheck, "RECHECK_INTERVAL_S", NO_BACKSTOP)  # the event alone
    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)
        b.fake.hold_after = 1
        use_session(b.client, people["bob"])
        with b.client.websocket_connect("/ws", headers=ORIGIN) as ws:
            message_id = start_reply(ws)
            disable(a.client, people)
            wait_until(lambda: message_id in b.fake.abort_calls, what="B's reply aborted")
            assert close_code(ws) == 4401
        wait_until(lambda: stored(b.client, message_id)[0] != "streaming", what="the reply stored")
        assert stored(b.client, message_id) == ("interrupted", REASON_DISABLED)
        assert b.state.chat.live.count(people["bob_id"]) == 0


def test_a_lost_event_is_made_up_by_the_recheck(settings, redis_url) -> None:
    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)
        b.fake.hold_after = 1
        use_session(b.client, people["bob"])
        with b.client.websocket_connect("/ws", headers=ORIGIN) as ws:
            message_id = start_reply(ws)
            # B hears nothing more: its subscriber stops and the listening connections are killed.
            b.client.portal.call(b.state.chat.cluster.events.aclose)
            raw = redis.Redis.from_url(redis_url)
            raw.client_kill_filter(_type="pubsub")
            raw.close()
            disable(a.client, people)
            # FakeGenerator gives up after 10 s of holding: only the re-check ends it sooner.
            wait_until(lambda: message_id in b.fake.abort_calls, timeout=recheck.RECHECK_INTERVAL_S + 5,
                       what="B's reply aborted by the re-check")
            assert close_code(ws) == 4401
        wait_until(lambda: stored(b.client, message_id)[0] != "streaming", what="the reply stored")
        assert stored(b.client, message_id) == ("interrupted", REASON_DISABLED)


def test_a_password_change_on_a_closes_the_other_sessions_socket_on_b(settings, redis_url, monkeypatch) -> None:
    monkeypatch.setattr(recheck, "RECHECK_INTERVAL_S", NO_BACKSTOP)
    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)
        other = log_in(b.client, "bob")
        use_session(b.client, other)
        with b.client.websocket_connect("/ws", headers=ORIGIN) as elsewhere:
            use_session(b.client, people["bob"])
            with b.client.websocket_connect("/ws", headers=ORIGIN) as kept:
                use_session(a.client, people["bob"])
                response = a.client.post("/api/account/password", headers=csrf_headers(a.client),
                                         json={"current_password": PASSWORD, "new_password": "a brand new password"})
                assert response.status_code == 200, response.text
                # (a wait that fails, rather than a read that would block, if the event is lost)
                wait_until(lambda: open_sockets(b, people["bob_id"]) == 1, what="the other session's socket ended on B")
                assert close_code(elsewhere) == 4401
                kept.send_json({"type": "ping"})
                assert kept.receive_json() == {"type": "pong"}


def test_stop_on_b_stops_the_reply_streaming_on_a(settings, redis_url) -> None:
    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)
        a.fake.hold_after = 1
        use_session(a.client, people["bob"])
        use_session(b.client, people["bob"])
        with a.client.websocket_connect("/ws", headers=ORIGIN) as ws_a, \
                b.client.websocket_connect("/ws", headers=ORIGIN) as ws_b:
            message_id = start_reply(ws_a)
            ws_b.send_json({"type": "stop", "message_id": message_id})
            done = until_done(ws_a)
            assert (done["status"], done["finish_reason"]) == ("complete", "abort")
        assert message_id in a.fake.abort_calls
        assert stored(a.client, message_id) == ("complete", None)


def test_stop_on_b_for_another_users_reply_is_not_sent(settings, redis_url) -> None:
    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)
        a.fake.hold_after = 1
        use_session(a.client, people["bob"])
        with a.client.websocket_connect("/ws", headers=ORIGIN) as ws_a:
            message_id = start_reply(ws_a)
            alice_id = user_id(a.client, people["alice"])
            assert b.client.portal.call(b.state.chat.stop, alice_id, message_id) is False
            assert b.client.portal.call(b.state.chat.stop, people["bob_id"], message_id) is True
            assert until_done(ws_a)["finish_reason"] == "abort"


def test_deleting_the_conversation_on_b_ends_its_reply_on_a(settings, redis_url) -> None:
    with two_processes(settings, redis_url) as (a, b):
        people = two_people(a)
        a.fake.hold_after = 1
        use_session(a.client, people["bob"])
        use_session(b.client, people["bob"])
        with a.client.websocket_connect("/ws", headers=ORIGIN) as ws_a:
            ws_a.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": None, "text": "hi"})
            ack = ws_a.receive_json()
            assert ws_a.receive_json()["type"] == "delta"
            response = b.client.delete(f"/api/conversations/{ack['conversation_id']}", headers=csrf_headers(b.client))
            assert response.status_code in (200, 204), response.text
            wait_until(lambda: ack["assistant_message_id"] in a.fake.abort_calls, what="A's reply aborted")
            done = until_done(ws_a)
            assert (done["status"], done["error"]) == ("interrupted", REASON_DELETED)
