"""Account events to every open page of a user: a message sent, a conversation created,
renamed or deleted (backend.chat.events.AccountEvent).

Each open chat socket subscribes a :class:`Channel` under its user. :meth:`UserChannels.publish`
is thread-safe (the conversation service publishes from worker threads): the event is handed to
each channel's event loop.

Cross-process seam: the subscribers are this process's memory; several server processes would
relay the events through a shared pub/sub (Redis, PostgreSQL NOTIFY).
"""

from __future__ import annotations

import asyncio
import threading

from backend.chat.events import AccountEvent


class Channel:
    """One subscriber's queue of account events. close() unsubscribes (idempotent)."""

    def __init__(self, owner: UserChannels, user_id: str) -> None:
        self.user_id = user_id
        self.queue: asyncio.Queue[AccountEvent] = asyncio.Queue()
        self.loop = asyncio.get_running_loop()
        self._owner = owner

    async def get(self) -> AccountEvent:
        return await self.queue.get()

    def close(self) -> None:
        self._owner._remove(self)


class UserChannels:
    """Subscribers per user, in this process."""

    def __init__(self) -> None:
        self._channels: dict[str, list[Channel]] = {}
        self._lock = threading.Lock()

    def subscribe(self, user_id: str) -> Channel:
        """A channel for `user_id`'s events; call on the event loop that will read it."""
        channel = Channel(self, user_id)
        with self._lock:
            self._channels.setdefault(user_id, []).append(channel)
        return channel

    def publish(self, user_id: str, event: AccountEvent, skip: object = None) -> int:
        """Hand `event` to every channel of `user_id` but `skip` (the page it came from, which
        knows already), from any thread. Returns how many got it."""
        with self._lock:
            channels = [c for c in self._channels.get(user_id, ()) if c is not skip]
        for channel in channels:
            try:
                channel.loop.call_soon_threadsafe(channel.queue.put_nowait, event)
            except RuntimeError:  # its loop is closed: the socket is gone
                channel.close()
        return len(channels)

    def count(self, user_id: str) -> int:
        with self._lock:
            return len(self._channels.get(user_id, ()))

    def _remove(self, channel: Channel) -> None:
        with self._lock:
            channels = self._channels.get(channel.user_id)
            if channels is not None and channel in channels:
                channels.remove(channel)
                if not channels:
                    del self._channels[channel.user_id]
