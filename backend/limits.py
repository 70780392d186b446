"""Per-user limits in front of the engine (admission control: backend/admission.py).

:class:`UsageLimiter` enforces the admin's per-user limits (read from the
:class:`~backend.runtime_settings.RuntimeSettingsStore` on every call, so a change applies to the
next request): requests per minute (a moving window through the ``limits`` library), tokens per
UTC day (the sum of the user's ``UsageRecord`` rows) and concurrent generations. A refusal is
:class:`RateLimited` with the exact whole seconds until the same request would pass.

The admission queue (backend.admission.AdmissionController) refuses with :class:`Overloaded`,
defined here with the other refusals.

Several processes (docs/ARCHITECTURE.md, "One process, and beyond it"): given the process's
:class:`~backend.cluster.RedisLink` (REDIS_URL), the per-minute window lives in Redis (the
``limits`` library's Redis storage, :mod:`backend.cluster.limits_store`) and the concurrency count
is a set of leases there (:mod:`backend.cluster.leases`) that expire when their process dies, so
both hold across processes; the daily token budget is read from the shared database either way.
While Redis does not answer, :meth:`UsageLimiter.acquire` refuses with :class:`LimitsUnavailable`
(503, code ``unavailable``, Retry-After) rather than generate without limits; it uses Redis again
as soon as it answers. Without a link everything stays in this process's memory, as before.
"""

from __future__ import annotations

import math
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Callable

from limits import RateLimitItemPerMinute
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import MovingWindowRateLimiter
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from backend.cluster.leases import HEARTBEAT_S, LEASE_TTL_S, GenerationLeases
from backend.cluster.limits_store import STORAGE_ERRORS, shared_storage
from backend.cluster.redis_link import RedisLink, RedisUnavailable
from backend.errors import DomainError
from backend.models import UsageRecord
from backend.runtime_settings import RuntimeSettings, RuntimeSettingsStore

# A refusal for concurrency has no known end (a reply finishes when it finishes): suggest this.
CONCURRENCY_RETRY_AFTER_S = 2
# Redis (the shared limits) does not answer: suggest this wait.
UNAVAILABLE_RETRY_AFTER_S = 5
LIMIT_RPM = "requests_per_minute"
LIMIT_TOKENS = "tokens_per_day"
LIMIT_CONCURRENT = "max_concurrent_generations"
USAGE_SOURCES = ("chat", "api")


class RateLimited(DomainError):
    """A per-user limit refused the request.

    Attributes:
        retry_after_s: whole seconds (>= 1) until a retry can pass (HTTP Retry-After).
        limit: which limit: "requests_per_minute" | "tokens_per_day" | "max_concurrent_generations".
    """

    code = "rate_limited"
    default_message = "too many requests"

    def __init__(self, limit: str, retry_after_s: int, message: str | None = None) -> None:
        self.limit = limit
        self.retry_after_s = max(1, int(retry_after_s))
        super().__init__(message or f"Too many requests. Try again in {self.retry_after_s} s.")


class Overloaded(DomainError):
    """The admission queue is full; nothing was queued. retry_after_s: whole seconds (>= 1)."""

    code = "overloaded"
    default_message = "the server is busy"

    def __init__(self, retry_after_s: int, message: str | None = None) -> None:
        self.retry_after_s = max(1, int(retry_after_s))
        super().__init__(message or f"The server is busy. Try again in {self.retry_after_s} s.")


class LimitsUnavailable(RedisUnavailable, Overloaded):
    """The shared limits or throttles (Redis) cannot be checked, so the request is refused rather
    than let through unlimited. Code ``unavailable`` (HTTP 503 with Retry-After; a chat
    ``error`` frame with retry_after_s); an :class:`Overloaded`, so every path that answers
    "busy" answers this too. retry_after_s: whole seconds (>= 1)."""

    code = "unavailable"
    default_message = "The server is busy for a moment. Try again shortly."

    def __init__(self, retry_after_s: int = UNAVAILABLE_RETRY_AFTER_S, message: str | None = None) -> None:
        Overloaded.__init__(self, retry_after_s, message or self.default_message)


def seconds_to_next_utc_midnight(now: float) -> int:
    """Whole seconds from `now` (Unix seconds) to the next 00:00 UTC, rounded up; 1..86400."""
    day = datetime.fromtimestamp(now, tz=timezone.utc).date()
    midnight = datetime(day.year, day.month, day.day, tzinfo=timezone.utc) + timedelta(days=1)
    return max(1, math.ceil(midnight.timestamp() - now))


def utc_day_start(now: float) -> datetime:
    day = datetime.fromtimestamp(now, tz=timezone.utc).date()
    return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)


def record_usage(
    session_factory: sessionmaker[Session], user_id: str, prompt_tokens: int, completion_tokens: int,
    source: str, created_at: datetime | None = None,
) -> None:
    """Store one UsageRecord (a sync DB write). source: "chat" | "api"; created_at: now (UTC)
    unless given. Raises ValueError for an unknown source."""
    if source not in USAGE_SOURCES:
        raise ValueError(f"source must be one of {USAGE_SOURCES}, got {source!r}")
    with session_factory() as db:
        row = UsageRecord(
            user_id=user_id, source=source, prompt_tokens=max(0, int(prompt_tokens or 0)),
            completion_tokens=max(0, int(completion_tokens or 0)),
        )  # fmt: skip
        if created_at is not None:
            row.created_at = created_at
        db.add(row)
        db.commit()


class UsageLimiter:
    """Per-user limits; see the module docstring.

    Args:
        session_factory: for the daily token sums and the usage records (sync calls: run
            acquire() and Lease.record() off the event loop).
        store: where the limits are read, on every acquire().
        clock: Unix seconds; it dates usage records and defines the UTC day. The per-minute
            window is kept by the ``limits`` library on its own wall clock.
        storage: a ``limits`` storage (default: in-process memory, or Redis with `redis_link`).
        redis_link: share the per-minute window and the concurrency count with every process on
            this Redis (None: this process's memory).
        lease_ttl_s, heartbeat_s: with `redis_link`, how long a lease outlives its last renewal
            (seconds; the bound on a dead process's generations still counting) and how often
            the process renews the leases it holds.
    """

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        store: RuntimeSettingsStore,
        clock: Callable[[], float] = time.time,
        storage: Storage | str | None = None,
        redis_link: RedisLink | None = None,
        lease_ttl_s: float = LEASE_TTL_S,
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:
        self._sessions = session_factory
        self._store = store
        self._clock = clock
        if isinstance(storage, str):
            storage = storage_from_string(storage)
        if storage is None:
            storage = shared_storage(redis_link) if redis_link is not None else MemoryStorage()
        self._window = MovingWindowRateLimiter(storage)
        self._leases = GenerationLeases(redis_link, lease_ttl_s, heartbeat_s) if redis_link is not None else None
        self._lock = threading.Lock()
        self._active: dict[str, int] = {}

    @property
    def shared(self) -> bool:
        """The concurrency count lives in Redis (several processes)."""
        return self._leases is not None

    def acquire(self, user_id: str) -> Lease:
        """Count one request for `user_id` and take a concurrency slot.

        Checked in this order, so a refused request consumes nothing: concurrency, tokens today,
        then requests in the last 60 s (the one check that consumes). With Redis the slot is
        taken first (atomically, across processes) and given back when a later check refuses.

        Raises:
            RateLimited: with retry_after_s = 2 for concurrency, the seconds to the next UTC
                midnight for the daily tokens, and the seconds until the oldest request of the
                window is 60 s old for the per-minute limit.
            LimitsUnavailable: with Redis, Redis did not answer (nothing is held).
        """
        limits = self._store.get()
        if self._leases is not None:
            return self._acquire_shared(user_id, limits)
        with self._lock:
            concurrent = limits.max_concurrent_generations
            if concurrent and self._active.get(user_id, 0) >= concurrent:
                raise _concurrency_refused(concurrent)
            self._check_tokens(user_id, limits)
            self._hit_window(user_id, limits)
            self._active[user_id] = self._active.get(user_id, 0) + 1
        return Lease(self, user_id)

    def _acquire_shared(self, user_id: str, limits: RuntimeSettings) -> Lease:
        assert self._leases is not None
        concurrent = limits.max_concurrent_generations
        try:
            lease_id = self._leases.try_acquire(user_id, concurrent)
        except RedisUnavailable as exc:
            raise LimitsUnavailable() from exc
        if lease_id is None:
            raise _concurrency_refused(concurrent)
        try:
            self._check_tokens(user_id, limits)
            self._hit_window(user_id, limits)
        except BaseException:
            self._leases.release(user_id, lease_id)
            raise
        return Lease(self, user_id, lease_id)

    def _check_tokens(self, user_id: str, limits: RuntimeSettings) -> None:
        if limits.tokens_per_day:
            now = self._clock()
            used = self.tokens_today(user_id, now)
            if used >= limits.tokens_per_day:
                raise RateLimited(
                    LIMIT_TOKENS, seconds_to_next_utc_midnight(now),
                    f"Daily token limit reached ({used:,} of {limits.tokens_per_day:,} tokens "
                    "today); it resets at 00:00 UTC.",
                )  # fmt: skip

    def _hit_window(self, user_id: str, limits: RuntimeSettings) -> None:
        rpm = limits.requests_per_minute
        if not rpm:
            return
        item = RateLimitItemPerMinute(rpm)
        try:
            if self._window.hit(item, "user", user_id):
                return
            reset_at = self._window.get_window_stats(item, "user", user_id).reset_time
        except STORAGE_ERRORS as exc:
            raise LimitsUnavailable() from exc
        retry = max(1, math.ceil(reset_at - time.time()))
        raise RateLimited(LIMIT_RPM, retry, f"At most {rpm} request{'' if rpm == 1 else 's'} per minute.")

    def tokens_today(self, user_id: str, now: float | None = None) -> int:
        """Prompt + completion tokens `user_id` used since 00:00 UTC (of `now`, Unix seconds)."""
        start = utc_day_start(self._clock() if now is None else now)
        with self._sessions() as db:
            total = db.scalar(
                select(func.coalesce(func.sum(UsageRecord.prompt_tokens + UsageRecord.completion_tokens), 0))
                .where(UsageRecord.user_id == user_id, UsageRecord.created_at >= start)
            )  # fmt: skip
        return int(total or 0)

    def active(self, user_id: str) -> int:
        """Generations `user_id` holds a lease for now: in this process, or with Redis in all
        processes together (raises LimitsUnavailable when Redis does not answer)."""
        if self._leases is not None:
            try:
                return self._leases.count(user_id)
            except RedisUnavailable as exc:
                raise LimitsUnavailable() from exc
        with self._lock:
            return self._active.get(user_id, 0)

    def record(self, user_id: str, prompt_tokens: int, completion_tokens: int, source: str) -> None:
        """Store one UsageRecord dated by the clock. source: "chat" | "api"."""
        created = datetime.fromtimestamp(self._clock(), tz=timezone.utc)
        record_usage(self._sessions, user_id, prompt_tokens, completion_tokens, source, created)

    def close(self) -> None:
        """Stop renewing leases (shutdown). A no-op without Redis."""
        if self._leases is not None:
            self._leases.close()

    def _release(self, lease: Lease) -> None:
        with self._lock:
            if lease._released:
                return
            lease._released = True
            if lease.lease_id is None:
                user_id = lease.user_id
                left = self._active.get(user_id, 0) - 1
                if left > 0:
                    self._active[user_id] = left
                else:
                    self._active.pop(user_id, None)
                return
        assert self._leases is not None
        self._leases.release(lease.user_id, lease.lease_id)  # never raises; outside the lock


def _concurrency_refused(concurrent: int) -> RateLimited:
    return RateLimited(
        LIMIT_CONCURRENT, CONCURRENCY_RETRY_AFTER_S,
        f"You already have {concurrent} {'reply' if concurrent == 1 else 'replies'} "
        "generating; wait for one to finish.",
    )  # fmt: skip


class Lease:
    """One admitted request's hold on its user's limits. lease_id: its Redis lease (None: a
    slot in this process's memory)."""

    def __init__(self, limiter: UsageLimiter, user_id: str, lease_id: str | None = None) -> None:
        self._limiter = limiter
        self.user_id = user_id
        self.lease_id = lease_id
        self._released = False
        self._recorded = False

    def record(self, prompt_tokens: int, completion_tokens: int, source: str) -> None:
        """Store the tokens this request used (once; later calls are ignored). A sync DB write."""
        if self._recorded:
            return
        self._recorded = True
        self._limiter.record(self.user_id, prompt_tokens, completion_tokens, source)

    def release(self) -> None:
        """Free the concurrency slot, exactly once (later calls do nothing). Thread-safe; never
        raises (with Redis down the lease expires within its TTL)."""
        self._limiter._release(self)
