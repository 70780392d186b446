"""LoginThrottle with REDIS_URL: two throttles on one Redis (processes A and B, each with its own
RedisLink) count failed log-ins together, so the limits hold whichever process gets the attempt.
The defaults: 30 failed log-ins per IP, 10 per (account, IP), per 5 minutes."""

from __future__ import annotations

import pytest

from backend.cluster import RedisLink
from backend.errors import Throttled
from backend.throttle import LoginThrottle


@pytest.fixture
def pair(redis_url):
    links = [RedisLink(redis_url, "a"), RedisLink(redis_url, "b")]
    yield [LoginThrottle(redis_link=link) for link in links]
    for link in links:
        link.sync.close()


def fail_login(throttle: LoginThrottle, ip: str, name: str) -> None:
    throttle.check(ip, name)
    throttle.hit(ip, name)


def test_the_31st_failed_log_in_from_one_ip_is_refused_whichever_process_gets_it(pair):
    a, b = pair
    for i in range(30):  # spraying 30 account names, alternating between the processes
        fail_login((a, b)[i % 2], "6.6.6.6", f"user{i}")
    for throttle in (a, b):
        with pytest.raises(Throttled) as caught:
            throttle.check("6.6.6.6", "user-fresh")
        assert 1 <= caught.value.retry_after_s <= 300
    a.check("7.7.7.7", "user-fresh")  # other addresses are not held


def test_the_11th_failed_log_in_on_one_account_from_one_ip_is_refused_on_either(pair):
    a, b = pair
    for i in range(10):
        fail_login((a, b)[i % 2], "6.6.6.6", "alice")
    for throttle in (a, b):
        with pytest.raises(Throttled):
            throttle.check("6.6.6.6", "ALICE")
    b.succeeded("6.6.6.6", "alice")  # the owner's success on B clears the window for A too
    a.check("6.6.6.6", "alice")


def test_sign_ups_are_counted_across_processes(pair):
    a, b = pair
    for i in range(5):  # 5 per hour per IP
        (a, b)[i % 2].check("5.5.5.5", f"new{i}", "signup")
        (a, b)[i % 2].hit("5.5.5.5", f"new{i}", "signup")
    with pytest.raises(Throttled):
        b.check("5.5.5.5", "new5", "signup")


def test_without_redis_two_processes_count_apart():
    """Today's per-process memory: what the shared storage fixes (40 alternating never hit)."""
    a, b = LoginThrottle(), LoginThrottle()
    for i in range(40):
        fail_login((a, b)[i % 2], "6.6.6.6", f"user{i}")
