"""The log-in throttle is network I/O with REDIS_URL (a Redis that hangs answers after its 1 s
socket timeout): it runs off the event loop, so one slow check never stalls other requests."""

from __future__ import annotations

import threading

from starlette.testclient import TestClient

from .conftest import PASSWORD, app_state, csrf_field, sign_up, use_session


def test_a_slow_throttle_check_does_not_stall_the_server(client: TestClient) -> None:
    sign_up(client, "alice")
    use_session(client, None)
    form = {"username": "alice", "password": PASSWORD, **csrf_field(client)}
    throttle = app_state(client).throttle
    entered, release = threading.Event(), threading.Event()
    real_check = throttle.check

    def hanging_check(*args, **kwargs):
        entered.set()
        release.wait(30)  # a Redis that does not answer
        return real_check(*args, **kwargs)

    throttle.check = hanging_check
    results: dict[str, int] = {}
    login = threading.Thread(target=lambda: results.setdefault("login", client.post("/login", data=form).status_code))
    login.start()
    try:
        assert entered.wait(10), "the log-in never reached the throttle"
        health = threading.Thread(target=lambda: results.setdefault("health", client.get("/healthz").status_code))
        health.start()
        health.join(10)
        assert results.get("health") == 200, "another request waited for the throttle's check"
        assert "login" not in results
    finally:
        release.set()
        login.join(30)
    assert results["login"] == 303
