"""backend/cluster/events.py, recheck.py and live_work.py against a real redis-server and
database: live-work events reach the other process's registry, each exactly once, the
subscriber comes back after its connection is killed, and the re-check ends what a lost
event spared."""

from __future__ import annotations

import asyncio
import socket
from datetime import timedelta
from types import SimpleNamespace

import redis

from backend.chat.events import ChatFailed
from backend.cluster import RedisLink
from backend.cluster.redis_link import RedisUnavailable
from backend.cluster.live_work import ClusterLive
from backend.live import KIND_GENERATION, KIND_SOCKET, REASON_DISABLED, REASON_SESSION_ENDED, LiveRegistry
from backend.models import AuthSession, User, utcnow

from .test_cluster_relay import _done, _reply

NEVER = 3600.0  # a re-check interval that keeps the backstop out of the way


def _ender(log: list[tuple[str, str]], name: str):
    async def end(reason: str) -> None:
        log.append((name, reason))

    return end


async def _until(predicate, timeout: float = 5.0, what: str = "condition") -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def _subscribers(raw: redis.Redis, channel: str) -> int:
    return dict(raw.pubsub_numsub(channel)).get(channel.encode(), 0)


class Two:
    """Processes A and B: a registry and a ClusterLive each, on one Redis and one database."""

    def __init__(self, redis_url: str, session_factory, interval_s: float = NEVER) -> None:
        self.links = [RedisLink(redis_url, "a"), RedisLink(redis_url, "b")]
        self.registries = [LiveRegistry(), LiveRegistry()]
        self.clusters = [ClusterLive(link, registry, session_factory, interval_s)
                         for link, registry in zip(self.links, self.registries)]
        self.raw = redis.Redis.from_url(redis_url)
        self.channel = self.clusters[0].events.channel

    async def __aenter__(self) -> Two:
        for cluster in self.clusters:
            cluster.start()
        await _until(lambda: _subscribers(self.raw, self.channel) == 2, what="both subscribed")
        return self

    async def __aexit__(self, *exc) -> None:
        for cluster, link in zip(self.clusters, self.links):
            await cluster.aclose()
            await link.aclose()
        self.raw.close()


def test_end_user_on_a_ends_his_work_on_b_and_each_entry_once(redis_url, session_factory) -> None:
    async def run() -> None:
        log: list[tuple[str, str]] = []
        async with Two(redis_url, session_factory) as two:
            a, b = two.registries
            a.add("bob", KIND_GENERATION, _ender(log, "a-reply"))
            a.add("carol", KIND_GENERATION, _ender(log, "a-carol"))
            b.add("bob", KIND_GENERATION, _ender(log, "b-reply"))
            b.add("bob", KIND_SOCKET, _ender(log, "b-socket"), session="h1")
            assert await a.end_user("bob", REASON_DISABLED) == 1  # here: A's own entry
            await _until(lambda: len(log) == 3, what="B's entries ended")
            # A reads its own event before one B publishes after it: once B's arrived, an echo of
            # A's own would have ended "a-reply" a second time.
            await b.end_user("carol", "sync")
            await _until(lambda: ("a-carol", "sync") in log, what="B's event on A")
            assert sorted(log) == [("a-carol", "sync"), ("a-reply", REASON_DISABLED), ("b-reply", REASON_DISABLED),
                                   ("b-socket", REASON_DISABLED)]

    asyncio.run(run())


def test_end_sessions_on_a_keeps_the_kept_session_on_b(redis_url, session_factory) -> None:
    async def run() -> None:
        log: list[tuple[str, str]] = []
        async with Two(redis_url, session_factory) as two:
            a, b = two.registries
            b.add("bob", KIND_SOCKET, _ender(log, "kept"), session="h-keep")
            b.add("bob", KIND_SOCKET, _ender(log, "other"), session="h-other")
            b.add("bob", KIND_GENERATION, _ender(log, "api"))
            await a.end_sessions("bob", "pw", keep="h-keep")
            await _until(lambda: log, what="B's other session ended")
            await a.end_sessions("bob", "out", only="h-keep")
            await _until(lambda: len(log) == 2, what="B's kept session ended by the log-out")
            assert log == [("other", "pw"), ("kept", "out")]

    asyncio.run(run())


def test_a_malformed_or_foreign_payload_is_ignored_and_the_subscriber_goes_on(redis_url, session_factory) -> None:
    async def run() -> None:
        log: list[tuple[str, str]] = []
        async with Two(redis_url, session_factory) as two:
            b = two.registries[1]
            b.add("bob", KIND_GENERATION, _ender(log, "b-reply"))
            for payload in ("not json", "[1, 2]", '{"kind": "end_user", "user_id": 7, "reason": "x"}',
                            '{"kind": "unknown"}', '{"kind": "end_user", "origin": "x", "user_id": "bob"}'):
                two.raw.publish(two.channel, payload)
            await two.registries[0].end_user("bob", "then a real one")
            await _until(lambda: log, what="the valid event applied")
            assert log == [("b-reply", "then a real one")]

    asyncio.run(run())


def test_the_subscriber_comes_back_after_its_connection_is_killed(redis_url, session_factory) -> None:
    async def run() -> None:
        log: list[tuple[str, str]] = []
        async with Two(redis_url, session_factory) as two:
            two.registries[1].add("bob", KIND_GENERATION, _ender(log, "b-reply"))
            assert two.raw.client_kill_filter(_type="pubsub") >= 2
            await _until(lambda: _subscribers(two.raw, two.channel) == 2, what="both subscribed again")
            await two.registries[0].end_user("bob", REASON_DISABLED)
            await _until(lambda: log, what="the event after the reconnection")
            # The re-check after reconnecting may end it too ("bob" is in no database): the test
            # enders stay registered, so each path logs; both give the reason.
            assert set(log) == {("b-reply", REASON_DISABLED)}

    asyncio.run(run())


def _user(db, name: str, status: str = "active") -> str:
    user = User(username=name, username_key=name, password_hash="x", status=status)
    db.add(user)
    db.flush()
    return user.id


def test_the_recheck_ends_disabled_users_and_gone_sessions_only(redis_url, session_factory) -> None:
    with session_factory() as db:
        bob, carol = _user(db, "bob"), _user(db, "carol", "disabled")
        db.add(AuthSession(user_id=bob, token_hash="h-live", expires_at=utcnow() + timedelta(hours=1)))
        db.add(AuthSession(user_id=bob, token_hash="h-expired", expires_at=utcnow() - timedelta(seconds=1)))
        db.commit()

    async def run() -> None:
        log: list[tuple[str, str]] = []
        link = RedisLink(redis_url, "a")
        registry = LiveRegistry()
        cluster = ClusterLive(link, registry, session_factory, NEVER)
        try:
            registry.add(bob, KIND_SOCKET, _ender(log, "bob-live"), session="h-live")
            registry.add(bob, KIND_SOCKET, _ender(log, "bob-expired"), session="h-expired")
            registry.add(bob, KIND_SOCKET, _ender(log, "bob-gone"), session="h-gone")
            registry.add(bob, KIND_GENERATION, _ender(log, "bob-reply"))
            registry.add(carol, KIND_GENERATION, _ender(log, "carol-reply"))
            registry.add("deleted-user", KIND_GENERATION, _ender(log, "deleted"))
            assert await cluster.recheck.check_once() == 4
            assert sorted(log) == sorted([("bob-expired", REASON_SESSION_ENDED), ("bob-gone", REASON_SESSION_ENDED),
                                          ("carol-reply", REASON_DISABLED), ("deleted", REASON_DISABLED)])
        finally:
            await cluster.aclose()
            await link.aclose()

    asyncio.run(run())


def test_the_periodic_recheck_runs_without_any_event(redis_url, session_factory) -> None:
    with session_factory() as db:
        carol = _user(db, "carol", "disabled")
        db.commit()

    async def run() -> None:
        log: list[tuple[str, str]] = []
        async with Two(redis_url, session_factory, interval_s=0.05) as two:
            two.registries[1].add(carol, KIND_GENERATION, _ender(log, "carol-reply"))
            await _until(lambda: log, what="the periodic re-check")
            assert log == [("carol-reply", REASON_DISABLED)]

    asyncio.run(run())


def test_with_redis_down_each_process_still_ends_its_own_work(session_factory) -> None:
    """Redis down (docs/ARCHITECTURE.md): the action is applied where it was made, publishing
    fails quietly, a reply still runs and ends with its mirror failing, and attaching to a
    reply running elsewhere is the error "unavailable"."""
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead_url = f"redis://127.0.0.1:{probe.getsockname()[1]}/0"

    async def run() -> None:
        log: list[tuple[str, str]] = []
        link = RedisLink(dead_url, "a")
        registry = LiveRegistry()
        cluster = ClusterLive(link, registry, session_factory, NEVER)
        cluster.start()
        try:
            registry.add("bob", KIND_GENERATION, _ender(log, "reply"))
            assert await registry.end_user("bob", REASON_DISABLED) == 1
            assert log == [("reply", REASON_DISABLED)]
            assert await cluster.events.publish("end_user", {"user_id": "bob", "reason": "x"}) is False
            reply = _reply(cluster.relay.mirror("m1"))
            reply.add("text")
            reply.end(_done(reply))
            await asyncio.wait_for(reply._mirror.task, 10)  # noqa: SLF001 - gave up, did not hang
            try:
                await cluster.relay.open("m2", 0)
            except RedisUnavailable:
                pass
            else:
                raise AssertionError("open() with Redis down did not raise RedisUnavailable")
            row = SimpleNamespace(id="m2", status="streaming")
            events = [e async for e in cluster.watch(row, 0)]  # type: ignore[arg-type]
            assert [(e.code, e.message_id) for e in events if isinstance(e, ChatFailed)] == [("unavailable", "m2")]
        finally:
            await cluster.aclose()
            await link.aclose()

    asyncio.run(run())


def test_with_redis_hanging_the_local_end_does_not_wait_for_the_publish(session_factory) -> None:
    """A Redis that accepts and never answers: end_user / end_sessions end this process's
    entries first; the publish (stuck until its socket timeout) comes after."""
    hanging = socket.socket()
    hanging.bind(("127.0.0.1", 0))
    hanging.listen(8)  # accepts (the kernel's backlog) and never answers
    url = f"redis://127.0.0.1:{hanging.getsockname()[1]}/0"

    async def run() -> None:
        log: list[tuple[str, str]] = []
        link = RedisLink(url, "a")
        registry = LiveRegistry()
        cluster = ClusterLive(link, registry, session_factory, NEVER)
        try:
            registry.add("bob", KIND_GENERATION, _ender(log, "reply"))
            registry.add("bob", KIND_SOCKET, _ender(log, "socket"), session="s1")
            ending = asyncio.ensure_future(registry.end_user("bob", REASON_DISABLED))
            await _until(lambda: len(log) == 2, what="the local end")
            assert not ending.done()  # still publishing: the end did not wait for it
            assert await ending == 2
            registry.add("carol", KIND_SOCKET, _ender(log, "socket-2"), session="s2")
            ending = asyncio.ensure_future(registry.end_sessions("carol", REASON_SESSION_ENDED))
            await _until(lambda: len(log) >= 3, what="the local end of the session")
            assert log[2:] == [("socket-2", REASON_SESSION_ENDED)], log
            assert not ending.done()
            assert await ending == 1
        finally:
            await cluster.aclose()
            await link.aclose()
            hanging.close()

    asyncio.run(run())


def test_the_recheck_ends_a_reply_whose_conversation_is_gone(redis_url, session_factory) -> None:
    """The end_conversation event was lost: the re-check finds the reply's conversation deleted
    and ends the reply; a reply in a conversation that exists goes on."""
    from backend.live import REASON_CONVERSATION_DELETED
    from backend.models import Conversation

    with session_factory() as db:
        bob = _user(db, "bob")
        kept = Conversation(user_id=bob, title="kept")
        db.add(kept)
        db.commit()
        kept_id = kept.id

    async def run() -> None:
        log: list[tuple[str, str]] = []
        link = RedisLink(redis_url, "a")
        registry = LiveRegistry()
        cluster = ClusterLive(link, registry, session_factory, NEVER)
        try:
            registry.add(bob, KIND_GENERATION, _ender(log, "in-kept"), conversation_id=kept_id)
            registry.add(bob, KIND_GENERATION, _ender(log, "in-deleted"), conversation_id="deleted-conversation")
            registry.add(bob, KIND_GENERATION, _ender(log, "api"))
            assert await cluster.recheck.check_once() == 1
            assert log == [("in-deleted", REASON_CONVERSATION_DELETED)]
        finally:
            await cluster.aclose()
            await link.aclose()

    asyncio.run(run())


def test_the_subscriber_stops_even_when_redis_swallows_the_cancellation(redis_url) -> None:
    """Python 3.11: redis-py's asyncio.wait_for can complete a read and lose the CancelledError.
    The subscriber's loop must still end, or shutdown waits forever."""
    import asyncio

    from backend.cluster import RedisLink
    from backend.cluster.events import LiveEvents

    async def scenario() -> bool:
        events = LiveEvents(RedisLink(redis_url, "a"))
        real = redis.asyncio.client.PubSub.get_message

        async def swallowing(self, *args, **kwargs):
            try:
                return await real(self, *args, **kwargs)
            except asyncio.CancelledError:  # what the 3.11 wait_for race does
                return None

        redis.asyncio.client.PubSub.get_message = swallowing
        try:
            events.start()
            await asyncio.sleep(0.3)  # subscribed, waiting in get_message
            listener = events._listener
            listener.cancel()
            done, _ = await asyncio.wait({listener}, timeout=10)
            return listener in done
        finally:
            redis.asyncio.client.PubSub.get_message = real
            await events.link.aclose()

    assert asyncio.run(scenario()), "the subscriber kept running after it was cancelled"
