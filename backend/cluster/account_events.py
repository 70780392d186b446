"""Account events to a user's pages on every process: UserChannels shared through Redis.

Each open chat socket subscribes to its user's account events (a message sent from another page,
a conversation created, renamed, pinned or deleted: backend/chat/channels.py). With several
processes a user's pages may be served by different ones, so :class:`SharedChannels` also sends
every event it publishes, in order, on the live-work channel (backend/cluster/events.py, kind
``account`` {user_id, event}); the other processes hand it to their own subscribers. A page on B
so learns of a turn started on A and attaches to its reply (through the relay,
backend/cluster/relay.py).

Until :meth:`SharedChannels.connect` (the chat service's start) it is a plain UserChannels, and
without REDIS_URL the app builds a plain UserChannels.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from backend.chat.channels import UserChannels
from backend.chat.events import AccountEvent, account_event_from_dict, account_event_to_dict
from backend.cluster.events import LiveEvents
from backend.cluster.redis_link import raise_if_cancelling

log = logging.getLogger(__name__)


class SharedChannels(UserChannels):
    """UserChannels whose events also reach the other processes' subscribers. publish() stays
    thread-safe: the event is queued for the sender task on the connected event loop."""

    def __init__(self) -> None:
        super().__init__()
        self._events: LiveEvents | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[dict[str, Any]] | None = None
        self._sender: asyncio.Task[None] | None = None

    def connect(self, events: LiveEvents) -> None:
        """Send and receive through `events` from now on (call on the event loop)."""
        self._events = events
        self._queue = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._sender = asyncio.create_task(self._send(), name="account-events")
        events.on("account", self._apply)

    async def aclose(self) -> None:
        sender, self._sender, self._loop = self._sender, None, None
        if sender is not None:
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)

    def publish(self, user_id: str, event: AccountEvent, skip: object = None) -> int:
        """As UserChannels.publish, and queued for the other processes."""
        count = super().publish(user_id, event, skip)
        loop, queue = self._loop, self._queue
        if loop is not None and queue is not None:
            fields = {"user_id": user_id, "event": account_event_to_dict(event)}
            try:
                loop.call_soon_threadsafe(queue.put_nowait, fields)
            except RuntimeError:  # the loop has closed: the server is stopping
                pass
        return count

    async def _send(self) -> None:
        assert self._queue is not None and self._events is not None
        while True:
            fields = await self._queue.get()
            await self._events.publish("account", fields)  # never raises; a lost one is logged
            raise_if_cancelling()

    async def _apply(self, event: dict[str, Any]) -> int:
        user_id = event.get("user_id")
        body = event.get("event")
        if not isinstance(user_id, str) or not isinstance(body, dict):
            raise ValueError("malformed account event")
        return UserChannels.publish(self, user_id, account_event_from_dict(body))  # here only
