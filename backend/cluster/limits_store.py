"""Rate-limit windows in Redis, shared by every server process: the ``limits`` library's storage.

:func:`shared_storage` gives a :class:`limits.storage.RedisStorage` on the process's
:class:`~backend.cluster.redis_link.RedisLink` connection pool, its keys under
``crescent:limits:``. A moving window kept there (log-in throttles, requests per minute) counts
every process's hits once: the library's Lua scripts check and add atomically on the server.
Timestamps are each process's wall clock (the library's choice), so processes on several
machines need synchronized clocks (NTP); a skew of s seconds moves a window's edge by s.

:data:`STORAGE_ERRORS` are what a call through that storage raises when Redis is down or
answers with an error; callers turn them into a refusal (docs/ARCHITECTURE.md, "One process,
and beyond it": throttles and limits fail closed).

Source: ``limits`` (https://limits.readthedocs.io/, storage ``RedisStorage``), redis-py.
"""

from __future__ import annotations

import redis
from limits.errors import StorageError
from limits.storage import RedisStorage

from backend.cluster.redis_link import RedisLink

# Any failure of the storage: limits wraps redis-py's errors in StorageError (wrap_exceptions),
# and a few paths of the library call the client directly.
STORAGE_ERRORS: tuple[type[Exception], ...] = (StorageError, redis.RedisError, OSError)


def shared_storage(link: RedisLink) -> RedisStorage:
    """A ``limits`` Redis storage on `link`'s connection pool (no new connections of its own),
    keys prefixed ``crescent:limits``. Connecting is lazy: this never touches the network, so it
    works while Redis is down; calls raise one of :data:`STORAGE_ERRORS` until it is back."""
    return RedisStorage(link.url, connection_pool=link.sync.connection_pool,
                        key_prefix=link.key("limits"), wrap_exceptions=True)
