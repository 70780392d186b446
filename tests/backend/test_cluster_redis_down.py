"""Redis down (docs/ARCHITECTURE.md, "One process, and beyond it"): the log-in throttle fails
closed, the limiter refuses with 503 `unavailable` (Retry-After) rather than let a generation run
unlimited, releasing never raises, and a Redis that comes back is used again by the same objects.

The tests that stop Redis use their own redis-server (the root conftest.py's `own_redis`; the
shared one lives for the session).
"""

from __future__ import annotations

import time

import pytest

from backend.auth import AuthService
from backend.cluster import RedisLink, leases
from backend.errors import Throttled
from backend.limits import LimitsUnavailable, Overloaded, RateLimited, UsageLimiter
from backend.runtime_settings import RuntimeSettingsStore
from backend.settings import Settings
from backend.throttle import LoginThrottle
from tests.redis_server import free_port


@pytest.fixture
def users(session_factory, fast_hasher):
    return AuthService(session_factory, 3600, fast_hasher).sign_up("alice", "password one")


@pytest.fixture
def store(session_factory):
    return RuntimeSettingsStore(session_factory, Settings())


def unavailable(call, *args) -> LimitsUnavailable:
    with pytest.raises(LimitsUnavailable) as caught:
        call(*args)
    error = caught.value
    assert error.code == "unavailable" and error.retry_after_s == 5 and isinstance(error, Overloaded)
    return error


def test_log_in_throttling_fails_closed_without_redis():
    throttle = LoginThrottle(redis_link=RedisLink(f"redis://127.0.0.1:{free_port()}/0", "a"))
    error = unavailable(throttle.check, "1.1.1.1", "alice")
    assert "Try again shortly" in error.message and "Logging in" in error.message
    unavailable(throttle.hit, "1.1.1.1", "alice")
    assert "Signing up" in unavailable(throttle.check, "1.1.1.1", "alice", "signup").message
    throttle.succeeded("1.1.1.1", "alice")  # the log-in succeeded already: never raises


def test_the_limiter_refuses_without_redis_and_holds_nothing(session_factory, store, users):
    limiter = UsageLimiter(session_factory, store, redis_link=RedisLink(f"redis://127.0.0.1:{free_port()}/0", "a"))
    unavailable(limiter.acquire, users.id)  # even with no limit set: nothing is let through unlimited
    store.update({"requests_per_minute": 5, "max_concurrent_generations": 1}, actor_id=None)
    unavailable(limiter.acquire, users.id)
    unavailable(limiter.active, users.id)
    assert limiter._leases.held() == 0


def test_throttle_and_limiter_use_redis_again_when_it_comes_back(session_factory, store, users, own_redis):
    link = RedisLink(own_redis.url, "a")
    throttle = LoginThrottle(login_per_account_ip="2/5 minutes", redis_link=link)
    limiter = UsageLimiter(session_factory, store, redis_link=link, lease_ttl_s=2.0, heartbeat_s=0.2)
    store.update({"max_concurrent_generations": 1}, actor_id=None)
    throttle.hit("1.1.1.1", "alice")
    lease = limiter.acquire(users.id)

    own_redis.stop()
    unavailable(throttle.check, "1.1.1.1", "alice")
    unavailable(limiter.acquire, users.id)
    lease.release()  # never raises; the lease would expire within its TTL
    assert limiter._leases.held() == 0

    own_redis.start()  # empty (no persistence): the same objects work again, no restart
    time.sleep(leases.FAIL_FAST_S)  # acquiring fails fast this long after Redis failed
    throttle.hit("1.1.1.1", "alice")
    throttle.hit("1.1.1.1", "alice")
    with pytest.raises(Throttled):
        throttle.check("1.1.1.1", "alice")
    again = limiter.acquire(users.id)
    with pytest.raises(RateLimited):
        limiter.acquire(users.id)
    again.release()
    assert limiter.active(users.id) == 0
    limiter.close()
