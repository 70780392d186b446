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

Several processes (``REDIS_URL``): the registry is this process's memory, so :meth:`end_user`
and :meth:`end_sessions`, once this process's entries have ended (a hanging Redis never delays
them), also hand their event to :attr:`LiveRegistry.broadcast` (set by
backend/cluster/events.py), which publishes it to the other processes; each applies it with
:meth:`end_user_here` / :meth:`end_sessions_here`, which do not publish again. A periodic
re-check against the database (backend/cluster/recheck.py) ends what a lost message spared.
Without a broadcast (one process) nothing leaves this process.
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
# Found by the periodic re-check (the session is gone from the database; why is not known).
REASON_SESSION_ENDED = "the session ended"
REASON_CONVERSATION_DELETED = "the conversation was deleted"

# broadcast(kind, fields): publish a live-work event to the other processes (never raises).
Broadcast = Callable[[str, dict], Awaitable[object]]


@dataclass(eq=False)
class LiveEntry:
    """One registered thing. end(reason) ends it; it must be safe to call twice."""

    user_id: str
    kind: str
    end: Callable[[str], Awaitable[object]]
    session: str | None = None  # hash of the session token (backend.auth.hash_token), sockets only
    conversation_id: str | None = None  # a chat reply's conversation, generations of chat only


class LiveRegistry:
    """Generations and sockets per user, in this process. Thread-safe registration; the end_*
    coroutines run on the event loop that owns the entries."""

    def __init__(self) -> None:
        self._entries: dict[str, list[LiveEntry]] = {}
        self._lock = threading.Lock()
        # Set when several processes share the work (backend/cluster/events.py); None: one process.
        self.broadcast: Broadcast | None = None

    def add(self, user_id: str, kind: str, end: Callable[[str], Awaitable[object]],
            session: str | None = None, conversation_id: str | None = None) -> LiveEntry:
        """Register; keep the returned entry and pass it to :meth:`discard` when it is over."""
        entry = LiveEntry(user_id, kind, end, session, conversation_id)
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

    def entries(self) -> list[LiveEntry]:
        """A snapshot of every live entry (the periodic re-check reads it)."""
        with self._lock:
            return [e for entries in self._entries.values() for e in entries]

    async def end_user(self, user_id: str, reason: str) -> int:
        """End every generation, then every socket, of `user_id`, here and (through
        :attr:`broadcast`) in every other process. Returns how many were ended here.
        Generations first, so a reply ends with `reason` rather than "connection closed"."""
        ended = await self.end_user_here(user_id, reason)  # first: a hanging Redis must not delay it
        await self._announce("end_user", user_id=user_id, reason=reason)
        return ended

    async def end_user_here(self, user_id: str, reason: str) -> int:
        """:meth:`end_user` in this process only (an event from another process)."""
        return await self._end(user_id, reason, lambda e: True)

    async def end_sessions(self, user_id: str, reason: str, *, keep: str | None = None,
                           only: str | None = None) -> int:
        """End the sockets of `user_id`'s sessions, except the session hashed `keep`, or only the
        session hashed `only`, here and in every other process. Entries without a session (API
        requests) are left alone. Returns how many were ended here."""
        ended = await self.end_sessions_here(user_id, reason, keep=keep, only=only)
        await self._announce("end_sessions", user_id=user_id, reason=reason, keep=keep, only=only)
        return ended

    async def end_sessions_here(self, user_id: str, reason: str, *, keep: str | None = None,
                                only: str | None = None) -> int:
        """:meth:`end_sessions` in this process only."""
        def chosen(entry: LiveEntry) -> bool:
            if entry.session is None:
                return False
            if only is not None:
                return entry.session == only
            return entry.session != keep

        return await self._end(user_id, reason, chosen)

    async def end_entries(self, user_id: str, reason: str, chosen: Callable[[LiveEntry], bool]) -> int:
        """End `user_id`'s entries for which `chosen` holds, in this process only."""
        return await self._end(user_id, reason, chosen)

    async def _announce(self, kind: str, **fields: object) -> None:
        if self.broadcast is not None:
            try:
                await self.broadcast(kind, fields)
            except Exception:  # the other processes' re-check is the backstop
                log.exception("broadcasting %s failed", kind)

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
