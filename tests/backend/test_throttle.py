from __future__ import annotations

import limits.storage.memory
import pytest

from backend.errors import Throttled
from backend.throttle import LoginThrottle


class FakeTime:
    """Replaces the `time` module inside limits' memory storage, so windows move without sleeping."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(limits.storage.memory, "time", fake)
    return fake


def test_per_account_and_ip_window_counts_failures_and_names_any_case(clock):
    throttle = LoginThrottle(login_per_account_ip="3/5 minutes", login_per_ip="100/5 minutes", clock=clock.time)
    for name in ("alice", "ALICE", " Alice"):
        throttle.check("1.1.1.1", name)
        throttle.hit("1.1.1.1", name)
    with pytest.raises(Throttled) as caught:
        throttle.check("1.1.1.1", "alice")
    assert caught.value.code == "throttled" and caught.value.retry_after_s == 300
    throttle.check("1.1.1.1", "bob")  # other names are free
    throttle.check("2.2.2.2", "alice")  # the owner elsewhere is not locked out by this guesser


def test_an_attacker_cannot_lock_the_owner_out_cheaply(clock):
    throttle = LoginThrottle(clock=clock.time)  # the defaults
    for _ in range(1000):  # renewing the attack forever from one address
        try:
            throttle.check("6.6.6.6", "admin")
        except Throttled:
            continue
        throttle.hit("6.6.6.6", "admin")
    with pytest.raises(Throttled):
        throttle.check("6.6.6.6", "admin")
    throttle.check("10.0.0.1", "admin")  # the owner's correct password is still checked


def test_the_global_per_account_ceiling_holds_distributed_guessing(clock):
    throttle = LoginThrottle(login_per_account_ip="2/5 minutes", login_per_account="5/5 minutes",
                             login_per_ip="100/5 minutes", clock=clock.time)
    for i in range(5):
        throttle.hit(f"9.0.0.{i}", "alice")
    with pytest.raises(Throttled):
        throttle.check("9.0.0.99", "alice")  # a fresh address, but the account is saturated
    throttle.succeeded("9.0.0.99", "alice")  # the owner's success does not reset the attackers'
    with pytest.raises(Throttled):
        throttle.check("9.0.0.98", "alice")
    throttle.check("9.0.0.98", "bob")


def test_retry_after_counts_down_and_the_window_moves(clock):
    throttle = LoginThrottle(login_per_account_ip="2/5 minutes", login_per_ip="100/5 minutes", clock=clock.time)
    throttle.hit("ip", "alice")
    clock.now += 100
    throttle.hit("ip", "alice")
    clock.now += 50
    with pytest.raises(Throttled) as caught:
        throttle.check("ip", "alice")
    assert caught.value.retry_after_s == 150  # the first hit leaves the window at +300
    clock.now += 151
    throttle.check("ip", "alice")  # one hit left in the window: allowed again
    throttle.hit("ip", "alice")
    with pytest.raises(Throttled):
        throttle.check("ip", "alice")


def test_per_ip_limit_spans_accounts(clock):
    throttle = LoginThrottle(login_per_account_ip="100/5 minutes", login_per_ip="3/5 minutes", clock=clock.time)
    for i in range(3):
        throttle.hit("9.9.9.9", f"user{i}")
    with pytest.raises(Throttled):
        throttle.check("9.9.9.9", "fresh-name")
    throttle.check("8.8.8.8", "fresh-name")


def test_success_clears_the_account_from_that_ip_but_not_the_ip(clock):
    throttle = LoginThrottle(login_per_account_ip="2/5 minutes", login_per_ip="3/5 minutes", clock=clock.time)
    throttle.hit("ip", "alice")
    throttle.hit("ip", "alice")
    throttle.succeeded("ip", "alice")
    throttle.check("ip", "alice")
    throttle.hit("ip", "alice")
    with pytest.raises(Throttled):
        throttle.check("ip", "bob")  # the IP window holds 3 hits


def test_signups_have_their_own_per_ip_window(clock):
    throttle = LoginThrottle(signup_per_ip="2/hour", clock=clock.time)
    throttle.hit("ip", "a", "signup")
    throttle.hit("ip", "b", "signup")
    with pytest.raises(Throttled) as caught:
        throttle.check("ip", "c", "signup")
    assert caught.value.retry_after_s == 3600
    throttle.check("ip", "c", "login")  # log-ins are counted apart
    with pytest.raises(ValueError):
        throttle.check("ip", "c", "reset")


def test_default_limits(clock):
    throttle = LoginThrottle(clock=clock.time)
    for _ in range(10):
        throttle.check("ip", "alice")
        throttle.hit("ip", "alice")
    with pytest.raises(Throttled):
        throttle.check("ip", "alice")
    for i in range(89):  # 10 per (account, IP); 100 per account in all
        throttle.hit(f"ip{i}", "alice")
    throttle.check("ip-fresh", "alice")
    throttle.hit("ip-fresh", "alice")
    with pytest.raises(Throttled):
        throttle.check("ip-other", "alice")
