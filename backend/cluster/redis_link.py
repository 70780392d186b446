"""The Redis connection that several server processes share (REDIS_URL), and its failure type.

One :class:`RedisLink` per process, built from settings at start-up and closed at shutdown. Keys
are namespaced under ``crescent:`` (``key("throttle", ...)``) so one Redis can serve other
programs. Every Redis error a caller cannot absorb becomes :class:`RedisUnavailable`, a domain
error with code ``unavailable`` (HTTP 503, chat ``unavailable``): what each feature does while
Redis is down is decided by the feature and written in docs/ARCHITECTURE.md.

Source: redis-py (``redis.Redis``, ``redis.asyncio.Redis``), https://redis.readthedocs.io/.
"""

from __future__ import annotations

import asyncio

import redis
import redis.asyncio

from backend.errors import DomainError

KEY_PREFIX = "crescent"
# A dead Redis must fail a request in about a second, not hang it.
SOCKET_TIMEOUT_S = 1.0
CONNECT_TIMEOUT_S = 1.0


class RedisUnavailable(DomainError):
    """Redis could not be reached or answered with an error; the feature needing it is refused."""

    code = "unavailable"
    default_message = "the server is busy (shared state unavailable); try again shortly"


class RedisLink:
    """The process's Redis clients.

    Args:
        url: a redis-py URL (``redis://host:port/db``, ``rediss://…``, ``unix://…``).
        instance: this process's name (Settings.instance_name), used in lease and event payloads.

    Attributes:
        sync: a ``redis.Redis`` (thread-safe connection pool), for code on worker threads.
        aio: a ``redis.asyncio.Redis`` for the event loop.
    """

    def __init__(self, url: str, instance: str) -> None:
        self.url = url
        self.instance = instance
        options = dict(socket_timeout=SOCKET_TIMEOUT_S, socket_connect_timeout=CONNECT_TIMEOUT_S,
                       health_check_interval=15)
        self.sync = redis.Redis.from_url(url, **options)
        self.aio = redis.asyncio.Redis.from_url(url, **options)

    @staticmethod
    def key(*parts: str) -> str:
        """``crescent:part:part…``, the one key-naming rule."""
        return ":".join((KEY_PREFIX, *parts))

    def ping(self) -> None:
        """Raises RedisUnavailable when Redis does not answer."""
        try:
            self.sync.ping()
        except redis.RedisError as exc:
            raise RedisUnavailable() from exc

    async def aclose(self) -> None:
        await self.aio.aclose()
        self.sync.close()


def raise_if_cancelling() -> None:
    """Raise CancelledError when the current task has been asked to stop.

    On Python 3.11 a cancellation that lands while redis-py waits inside ``asyncio.wait_for`` can
    be swallowed (the command completes and the CancelledError is lost; fixed in 3.12), so a
    ``while True`` loop around Redis calls would never stop and shutdown would hang. Such loops
    call this after each Redis await."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError()
