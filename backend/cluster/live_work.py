"""Live work across server processes, for one process: events, their backstop and the relay.

:class:`ClusterLive` ties this process's live registry (backend/live.py) to the others':

- the registry's ``end_user`` / ``end_sessions`` are published on the live-work channel
  (backend/cluster/events.py) and the other processes' are applied here;
- every RECHECK_INTERVAL_S seconds, and at once after the subscriber reconnects, the live entries
  are re-checked against the database (backend/cluster/recheck.py);
- account events (backend/cluster/account_events.py) reach the user's pages on every process;
- replies streaming here are mirrored to Redis Streams, and replies streaming elsewhere can be
  watched from here (backend/cluster/relay.py).

The chat service registers its own event kinds (``stop``, ``end_conversation``) on
:attr:`ClusterLive.events`. Built only with ``REDIS_URL``; without it none of this exists.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable

from sqlalchemy.orm import Session, sessionmaker

from backend.chat import turns
from backend.chat.channels import UserChannels
from backend.chat.events import UNFINISHED_STATUSES, ChatEvent, ChatFailed, stored_outcome

from backend.cluster.account_events import SharedChannels
from backend.cluster.events import LiveEvents
from backend.cluster.recheck import LiveRecheck
from backend.cluster.redis_link import RedisLink
from backend.cluster.relay import ReplyRelay
from backend.errors import DomainError
from backend.live import LiveRegistry
from backend.models import Message

STREAMING = UNFINISHED_STATUSES


def text_field(event: dict[str, Any], name: str, optional: bool = False) -> str | None:
    """A string field of a received event. Raises ValueError when it is missing or not a string
    (None allowed when `optional`)."""
    value = event.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValueError(f"live event field {name!r} is not a string")
    return value


class ClusterLive:
    """Args: link: the process's RedisLink. registry: its live registry. session_factory: for the
    re-check. recheck_interval_s: seconds between two re-checks (None: RECHECK_INTERVAL_S).
    channels: the account-event channels; a SharedChannels is connected at start()."""

    def __init__(self, link: RedisLink, registry: LiveRegistry, session_factory: sessionmaker[Session],
                 recheck_interval_s: float | None = None, channels: UserChannels | None = None) -> None:
        self.events = LiveEvents(link)
        self.recheck = LiveRecheck(registry, session_factory, recheck_interval_s)
        self.relay = ReplyRelay(link)
        self._sessions = session_factory
        self._channels = channels if isinstance(channels, SharedChannels) else None
        registry.broadcast = self.events.publish
        self.events.on("end_user", lambda e: registry.end_user_here(
            text_field(e, "user_id"), text_field(e, "reason")))  # type: ignore[arg-type]
        self.events.on("end_sessions", lambda e: registry.end_sessions_here(
            text_field(e, "user_id"), text_field(e, "reason"),  # type: ignore[arg-type]
            keep=text_field(e, "keep", optional=True), only=text_field(e, "only", optional=True)))
        self.events.on_resubscribed = self.recheck.check_once

    def serve_chat(self, stop_here: Callable[[str, str], Awaitable[bool]],
                   end_conversation_here: Callable[[str, str, str], Awaitable[int]]) -> None:
        """Apply the other processes' ``stop`` and ``end_conversation`` events with the chat
        service's local methods (each checks that the reply is the user's)."""
        self.events.on("stop", lambda e: stop_here(text_field(e, "user_id"), text_field(e, "message_id")))  # type: ignore[arg-type]
        self.events.on("end_conversation", lambda e: end_conversation_here(
            text_field(e, "user_id"), text_field(e, "conversation_id"), text_field(e, "reason")))  # type: ignore[arg-type]

    async def stop_elsewhere(self, user_id: str, message_id: str) -> bool:
        """Stop `user_id`'s reply `message_id` in the process running it: published only when the
        reply is his and stored as streaming. Returns whether the event went out."""
        row = await asyncio.to_thread(turns.owned_reply, self._sessions, user_id, message_id)
        if row is None or row.status not in STREAMING:
            return False
        return await self.events.publish("stop", {"user_id": user_id, "message_id": message_id})

    async def end_conversation_elsewhere(self, user_id: str, conversation_id: str, reason: str) -> bool:
        """End `user_id`'s replies in `conversation_id` in the other processes."""
        return await self.events.publish("end_conversation", {"user_id": user_id, "conversation_id": conversation_id,
                                                              "reason": reason})

    async def watch(self, row: Message, after_seq: int, client_msg_id: str | None = None) -> AsyncIterator[ChatEvent]:
        """The events of the caller's reply `row`, which does not stream here: relayed from the
        process running it while it is stored as streaming, else its stored outcome (as
        backend.chat.events.stored_outcome)."""
        if row.status in STREAMING:
            try:
                remote = await self.relay.open(row.id, after_seq)
            except DomainError as exc:  # ValidationFailed (seq), RedisUnavailable
                yield ChatFailed(exc.code, exc.message, client_msg_id, row.id)
                return
            if remote is not None:
                async for event in remote:
                    yield event
                return
        yield stored_outcome(row, client_msg_id)

    def start(self) -> None:
        """Subscribe and start re-checking (on the running event loop)."""
        self.events.start()
        self.recheck.start()
        if self._channels is not None:
            self._channels.connect(self.events)

    async def aclose(self) -> None:
        if self._channels is not None:
            await self._channels.aclose()
        await self.events.aclose()
        await self.recheck.aclose()
        await self.relay.aclose()
