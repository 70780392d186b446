"""backend.limits.UsageLimiter: exact retry-after values on a fake wall clock (conftest.wall_clock)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from sqlalchemy import select

from backend.auth import AuthService
from backend.limits import RateLimited, UsageLimiter, seconds_to_next_utc_midnight
from backend.models import UsageRecord
from backend.runtime_settings import RuntimeSettingsStore
from backend.settings import Settings


def ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


@pytest.fixture
def users(session_factory, fast_hasher):
    auth = AuthService(session_factory, 3600, fast_hasher)
    return auth.sign_up("alice", "password one"), auth.sign_up("bob", "password two")


@pytest.fixture
def store(session_factory):
    return RuntimeSettingsStore(session_factory, Settings())


@pytest.fixture
def limiter(session_factory, store, wall_clock):
    return UsageLimiter(session_factory, store, clock=wall_clock)


def refused(limiter, user_id) -> RateLimited:
    with pytest.raises(RateLimited) as excinfo:
        limiter.acquire(user_id)
    assert excinfo.value.code == "rate_limited"
    return excinfo.value


@pytest.mark.parametrize(
    "now, expected",
    [
        ("2027-01-15 00:00:00", 86400),
        ("2027-01-15 12:00:00", 43200),
        ("2027-01-15 23:59:59.200", 1),
        ("2027-01-15 23:59:30", 30),
        ("2027-12-31 23:00:00", 3600),
    ],
)
def test_seconds_to_next_utc_midnight(now, expected):
    assert seconds_to_next_utc_midnight(ts(now)) == expected


def test_zero_means_unlimited(limiter, users):
    leases = [limiter.acquire(users[0].id) for _ in range(50)]
    assert limiter.active(users[0].id) == 50
    for lease in leases:
        lease.release()
    assert limiter.active(users[0].id) == 0


def test_requests_per_minute_is_a_moving_window_with_exact_retry_after(limiter, store, users, wall_clock):
    alice, bob = users
    store.update({"requests_per_minute": 3}, actor_id=None)
    t0 = wall_clock.now
    for offset in (0, 10, 20):
        wall_clock.now = t0 + offset
        limiter.acquire(alice.id).release()
    wall_clock.now = t0 + 30
    error = refused(limiter, alice.id)
    assert (error.limit, error.retry_after_s) == ("requests_per_minute", 30)  # the t0 request ages out at t0+60
    wall_clock.now = t0 + 59.5
    assert refused(limiter, alice.id).retry_after_s == 1
    limiter.acquire(bob.id).release()  # per user
    wall_clock.now = t0 + 60.5
    limiter.acquire(alice.id).release()
    # Refusals took no slot: the window now holds t0+10, t0+20, t0+60.5, so the next is refused
    # until t0+10 ages out.
    wall_clock.now = t0 + 61
    assert refused(limiter, alice.id).retry_after_s == 9


def test_a_new_limit_applies_to_the_next_request(limiter, store, users):
    alice = users[0]
    for _ in range(5):
        limiter.acquire(alice.id).release()
    store.update({"requests_per_minute": 1}, actor_id=None)
    limiter.acquire(alice.id).release()
    assert refused(limiter, alice.id).retry_after_s == 60


def test_tokens_per_day_counts_the_utc_day_and_retries_at_midnight(limiter, store, users, wall_clock, session_factory):
    alice, bob = users
    store.update({"tokens_per_day": 100}, actor_id=None)
    wall_clock.now = ts("2027-01-14 23:59:00")
    limiter.acquire(alice.id).record(900, 100, "api")  # yesterday: does not count today
    wall_clock.now = ts("2027-01-15 10:00:00")
    lease = limiter.acquire(alice.id)
    lease.record(40, 20, "chat")
    lease.release()
    assert limiter.tokens_today(alice.id) == 60
    wall_clock.now = ts("2027-01-15 23:00:00")
    lease = limiter.acquire(alice.id)  # 60 < 100: allowed, and may overshoot
    lease.record(30, 20, "chat")
    lease.release()
    wall_clock.now = ts("2027-01-15 23:59:30")
    error = refused(limiter, alice.id)
    assert (error.limit, error.retry_after_s) == ("tokens_per_day", 30)
    assert "110" in error.message and "100" in error.message
    limiter.acquire(bob.id).release()  # per user
    wall_clock.now = ts("2027-01-16 00:00:01")
    limiter.acquire(alice.id).release()


def test_concurrent_generations_and_idempotent_release(limiter, store, users):
    alice, bob = users
    store.update({"max_concurrent_generations": 2}, actor_id=None)
    first, second = limiter.acquire(alice.id), limiter.acquire(alice.id)
    error = refused(limiter, alice.id)
    assert (error.limit, error.retry_after_s) == ("max_concurrent_generations", 2)
    limiter.acquire(bob.id)
    first.release()
    first.release()  # a second release frees nothing more
    third = limiter.acquire(alice.id)
    assert limiter.active(alice.id) == 2
    refused(limiter, alice.id)
    second.release()
    third.release()
    assert limiter.active(alice.id) == 0


def test_a_refusal_for_concurrency_consumes_no_request_slot(limiter, store, users):
    alice = users[0]
    store.update({"max_concurrent_generations": 1, "requests_per_minute": 2}, actor_id=None)
    lease = limiter.acquire(alice.id)
    assert refused(limiter, alice.id).limit == "max_concurrent_generations"
    lease.release()
    limiter.acquire(alice.id).release()  # the 2nd request of the minute, not the 3rd
    assert refused(limiter, alice.id).limit == "requests_per_minute"


def test_record_stores_one_usage_row_dated_by_the_clock(limiter, users, wall_clock, session_factory):
    lease = limiter.acquire(users[0].id)
    lease.record(12, 34, "api")
    lease.record(99, 99, "api")  # once per lease
    with session_factory() as db:
        (row,) = db.scalars(select(UsageRecord))
    assert (row.user_id, row.source, row.prompt_tokens, row.completion_tokens) == (users[0].id, "api", 12, 34)
    assert row.created_at == datetime.fromtimestamp(wall_clock.now, tz=timezone.utc)
    with pytest.raises(ValueError):
        limiter.acquire(users[0].id).record(1, 1, "batch")
