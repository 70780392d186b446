"""The router (deploy/haproxy.cfg) in front of processes A and B: a user stays on one process,
WebSocket and server-sent events pass unbuffered, and a user whose process dies is served by the
other. ``X-Crescent-Instance`` says which process answered."""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from tests.cluster.conftest import migrated_database, server_environment
from tests.cluster.clients import INSTANCE_HEADER, User, wait_for
from tests.cluster.processes import Cluster, Proxy, ServerProcess, ThrowawayPostgres

MAX_USERS = 40  # users signed up until both processes serve someone: P(all on one) = 2^-39


def _instance(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text[:300]
    return response.headers[INSTANCE_HEADER]


def _users_on_both(cluster: Cluster, proxy: Proxy) -> dict[str, User]:
    """Users signed up through the proxy until one is served by each process: {instance: user}."""
    found: dict[str, User] = {}
    for _ in range(MAX_USERS):
        user = cluster.user(proxy.url)
        user.sign_up()
        found.setdefault(_instance(user.get("/api/conversations")), user)
        if len(found) == 2:
            return found
    raise AssertionError(f"after {MAX_USERS} users every one was served by {list(found)}")


def _api_key(user: User) -> str:
    created = user.post("/api/account/keys", json={"name": "router-test"})
    assert created.status_code == 201, created.text[:300]
    return created.json()["secret"]


def test_a_session_cookie_is_served_by_the_same_process_every_time(cluster: Cluster, proxy: Proxy) -> None:
    users = _users_on_both(cluster, proxy)
    for instance, user in users.items():
        seen = {_instance(user.get(path)) for path in ("/api/conversations", "/healthz", "/chat") * 4}
        assert seen == {instance}


def test_an_api_key_is_served_by_the_same_process_every_time(cluster: Cluster, proxy: Proxy) -> None:
    by_instance: dict[str, set[str]] = {}
    for _ in range(MAX_USERS):
        user = cluster.user(proxy.url)
        user.sign_up()
        headers = {"Authorization": f"Bearer {_api_key(user)}"}
        with httpx.Client(base_url=proxy.url, headers=headers, timeout=30) as client:
            seen = {_instance(client.get("/v1/models")) for _ in range(6)}
        assert len(seen) == 1, f"one API key was served by {seen}"
        by_instance.setdefault(seen.pop(), set()).add(user.username or "")
        if len(by_instance) == 2:
            return
    raise AssertionError(f"after {MAX_USERS} keys every one was served by {list(by_instance)}")


def test_a_chat_socket_through_the_proxy_streams_deltas_as_they_are_made(cluster: Cluster, proxy: Proxy) -> None:
    user = cluster.user(proxy.url)
    user.sign_up()
    instance = _instance(user.get("/api/conversations"))
    server = cluster.servers[instance]
    server.control.set_tokens(["first ", "second ", "third"])
    server.control.hold(after=1)
    with user.websocket() as socket:
        assert socket.instance == instance
        socket.send_message("go")
        ack = socket.receive_json()
        assert ack["type"] == "ack"
        # The generator is held after its first token: this delta crossed the proxy on its own.
        first = socket.receive_json()
        assert (first["type"], first["text"]) == ("delta", "first ")
        server.control.release()
        rest = socket.receive_until(("done",))
    assert "".join(f.get("text", "") for f in rest if f["type"] == "delta") == "second third"
    assert rest[-1]["status"] == "complete"


def test_a_streamed_completion_through_the_proxy_is_not_buffered(cluster: Cluster, proxy: Proxy) -> None:
    user = cluster.user(proxy.url)
    user.sign_up()
    headers = {"Authorization": f"Bearer {_api_key(user)}"}
    with httpx.Client(base_url=proxy.url, headers=headers, timeout=30) as client:
        instance = _instance(client.get("/v1/models"))
        server = cluster.servers[instance]
        server.control.set_tokens(["alpha ", "beta ", "gamma"])
        server.control.hold(after=1)
        body = {"model": "scripted-model", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        with client.stream("POST", "/v1/chat/completions", json=body) as response:
            assert response.status_code == 200
            assert response.headers[INSTANCE_HEADER] == instance
            lines = response.iter_lines()
            contents: list[str] = []
            for line in lines:  # until the first token: the generator holds the second
                if line.startswith("data: {"):
                    delta = json.loads(line[6:])["choices"][0]["delta"]
                    if delta.get("content"):
                        contents.append(delta["content"])
                        break
            assert contents == ["alpha "]
            server.control.release()
            for line in lines:
                if line == "data: [DONE]":
                    break
                if line.startswith("data: {"):
                    contents.append(json.loads(line[6:])["choices"][0]["delta"].get("content") or "")
    assert "".join(contents) == "alpha beta gamma"


def test_a_user_whose_process_dies_is_served_by_the_other(cluster: Cluster, proxy: Proxy) -> None:
    users = _users_on_both(cluster, proxy)
    for victim in ("a", "b"):
        cluster.ensure_running()
        proxy.wait_all_up()
        user = users[victim]
        assert _instance(user.get("/api/conversations")) == victim
        cluster.servers[victim].kill()
        # At once (the proxy has not noticed yet: a refused connection is redispatched), and
        # still logged in: the session lives in the shared database.
        survivor = "b" if victim == "a" else "a"
        assert _instance(user.get("/api/conversations")) == survivor
        proxy.wait_down(victim)
        assert _instance(user.get("/api/conversations")) == survivor
        # The other process's users never moved.
        assert _instance(users[survivor].get("/api/conversations")) == survivor


def test_a_websocket_reconnects_to_the_other_process_when_its_process_dies(cluster: Cluster, proxy: Proxy) -> None:
    user = cluster.user(proxy.url)
    user.sign_up()
    with user.websocket() as socket:
        first = socket.instance
        socket.ping()
    cluster.servers[first].kill()
    with user.websocket() as socket:
        assert socket.instance != first
        socket.send_message("still here?")
        frames = socket.receive_until(("done",))
    assert frames[-1]["status"] == "complete"


def test_a_process_back_up_gets_its_users_back(cluster: Cluster, proxy: Proxy) -> None:
    users = _users_on_both(cluster, proxy)
    cluster.a.kill()
    assert _instance(users["a"].get("/api/conversations")) == "b"
    cluster.ensure_running()
    proxy.wait_all_up()
    # Consistent hashing: the key maps to A again once A is up.
    wait_for(lambda: _instance(users["a"].get("/api/conversations")) == "a", 10, "the user back on A")
    assert _instance(users["b"].get("/api/conversations")) == "b"


# --- the real model: two `python -m web serve` processes behind the proxy ----------------------

@pytest.fixture(scope="module")
def real_model_proxy(postgres_server: ThrowawayPostgres, redis_server: str,
                     tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    """HAProxy in front of two real servers (the packaged model, loaded by each process)."""
    root: Path = tmp_path_factory.mktemp("real-cluster")
    for database_url in migrated_database(postgres_server):
        env = server_environment(database_url, f"{redis_server}/14", secrets.token_urlsafe(48), root)
        servers = {name: ServerProcess(name, env, root / name, argv=("-m", "web", "serve"), ready_timeout=300)
                   for name in ("a", "b")}
        proxy = Proxy(servers, root)
        try:
            for server in servers.values():
                server.start(wait=False)
            for server in servers.values():
                server.wait_ready()
            proxy.start()
            proxy.wait_all_up()
            yield proxy
        finally:
            proxy.stop()
            for server in servers.values():
                server.stop(timeout=30)


@pytest.mark.slow
def test_the_openai_client_streams_through_the_proxy_and_moves_when_its_process_dies(
        real_model_proxy: Proxy) -> None:
    openai = pytest.importorskip("openai")
    with User(real_model_proxy.url) as user:
        user.sign_up()
        key = _api_key(user)
    client = openai.OpenAI(base_url=real_model_proxy.url + "/v1", api_key=key, max_retries=0, timeout=120)
    messages = [{"role": "user", "content": "Name three colours."}]
    model = client.models.list().data[0].id

    started = time.monotonic()
    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=messages, stream=True, max_tokens=12, temperature=0)
    serving = raw.headers[INSTANCE_HEADER]
    chunks = list(raw.parse())
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    print(f"streamed {len(chunks)} chunks from {serving} in {time.monotonic() - started:.1f} s: {text!r}")
    assert text.strip()
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] \
        in (["stop"], ["length"])

    real_model_proxy.servers[serving].kill()
    started = time.monotonic()
    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=messages, max_tokens=12, temperature=0)
    completion = raw.parse()
    print(f"after killing {serving}: served by {raw.headers[INSTANCE_HEADER]} "
          f"in {time.monotonic() - started:.1f} s")
    assert raw.headers[INSTANCE_HEADER] != serving
    assert completion.choices[0].message.content.strip()


def test_with_every_process_down_the_proxy_answers_a_page_that_retries(cluster: Cluster, proxy: Proxy) -> None:
    cluster.a.kill()
    cluster.b.kill()
    response = httpx.get(proxy.url + "/chat", timeout=30)
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "5"
    assert "Crescent is starting" in response.text and "http-equiv='refresh'" in response.text
