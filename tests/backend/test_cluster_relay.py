"""backend/cluster/relay.py against a real redis-server: a reply mirrored by the process running
it and watched from another gives the same events, by sequence number, as a local attach."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
import redis

from backend.chat.events import ChatFailed, Delta, Done, final_to_dict
from backend.chat.replies import LiveReply
from backend.chat.turns import Turn
from backend.cluster import RedisLink
from backend.cluster import relay as relay_module
from backend.cluster.relay import REASON_RELAY_GAP, REASON_RELAY_GONE, ReplyRelay
from backend.errors import ValidationFailed

# Markdown that commits blocks, opens and extends a code block and leaves a tail: the catch-up
# rendering is not just the text.
PARTS = ["# Title\n\n", "Some *em", "phasis* here.\n\n", "```python\n", "x = 1\n", "y = 2\n", "```\n\n",
         "- one\n", "- two", "\n\nlast"]


def _reply(mirror=None) -> LiveReply:
    message_id = uuid.uuid4().hex
    turn = Turn("conv", "title", "question", message_id, False)

    async def end(reason: str) -> None:
        return None

    return LiveReply("bob", turn, None, end, mirror)


def _done(reply: LiveReply) -> Done:
    return Done(reply.message_id, "stop", "complete", reply.markdown.html, {"prompt_tokens": 3, "completion_tokens": 9},
                {"queue_ms": 1.0, "ttft_ms": 2.0, "decode_tokens_per_s": 3.0}, None,
                [{"n": 1, "title": "doc"}], reply.seq, reply.text)


async def _drain(viewer, limit: int = 100) -> list:
    events = []
    async for event in viewer:
        events.append(event)
        if len(events) >= limit:
            break
    return events


async def _with_relays(redis_url: str, body) -> None:
    """Two relays (process A runs the reply, process B watches), closed after `body`."""
    a_link, b_link = RedisLink(redis_url, "a"), RedisLink(redis_url, "b")
    a, b = ReplyRelay(a_link), ReplyRelay(b_link)
    try:
        await body(a, b)
    finally:
        await a.aclose()
        await b.aclose()
        await a_link.aclose()
        await b_link.aclose()


def test_a_remote_catch_up_equals_the_local_one_from_every_seq(redis_url: str) -> None:
    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        reply = _reply()
        reply._mirror = a.mirror(reply.message_id)  # noqa: SLF001 - as ChatService._start passes it
        for part in PARTS[:7]:
            reply.add(part)
        await asyncio.sleep(0)
        for after in range(reply.seq + 1):
            local = reply.attach(after)
            expected = local.queue.get_nowait() if after < reply.seq else None
            local.close()
            remote = None
            for _ in range(200):  # the mirror writes asynchronously: wait for it to catch up
                remote = await b.open(reply.message_id, after)
                assert remote is not None
                if remote.seq == reply.seq:
                    break
                await asyncio.sleep(0.01)
            assert remote.seq == reply.seq
            pending = list(remote._pending)  # noqa: SLF001 - the first events, before any read
            assert pending == ([expected] if expected is not None else [])
        reply.end(_done(reply))

    asyncio.run(_with_relays(redis_url, body))


def test_a_remote_viewer_gets_the_live_deltas_and_the_final_event_as_a_local_one(redis_url: str) -> None:
    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        reply = _reply()
        reply._mirror = a.mirror(reply.message_id)  # noqa: SLF001
        reply.add(PARTS[0])
        reply.add(PARTS[1])
        remote = None
        while remote is None or remote.seq < 2:
            remote = await b.open(reply.message_id, 1)
            await asyncio.sleep(0.01)
        local = reply.attach(1)
        for part in PARTS[2:]:
            reply.add(part)
        reply.markdown.finish()
        final = _done(reply)
        reply.end(final)
        local_events = await _drain(local)
        remote_events = await _drain(remote)
        assert remote_events == local_events
        assert remote_events[-1] == final and isinstance(final, Done)
        # The text the remote viewer joins is the reply's text.
        assert "".join(e.text for e in remote_events if isinstance(e, Delta)) == "".join(PARTS[1:])
        assert [e.seq for e in remote_events if isinstance(e, Delta)] == list(range(2, len(PARTS) + 1))

    asyncio.run(_with_relays(redis_url, body))


def test_an_ended_reply_gives_only_its_final_event_and_a_failure_round_trips(redis_url: str) -> None:
    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        reply = _reply()
        reply._mirror = a.mirror(reply.message_id)  # noqa: SLF001
        reply.add("partial")
        failed = ChatFailed("generation_error", "engine exploded", "client-1", reply.message_id)
        reply.end(failed)
        await asyncio.wait_for(reply._mirror.task, 5)  # noqa: SLF001 - written to the end
        remote = await b.open(reply.message_id, 0)
        assert remote is not None
        assert await _drain(remote) == [failed]

    asyncio.run(_with_relays(redis_url, body))


def test_a_seq_past_the_reply_is_refused_as_locally(redis_url: str, monkeypatch) -> None:
    monkeypatch.setattr(relay_module, "CATCH_UP_WAIT_S", 0.2)

    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        reply = _reply()
        reply._mirror = a.mirror(reply.message_id)  # noqa: SLF001
        reply.add("one")
        while (await b.open(reply.message_id, 0)).seq < 1:
            await asyncio.sleep(0.01)
        with pytest.raises(ValidationFailed):
            reply.attach(2)
        with pytest.raises(ValidationFailed):
            await b.open(reply.message_id, 2)
        with pytest.raises(ValidationFailed):
            await b.open(reply.message_id, -1)
        reply.end(_done(reply))

    asyncio.run(_with_relays(redis_url, body))


def test_no_stream_is_none_after_the_start_wait(redis_url: str, monkeypatch) -> None:
    monkeypatch.setattr(relay_module, "START_WAIT_S", 0.2)

    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        assert await b.open(uuid.uuid4().hex, 0) is None

    asyncio.run(_with_relays(redis_url, body))


def test_a_gap_or_a_vanished_stream_ends_the_remote_viewer_with_a_failure(redis_url: str, monkeypatch) -> None:
    monkeypatch.setattr(relay_module, "READ_BLOCK_MS", 100)
    raw = redis.Redis.from_url(redis_url)

    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        gap_id, gone_id = uuid.uuid4().hex, uuid.uuid4().hex
        for message_id in (gap_id, gone_id):
            raw.xadd(a.key(message_id), {"seq": 0})
            raw.xadd(a.key(message_id), {"seq": 1, "text": "a"})
        gap = await b.open(gap_id, 0)
        raw.xadd(a.key(gap_id), {"seq": 3, "text": "c"})  # seq 2 lost
        events = await _drain(gap)
        assert events[-1] == ChatFailed("unavailable", REASON_RELAY_GAP, None, gap_id)
        gone = await b.open(gone_id, 1)
        raw.delete(a.key(gone_id))  # the running process died and its stream expired
        assert await _drain(gone) == [ChatFailed("unavailable", REASON_RELAY_GONE, None, gone_id)]

    asyncio.run(_with_relays(redis_url, body))
    raw.close()


def test_the_stream_expires_after_the_end(redis_url: str) -> None:
    raw = redis.Redis.from_url(redis_url)

    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        reply = _reply()
        reply._mirror = a.mirror(reply.message_id)  # noqa: SLF001
        reply.add("text")
        reply.end(_done(reply))
        await asyncio.wait_for(reply._mirror.task, 5)  # noqa: SLF001
        ttl = raw.ttl(a.key(reply.message_id))
        assert 0 < ttl <= relay_module.ENDED_TTL_S

    asyncio.run(_with_relays(redis_url, body))
    raw.close()


def test_a_page_ahead_of_the_stream_waits_for_the_mirror_then_catches_up(redis_url: str) -> None:
    """The page saw seq 3 where the reply runs; the mirror has written only seq 1 when it
    reconnects here: open() follows the stream until seq 3 instead of refusing the seq."""
    raw = redis.Redis.from_url(redis_url)

    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        message_id = uuid.uuid4().hex
        key = a.key(message_id)
        raw.xadd(key, {"seq": 0})
        raw.xadd(key, {"seq": 1, "text": "one "})
        opening = asyncio.ensure_future(b.open(message_id, 3))
        await asyncio.sleep(0.05)  # let open() read the stream as it is (seq 1)
        assert not opening.done()
        raw.xadd(key, {"seq": 2, "text": "two "})
        raw.xadd(key, {"seq": 3, "text": "three"})
        remote = await asyncio.wait_for(opening, 5)
        assert remote is not None and remote.seq == 3
        assert remote._pending == []  # noqa: SLF001 - nothing to catch up: the page has it all
        raw.xadd(key, {"seq": 4, "text": "!"})
        raw.xadd(key, {"final": json.dumps(final_to_dict(ChatFailed("x", "y", None, message_id)))})
        events = await _drain(remote)
        assert [(e.seq, e.text) for e in events if isinstance(e, Delta)] == [(4, "!")]

    asyncio.run(_with_relays(redis_url, body))
    raw.close()


def test_a_reply_watched_from_another_process_is_not_ended_unwatched(redis_url: str, monkeypatch) -> None:
    """Unwatched policy 0 on A: the last local viewer leaves while a page on B watches through
    the relay, so the reply goes on; once B's viewer leaves, A's next ask ends it."""
    from backend.chat import replies as replies_module
    from backend.chat.replies import reason_unwatched

    monkeypatch.setattr(replies_module, "REWATCH_S", 0.05)

    async def body(a: ReplyRelay, b: ReplyRelay) -> None:
        ended: list[str] = []
        message_id = uuid.uuid4().hex
        turn = Turn("conv", "title", "question", message_id, False)
        turn.unwatched_s = 0

        async def end(reason: str) -> None:
            ended.append(reason)

        reply = LiveReply("bob", turn, None, end, a.mirror(message_id))
        local = reply.attach(0)
        reply.add("one")
        remote = None
        while remote is None or remote.seq < 1:  # the mirror writes asynchronously
            remote = await b.open(message_id, 0)
        local.close()  # the last viewer on A leaves
        await asyncio.wait_for(reply._checking, 5)  # noqa: SLF001 - A asked the relay
        for _ in range(5):  # and keeps asking while B watches
            await asyncio.sleep(replies_module.REWATCH_S)
            await asyncio.wait_for(reply._checking, 5)  # noqa: SLF001
        assert ended == []
        await remote.aclose()  # B's page goes
        deadline = asyncio.get_running_loop().time() + 5
        while not ended and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        assert ended == [reason_unwatched(0)]
        reply.end(_done(reply))

    asyncio.run(_with_relays(redis_url, body))
