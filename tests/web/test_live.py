"""Ending an account's live work at once (backend/live.py): disabling a user aborts his chat
replies and /v1 generations in the engine and closes his sockets with 4401; a password change
(or a log-out) closes the other sessions' sockets and stops the replies streaming there."""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from backend.live import REASON_DISABLED
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
