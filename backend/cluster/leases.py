"""Per-user generation leases in Redis: a concurrency limit that holds across processes and
forgets a dead process's generations by itself.

Each user has one sorted set, ``crescent:leases:<user id>``, of lease ids (``<instance>:<hex>``)
scored by their expiry in Redis server milliseconds (``TIME``, so the processes' clocks do not
matter). Taking a lease is one Lua script, atomic on the server: drop the expired members, count
the rest, add the new one with expiry now + TTL unless the count is at the limit. Two processes
together therefore never hold more than the limit.

While a process holds leases, a daemon thread renews them every ``heartbeat_s`` seconds (one
script per user: members still present get expiry now + TTL; a member already gone is not
brought back, so a renewal racing a release cannot resurrect it). A process killed with SIGKILL
stops renewing, and its leases drop out within ``ttl_s`` seconds. The thread stops when the
process holds no lease and starts again with the next one.

Release is one ``ZREM``. When Redis is down at that moment the lease is forgotten locally (no
longer renewed) and expires within the TTL. After Redis loses its data (a restart without
persistence), the generations running then are no longer counted until they end.

Errors: :meth:`GenerationLeases.try_acquire` and :meth:`GenerationLeases.count` raise
:class:`~backend.cluster.redis_link.RedisUnavailable` when Redis does not answer; release and
the heartbeat log and carry on.

Source: Redis sorted sets and EVAL (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/),
redis-py ``register_script``.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections import defaultdict

import redis

from backend.cluster.redis_link import RedisLink, RedisUnavailable

log = logging.getLogger(__name__)

LEASE_TTL_S = 15.0
HEARTBEAT_S = 5.0
# After Redis failed to answer, acquiring fails at once for this long (seconds) instead of
# waiting out the socket timeout again: the callers run on the event loop.
FAIL_FAST_S = 2.0

# The server's clock in milliseconds; every script reads it the same way.
_NOW_MS = "local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
# Keep the key only as long as its latest member lives.
_EXPIRE_KEY = ("local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES') "
               "if last[2] then redis.call('PEXPIREAT', KEYS[1], math.floor(tonumber(last[2])) + 1) end ")

# KEYS[1] the user's set; ARGV limit (0: none), ttl ms, lease id. Returns 1 taken, 0 refused.
_ACQUIRE = _NOW_MS + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local limit = tonumber(ARGV[1])
if limit > 0 and redis.call('ZCARD', KEYS[1]) >= limit then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
""" + _EXPIRE_KEY + "return 1"

# KEYS[1] the user's set; ARGV ttl ms, then lease ids. Returns the ids no longer there.
_RENEW = _NOW_MS + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local gone = {}
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
  else
    table.insert(gone, ARGV[i])
  end
end
""" + _EXPIRE_KEY + "return gone"

# KEYS[1] the user's set. Returns the members not yet expired.
_COUNT = _NOW_MS + "return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')"


class GenerationLeases:
    """The Redis side of :class:`backend.limits.UsageLimiter`'s concurrency limit (thread-safe).

    Args:
        link: the process's Redis connection.
        ttl_s: seconds a lease lives without renewal (how long a dead process's generations
            still count). heartbeat_s: seconds between renewals (< ttl_s; a third of it leaves
            two missed beats of slack).
    """

    def __init__(self, link: RedisLink, ttl_s: float = LEASE_TTL_S, heartbeat_s: float = HEARTBEAT_S) -> None:
        if not 0 < heartbeat_s < ttl_s:
            raise ValueError("need 0 < heartbeat_s < ttl_s")
        self._link = link
        self.ttl_s = ttl_s
        self.heartbeat_s = heartbeat_s
        client = link.sync
        self._acquire = client.register_script(_ACQUIRE)
        self._renew = client.register_script(_RENEW)
        self._count = client.register_script(_COUNT)
        self._lock = threading.Lock()
        self._held: dict[str, str] = {}  # lease id -> user id, the leases this process renews
        self._releasing: list[tuple[str, str]] = []  # (user id, lease id) to remove from Redis
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._down_until = 0.0  # time.monotonic() before which Redis is taken as down
        self._failing = False
        self.renewals = 0  # heartbeat rounds that reached Redis (for tests and operators)

    def key(self, user_id: str) -> str:
        return self._link.key("leases", user_id)

    @property
    def _ttl_ms(self) -> int:
        return max(1, int(self.ttl_s * 1000))

    def try_acquire(self, user_id: str, limit: int) -> str | None:
        """Take one lease of `user_id` unless he holds `limit` (0: no limit) unexpired ones in
        all processes together. Returns the lease id, or None when at the limit.

        Raises:
            RedisUnavailable: Redis did not answer (nothing is held; a lease the server added
                before the answer was lost expires within the TTL).
        """
        if time.monotonic() < self._down_until:
            raise RedisUnavailable()
        self._flush_releases()  # this process's own releases count before its next acquire
        lease_id = f"{self._link.instance}:{secrets.token_hex(8)}"
        try:
            taken = self._acquire(keys=[self.key(user_id)], args=[max(0, int(limit)), self._ttl_ms, lease_id])
        except redis.RedisError as exc:
            self._down_until = time.monotonic() + FAIL_FAST_S
            raise RedisUnavailable() from exc
        if not taken:
            return None
        with self._lock:
            self._held[lease_id] = user_id
            self._ensure_heartbeat()
        return lease_id

    def release(self, user_id: str, lease_id: str) -> None:
        """Give the lease back (a no-op for one not held). Never raises and never waits for
        Redis (it is called on the event loop): the heartbeat thread removes the lease at once,
        and this process's next acquire removes it first; when Redis does not answer, the lease
        is no longer renewed and expires within the TTL."""
        with self._lock:
            if self._held.pop(lease_id, None) is None:
                return
            self._releasing.append((user_id, lease_id))
            self._ensure_heartbeat()
        self._wake.set()

    def _ensure_heartbeat(self) -> None:
        """Start the heartbeat thread if none runs (call with the lock held)."""
        if self._thread is None and not self._stop.is_set():
            self._thread = threading.Thread(target=self._beat, name="lease-heartbeat", daemon=True)
            self._thread.start()

    def _flush_releases(self) -> None:
        """Remove the released leases from Redis (never raises)."""
        with self._lock:
            batch, self._releasing = self._releasing, []
        if not batch:
            return
        try:
            pipe = self._link.sync.pipeline(transaction=False)
            for user_id, lease_id in batch:
                pipe.zrem(self.key(user_id), lease_id)
            pipe.execute()
        except redis.RedisError:
            log.warning("releasing %d leases failed (Redis unavailable); they expire within %.0f s",
                        len(batch), self.ttl_s)

    def count(self, user_id: str) -> int:
        """Unexpired leases of `user_id`, all processes together. Raises RedisUnavailable."""
        self._flush_releases()
        try:
            return int(self._count(keys=[self.key(user_id)], args=[]))
        except redis.RedisError as exc:
            raise RedisUnavailable() from exc

    def held(self) -> int:
        """Leases this process holds (and renews)."""
        with self._lock:
            return len(self._held)

    def renew(self) -> None:
        """Push the expiry of every lease this process holds to now + TTL (one heartbeat).
        Never raises; a failure is logged once per outage."""
        with self._lock:
            by_user: dict[str, list[str]] = defaultdict(list)
            for lease_id, user_id in self._held.items():
                by_user[user_id].append(lease_id)
        if not by_user:
            return
        try:
            pipe = self._link.sync.pipeline(transaction=False)
            for user_id, ids in by_user.items():
                self._renew(keys=[self.key(user_id)], args=[self._ttl_ms, *ids], client=pipe)
            renewed = pipe.execute()
        except redis.RedisError as exc:
            if not self._failing:
                log.warning("renewing %d generation leases failed (%s); retrying every %.1f s",
                            sum(map(len, by_user.values())), exc, self.heartbeat_s)
            self._failing = True
            return
        if self._failing:
            log.info("generation leases renewed again")
        self._failing = False
        self.renewals += 1
        with self._lock:  # gone and still held: expired (a release racing this beat is not)
            lost = sum(1 for gone in renewed for lease_id in gone if _text(lease_id) in self._held)
        if lost:
            log.warning("%d generation leases had expired before renewal (Redis unreachable for "
                        "longer than %.0f s, or its data lost); they are no longer counted", lost, self.ttl_s)

    def close(self) -> None:
        """Stop the heartbeat (the process is shutting down); held leases expire by TTL unless
        released."""
        self._stop.set()
        self._wake.set()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout=self.heartbeat_s + 5)
        self._flush_releases()

    def _beat(self) -> None:
        next_renewal = time.monotonic() + self.heartbeat_s
        while not self._stop.is_set():
            self._wake.wait(max(0.0, next_renewal - time.monotonic()))
            self._wake.clear()
            self._flush_releases()
            if time.monotonic() < next_renewal:
                continue
            with self._lock:
                if not self._held and not self._releasing:
                    self._thread = None  # the next lease starts a new one
                    return
            self.renew()
            next_renewal = time.monotonic() + self.heartbeat_s
        self._flush_releases()
        with self._lock:
            self._thread = None


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
