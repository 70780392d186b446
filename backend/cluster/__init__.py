"""State that several server processes share, and its one-process fallback.

One server process owns one model (docs/ARCHITECTURE.md, "One process, and beyond it"). Past one
process, processes behind the router share PostgreSQL (durable state, job leases) and Redis
(``REDIS_URL``): rate-limit windows and log-in throttles, per-user generation leases that expire
when their process dies, live-work events (disable, password change, log-out, Stop) and the
relay of a streaming reply to sockets on other processes. Without ``REDIS_URL`` each of these
keeps today's in-memory form; this package is the seam between the two.

Modules:
    redis_link: the Redis connection (sync and asyncio clients), key names, RedisUnavailable.
"""

from backend.cluster.redis_link import RedisLink, RedisUnavailable

__all__ = ["RedisLink", "RedisUnavailable"]
