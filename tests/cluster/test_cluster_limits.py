"""Limits across two processes on one Redis (docs/ARCHITECTURE.md, "One process, and beyond
it"): the log-in throttle, the per-minute window and the concurrency leases are counted once
whichever process gets the request; a lease of a process killed with SIGKILL expires; with Redis
down a process refuses log-ins and generations with 503 and serves again when Redis is back.

Failed log-ins come from a made-up client address (X-Forwarded-For, believed from loopback), so
the shared per-IP window of 127.0.0.1, which every other test logs in from, stays empty.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any, Iterator

import httpx
import pytest

from backend.cluster.leases import FAIL_FAST_S
from tests.cluster.clients import INSTANCE_HEADER, User, unique_name, wait_for
from tests.cluster.processes import Cluster
from tests.redis_server import RedisProcess

HI = json.dumps({"model": "scripted-model", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8})


def made_up_ip() -> str:
    return f"10.{random.randrange(256)}.{random.randrange(256)}.{random.randrange(1, 255)}"


def failed_log_in(browser: User, base: str, ip: str) -> httpx.Response:
    token = browser.csrf_token(base)
    return browser.http.post(base + "/login", headers={"X-Forwarded-For": ip},
                             data={"username": unique_name("nobody"), "password": "wrong", "csrf_token": token})


def settings_of(admin: User, base: str) -> dict[str, Any]:
    return admin.get("/admin/api/settings", base=base).json()["settings"]


@pytest.fixture
def limits_set(cluster: Cluster) -> Iterator[Any]:
    """set(**fields): the admin changes per-user limits on A, and both processes are waited for
    (each caches the settings for up to 5 s); every limit back to 0 after the test."""
    admin = cluster.admin()
    changed: set[str] = set()

    def apply(**fields: int) -> None:
        response = admin.post("/admin/api/settings", json=fields)
        assert response.status_code == 200, response.text[:300]
        changed.update(fields)
        for server in (cluster.a, cluster.b):
            wait_for(lambda: all(settings_of(admin, server.url)[k] == v for k, v in fields.items()),
                     timeout=30, what=f"{server.name} to see {fields}")

    yield apply
    if changed:
        cluster.ensure_running()
        apply(**{name: 0 for name in changed})


@pytest.fixture
def api_user(cluster: Cluster) -> tuple[User, dict[str, str]]:
    """A fresh user and the Authorization header of an API key of his."""
    user = cluster.user()
    user.sign_up()
    created = user.post("/api/account/keys", json={"name": "limits"})
    assert created.status_code == 201, created.text[:300]
    return user, {"Authorization": f"Bearer {created.json()['secret']}", "Content-Type": "application/json"}


def completion(base: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(base + "/v1/chat/completions", content=HI, headers=headers, timeout=30)


def test_the_31st_failed_log_in_is_refused_whichever_process_gets_it(cluster: Cluster) -> None:
    browser, ip = cluster.user(), made_up_ip()
    answers = []
    for i in range(40):  # 40 failed log-ins from one address, alternating A and B
        server = (cluster.a, cluster.b)[i % 2]
        response = failed_log_in(browser, server.url, ip)
        assert response.headers[INSTANCE_HEADER] == server.name
        answers.append(response.status_code)
    assert answers == [401] * 30 + [429] * 10  # 30 per address per 5 minutes, counted once
    refused = failed_log_in(browser, cluster.b.url, ip)
    assert refused.status_code == 429 and 1 <= int(refused.headers["Retry-After"]) <= 300
    assert failed_log_in(browser, cluster.a.url, made_up_ip()).status_code == 401  # another address


def test_requests_per_minute_are_counted_once_across_processes(cluster: Cluster, limits_set, api_user) -> None:
    _, key = api_user
    limits_set(requests_per_minute=3)
    for server in (cluster.a, cluster.b, cluster.a):
        assert completion(server.url, key).status_code == 200
    for server in (cluster.b, cluster.a):
        response = completion(server.url, key)
        assert response.status_code == 429, response.text[:300]
        assert response.json()["error"]["code"] == "rate_limit_exceeded"
        assert "per minute" in response.json()["error"]["message"] and int(response.headers["Retry-After"]) >= 1


def test_concurrency_is_held_across_processes_and_freed_by_release_or_process_death(
        cluster: Cluster, limits_set, api_user) -> None:
    user, key = api_user
    limits_set(max_concurrent_generations=1)
    cluster.a.control.hold(after=1)
    with user.websocket(cluster.a.url) as socket:
        socket.send_message("hold this")
        socket.receive_until(("delta",))  # admitted on A: its lease is taken
        refused = completion(cluster.b.url, key)
        assert refused.status_code == 429, refused.text[:300]
        assert "generating" in refused.json()["error"]["message"]
        cluster.a.control.release()
        assert socket.receive_until(("done",))[-1]["status"] == "complete"
    assert completion(cluster.b.url, key).status_code == 200  # released once, on A's settle

    cluster.a.control.hold(after=1)
    with user.websocket(cluster.a.url) as socket:
        socket.send_message("hold this too")
        socket.receive_until(("delta",))
        assert completion(cluster.b.url, key).status_code == 429
        cluster.a.kill()  # SIGKILL: A's lease is never released, only no longer renewed
    killed_at = time.monotonic()
    wait_for(lambda: completion(cluster.b.url, key).status_code == 200, timeout=40,
             what="A's lease to expire (TTL 15 s)")
    print(f"B accepted {time.monotonic() - killed_at:.1f} s after A was killed")


def test_redis_down_refuses_log_ins_and_generations_with_503_and_recovers(cluster: Cluster,
                                                                          own_redis: RedisProcess) -> None:
    redis = own_redis
    try:
        cluster.a.restart(extra_env={"REDIS_URL": redis.url})
        user = cluster.user()
        user.sign_up()
        key = user.post("/api/account/keys", json={"name": "down"}).json()["secret"]
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        with user.websocket() as socket:
            redis.stop()
            socket.send_message("hello")
            frame = socket.receive_json()
            assert (frame["type"], frame["code"], frame.get("retry_after_s")) == ("error", "unavailable", 5)
            socket.ping()  # the socket stays open
        response = completion(cluster.a.url, headers)
        assert response.status_code == 503 and response.headers["Retry-After"] == "5"
        browser = cluster.user()
        for password in (user.password, "wrong"):  # refused before any password check
            response = browser.form("/login", {"username": user.username, "password": password})
            assert response.status_code == 503 and response.headers["Retry-After"] == "5"
            assert "Try again shortly" in response.text
        assert browser.get("/healthz").status_code == 200

        redis.start()  # the same process uses it again
        time.sleep(FAIL_FAST_S)  # generation leases fail fast this long after Redis failed
        browser.log_in(user.username)
        assert completion(cluster.a.url, headers).status_code == 200
    finally:
        redis.stop()
        cluster.a.restart(extra_env={})
