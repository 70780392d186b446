"""Cross-process attach: a reply streaming in one process, watched from a socket on another.

A reply belongs to its conversation, and any page of its owner attaches to it by sequence
number (backend/chat/replies.py). With several processes the page may be served by a process
that does not run the reply. So, with ``REDIS_URL``, the process running a reply mirrors it to a
Redis Stream ``crescent:reply:<message_id>`` (:class:`ReplyMirror`):

- an opening entry ``{seq: 0}`` when the reply starts;
- one entry ``{seq, text}`` per published delta, in order (MAXLEN ~STREAM_MAXLEN);
- one entry ``{step: <JSON of the agent_step frame>}`` per event of an agent run's step
  (backend.agent.events.AgentStepEvent), in order with the deltas;
- a final entry ``{final: <JSON of Done | ChatFailed>}`` (backend.chat.events.final_to_dict).

The key expires STREAM_TTL_S after the last write or heartbeat (HEARTBEAT_S) while the reply
runs, so a process that dies leaves nothing for long, and ENDED_TTL_S after the final entry.

Another process, asked to attach to a reply it does not run whose stored row is still
streaming, opens a :class:`RemoteViewer` (:meth:`ReplyRelay.open`): it reads the stream so far
(XRANGE), feeds every delta's text into its own ``IncrementalMarkdown`` (the renderer is
deterministic in its feeds, so each delta renders as it did where it ran), gives the same
catch-up ``Delta`` (``reset``) as a local attach from the client's seq, preceded, as there, by
the latest event of each agent step so far (backend.agent.events.StepLog), then follows the
stream (XREAD BLOCK) and forwards each delta, step event and the final event. Sequence numbers are the running
process's, so a page switching processes resumes where it was; the text the viewer joins is the
text the running process stores.

A viewer also counts as watching the reply for the running process's unwatched policy: it keeps
its id in the sorted set ``crescent:reply:<message_id>:watchers`` (score: expiry time), renewed
while it reads and removed when it closes (:meth:`ReplyMirror.watched` reads it).

Source: Redis Streams (https://redis.io/docs/latest/develop/data-types/streams/), redis-py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from typing import Any

import redis
import redis.asyncio

from backend.agent.events import AgentStepEvent, StepLog, step_from_frame
from backend.chat.events import ChatEvent, ChatFailed, Delta, Done, final_from_dict, final_to_dict
from backend.cluster.redis_link import CONNECT_TIMEOUT_S, RedisLink, RedisUnavailable, raise_if_cancelling
from backend.errors import ValidationFailed
from backend.markdown_stream import IncrementalMarkdown

log = logging.getLogger(__name__)

STREAM_MAXLEN = 100_000  # entries: far more deltas than a reply has
STREAM_TTL_S = 30  # a running reply's stream outlives its last write or heartbeat by this much
HEARTBEAT_S = 10.0
ENDED_TTL_S = 60  # after the final entry: late attachers read the end from here or the database
READ_BLOCK_MS = 2000  # one XREAD waits this long, then the viewer checks that the stream exists
READ_BATCH = 512
START_WAIT_S = 3.0  # a reply just stored may not have its stream yet: wait this long for it
START_POLL_S = 0.05
# A page that saw seq n where the reply runs may reconnect here before the mirror has written n
# (it writes asynchronously): wait this long for the stream to reach n before refusing the seq.
CATCH_UP_WAIT_S = 3.0

# A viewer here keeps its id in the reply's watcher set (crescent:reply:<id>:watchers, a sorted
# set scored by expiry time) renewed every WATCH_RENEW_S; the running process counts a reply
# watched while an unexpired member is there (backend/chat/replies.py, the unwatched policy).
WATCH_TTL_S = 10.0
WATCH_RENEW_S = 3.0

REASON_RELAY_GONE = "the server process generating this reply stopped; reload to see what was stored"
REASON_RELAY_GAP = "part of the reply was lost on its way from another server process; reload"


def reply_key(link: RedisLink, message_id: str) -> str:
    """The Redis Stream of one reply: ``crescent:reply:<message_id>``."""
    return link.key("reply", message_id)


def running_replies(link: RedisLink, message_ids: list[str]) -> set[str]:
    """The ids among `message_ids` that some live process still runs: their stream exists (a
    running reply's mirror renews it every HEARTBEAT_S; it expires STREAM_TTL_S after its
    process dies). Blocking (the sync client): call from a worker thread.

    Raises RedisUnavailable: then nobody can tell, and the caller must not judge the replies."""
    try:
        with link.sync.pipeline(transaction=False) as pipe:
            for message_id in message_ids:
                pipe.exists(reply_key(link, message_id))
            found = pipe.execute()
    except redis.RedisError as exc:
        raise RedisUnavailable() from exc
    return {message_id for message_id, n in zip(message_ids, found) if n}


def watchers_key(link: RedisLink, message_id: str) -> str:
    """The sorted set of the viewers watching a reply from other processes."""
    return link.key("reply", message_id, "watchers")


class ReplyMirror:
    """The running process's side of one reply: publish() and end() are called synchronously on
    the event loop (by LiveReply) and written in order by one task. A Redis error drops what
    it was writing (logged); viewers elsewhere then see a gap and are told to reload."""

    def __init__(self, relay: ReplyRelay, message_id: str) -> None:
        self.key = relay.key(message_id)
        self._watchers = watchers_key(relay.link, message_id)
        self._aio = relay.link.aio
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._queue.put_nowait({"seq": 0})
        self.task = asyncio.create_task(self._write(), name=f"relay-{message_id}")

    def publish(self, delta: Delta) -> None:
        self._queue.put_nowait({"seq": delta.seq, "text": delta.text})

    def publish_step(self, event: AgentStepEvent) -> None:
        """An agent step's event, after the deltas published before it."""
        self._queue.put_nowait({"step": json.dumps(event.frame(), ensure_ascii=False)})

    async def watched(self) -> bool:
        """Whether a page served by another process watches the reply now (a RemoteViewer renewed
        its membership within WATCH_TTL_S). False when Redis fails: such a viewer gets nothing."""
        try:
            pipe = self._aio.pipeline(transaction=False)
            pipe.zremrangebyscore(self._watchers, "-inf", time.time())
            pipe.zcard(self._watchers)
            _removed, count = await pipe.execute()
        except (redis.RedisError, OSError) as exc:
            log.warning("relay of %s: watchers not read (%s)", self.key, exc)
            return False
        return bool(count)

    def end(self, final: Done | ChatFailed) -> None:
        self._queue.put_nowait({"final": json.dumps(final_to_dict(final), ensure_ascii=False)})
        self._queue.put_nowait(None)

    async def _write(self) -> None:
        closing = False
        while not closing:
            try:
                item = await asyncio.wait_for(self._queue.get(), HEARTBEAT_S)
            except asyncio.TimeoutError:
                await self._execute([], STREAM_TTL_S)
                raise_if_cancelling()
                continue
            batch = [item]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            closing = None in batch
            await self._execute([entry for entry in batch if entry is not None],
                                ENDED_TTL_S if closing else STREAM_TTL_S)
            raise_if_cancelling()

    async def _execute(self, entries: list[dict[str, Any]], ttl_s: int) -> None:
        pipe = self._aio.pipeline(transaction=False)
        for entry in entries:
            pipe.xadd(self.key, entry, maxlen=STREAM_MAXLEN, approximate=True)
        pipe.expire(self.key, ttl_s)
        try:
            await pipe.execute()
        except (redis.RedisError, OSError) as exc:
            log.warning("relay of %s: %d entries not written (%s)", self.key, len(entries), exc)


class RemoteViewer:
    """A reply streaming in another process, watched here: an async iterator of ChatEvents like
    backend.chat.replies.Viewer (each agent step's latest event and a catch-up Delta, the live
    deltas and step events, the final event)."""

    def __init__(self, relay: ReplyRelay, message_id: str) -> None:
        self.message_id = message_id
        self._relay = relay
        self._key = relay.key(message_id)
        self._markdown = IncrementalMarkdown()
        self._parts: list[str] = []
        self._steps = StepLog()  # an agent run's steps as of the catch-up
        self._last_id = "0-0"
        self._pending: list[ChatEvent] = []
        self._ended = False
        self._watchers = watchers_key(relay.link, message_id)
        self._viewer_id = uuid.uuid4().hex
        self._renewed = float("-inf")  # monotonic time of the last renewal

    @property
    def seq(self) -> int:
        return len(self._parts)

    def __aiter__(self) -> RemoteViewer:
        return self

    async def aclose(self) -> None:
        """Stop watching: leave the reply's watcher set (idempotent)."""
        self._ended = True
        if self._renewed != float("-inf"):
            self._renewed = float("-inf")
            try:
                await self._relay.reader.zrem(self._watchers, self._viewer_id)
            except (redis.RedisError, OSError):  # it expires anyway
                pass

    async def renew(self) -> None:
        """Count as a viewer of the reply for WATCH_TTL_S more (no-op if renewed within
        WATCH_RENEW_S). Redis errors propagate."""
        now = time.monotonic()
        if now - self._renewed < WATCH_RENEW_S:
            return
        pipe = self._relay.reader.pipeline(transaction=False)
        pipe.zadd(self._watchers, {self._viewer_id: time.time() + WATCH_TTL_S})
        pipe.expire(self._watchers, int(WATCH_TTL_S) + 1)
        await pipe.execute()
        self._renewed = now

    async def __anext__(self) -> ChatEvent:
        while not self._pending:
            if self._ended:
                raise StopAsyncIteration
            await self._read_more()
            raise_if_cancelling()
        event = self._pending.pop(0)
        if isinstance(event, (Done, ChatFailed)):
            self._ended = True
            self._pending.clear()
        return event

    def _take(self, entries: list[tuple[Any, dict[bytes, bytes]]], live: bool) -> Done | ChatFailed | None:
        """Apply stream entries; queue a Delta per delta when `live`. Returns the final event if
        one came (or a ChatFailed for a gap)."""
        for entry_id, fields in entries:
            self._last_id = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
            if b"final" in fields:
                return final_from_dict(json.loads(fields[b"final"]))
            if b"step" in fields:
                self._step(fields[b"step"], live)
                continue
            seq = int(fields.get(b"seq", b"0"))
            if seq == 0:
                continue
            if seq != self.seq + 1:
                return ChatFailed("unavailable", REASON_RELAY_GAP, None, self.message_id)
            text = fields.get(b"text", b"").decode("utf-8")
            self._parts.append(text)
            update = self._markdown.feed(text)
            if live:
                self._pending.append(Delta(self.message_id, seq, text, update.committed_html, update.tail_html,
                                           code_html=update.code_html))
        return None

    def _step(self, raw: bytes, live: bool) -> None:
        try:
            event = step_from_frame(json.loads(raw))
        except ValueError as exc:  # not written by a ReplyMirror: the text still arrives whole
            log.warning("relay of %s: an agent step entry was not read (%s)", self._key, exc)
            return
        if live:
            self._pending.append(event)
        else:
            self._steps.record(event)

    def _catch_up(self, entries: list[tuple[Any, dict[bytes, bytes]]], after_seq: int) -> None:
        """The stream so far: the same first event as LiveReply.attach(after_seq) gives."""
        final = self._take(entries, live=False)
        if not 0 <= after_seq <= self.seq:
            raise ValidationFailed(f"seq must be in [0, {self.seq}] for this reply")
        if final is not None:
            self._pending.append(final)
            return
        self._pending.extend(self._steps.replay())  # as LiveReply.attach: the steps first
        if after_seq < self.seq:
            committed, tail = self._markdown.rendering_at(self._markdown.mark())
            self._pending.append(Delta(self.message_id, self.seq, "".join(self._parts[after_seq:]), committed, tail,
                                       reset=True))

    async def _read_more(self) -> None:
        reader = self._relay.reader
        try:
            await self.renew()
            result = await reader.xread({self._key: self._last_id}, count=READ_BATCH, block=READ_BLOCK_MS)
            if not result:
                if not await reader.exists(self._key):
                    self._pending.append(ChatFailed("unavailable", REASON_RELAY_GONE, None, self.message_id))
                return
        except (redis.RedisError, OSError) as exc:
            log.warning("relay of %s: read failed (%s)", self._key, exc)
            self._pending.append(ChatFailed(RedisUnavailable.code, RedisUnavailable.default_message, None,
                                            self.message_id))
            return
        final = self._take(result[0][1], live=True)
        if final is not None:
            self._pending.append(final)


def _reached(entries: list[tuple[Any, dict[bytes, bytes]]], after_seq: int) -> bool:
    """Whether `entries` end the reply or hold delta `after_seq` (step entries have no seq)."""
    for _entry_id, fields in reversed(entries):
        if b"final" in fields:
            return True
        if b"seq" in fields:
            return int(fields[b"seq"]) >= after_seq
    return after_seq <= 0


class ReplyRelay:
    """The relay of every reply of this process, and the viewers of others' replies.

    Args:
        link: the process's RedisLink. Viewers read with a client of their own whose socket
            timeout outlasts a blocking read.
    """

    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self.reader = redis.asyncio.Redis.from_url(link.url, socket_timeout=READ_BLOCK_MS / 1000 + 5,
                                                   socket_connect_timeout=CONNECT_TIMEOUT_S)
        self._mirrors: set[asyncio.Task[None]] = set()

    def key(self, message_id: str) -> str:
        return reply_key(self.link, message_id)

    def mirror(self, message_id: str) -> ReplyMirror:
        """Start mirroring a reply that starts streaming here (on the event loop)."""
        mirror = ReplyMirror(self, message_id)
        self._mirrors.add(mirror.task)
        mirror.task.add_done_callback(self._mirrors.discard)
        return mirror

    async def open(self, message_id: str, after_seq: int = 0) -> RemoteViewer | None:
        """Watch `message_id`, streaming in another process, having seen its deltas 1..after_seq.
        The caller has checked that the reply is its user's and stored as streaming.

        Returns None when no stream for it appears within START_WAIT_S (no process relays it).
        When after_seq is past the stream and the reply has not ended, the stream is followed
        (XREAD) up to CATCH_UP_WAIT_S until it reaches after_seq.
        Raises ValidationFailed (after_seq outside [0, the reply's last seq], then) and
        RedisUnavailable."""
        viewer = RemoteViewer(self, message_id)
        deadline = asyncio.get_running_loop().time() + START_WAIT_S
        try:
            while True:
                entries = await self.reader.xrange(viewer._key, "-", "+")
                if entries:
                    break
                if asyncio.get_running_loop().time() >= deadline:
                    return None
                await asyncio.sleep(START_POLL_S)
            await self._reach(viewer._key, entries, after_seq)
        except (redis.RedisError, OSError) as exc:
            raise RedisUnavailable() from exc
        viewer._catch_up(entries, after_seq)
        try:
            await viewer.renew()  # a viewer from now: the running process must not end it unwatched
        except (redis.RedisError, OSError) as exc:
            raise RedisUnavailable() from exc
        return viewer

    async def _reach(self, key: str, entries: list[tuple[Any, dict[bytes, bytes]]], after_seq: int) -> None:
        """Extend `entries` (in place) with what follows until the last delta's seq is at least
        `after_seq`, a final entry comes, or CATCH_UP_WAIT_S passes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CATCH_UP_WAIT_S
        while not isinstance(after_seq, bool) and isinstance(after_seq, int):
            if _reached(entries, after_seq):
                return
            left_ms = int((deadline - loop.time()) * 1000)
            if left_ms <= 0:
                return
            last_id = entries[-1][0]
            result = await self.reader.xread({key: last_id}, count=READ_BATCH, block=min(left_ms, READ_BLOCK_MS))
            if result:
                entries.extend(result[0][1])

    async def aclose(self, timeout_s: float = 5.0) -> None:
        """Let the mirrors write their last entries (up to timeout_s), then close the reader."""
        if self._mirrors:
            await asyncio.wait(set(self._mirrors), timeout=timeout_s)
        await self.reader.aclose()
