"""backend/cluster/instances.py: every process's stats snapshot in Redis, and the admin's list of
processes built from it."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from backend.cluster import RedisLink, RedisUnavailable
from backend.cluster.instances import InstanceRegistry, InstanceSnapshot, snapshot_of
from backend.metrics import EngineSample
from tests.cluster.clients import wait_for
from tests.cluster.processes import Cluster, free_port


def _snapshot(name: str, running: int = 0, last_seen: float | None = None) -> InstanceSnapshot:
    return InstanceSnapshot(instance=name, model="m", running=running, waiting=0, kv_usage=0.25,
                            tokens_per_s=12.5, last_seen=time.time() if last_seen is None else last_seen)


@pytest.fixture
async def link(redis_url: str):
    link = RedisLink(redis_url, "test")
    yield link
    await link.aclose()


async def test_published_snapshots_are_listed_by_name(link: RedisLink) -> None:
    one, two = InstanceRegistry(link, "one"), InstanceRegistry(link, "two")
    await two.publish(_snapshot("two", running=3))
    await one.publish(_snapshot("one", running=1))
    assert [(s.instance, s.running) for s in await one.live()] == [("one", 1), ("two", 3)]
    # Publishing again replaces the process's snapshot.
    await one.publish(_snapshot("one", running=5))
    assert [(s.instance, s.running) for s in await two.live()] == [("one", 5), ("two", 3)]


async def test_a_snapshot_expires_after_its_ttl(link: RedisLink) -> None:
    registry = InstanceRegistry(link, "brief", ttl_s=0.3)
    await registry.publish(_snapshot("brief"))
    assert [s.instance for s in await registry.live()] == ["brief"]
    deadline = time.monotonic() + 10
    while await registry.live():
        assert time.monotonic() < deadline, "the snapshot outlived its TTL"
        await asyncio.sleep(0.05)


async def test_garbage_and_stale_entries_are_left_out(link: RedisLink) -> None:
    registry = InstanceRegistry(link, "ok")
    await registry.publish(_snapshot("ok"))
    await registry.publish(_snapshot("stale", last_seen=time.time() - 3600))  # a skewed clock
    await link.aio.set(link.key("instance", "junk"), "not json")
    await link.aio.set(link.key("instance", "wrong"), json.dumps({"instance": "wrong", "running": "many"}))
    await link.aio.set(link.key("instance", "list"), json.dumps([1, 2]))
    assert [s.instance for s in await registry.live()] == ["ok"]


async def test_run_publishes_until_cancelled_then_withdraws(link: RedisLink) -> None:
    registry = InstanceRegistry(link, "runner")
    calls = []

    def snapshot() -> InstanceSnapshot:
        calls.append(1)
        return _snapshot("runner", running=len(calls))

    task = asyncio.create_task(registry.run(snapshot, interval_s=0.01))
    deadline = time.monotonic() + 10
    while len(calls) < 3:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    assert [s.instance for s in await registry.live()] == ["runner"]
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert await registry.live() == []


async def test_without_an_answering_redis_live_raises_unavailable_and_run_keeps_trying() -> None:
    link = RedisLink(f"redis://127.0.0.1:{free_port()}/0", "lonely")  # nothing listens there
    registry = InstanceRegistry(link, "lonely")
    try:
        with pytest.raises(RedisUnavailable):
            await registry.live()
        calls = []
        task = asyncio.create_task(registry.run(lambda: calls.append(1) or _snapshot("lonely"), interval_s=0.01))
        deadline = time.monotonic() + 20
        while len(calls) < 2:  # the failed publication did not end the loop
            assert not task.done() and time.monotonic() < deadline
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    finally:
        await link.aclose()


async def test_run_ends_on_cancel_even_when_a_redis_call_swallows_the_cancellation() -> None:
    """Python 3.11's asyncio.wait_for (inside redis-py) can lose a cancellation that lands as the
    command completes; the publisher must still stop (it did not: shutdown hung)."""

    class Swallowing:
        def __init__(self) -> None:
            self.entered = asyncio.Event()
            self.swallowed = 0

        async def set(self, *args: object, **kwargs: object) -> bool:
            self.entered.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                if self.swallowed:
                    raise
                self.swallowed += 1
                return True  # the command "completed": the cancellation is gone
            return True

        async def delete(self, *keys: str) -> int:
            return 1

    aio = Swallowing()
    link = type("FakeLink", (), {"aio": aio, "key": staticmethod(RedisLink.key)})()
    registry = InstanceRegistry(link, "swallower")  # type: ignore[arg-type]
    task = asyncio.create_task(registry.run(lambda: _snapshot("swallower"), interval_s=0.01))
    await asyncio.wait_for(aio.entered.wait(), 10)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=10)
    if not done:  # clean up: a second cancellation is not swallowed
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert done and task.cancelled(), "the publisher went on after being cancelled"
    assert aio.swallowed == 1


def test_snapshot_of_takes_the_latest_metrics_point() -> None:
    sample = EngineSample(t=1.0, running=2, waiting=4, kv_usage=0.5, tokens_per_s=30.0,
                          ttft_p50_ms=None, ttft_p99_ms=None)
    assert snapshot_of("a", "m", sample, 99.0) == InstanceSnapshot("a", "m", 2, 4, 0.5, 30.0, 99.0)
    assert snapshot_of("a", "m", None, 99.0) == InstanceSnapshot("a", "m", None, None, None, None, 99.0)


# --- the two real processes ----------------------------------------------------------------------

def _listed(admin, base: str) -> list[tuple[str, bool, str]]:
    body = admin.get("/admin/api/engine", base=base).json()
    return [(p["instance"], p["this"], p["model"]) for p in body["instances"]]


def test_the_admin_panel_of_each_process_lists_both(cluster: Cluster) -> None:
    admin = cluster.admin(cluster.a.url)
    wait_for(lambda: _listed(admin, cluster.a.url) == [("a", True, "scripted-model"), ("b", False, "scripted-model")],
             10, "A listing A and B")
    assert _listed(admin, cluster.b.url) == [("a", False, "scripted-model"), ("b", True, "scripted-model")]


def test_a_stopped_process_leaves_the_list_and_a_restarted_one_returns(cluster: Cluster) -> None:
    admin = cluster.admin(cluster.a.url)
    wait_for(lambda: len(_listed(admin, cluster.a.url)) == 2, 10, "both listed")
    cluster.b.stop()
    assert [name for name, _, _ in _listed(admin, cluster.a.url)] == ["a"]  # withdrawn at shutdown
    cluster.b.start()
    wait_for(lambda: [name for name, _, _ in _listed(admin, cluster.a.url)] == ["a", "b"], 10, "B back")


def test_a_killed_process_leaves_the_list_when_its_snapshot_expires(cluster: Cluster) -> None:
    admin = cluster.admin(cluster.a.url)
    wait_for(lambda: len(_listed(admin, cluster.a.url)) == 2, 10, "both listed")
    cluster.b.kill()  # no shutdown code: its key stays until the TTL (15 s) ends it
    wait_for(lambda: [name for name, _, _ in _listed(admin, cluster.a.url)] == ["a"], 30, "B's snapshot to expire",
             interval=0.5)
