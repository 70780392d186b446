"""Which server processes are alive, and how busy: each publishes a small snapshot to Redis.

Every process (with REDIS_URL) writes its :class:`InstanceSnapshot` -- instance name, model,
running / waiting requests, KV-cache usage, tokens per second -- under
``crescent:instance:<name>`` every :data:`PUBLISH_INTERVAL_S` seconds with a TTL of
:data:`SNAPSHOT_TTL_S`: a process that dies vanishes from the list within the TTL, one that stops
cleanly removes its key at once. The admin's engine panel lists :meth:`InstanceRegistry.live`.
Without Redis there is no registry and the panel shows the one process it runs in.

Source: Redis ``SET key value EX ttl`` and ``SCAN MATCH`` (https://redis.io/commands/set/,
https://redis.io/commands/scan/) through redis-py's asyncio client.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

import redis

from backend.cluster.redis_link import RedisLink, RedisUnavailable
from backend.metrics import EngineSample
from backend.settings import SettingsError

log = logging.getLogger(__name__)

PUBLISH_INTERVAL_S = 5.0
SNAPSHOT_TTL_S = 15.0  # three missed publications: the process is gone
MAX_INSTANCES = 1000  # a bound on what live() reads, whatever is in Redis


@dataclass(frozen=True)
class InstanceSnapshot:
    """One process's state at `last_seen` (unix seconds).

    running / waiting: requests in the engine / queued (None: the generator reports no stats).
    kv_usage: the KV cache's used fraction in [0, 1] (None: unknown). tokens_per_s: generated
    tokens per second over the last sampling interval (None: no interval yet).
    """

    instance: str
    model: str
    running: int | None
    waiting: int | None
    kv_usage: float | None
    tokens_per_s: float | None
    last_seen: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> InstanceSnapshot | None:
        """The snapshot in `data` (a parsed JSON object), or None when it is not one."""
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                instance=str(data["instance"]),
                model=str(data["model"]),
                running=_optional(data.get("running"), int),
                waiting=_optional(data.get("waiting"), int),
                kv_usage=_optional(data.get("kv_usage"), float),
                tokens_per_s=_optional(data.get("tokens_per_s"), float),
                last_seen=float(data["last_seen"]),
            )
        except (KeyError, TypeError, ValueError):
            return None


def _optional(value: Any, kind: type) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return kind(value)


def snapshot_of(instance: str, model: str, sample: EngineSample | None, now: float) -> InstanceSnapshot:
    """The snapshot of a process whose latest metrics point is `sample` (None: none yet), seen at
    `now` (unix seconds)."""
    return InstanceSnapshot(
        instance=instance, model=model, last_seen=now,
        running=sample.running if sample is not None else None,
        waiting=sample.waiting if sample is not None else None,
        kv_usage=sample.kv_usage if sample is not None else None,
        tokens_per_s=sample.tokens_per_s if sample is not None else None,
    )


def instance_label(instance_name: str, port: int) -> str:
    """The name a process publishes under: CRESCENT_INSTANCE, or ``<host name>:<port>`` when it
    is unset (two unnamed processes on one machine must not share a key)."""
    return instance_name or f"{socket.gethostname()}:{port}"


async def check_same_secret(registry: InstanceRegistry, secret_id: str) -> None:
    """Refuse to join processes that run with another server secret.

    Processes behind one router must share CRESCENT_SECRET_KEY: a page (its CSRF token) served by
    one is posted to another when the router moves its user. The secret's public fingerprint
    (backend.secret_key.ServerKeys.secret_id) is kept under ``crescent:secret-id``; a process
    whose fingerprint differs while another process is live refuses to start. With no process
    live the new fingerprint replaces the old one (the secret was rotated: every process
    restarted with the new one).

    Raises:
        SettingsError: another live process runs with a different secret.
        RedisUnavailable: Redis did not answer.
    """
    key = registry.link.key("secret-id")
    try:
        stored = await registry.link.aio.get(key)
    except redis.RedisError as exc:
        raise RedisUnavailable() from exc
    if stored is not None and stored.decode() != secret_id:
        others = [s.instance for s in await registry.live() if s.instance != registry.instance]
        if others:
            raise SettingsError(
                "CRESCENT_SECRET_KEY (or the secret file) differs from the one of the running processes "
                f"{', '.join(others)} that share this Redis; every process behind the router must use the "
                "same secret (set the same CRESCENT_SECRET_KEY everywhere)")
        log.warning("no process with the previous server secret is running: the secret was rotated")
    try:
        await registry.link.aio.set(key, secret_id)
    except redis.RedisError as exc:
        raise RedisUnavailable() from exc


class InstanceRegistry:
    """Publishes this process's snapshot and lists every live process's.

    Args:
        link: the process's :class:`RedisLink`.
        instance: this process's name (:func:`instance_label`).
        ttl_s: how long a snapshot lives without being published again (seconds).
        clock: wall clock in unix seconds (tests pass a fake one).
    """

    def __init__(self, link: RedisLink, instance: str, ttl_s: float = SNAPSHOT_TTL_S,
                 clock: Callable[[], float] = time.time) -> None:
        self.link = link
        self.instance = instance
        self.ttl_s = ttl_s
        self.clock = clock

    def _key(self, instance: str) -> str:
        return self.link.key("instance", instance)

    async def publish(self, snapshot: InstanceSnapshot) -> None:
        """Store `snapshot` under its instance's key with the TTL.

        Raises:
            RedisUnavailable: Redis did not answer.
        """
        try:
            await self.link.aio.set(self._key(snapshot.instance), json.dumps(snapshot.to_json()),
                                    px=int(self.ttl_s * 1000))
        except redis.RedisError as exc:
            raise RedisUnavailable() from exc

    async def withdraw(self) -> None:
        """Remove this process's snapshot (a clean shutdown); Redis errors are ignored."""
        try:
            await self.link.aio.delete(self._key(self.instance))
        except redis.RedisError:
            log.warning("could not remove instance %s from Redis", self.instance)

    async def live(self) -> list[InstanceSnapshot]:
        """Every process's latest snapshot, sorted by instance name; entries that do not parse
        or are older than the TTL (a clock-skewed writer) are left out.

        Raises:
            RedisUnavailable: Redis did not answer.
        """
        try:
            keys = []
            async for key in self.link.aio.scan_iter(match=self._key("*"), count=100):
                keys.append(key)
                if len(keys) >= MAX_INSTANCES:
                    break
            values = await self.link.aio.mget(keys) if keys else []
        except redis.RedisError as exc:
            raise RedisUnavailable() from exc
        oldest = self.clock() - self.ttl_s
        found = []
        for raw in values:
            if raw is None:  # expired between SCAN and MGET
                continue
            try:
                snapshot = InstanceSnapshot.from_json(json.loads(raw))
            except ValueError:
                snapshot = None
            if snapshot is not None and snapshot.last_seen >= oldest:
                found.append(snapshot)
        return sorted(found, key=lambda s: s.instance)

    async def run(self, snapshot: Callable[[], InstanceSnapshot],
                  interval_s: float = PUBLISH_INTERVAL_S) -> None:
        """Publish ``snapshot()`` now and every `interval_s` seconds until cancelled; a failed
        publication is logged and the next one tried (Redis may come back). On cancellation the
        snapshot is withdrawn.

        On Python 3.11 a cancellation that lands while redis-py waits inside ``asyncio.wait_for``
        can be swallowed (the command completes, the CancelledError is lost; fixed in 3.12), so the
        loop also ends when its task is marked as cancelling."""
        failing = False
        task = asyncio.current_task()
        try:
            while True:
                try:
                    await self.publish(snapshot())
                    if failing:
                        log.info("instance %s published to Redis again", self.instance)
                    failing = False
                except RedisUnavailable:
                    if not failing:
                        log.warning("instance %s could not publish its stats to Redis; retrying", self.instance)
                    failing = True
                except Exception:  # one bad snapshot must not end the publications
                    log.exception("instance snapshot failed")
                if task is not None and task.cancelling():
                    raise asyncio.CancelledError()
                await asyncio.sleep(interval_s)
        finally:
            await asyncio.shield(self.withdraw())
