"""Live work per account: the generations and sockets to end at once when access ends.

Refusing new requests is not enough when an admin disables an account or a user changes his
password: replies already generating and sockets already open must end too. Everything that
lives longer than one request registers here, under its user (and, for a socket, the session
that opened it), with a coroutine that ends it:

- ``ChatService`` registers every chat reply while it streams (ending it aborts the request in
  the engine and stores the reply ``interrupted`` with the reason);
- the ``/v1`` API registers every request while it generates (all its ``n`` choices);
- the chat WebSocket registers itself (ending it stops its replies with the reason and closes
  the socket with 4401, so the page goes to log-in).

:meth:`LiveRegistry.end_user` (account disabled) ends everything of a user;
:meth:`LiveRegistry.end_sessions` (password changed, logged out) ends what belongs to some of his
sessions only: sockets, and through them their replies. API requests belong to a key, not a
session, so a password change leaves them running.

Cross-process seam: the registry is this process's memory, which fits the one-process-per-model
layout. With several server processes an admin's action reaches only the process that served it;
the others notice at the next request (sessions and keys are checked in the database), so a
multi-process deployment must broadcast the "end user" event (database notification or a shared
pub/sub) to every process's registry.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from typing import Awaitable, Callable

log = logging.getLogger(__name__)

KIND_GENERATION = "generation"
KIND_SOCKET = "socket"
# One ender that hangs (a socket whose peer stopped reading) must not hold up the others.
END_TIMEOUT_S = 5.0

REASON_DISABLED = "the account was disabled"
REASON_PASSWORD_CHANGED = "the session ended: the password was changed"
REASON_LOGGED_OUT = "the session ended: logged out"


@dataclass(eq=False)
class LiveEntry:
    """One registered thing. end(reason) ends it; it must be safe to call twice."""

    user_id: str
    kind: str
    end: Callable[[str], Awaitable[object]]
    session: str | None = None  # hash of the session token (backend.auth.hash_token), sockets only


class LiveRegistry:
    """Generations and sockets per user, in this process. Thread-safe registration; the end_*
    coroutines run on the event loop that owns the entries."""

    def __init__(self) -> None:
        self._entries: dict[str, list[LiveEntry]] = {}
        self._lock = threading.Lock()

    def add(self, user_id: str, kind: str, end: Callable[[str], Awaitable[object]],
            session: str | None = None) -> LiveEntry:
        """Register; keep the returned entry and pass it to :meth:`discard` when it is over."""
        entry = LiveEntry(user_id, kind, end, session)
        with self._lock:
            self._entries.setdefault(user_id, []).append(entry)
        return entry

    def discard(self, entry: LiveEntry | None) -> None:
        """Forget `entry` (idempotent; None is ignored)."""
        if entry is None:
            return
        with self._lock:
            entries = self._entries.get(entry.user_id)
            if entries is not None and entry in entries:
                entries.remove(entry)
                if not entries:
                    del self._entries[entry.user_id]

    def count(self, user_id: str, kind: str | None = None) -> int:
        """How many entries of `user_id` (of `kind`, if given) are live."""
        with self._lock:
            return sum(1 for e in self._entries.get(user_id, ()) if kind is None or e.kind == kind)

    async def end_user(self, user_id: str, reason: str) -> int:
        """End every generation, then every socket, of `user_id`. Returns how many were ended.
        Generations first, so a reply ends with `reason` rather than "connection closed"."""
        return await self._end(user_id, reason, lambda e: True)

    async def end_sessions(self, user_id: str, reason: str, *, keep: str | None = None,
                           only: str | None = None) -> int:
        """End the sockets of `user_id`'s sessions, except the session hashed `keep`, or only the
        session hashed `only`. Entries without a session (API requests) are left alone."""
        def chosen(entry: LiveEntry) -> bool:
            if entry.session is None:
                return False
            if only is not None:
                return entry.session == only
            return entry.session != keep

        return await self._end(user_id, reason, chosen)

    async def _end(self, user_id: str, reason: str, chosen: Callable[[LiveEntry], bool]) -> int:
        with self._lock:
            entries = [e for e in self._entries.get(user_id, ()) if chosen(e)]
        entries.sort(key=lambda e: e.kind != KIND_GENERATION)
        for entry in entries:
            try:
                await asyncio.wait_for(entry.end(reason), END_TIMEOUT_S)
            except Exception:  # one failure must not spare the rest
                log.exception("ending a live %s of user %s failed", entry.kind, user_id)
        return len(entries)
