"""Admission control: the bounded waiting room, alone and in front of the real ChatService."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

import pytest
from sqlalchemy import select

from backend.auth import AuthService
from backend.chat import Ack, ChatFailed, ChatService, Delta, Done
from backend.admission import AdmissionController
from backend.limits import Overloaded, UsageLimiter
from backend.models import Message, UsageRecord
from backend.runtime_settings import RuntimeSettingsStore
from backend.settings import Settings

from .conftest import FakeGenerator

SETTINGS = Settings(max_tokens=64, temperature=0.3, top_p=0.9)


@dataclass
class SlowStartGenerator(FakeGenerator):
    """A FakeGenerator whose requests wait, like in an engine's queue, until `gate` opens:
    no event (no first token) before it."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.gate = asyncio.Event()
        self.queued = 0

    async def _run(self, request_id, prompt_tokens):
        self.queued += 1
        try:
            await self.gate.wait()
        finally:
            self.queued -= 1
        async for event in super()._run(request_id, prompt_tokens):
            yield event


class RecordingMetrics:
    def __init__(self) -> None:
        self.done: list[tuple[str, str]] = []
        self.rejections: list[str] = []

    def observe_done(self, done, source: str) -> None:
        self.done.append((done.finish_reason, source))

    def count_rejection(self, kind: str) -> None:
        self.rejections.append(kind)


@pytest.fixture
def alice(session_factory, fast_hasher):
    return AuthService(session_factory, 3600, fast_hasher).sign_up("alice", "password one")


async def collect(events) -> list:
    return [event async for event in events]


async def wait_for(predicate, what: str) -> None:
    for _ in range(1000):
        if predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


def stored(session_factory) -> list[Message]:
    with session_factory() as db:
        return list(db.scalars(select(Message)))


# -- the controller alone ----------------------------------------------------------------------


def test_full_by_requests_refuses_at_once_with_the_configured_wait():
    controller = AdmissionController(max_waiting_requests=2, max_waiting_prompt_tokens=1000, retry_after_s=7)
    first, second = controller.admit(10), controller.admit(10)
    with pytest.raises(Overloaded) as excinfo:
        controller.admit(10)
    assert (excinfo.value.code, excinfo.value.retry_after_s) == ("overloaded", 7)
    first.started()  # got its first token: no longer waiting
    third = controller.admit(10)
    assert controller.snapshot() == {
        "waiting_requests": 2, "waiting_prompt_tokens": 20, "admitted_total": 3, "rejected_total": 1,
        "max_waiting_requests": 2, "max_waiting_prompt_tokens": 1000,
    }  # fmt: skip
    second.release()
    second.release()  # idempotent: frees one place, not two
    first.release()  # after started(): nothing more to free
    controller.admit(10)
    with pytest.raises(Overloaded):
        controller.admit(10)
    third.release()


def test_full_by_prompt_tokens():
    controller = AdmissionController(max_waiting_requests=10, max_waiting_prompt_tokens=100)
    controller.admit(60)
    with pytest.raises(Overloaded):
        controller.admit(41)
    controller.admit(40)  # exactly at the bound
    assert controller.snapshot()["waiting_prompt_tokens"] == 100


def test_an_empty_queue_admits_one_prompt_longer_than_the_token_bound():
    controller = AdmissionController(max_waiting_requests=10, max_waiting_prompt_tokens=100)
    big = controller.admit(500)
    with pytest.raises(Overloaded):
        controller.admit(1)
    big.started()
    controller.admit(1)


def test_bounds_hold_under_threads():
    controller = AdmissionController(max_waiting_requests=5, max_waiting_prompt_tokens=10**6)
    admitted, refused = [], []
    lock = threading.Lock()

    def worker():
        for _ in range(50):
            try:
                ticket = controller.admit(1)
            except Overloaded:
                with lock:
                    refused.append(1)
            else:
                with lock:
                    admitted.append(ticket)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(admitted) == 5 and len(refused) == 395
    for ticket in admitted:
        ticket.release()
    assert controller.snapshot()["waiting_requests"] == 0


@pytest.mark.parametrize("args", [(0, 10), (10, 0), (1, 1, 0)])
def test_bounds_must_be_positive(args):
    with pytest.raises(ValueError):
        AdmissionController(*args)


# -- through the ChatService -------------------------------------------------------------------


async def test_a_burst_bigger_than_the_queue_loses_nothing(session_factory, alice):
    generator = SlowStartGenerator()
    admission = AdmissionController(max_waiting_requests=3, max_waiting_prompt_tokens=10_000, retry_after_s=5)
    metrics = RecordingMetrics()
    chat = ChatService(session_factory, generator, SETTINGS, flush_interval_s=0.0, admission=admission, metrics=metrics)
    ids = [f"burst-{i}" for i in range(10)]
    tasks = [asyncio.create_task(collect(chat.send(alice.id, cid, None, f"question number {cid}"))) for cid in ids]

    await wait_for(lambda: sum(t.done() for t in tasks) == 7 and generator.queued == 3, "7 refusals, 3 queued")
    assert admission.snapshot()["waiting_requests"] == 3
    generator.gate.set()
    results = dict(zip(ids, await asyncio.gather(*tasks)))

    accepted = {cid for cid, events in results.items() if isinstance(events[0], Ack)}
    rejected = set(ids) - accepted
    assert len(accepted) == 3 and len(rejected) == 7
    for cid in accepted:  # accepted work is whole: every token, stored complete
        ack, *deltas, done = results[cid]
        assert all(isinstance(d, Delta) for d in deltas) and "".join(d.text for d in deltas) == "Hello, **world**!"
        assert isinstance(done, Done) and (done.status, done.finish_reason) == ("complete", "stop")
    for cid in rejected:  # every refusal says so, with the wait, and stored nothing
        (failed,) = results[cid]
        assert isinstance(failed, ChatFailed)
        assert (failed.code, failed.retry_after_s, failed.client_msg_id, failed.message_id) == ("overloaded", 5, cid, None)
    rows = stored(session_factory)
    assert sorted(r.client_msg_id for r in rows if r.role == "user") == sorted(accepted)
    assert sorted(r.status for r in rows if r.role == "assistant") == ["complete"] * 3
    assert metrics.rejections == ["overloaded"] * 7 and metrics.done == [("stop", "chat")] * 3
    assert admission.snapshot()["waiting_requests"] == 0 and admission.snapshot()["rejected_total"] == 7

    # Nothing was lost: the refused sends go through when retried with the same ids.
    for cid in sorted(rejected):
        events = await collect(chat.send(alice.id, cid, None, f"question number {cid}"))
        assert not events[0].duplicate and events[-1].status == "complete"
    assert len(generator.calls) == 10 and len(stored(session_factory)) == 20


async def test_a_request_stops_waiting_at_its_first_token(session_factory, alice):
    generator = SlowStartGenerator(hold_after=1)
    admission = AdmissionController(max_waiting_requests=1, max_waiting_prompt_tokens=10_000)
    chat = ChatService(session_factory, generator, SETTINGS, flush_interval_s=0.0, admission=admission)
    first = chat.send(alice.id, "a", None, "first")
    ack = await anext(first)
    next_event = asyncio.ensure_future(anext(first))
    await wait_for(lambda: generator.queued == 1, "the first request to queue")
    (refused,) = await collect(chat.send(alice.id, "b", None, "second"))
    assert refused.code == "overloaded"
    generator.gate.set()
    assert isinstance(await next_event, Delta)  # streaming now, held after its first token
    assert admission.snapshot()["waiting_requests"] == 0
    second = chat.send(alice.id, "c", None, "third")  # admitted while the first still streams
    assert isinstance(await anext(second), Ack)
    assert isinstance(await anext(second), Delta)
    generator.release()
    assert (await collect(first))[-1].status == "complete"
    assert (await collect(second))[-1].status == "complete"
    assert len(generator.calls) == 2 and generator.calls[0].request_id == ack.assistant_message_id


async def test_the_queue_deadline_ends_the_turn_with_a_typed_error(session_factory, alice):
    # The engine's answer when a request waited past queue_timeout_s (engine.errors.QueueTimeoutError).
    deadline = "queue_timeout: waited 2.004 s in the queue, longer than queue_timeout_s=2.0"
    generator = FakeGenerator(end_after=(0, "error", deadline))
    admission = AdmissionController(max_waiting_requests=4, max_waiting_prompt_tokens=10_000)
    store = RuntimeSettingsStore(session_factory, SETTINGS)
    store.update({"max_concurrent_generations": 1}, actor_id=None)
    limiter = UsageLimiter(session_factory, store)
    metrics = RecordingMetrics()
    chat = ChatService(session_factory, generator, SETTINGS, flush_interval_s=0.0, runtime_settings=store,
                       limiter=limiter, admission=admission, metrics=metrics)
    ack, done = await asyncio.wait_for(collect(chat.send(alice.id, "late", None, "hello")), timeout=10)
    assert isinstance(ack, Ack) and isinstance(done, Done)
    assert (done.status, done.finish_reason) == ("error", "error")
    assert "queue" in done.error and "try again" in done.error and deadline in done.error
    (reply,) = [m for m in stored(session_factory) if m.role == "assistant"]
    assert (reply.status, reply.finish_reason, reply.error) == ("error", "error", done.error)
    # Everything it held is free again, and its (prompt) tokens were recorded.
    assert admission.snapshot()["waiting_requests"] == 0 and limiter.active(alice.id) == 0
    assert metrics.done == [("error", "chat")]
    with session_factory() as db:
        (usage,) = db.scalars(select(UsageRecord))
    assert done.usage["prompt_tokens"] > 0
    assert (usage.source, usage.prompt_tokens, usage.completion_tokens) == ("chat", done.usage["prompt_tokens"], 0)
    # The next send is not blocked by the one that timed out.
    generator.end_after = None
    assert (await collect(chat.send(alice.id, "again", ack.conversation_id, "hello")))[-1].status == "complete"
