"""Throttling of log-in and sign-up attempts against password guessing and account spam.

Moving windows through the `limits` library (:class:`limits.strategies.MovingWindowRateLimiter`):

- failed log-ins per (account name, client IP): :data:`LOGIN_PER_ACCOUNT_IP` (10 per 5 minutes):
  guessing one account from one place;
- failed log-ins per account name from everywhere: :data:`LOGIN_PER_ACCOUNT` (100 per 5 minutes):
  a ceiling on distributed guessing;
- failed log-ins per client IP: :data:`LOGIN_PER_IP` (30 per 5 minutes): one place spraying
  many accounts;
- sign-up attempts per client IP: :data:`SIGNUP_PER_IP` (5 per hour).

Why keyed so: a window per account name alone lets anyone lock the owner out (10 wrong
passwords typed as "admin" from anywhere blocked the admin's correct one, renewable forever).
Keyed by (account, IP), an attacker's failures block only the attacker's own address; locking
the owner out through the global per-account ceiling needs at least ten addresses working
together (each is held to 10 tries per 5 minutes on that account), and a successful log-in
clears the (account, IP) window only, never the global one nor the IP's.

The client IP must be the real client's: behind a reverse proxy every request would otherwise
share the proxy's address (and the per-IP window would block everyone). Run with uvicorn's
proxy headers on and the proxy's address trusted: ``FORWARDED_ALLOW_IPS=<proxy ip>`` (see the
README); ``python -m web`` passes ``proxy_headers=True`` and that list to uvicorn.

The keys count names whether or not an account exists, and a throttled attempt is refused
before any password check, so the answer never tells whether an account exists.

Several processes (docs/ARCHITECTURE.md, "One process, and beyond it"): given the process's
:class:`~backend.cluster.RedisLink` (REDIS_URL), the windows live in Redis through the `limits`
library's Redis storage (:mod:`backend.cluster.limits_store`), so the 31st failed log-in from one
IP is refused whichever process gets it. While Redis does not answer, throttling fails closed:
:meth:`LoginThrottle.check` and :meth:`LoginThrottle.hit` raise
:class:`~backend.limits.LimitsUnavailable` (503, Retry-After, "try again shortly"), so no attempt
is checked unthrottled; :meth:`LoginThrottle.succeeded` only logs (clearing a window is a
courtesy to the owner, and the log-in already succeeded). Redis is used again as soon as it
answers. Without a link the counters live in this process's memory (``memory://``), as before.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Callable

from limits import RateLimitItem, parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

from backend.auth import username_key
from backend.cluster.limits_store import STORAGE_ERRORS, shared_storage
from backend.cluster.redis_link import RedisLink
from backend.errors import Throttled
from backend.limits import LimitsUnavailable

log = logging.getLogger(__name__)

LOGIN_PER_ACCOUNT_IP = "10/5 minutes"
LOGIN_PER_ACCOUNT = "100/5 minutes"
LOGIN_PER_IP = "30/5 minutes"
SIGNUP_PER_IP = "5/hour"
ACTIONS = ("login", "signup")
UNAVAILABLE_MESSAGES = {
    "login": "Logging in is paused for a moment (the server cannot check its limits). Try again shortly.",
    "signup": "Signing up is paused for a moment (the server cannot check its limits). Try again shortly.",
}


class LoginThrottle:
    """Counts failed log-ins per (account, IP), per account and per IP, and sign-ups per IP.

    Args:
        login_per_account_ip, login_per_account, login_per_ip, signup_per_ip: `limits` rate
            strings ("10/5 minutes").
        storage_uri: a `limits` storage URI; the default keeps counters in this process.
        clock: seconds since the epoch, the clock the storage uses (for Retry-After).
        redis_link: keep the windows in this Redis, shared by every process on it (replaces
            `storage_uri`).
    """

    def __init__(
        self,
        login_per_account_ip: str = LOGIN_PER_ACCOUNT_IP,
        login_per_account: str = LOGIN_PER_ACCOUNT,
        login_per_ip: str = LOGIN_PER_IP,
        signup_per_ip: str = SIGNUP_PER_IP,
        storage_uri: str = "memory://",
        clock: Callable[[], float] = time.time,
        redis_link: RedisLink | None = None,
    ) -> None:
        storage = shared_storage(redis_link) if redis_link is not None else storage_from_string(storage_uri)
        self._limiter = MovingWindowRateLimiter(storage)
        self._clock = clock
        self._rules: dict[str, list[tuple[str, RateLimitItem]]] = {
            "login": [
                ("account_ip", parse(login_per_account_ip)),
                ("account", parse(login_per_account)),
                ("ip", parse(login_per_ip)),
            ],
            "signup": [("ip", parse(signup_per_ip))],
        }

    def _keys(self, action: str, ip: str, username: str) -> list[tuple[RateLimitItem, tuple[str, ...]]]:
        if action not in self._rules:
            raise ValueError(f"action must be one of {ACTIONS}, got {action!r}")
        address, account = ip or "unknown", username_key(username)[:64]
        values = {"ip": address, "account": account, "account_ip": f"{account}@{address}"}
        return [(item, (action, scope, values[scope])) for scope, item in self._rules[action]]

    def check(self, ip: str, username: str, action: str = "login") -> None:
        """Raise Throttled when any window of `action` is full for this IP or account name.

        Raises:
            Throttled: `.retry_after_s` is the wait until the oldest counted attempt leaves
                the fullest window (whole seconds, >= 1).
            LimitsUnavailable: the shared storage (Redis) did not answer.
        """
        waits = []
        keys = self._keys(action, ip, username)
        try:
            for item, identifiers in keys:
                if not self._limiter.test(item, *identifiers):
                    stats = self._limiter.get_window_stats(item, *identifiers)
                    waits.append(math.ceil(stats.reset_time - self._clock()))
        except STORAGE_ERRORS as exc:
            raise LimitsUnavailable(message=UNAVAILABLE_MESSAGES[action]) from exc
        if waits:
            raise Throttled(max(1, max(waits)))

    def hit(self, ip: str, username: str, action: str = "login") -> None:
        """Record one failed log-in (action "login") or one sign-up attempt ("signup").

        Raises:
            LimitsUnavailable: the shared storage (Redis) did not answer (refuse the attempt).
        """
        keys = self._keys(action, ip, username)
        try:
            for item, identifiers in keys:
                self._limiter.hit(item, *identifiers)
        except STORAGE_ERRORS as exc:
            raise LimitsUnavailable(message=UNAVAILABLE_MESSAGES[action]) from exc

    def succeeded(self, ip: str, username: str) -> None:
        """A log-in succeeded: forget the failures of this account from this IP (the account's
        global ceiling and the IP's window keep theirs: an attacker's count is not reset by the
        owner's success, nor the owner's by an attacker's). Never raises: with the shared
        storage down, the window is left as it is (logged)."""
        for item, identifiers in self._keys("login", ip, username):
            if identifiers[1] == "account_ip":
                try:
                    self._limiter.clear(item, *identifiers)
                except STORAGE_ERRORS:
                    log.warning("clearing the failed log-ins of a successful log-in failed (Redis unavailable)")
