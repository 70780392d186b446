"""One-shot notices carried across a redirect (post/redirect/get), per browser session.

A form handler stores what the next page must show (a "Saved" notice, or the refused values and
their errors) under the session's token hash, and redirects with 303; the GET handler pops it,
so a reload shows the plain page and never posts again. Kept in process memory, bounded: this is
one of the pieces of state a multi-process deployment would move to a shared store
(docs/ARCHITECTURE.md, "One process, and beyond it"); a notice lost there costs one message.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from backend.auth import hash_token

MAX_ENTRIES = 1000
TTL_S = 300.0


class FlashStore:
    """session token -> one value, taken at most once, forgotten after TTL_S (thread-safe)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, ttl_s: float = TTL_S) -> None:
        self._entries: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._max_entries = max_entries
        self._ttl_s = ttl_s
        self._lock = threading.Lock()

    def put(self, session_token: str, value: Any) -> None:
        key = hash_token(session_token)
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (time.monotonic() + self._ttl_s, value)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)

    def pop(self, session_token: str | None) -> Any | None:
        if not session_token:
            return None
        with self._lock:
            entry = self._entries.pop(hash_token(session_token), None)
        if entry is None or entry[0] < time.monotonic():
            return None
        return entry[1]
