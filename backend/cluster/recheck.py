"""The backstop of the live-work events: a periodic re-check against the database.

Pub/sub may lose a message (backend/cluster/events.py), so with several processes each one
checks, every RECHECK_INTERVAL_S seconds, the users and sessions of its live entries
(backend/live.py) against the database, the source of truth:

- a user who is no longer active (disabled, pending, or gone): everything of his ends, as for
  ``end_user`` (REASON_DISABLED);
- a socket whose session is gone or expired (logged out, password changed): the socket ends
  (REASON_SESSION_ENDED); replies and API requests, which belong to no session, go on;
- a chat reply whose conversation is gone (deleted in another process, its
  ``end_conversation`` event lost): the reply ends (REASON_CONVERSATION_DELETED).

So an event lost on its way ends the work at most RECHECK_INTERVAL_S (plus one query) late.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from backend.live import REASON_CONVERSATION_DELETED, REASON_DISABLED, REASON_SESSION_ENDED, LiveRegistry
from backend.models import AuthSession, Conversation, User, utcnow

log = logging.getLogger(__name__)

# Seconds between two re-checks (Settings.live_recheck_s, CRESCENT_LIVE_RECHECK_S, overrides it:
# tests set it high to prove that an end came through the event, not the backstop).
RECHECK_INTERVAL_S = 2.0


class LiveRecheck:
    """Re-checks `registry`'s entries against the database every `interval_s` seconds.

    Args:
        registry: this process's live registry. session_factory: SQLAlchemy sessionmaker (sync;
            the queries run in a worker thread). interval_s: seconds between two checks (None:
            RECHECK_INTERVAL_S as it is when the checker is built).
    """

    def __init__(self, registry: LiveRegistry, session_factory: sessionmaker[Session],
                 interval_s: float | None = None) -> None:
        self.registry = registry
        self.interval_s = RECHECK_INTERVAL_S if interval_s is None else interval_s
        self._sessions = session_factory
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start checking (on the running event loop)."""
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="live-recheck")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def check_once(self) -> int:
        """One check now. Returns how many entries were ended. Database errors propagate."""
        entries = self.registry.entries()
        if not entries:
            return 0
        users = {e.user_id for e in entries}
        sessions = {e.session for e in entries if e.session is not None}
        conversations = {e.conversation_id for e in entries if e.conversation_id is not None}
        active, live_sessions, kept = await asyncio.to_thread(self._read, users, sessions, conversations)
        ended = 0
        for user_id in sorted(users - active):
            ended += await self.registry.end_user_here(user_id, REASON_DISABLED)
        gone = sessions - live_sessions
        if gone:
            for user_id in sorted(users & active):
                ended += await self.registry.end_entries(
                    user_id, REASON_SESSION_ENDED, lambda e: e.session is not None and e.session in gone)
        deleted = conversations - kept
        if deleted:
            for user_id in sorted(users & active):
                ended += await self.registry.end_entries(
                    user_id, REASON_CONVERSATION_DELETED,
                    lambda e: e.conversation_id is not None and e.conversation_id in deleted)
        if ended:
            log.info("live re-check ended %d entries", ended)
        return ended

    def _read(self, users: set[str], sessions: set[str], conversations: set[str]
              ) -> tuple[set[str], set[str], set[str]]:
        """(active users, live sessions, existing conversations) among those given."""
        with self._sessions() as db:
            active = set(db.scalars(select(User.id).where(User.id.in_(users), User.status == "active")))
            live: set[str] = set()
            if sessions:
                live = set(db.scalars(select(AuthSession.token_hash).where(
                    AuthSession.token_hash.in_(sessions), AuthSession.expires_at > utcnow())))
            kept: set[str] = set()
            if conversations:
                kept = set(db.scalars(select(Conversation.id).where(Conversation.id.in_(conversations))))
        return active, live, kept

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.check_once()
            except Exception:  # keep checking: the database may be back next time
                log.exception("live re-check failed")
