"""backend.generation: one lifecycle per generation, settled exactly once whatever the ending.

Every test ends with `assert_settled`: each opening paired with one release of the lease, the
ticket and the live entry (counted by Generations.counts), the limiter, the admission queue and
the live registry back to empty, and the scripted generator holding no request (its "KV").
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from backend.auth import AuthService
from backend.chat import ChatService, FixedSettings
from backend.generation import Generations
from backend.generator import GenerationDone, GenerationParams, TextDelta
from backend.admission import AdmissionController
from backend.limits import UsageLimiter
from backend.live import REASON_DISABLED, LiveRegistry
from backend.runtime_settings import RuntimeSettings, RuntimeSettingsStore
from backend.settings import Settings

CHAT_ENDINGS = ["complete", "length", "stop", "unwatched", "error", "crash", "disabled", "shutdown"]
API_ENDINGS = ["complete", "client_gone", "stop", "error", "disabled"]


class Recorder:
    def __init__(self) -> None:
        self.done: list[tuple[str, str, int]] = []
        self.rejections: list[str] = []

    def observe_done(self, done: GenerationDone, source: str) -> None:
        self.done.append((done.finish_reason, source, done.index))

    def count_rejection(self, kind: str) -> None:
        self.rejections.append(kind)


@pytest.fixture
def settings():
    return Settings(max_tokens=64)


@pytest.fixture
def alice(session_factory, fast_hasher):
    return AuthService(session_factory, 3600, fast_hasher).sign_up("alice", "password one")


@pytest.fixture
def generator(fake_generator_cls):
    return fake_generator_cls(script=[f"w{i} " for i in range(8)])


@pytest.fixture
def hub(session_factory, settings, generator, wall_clock):
    store = RuntimeSettingsStore(session_factory, settings, context_length=2048)
    store.update({"max_concurrent_generations": 2}, actor_id=None)
    return Generations(generator, session_factory, limiter=UsageLimiter(session_factory, store, clock=wall_clock),
                       admission=AdmissionController(8, 100_000), metrics=Recorder(), live=LiveRegistry())


def assert_settled(hub: Generations, user_id: str, opened: int) -> None:
    counts = hub.counts
    assert counts["opened"] == counts["closed"] == opened
    assert counts["lease_released"] == counts["ticket_released"] == opened
    assert counts["live_added"] == counts["live_discarded"]
    assert not hub.open
    assert hub.limiter.active(user_id) == 0
    assert hub.admission.snapshot()["waiting_requests"] == 0
    assert hub.live.count(user_id) == 0
    assert not hub.generator.active  # every engine request ended: its KV blocks are free


def chat_service(session_factory, settings, hub, unwatched_s: int = -1) -> ChatService:
    runtime = replace(RuntimeSettings.from_settings(settings, 2048), unwatched_reply_s=unwatched_s)
    return ChatService(session_factory, hub.generator, settings, flush_interval_s=0.0,
                       runtime_settings=FixedSettings(runtime), generations=hub)


@pytest.mark.parametrize("ending", CHAT_ENDINGS)
async def test_a_chat_reply_settles_once_on_every_ending(ending, session_factory, settings, hub, generator, alice):
    chat = chat_service(session_factory, settings, hub, unwatched_s=0 if ending == "unwatched" else -1)
    expected = {"complete": ("complete", "stop"), "length": ("complete", "length"), "stop": ("complete", "abort"),
                "unwatched": ("interrupted", "abort"), "error": ("error", "error"), "crash": ("error", "error"),
                "disabled": ("interrupted", "abort"), "shutdown": ("interrupted", "abort")}[ending]
    if ending == "length":
        generator.finish_reason = "length"
    elif ending == "error":
        generator.end_after = (2, "error", "engine failed")
    elif ending == "crash":
        generator.raise_after = 2
    elif ending not in ("complete",):
        generator.hold_after = 2
    stream = chat.send(alice.id, "c-1", None, "hello there")
    ack = await anext(stream)
    if ending in ("stop", "unwatched", "disabled", "shutdown"):
        await asyncio.wait_for(generator.held.wait(), 5)
        if ending == "stop":
            assert await chat.stop(alice.id, ack.assistant_message_id)
        elif ending == "unwatched":
            await stream.aclose()
        elif ending == "disabled":
            await hub.live.end_user(alice.id, REASON_DISABLED)
        else:
            await chat.shutdown()
    events = [] if ending == "unwatched" else [e async for e in stream]
    assert await chat.join()
    if events:
        assert (events[-1].status, events[-1].finish_reason) == expected
    assert_settled(hub, alice.id, opened=1)
    # Ended once: one usage record and one metrics observation.
    assert len(hub.metrics.done) == 1 and hub.metrics.done[0][1] == "chat"
    # And the slot is free for the next turn.
    generator.hold_after = generator.end_after = generator.raise_after = None
    again = [e async for e in chat.send(alice.id, "c-2", None, "again")]
    assert again[-1].status == "complete"
    assert_settled(hub, alice.id, opened=2)


async def test_a_reply_nobody_watches_still_holds_its_concurrency_slot(session_factory, settings, hub, generator, alice):
    chat = chat_service(session_factory, settings, hub)
    generator.hold_after = 1
    for client_msg_id in ("c-1", "c-2"):
        stream = chat.send(alice.id, client_msg_id, None, "hello")
        await anext(stream)
        await stream.aclose()  # the tab is closed; the reply goes on
    third = [e async for e in chat.send(alice.id, "c-3", None, "one more")]
    assert third[-1].code == "rate_limited" and hub.limiter.active(alice.id) == 2
    generator.release()
    assert await chat.join()
    assert_settled(hub, alice.id, opened=2)


async def test_the_unwatched_timer_ends_a_reply_only_while_nobody_watches(session_factory, settings, hub, generator,
                                                                          alice):
    chat = chat_service(session_factory, settings, hub, unwatched_s=1)
    generator.hold_after = 1
    stream = chat.send(alice.id, "c-1", None, "hello")
    ack = await anext(stream)
    await stream.aclose()  # nobody watches: the 1 s timer starts
    await asyncio.wait_for(generator.held.wait(), 5)
    viewer = chat.attach(alice.id, ack.assistant_message_id, 0)
    first = await anext(viewer)  # a page came back in time: the timer is off
    assert first.reset and first.seq == 1
    await asyncio.sleep(1.3)
    assert chat.live_reply(ack.assistant_message_id) is not None and not generator.aborted
    await viewer.aclose()  # gone again: 1 s later it ends
    assert await chat.join(5)
    (row,) = [r for r in _rows(session_factory) if r.role == "assistant"]
    assert (row.status, row.finish_reason, row.error) == ("interrupted", "abort", "nobody was watching the reply for 1 s")
    assert_settled(hub, alice.id, opened=1)


def _rows(session_factory):
    from sqlalchemy import select

    from backend.models import Message

    with session_factory() as db:
        return list(db.scalars(select(Message)))


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("ending", API_ENDINGS)
async def test_an_api_generation_settles_once_on_every_ending(ending, n, hub, generator, alice):
    if ending == "error":
        generator.end_after = (2, "error", "engine failed")
    elif ending != "complete":
        generator.hold_after = 2
    generation = await asyncio.to_thread(hub.admit, alice.id, "api", 10, n)
    assert hub.admission.snapshot()["waiting_prompt_tokens"] == 10 * n
    generation.start("cmpl-1", GenerationParams(max_tokens=16), prompt="hi")
    assert generator.calls[-1].params.n == n  # the engine runs the n samples
    seen: list = []
    events = generation.events()
    if ending in ("client_gone", "stop", "disabled"):
        while len([e for e in seen if isinstance(e, TextDelta)]) < 2 * n:
            seen.append(await anext(events))
        if ending == "stop":
            await generation.stop()
        elif ending == "disabled":
            await hub.live.end_user(alice.id, REASON_DISABLED)
            assert generation.ended_reason == REASON_DISABLED
    if ending != "client_gone":
        seen += [e async for e in events]
        finals = [e for e in seen if isinstance(e, GenerationDone)]
        assert sorted(d.index for d in finals) == list(range(n))
    else:
        await events.aclose()
    await generation.close()
    await generation.close()  # idempotent
    assert_settled(hub, alice.id, opened=1)
    assert sorted(i for _, _, i in hub.metrics.done) == list(range(n))
    assert all(source == "api" for _, source, _ in hub.metrics.done)


async def test_a_refused_admission_takes_nothing(hub, alice):
    hub.admission = AdmissionController(1, 1000)
    waiting = hub.admission.admit(10)  # someone else's request, not started yet
    with pytest.raises(Exception) as refused:
        await asyncio.to_thread(hub.admit, alice.id, "api", 10, 1)
    waiting.release()
    assert refused.value.code == "overloaded" and hub.metrics.rejections == ["overloaded"]
    assert hub.limiter.active(alice.id) == 0 and hub.counts["opened"] == 0


async def test_one_cache_salt_per_user_for_every_source(hub):
    assert hub.cache_salt("a") == hub.cache_salt("a") != hub.cache_salt("b")
    assert len(hub.cache_salt("a")) == 64


async def test_a_generation_that_never_started_releases_and_records_nothing(hub, alice, session_factory):
    generation = await asyncio.to_thread(hub.admit, alice.id, "chat", 10, 1)
    generation.discard()
    generation.discard()
    await generation.close()
    assert_settled(hub, alice.id, opened=1)
    assert hub.metrics.done == []


async def test_a_reply_ended_before_its_task_started_does_not_run_on(session_factory, settings, hub, generator, alice):
    chat = chat_service(session_factory, settings, hub)
    stream = chat.send(alice.id, "c-1", None, "hello")
    ack = await anext(stream)  # the reply's task has not run yet
    assert await chat.end_reply(ack.assistant_message_id, "the account was disabled")
    done = [e async for e in stream][-1]
    assert (done.status, done.finish_reason, done.error) == ("interrupted", "abort", "the account was disabled")
    assert await chat.join()
    assert_settled(hub, alice.id, opened=1)
