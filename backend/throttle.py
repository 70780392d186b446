"""Throttling of log-in and sign-up attempts against password guessing and account spam.

Moving windows through the `limits` library (:class:`limits.strategies.MovingWindowRateLimiter`):

- failed log-ins per account name: :data:`LOGIN_PER_ACCOUNT` (10 per 5 minutes);
- failed log-ins per client IP: :data:`LOGIN_PER_IP` (30 per 5 minutes);
- sign-up attempts per client IP: :data:`SIGNUP_PER_IP` (5 per hour).

The per-account key counts names whether or not an account exists, and a throttled attempt is
refused before any password check, so the answer never tells whether an account exists. A
successful log-in clears its account's failures (not its IP's).

Cross-process seam: the counters live in this process's memory (``memory://``). Several server
processes each count separately; pass a shared storage URI (``redis://...``, see the `limits`
documentation) to share them.
"""

from __future__ import annotations

import math
import time
from typing import Callable

from limits import RateLimitItem, parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

from backend.auth import username_key
from backend.errors import Throttled

LOGIN_PER_ACCOUNT = "10/5 minutes"
LOGIN_PER_IP = "30/5 minutes"
SIGNUP_PER_IP = "5/hour"
ACTIONS = ("login", "signup")


class LoginThrottle:
    """Counts failed log-ins and sign-up attempts per IP and per account name.

    Args:
        login_per_account, login_per_ip, signup_per_ip: `limits` rate strings ("10/5 minutes").
        storage_uri: a `limits` storage URI; the default keeps counters in this process.
        clock: seconds since the epoch, the clock the storage uses (for Retry-After).
    """

    def __init__(
        self,
        login_per_account: str = LOGIN_PER_ACCOUNT,
        login_per_ip: str = LOGIN_PER_IP,
        signup_per_ip: str = SIGNUP_PER_IP,
        storage_uri: str = "memory://",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._limiter = MovingWindowRateLimiter(storage_from_string(storage_uri))
        self._clock = clock
        self._rules: dict[str, list[tuple[str, RateLimitItem]]] = {
            "login": [("account", parse(login_per_account)), ("ip", parse(login_per_ip))],
            "signup": [("ip", parse(signup_per_ip))],
        }

    def _keys(self, action: str, ip: str, username: str) -> list[tuple[RateLimitItem, tuple[str, ...]]]:
        if action not in self._rules:
            raise ValueError(f"action must be one of {ACTIONS}, got {action!r}")
        values = {"ip": ip or "unknown", "account": username_key(username)[:64]}
        return [(item, (action, scope, values[scope])) for scope, item in self._rules[action]]

    def check(self, ip: str, username: str, action: str = "login") -> None:
        """Raise Throttled when any window of `action` is full for this IP or account name.

        Raises:
            Throttled: `.retry_after_s` is the wait until the oldest counted attempt leaves
                the fullest window (whole seconds, >= 1).
        """
        waits = []
        for item, identifiers in self._keys(action, ip, username):
            if not self._limiter.test(item, *identifiers):
                stats = self._limiter.get_window_stats(item, *identifiers)
                waits.append(math.ceil(stats.reset_time - self._clock()))
        if waits:
            raise Throttled(max(1, max(waits)))

    def hit(self, ip: str, username: str, action: str = "login") -> None:
        """Record one failed log-in (action "login") or one sign-up attempt ("signup")."""
        for item, identifiers in self._keys(action, ip, username):
            self._limiter.hit(item, *identifiers)

    def succeeded(self, ip: str, username: str) -> None:
        """A log-in succeeded: forget the account's failures (the IP's stay counted)."""
        for item, identifiers in self._keys("login", ip, username):
            if identifiers[1] == "account":
                self._limiter.clear(item, *identifiers)
