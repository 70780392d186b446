"""UsageLimiter with REDIS_URL: two limiters on one Redis (two "processes", each with its own
RedisLink) hold the per-minute and concurrency limits together; leases are released exactly once.

The per-minute window's timestamps come from the `limits` library's Redis storage (its module's
`time`), patched here to the test's wall clock like the memory storage in conftest.
"""

from __future__ import annotations

import limits.storage.redis
import pytest

from backend.auth import AuthService
from backend.cluster import RedisLink
from backend.limits import RateLimited, UsageLimiter
from backend.runtime_settings import RuntimeSettingsStore
from backend.settings import Settings


@pytest.fixture
def redis_clock(wall_clock, monkeypatch):
    monkeypatch.setattr(limits.storage.redis, "time", wall_clock)
    return wall_clock


@pytest.fixture
def users(session_factory, fast_hasher):
    auth = AuthService(session_factory, 3600, fast_hasher)
    return auth.sign_up("alice", "password one"), auth.sign_up("bob", "password two")


@pytest.fixture
def store(session_factory):
    return RuntimeSettingsStore(session_factory, Settings())


@pytest.fixture
def links(redis_url):
    made = [RedisLink(redis_url, "a"), RedisLink(redis_url, "b")]
    yield made
    for link in made:
        link.sync.close()


@pytest.fixture
def pair(session_factory, store, links, redis_clock):
    """Limiters of processes A and B, sharing the database and Redis."""
    made = [UsageLimiter(session_factory, store, clock=redis_clock, redis_link=link) for link in links]
    yield made
    for limiter in made:
        limiter.close()


def eventually(check, timeout_s: float = 10.0):
    """A release reaches Redis from its process's heartbeat thread a moment later (it never
    waits on the event loop): poll `check` until it returns a truthy value."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            value = check()
        except RateLimited:
            value = None
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.01)


def refused(limiter, user_id) -> RateLimited:
    with pytest.raises(RateLimited) as excinfo:
        limiter.acquire(user_id)
    return excinfo.value


def test_requests_per_minute_are_counted_once_across_processes(pair, store, users, redis_clock):
    a, b = pair
    alice, bob = users
    store.update({"requests_per_minute": 4}, actor_id=None)
    t0 = redis_clock.now
    for i, limiter in enumerate((a, b, a, b)):
        redis_clock.now = t0 + 10 * i
        limiter.acquire(alice.id).release()
    redis_clock.now = t0 + 45
    for limiter in (a, b):  # the 5th is refused whichever process gets it
        error = refused(limiter, alice.id)
        assert (error.limit, error.retry_after_s) == ("requests_per_minute", 15)  # t0's ages out at t0+60
    b.acquire(bob.id).release()  # per user
    redis_clock.now = t0 + 60.5
    b.acquire(alice.id).release()
    assert refused(a, alice.id).limit == "requests_per_minute"  # t0+10 .. t0+60.5: four again


def test_concurrent_generations_are_held_across_processes(pair, store, users):
    a, b = pair
    alice, bob = users
    store.update({"max_concurrent_generations": 2}, actor_id=None)
    first, second = a.acquire(alice.id), b.acquire(alice.id)
    for limiter in (a, b):
        error = refused(limiter, alice.id)
        assert (error.limit, error.retry_after_s) == ("max_concurrent_generations", 2)
    assert a.active(alice.id) == b.active(alice.id) == 2
    b.acquire(bob.id).release()  # per user
    first.release()  # taken on A, the slot frees for B
    third = eventually(lambda: b.acquire(alice.id))
    assert third is not None
    assert refused(a, alice.id).limit == "max_concurrent_generations"
    second.release()
    third.release()
    assert eventually(lambda: a.active(alice.id) == 0)


def test_a_lease_is_released_exactly_once(pair, store, users):
    a, b = pair
    alice = users[0]
    store.update({"max_concurrent_generations": 2}, actor_id=None)
    lease, other = a.acquire(alice.id), b.acquire(alice.id)
    lease.release()
    lease.release()  # a second release must not free the other process's slot
    assert a.active(alice.id) == 1
    a.acquire(alice.id)
    assert refused(b, alice.id).limit == "max_concurrent_generations"
    other.release()


def test_a_refusal_after_the_slot_was_taken_gives_it_back(pair, store, users):
    a, b = pair
    alice = users[0]
    store.update({"max_concurrent_generations": 1, "requests_per_minute": 1}, actor_id=None)
    a.acquire(alice.id).release()
    # The release reaches Redis from A's heartbeat thread a moment later; until then B is
    # refused for the slot, not the minute (fresh-clone CI, 2026-12-02, once in 4 runs).
    assert eventually(lambda: a.active(alice.id) == 0)
    assert refused(b, alice.id).limit == "requests_per_minute"
    # the slot B took before its per-minute check is free again
    assert eventually(lambda: a.active(alice.id) == 0)


def test_without_redis_each_process_counts_alone(session_factory, store, users, wall_clock):
    """Today's one-process behaviour, and what the shared limits change: two memory limiters
    let the user run twice his limit."""
    a, b = (UsageLimiter(session_factory, store, clock=wall_clock) for _ in range(2))
    alice = users[0]
    store.update({"max_concurrent_generations": 1}, actor_id=None)
    a.acquire(alice.id)
    b.acquire(alice.id)
    assert refused(a, alice.id).limit == "max_concurrent_generations"
    assert not a.shared and a.active(alice.id) == 1
