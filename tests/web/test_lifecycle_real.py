"""The generation lifecycle against the real engine: after every ending of a chat reply or a /v1
request (n = 1 and n = 3), the lease, ticket and live entry were released once each and the
engine's KV blocks are back to their baseline (slow: loads the model)."""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any, Iterator

import pytest
from starlette.testclient import TestClient

from backend.settings import Settings
from web.app import create_app

from .conftest import app_state, sign_up, wait_until

pytestmark = pytest.mark.slow

PROMPT = "Count from one to one hundred, writing every number in words."


@pytest.fixture
def client(database_url: str, real_generator: Any) -> Iterator[TestClient]:
    settings = Settings(database_url=database_url, max_tokens=48, temperature=0.0)
    with TestClient(create_app(settings, generator=real_generator), follow_redirects=False) as client:
        sign_up(client, "alice")
        yield client


def baseline(client: TestClient) -> int:
    stats = app_state(client).generator.stats()
    assert stats.running == stats.waiting == 0
    return stats.kv_blocks_used


def assert_settled(client: TestClient, kv_baseline: int, opened: int) -> None:
    state = app_state(client)

    def idle() -> bool:
        stats = state.generator.stats()
        return stats.running == stats.waiting == 0 and stats.kv_blocks_used == kv_baseline

    def closed() -> bool:  # a client that left is noticed by the server's own task, after the engine's abort
        counts = state.chat.generations.counts
        return idle() and counts["opened"] == counts["closed"] == opened

    wait_until(closed, timeout=30, what="the engine to free every KV block and the request to close")
    counts = state.chat.generations.counts
    assert counts["opened"] == counts["closed"] == counts["lease_released"] == counts["ticket_released"] == opened
    assert counts["live_added"] == counts["live_discarded"] and not state.chat.generations.open
    assert state.admission.snapshot()["waiting_requests"] == 0


def chat_reply(client: TestClient, ending: str) -> dict[str, Any]:
    frame = {"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": None, "text": PROMPT}
    with client.websocket_connect("/ws") as ws:
        ws.send_json(frame)
        ack = ws.receive_json()
        first = ws.receive_json()
        assert first["type"] == "delta"
        if ending == "stop":
            ws.send_json({"type": "stop", "message_id": ack["assistant_message_id"]})
        if ending in ("complete", "stop"):
            while (frame := ws.receive_json())["type"] != "done":
                pass
    portal_join(client)
    view = client.get(f"/api/conversations/{ack['conversation_id']}").json()
    return next(m for m in view["messages"] if m["id"] == ack["assistant_message_id"])


def portal_join(client: TestClient) -> None:
    assert client.portal.call(app_state(client).chat.join, 60)


@pytest.mark.parametrize("ending, unwatched, expected", [
    ("complete", -1, ("complete", {"stop", "length"})),
    ("stop", -1, ("complete", {"abort"})),
    ("socket_closed", -1, ("complete", {"stop", "length"})),  # nobody watches; it runs to its end
    ("socket_closed", 0, ("interrupted", {"abort"})),         # unwatched replies stop at once
])
def test_a_chat_reply_frees_everything_on_every_ending(client, ending, unwatched, expected):
    kv = baseline(client)
    app_state(client).runtime_settings.update({"unwatched_reply_s": unwatched}, actor_id=None)
    reply = chat_reply(client, ending)
    assert reply["status"] == expected[0] and reply["finish_reason"] in expected[1]
    assert_settled(client, kv, opened=1)


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("ending", ["complete", "client_gone", "disabled"])
def test_a_v1_request_frees_everything_on_every_ending(client, n, ending):
    kv = baseline(client)
    state = app_state(client)
    user_id = state.auth.find_user("alice").id
    _, secret = state.api_keys.create_key(user_id, "script")
    body = {"model": state.generator.model_name, "messages": [{"role": "user", "content": PROMPT}],
            "n": n, "max_tokens": 40, "temperature": 0.8, "seed": 3, "stream": True}
    headers = {"Authorization": f"Bearer {secret}"}
    if ending == "complete":
        response = client.post("/v1/chat/completions", headers=headers, content=json.dumps(body))
        assert response.status_code == 200 and response.text.endswith("data: [DONE]\n\n")
        indexes = {json.loads(line[6:])["choices"][0]["index"] for line in response.text.splitlines()
                   if line.startswith("data: {") and json.loads(line[6:])["choices"]}
        assert indexes == set(range(n))
    elif ending == "client_gone":
        with client.stream("POST", "/v1/chat/completions", headers=headers, content=json.dumps(body)) as response:
            for line in response.iter_lines():
                if '"content":"' in line and '"content":""' not in line:
                    break  # the client leaves mid-stream
    else:
        done = threading.Event()

        def stream() -> None:
            client.post("/v1/chat/completions", headers=headers, content=json.dumps(body))
            done.set()

        worker = threading.Thread(target=stream)
        worker.start()
        wait_until(lambda: state.generator.stats().running > 0, what="the request running")
        client.portal.call(state.chat.live.end_user, user_id, "the account was disabled")
        worker.join(60)
        assert done.is_set()
    assert_settled(client, kv, opened=1)
