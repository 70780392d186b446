"""Live-work events between server processes: one Redis pub/sub channel, JSON payloads.

An event is ``{"origin": ..., "instance": ..., "kind": ..., <fields>}`` on the channel
``crescent:live``. `kind` is one of:

- ``end_user`` {user_id, reason}: the account was disabled (backend/live.py ``end_user``);
- ``end_sessions`` {user_id, reason, keep, only}: a password change or a log-out
  (``end_sessions``; `keep` / `only` are session-token hashes or null);
- ``stop`` {user_id, message_id}: Stop pressed on a page served by another process;
- ``end_conversation`` {user_id, conversation_id, reason}: the conversation was deleted.

Every process publishes the events of its own actions and applies the others' (an event whose
`origin` is this process's is skipped: it was applied before it was published). Pub/sub is
at-most-once: a message published while a subscriber is disconnected is lost, which is why
backend/cluster/recheck.py re-checks the live entries against the database periodically. The
subscriber reconnects after any Redis error (backoff RECONNECT_MIN_S..RECONNECT_MAX_S) and,
once subscribed again, calls `on_resubscribed` (the re-check, at once).

Source: Redis pub/sub (https://redis.io/docs/latest/develop/interact/pubsub/), redis-py's
``redis.asyncio`` PubSub.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any, Awaitable, Callable

import redis

from backend.cluster.redis_link import RedisLink, raise_if_cancelling

log = logging.getLogger(__name__)

RECONNECT_MIN_S = 0.1
RECONNECT_MAX_S = 2.0
# How long one read of the subscription waits for a message (s); bounds the shutdown latency.
LISTEN_POLL_S = 1.0

Handler = Callable[[dict[str, Any]], Awaitable[object]]


class LiveEvents:
    """This process's end of the live-work channel.

    Args:
        link: the process's RedisLink; its ``instance`` names this process in the payloads.

    Attributes:
        channel: the Redis channel name. origin: this process's unique id (instance name plus a
            random suffix: two processes given the same name still tell their events apart).
        on_resubscribed: awaited after each reconnection of the subscriber (None: nothing).
    """

    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self.channel = link.key("live")
        self.origin = f"{link.instance}#{uuid.uuid4().hex[:12]}"
        self.on_resubscribed: Callable[[], Awaitable[object]] | None = None
        self._handlers: dict[str, Handler] = {}
        self._listener: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[object]] = set()

    def on(self, kind: str, handler: Handler) -> None:
        """Apply `handler(fields)` to every event of `kind` from another process."""
        self._handlers[kind] = handler

    async def publish(self, kind: str, fields: dict[str, Any]) -> bool:
        """Send one event to every other process. Returns False (logged) when Redis refused it:
        the caller's own action stands, and the others' re-check catches up."""
        payload = json.dumps({"origin": self.origin, "instance": self.link.instance, "kind": kind, **fields},
                             separators=(",", ":"))
        try:
            await self.link.aio.publish(self.channel, payload)
        except (redis.RedisError, OSError) as exc:
            log.warning("live event %s not published (%s); the re-check will catch up", kind, exc)
            return False
        return True

    def start(self) -> None:
        """Start the subscriber (on the running event loop)."""
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen(), name="live-events")

    async def aclose(self) -> None:
        """Stop the subscriber and the handlers still running."""
        tasks = [t for t in (self._listener, *self._running) if t is not None]
        self._listener = None
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def apply(self, raw: bytes | str) -> asyncio.Task[object] | None:
        """Dispatch one received payload to its handler (in a task of its own, so a slow ending
        never holds up the subscription). Returns the task, or None when the payload is ours,
        malformed or of an unknown kind."""
        try:
            event = json.loads(raw)
        except (ValueError, TypeError):
            log.warning("malformed live event ignored")
            return None
        if not isinstance(event, dict) or event.get("origin") == self.origin:
            return None
        handler = self._handlers.get(event.get("kind"))  # type: ignore[arg-type]
        if handler is None:
            return None
        task: asyncio.Task[object] = asyncio.ensure_future(self._run(handler, event))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return task

    @staticmethod
    async def _run(handler: Handler, event: dict[str, Any]) -> object:
        try:
            return await handler(event)
        except Exception:
            log.exception("applying the live event %s from %s failed", event.get("kind"), event.get("instance"))
            return None

    async def _listen(self) -> None:
        delay = RECONNECT_MIN_S
        reconnecting = False
        while True:
            pubsub = self.link.aio.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                if reconnecting and self.on_resubscribed is not None:
                    self._spawn(self.on_resubscribed())  # what was published meanwhile is lost
                delay = RECONNECT_MIN_S
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=LISTEN_POLL_S)
                    raise_if_cancelling()
                    if message is not None and message.get("type") == "message":
                        self.apply(message["data"])
            except asyncio.CancelledError:
                raise
            except (redis.RedisError, OSError) as exc:
                log.warning("live events: Redis subscription lost (%s); reconnecting in %.1f s", exc, delay)
            except Exception:
                log.exception("live events: subscriber failed; reconnecting")
            finally:
                try:
                    await pubsub.aclose()
                except Exception:  # already broken
                    pass
            reconnecting = True
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_S)

    def _spawn(self, coroutine: Awaitable[object]) -> None:
        async def guarded() -> object:
            try:
                return await coroutine
            except Exception:
                log.exception("live events: the re-check after reconnecting failed")
                return None

        task: asyncio.Task[object] = asyncio.ensure_future(guarded())
        self._running.add(task)
        task.add_done_callback(self._running.discard)
