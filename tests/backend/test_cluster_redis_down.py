"""Redis down (docs/ARCHITECTURE.md, "One process, and beyond it"): the log-in throttle fails
closed, the limiter refuses with 503 `unavailable` (Retry-After) rather than let a generation run
unlimited, releasing never raises, and a Redis that comes back is used again by the same objects.

The tests that stop Redis start their own redis-server (the shared fixture lives for the session).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest

from backend.auth import AuthService
from backend.cluster import RedisLink, leases
from backend.errors import Throttled
from backend.limits import LimitsUnavailable, Overloaded, RateLimited, UsageLimiter
from backend.runtime_settings import RuntimeSettingsStore
from backend.settings import Settings
from backend.throttle import LoginThrottle


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class OwnRedis:
    """A redis-server this test may stop and start again on the same port."""

    def __init__(self, workdir) -> None:
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            pytest.skip("redis-server is not installed")
        self.port = closed_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    pytest.fail("redis-server did not start")
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


@pytest.fixture
def own_redis(tmp_path):
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.stop()


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
    throttle = LoginThrottle(redis_link=RedisLink(f"redis://127.0.0.1:{closed_port()}/0", "a"))
    error = unavailable(throttle.check, "1.1.1.1", "alice")
    assert "Try again shortly" in error.message and "Logging in" in error.message
    unavailable(throttle.hit, "1.1.1.1", "alice")
    assert "Signing up" in unavailable(throttle.check, "1.1.1.1", "alice", "signup").message
    throttle.succeeded("1.1.1.1", "alice")  # the log-in succeeded already: never raises


def test_the_limiter_refuses_without_redis_and_holds_nothing(session_factory, store, users):
    limiter = UsageLimiter(session_factory, store, redis_link=RedisLink(f"redis://127.0.0.1:{closed_port()}/0", "a"))
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
