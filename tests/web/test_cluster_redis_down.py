"""Redis down, through the web layer (docs/INTERFACES.md): log-in and sign-up answer 503 "try
again shortly" (never checked unthrottled), a chat send gets an `unavailable` error frame with
retry_after_s and the socket stays open, /v1 answers 503 with Retry-After; no 500 anywhere; once
Redis is back the same process serves again."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest
from starlette.testclient import TestClient

from backend.cluster.leases import FAIL_FAST_S
from web.app import create_app

from .conftest import PASSWORD, FakeGenerator, app_state, csrf_field, sign_up, use_session, user_id
from .test_ws import assert_alive, send_frame

HI = [{"role": "user", "content": "hi there"}]


@pytest.fixture
def client(settings, own_redis):
    app = create_app(replace(settings, redis_url=own_redis.url, instance_name="a"), generator=FakeGenerator())
    with TestClient(app, follow_redirects=False) as test_client:
        yield test_client


def log_in(client: TestClient, password: str = "wrong password"):
    return client.post("/login", data={"username": "alice", "password": password, **csrf_field(client)})


def test_redis_down_refuses_log_in_chat_and_api_with_503_and_recovers(client, own_redis):
    token = sign_up(client, "alice")
    _, secret = app_state(client).api_keys.create_key(user_id(client, token), "tests")
    bearer = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    body = json.dumps({"model": "fake-model", "messages": HI})

    own_redis.stop()
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("hello"))
        frame = ws.receive_json()
        assert (frame["type"], frame["code"], frame.get("retry_after_s")) == ("error", "unavailable", 5)
        assert_alive(ws)
    response = client.post("/v1/chat/completions", content=body, headers=bearer)
    assert response.status_code == 503 and response.headers["Retry-After"] == "5"
    assert response.json()["error"]["code"] == "unavailable"
    rejected = app_state(client).metrics.rejected.labels(kind="unavailable")._value.get()  # noqa: SLF001
    assert rejected >= 1
    use_session(client, None)
    for attempt in (lambda: log_in(client, PASSWORD), lambda: log_in(client)):
        response = attempt()
        assert response.status_code == 503 and response.headers["Retry-After"] == "5"
        assert "Try again shortly" in response.text and "session" not in response.cookies
    response = client.post("/signup", data={"username": "bob", "password": "password two", **csrf_field(client)})
    assert response.status_code == 503 and "Try again shortly" in response.text

    own_redis.start()
    time.sleep(FAIL_FAST_S)  # generation leases fail fast this long after Redis failed
    assert log_in(client).status_code == 401
    assert log_in(client, PASSWORD).status_code == 303
    response = client.post("/v1/chat/completions", content=body, headers=bearer)
    assert response.status_code == 200, response.text
