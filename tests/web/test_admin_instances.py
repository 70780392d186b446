"""The admin engine panel's list of server processes (backend/cluster/instances.py): this process
alone without REDIS_URL; every process sharing the Redis with it."""

from __future__ import annotations

import dataclasses
import socket

from starlette.testclient import TestClient

from backend.rag import HashingEmbedder
from backend.settings import Settings
from web.app import create_app

from .conftest import FakeGenerator, sign_up, wait_until


def test_without_redis_the_panel_lists_this_process_only(client: TestClient, settings: Settings) -> None:
    sign_up(client, "alice")  # the first account: the admin
    wait_until(lambda: client.get("/admin/api/engine").json()["t"], what="a first sample")
    engine = client.get("/admin/api/engine").json()
    assert engine["instance"] == f"{socket.gethostname()}:{settings.port}"
    assert engine["instances_error"] is None
    (only,) = engine["instances"]
    assert only["instance"] == engine["instance"] and only["this"] is True
    assert only["model"] == "fake-model"
    # FakeGenerator.stats(): running 1, waiting 2, kv_usage 0.3.
    assert (only["running"], only["waiting"], only["kv_usage"]) == (1, 2, 0.3)
    page = client.get("/admin")
    assert 'id="instances-table"' in page.text


def test_two_processes_sharing_redis_each_list_both(settings: Settings, redis_url: str) -> None:
    apps = [create_app(dataclasses.replace(settings, redis_url=redis_url, instance_name=name),
                       generator=FakeGenerator(), embedder=HashingEmbedder())
            for name in ("north", "south")]
    with TestClient(apps[0], follow_redirects=False) as north:
        with TestClient(apps[1], follow_redirects=False) as south:
            sign_up(north, "alice")
            south.cookies.update(north.cookies)  # one database: the session is valid on both

            def names(client: TestClient) -> list[tuple[str, bool]]:
                return [(p["instance"], p["this"]) for p in client.get("/admin/api/engine").json()["instances"]]

            wait_until(lambda: names(north) == [("north", True), ("south", False)], what="north listing both")
            assert names(south) == [("north", False), ("south", True)]
            assert {p["model"] for p in north.get("/admin/api/engine").json()["instances"]} == {"fake-model"}
        # South stopped cleanly: it withdrew itself at once, no TTL to wait for.
        assert names(north) == [("north", True)]


def test_the_instance_header_names_only_a_named_process(client: TestClient, settings: Settings) -> None:
    """X-Crescent-Instance is sent only when CRESCENT_INSTANCE names the process: an unnamed one
    (one process, the default) does not tell anonymous clients its host name."""
    assert settings.instance_name == ""
    assert "x-crescent-instance" not in client.get("/login").headers
    named = create_app(dataclasses.replace(settings, instance_name="north"), generator=FakeGenerator())
    with TestClient(named) as other:
        assert other.get("/login").headers["x-crescent-instance"] == "north"


def test_settings_leave_the_instance_unnamed_unless_told() -> None:
    assert Settings.from_env({}).instance_name == ""
    assert Settings.from_env({"CRESCENT_INSTANCE": "b"}).instance_name == "b"


def test_a_process_with_another_secret_refuses_to_join(settings: Settings, redis_url: str) -> None:
    """Pages posted to another process must carry a CSRF token it accepts: a process whose server
    secret differs from a live one's does not start; once none is live, a new secret is taken
    (rotation)."""
    import pytest

    from backend.settings import SettingsError

    def app(name: str, secret: str | None = None):
        return create_app(dataclasses.replace(settings, redis_url=redis_url, instance_name=name, secret_key=secret),
                          generator=FakeGenerator(), embedder=HashingEmbedder())

    with TestClient(app("north"), follow_redirects=False) as north:
        wait_until(lambda: len(north.get("/healthz").text) > 0 and _live(redis_url) == {"north"},
                   what="north published")
        with pytest.raises(SettingsError, match="CRESCENT_SECRET_KEY .* differs .* north"):
            with TestClient(app("rogue", "r" * 40)):
                pass
        with TestClient(app("south")):  # the same secret joins
            pass
    with TestClient(app("rotated", "n" * 40)):  # nobody live with the old secret: rotation
        pass


def _live(redis_url: str) -> set[str]:
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        return {key.decode().rsplit(":", 1)[1] for key in client.scan_iter(match="crescent:instance:*")}
    finally:
        client.close()
