"""'One reply per conversation' across processes: two chat services (two processes) on one
database, each with its own in-process claim set, must still refuse a second reply."""

from __future__ import annotations

import asyncio
import threading

import pytest

from backend.chat.events import Ack, ChatFailed
from backend.chat.service import ChatService
from backend.chat.turns import TurnRequest
from backend.errors import ConversationBusy
from backend.runtime_settings import RuntimeSettings
from backend.settings import Settings

from .test_chat import collect, generator, settings, users  # noqa: F401 - fixtures


@pytest.fixture
def two(session_factory, generator, settings):  # noqa: F811
    return (ChatService(session_factory, generator, settings, flush_interval_s=0.0),
            ChatService(session_factory, generator, settings, flush_interval_s=0.0))


async def test_a_reply_streaming_in_one_process_makes_the_conversation_busy_in_another(two, generator, users):  # noqa: F811
    a, b = two
    alice, _ = users
    generator.hold_after = 1
    stream = a.send(alice.id, "c-1", None, "hello")
    ack = await anext(stream)
    await anext(stream)
    # Bounded: a second reply started against the held generator would never end.
    busy = await asyncio.wait_for(collect(b.send(alice.id, "c-2", ack.conversation_id, "again")), 10)
    assert [(e.code, e.client_msg_id) for e in busy if isinstance(e, ChatFailed)] == [("busy", "c-2")]
    generator.release()
    await collect(stream)
    # Ended: the conversation takes a turn again, on either process.
    generator.hold_after = None
    after = await collect(b.send(alice.id, "c-3", ack.conversation_id, "now"))
    assert isinstance(after[0], Ack) and not any(isinstance(e, ChatFailed) for e in after)


def test_two_processes_storing_a_turn_at_the_same_moment_store_one(two, generator, users, settings):  # noqa: F811
    """Both openers pass their in-process claim at once; the database lock lets one through."""
    a, b = two
    alice, _ = users
    first = asyncio.run(collect(a.send(alice.id, "c-0", None, "start")))
    conversation_id = first[0].conversation_id
    runtime = RuntimeSettings.from_settings(settings, 2048)
    barrier = threading.Barrier(2)
    results: list[object] = []

    def begin(service: ChatService, client_msg_id: str) -> None:
        barrier.wait()
        try:
            turn, generation = service._opener.begin(  # noqa: SLF001 - the storing step itself
                alice.id, TurnRequest("send", client_msg_id, conversation_id, "hi", None, None), runtime)
            results.append(turn)
            if generation is not None:
                generation.discard()
        except ConversationBusy as exc:
            results.append(exc)

    threads = [threading.Thread(target=begin, args=(s, f"c-{n}")) for n, s in ((1, a), (2, b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(type(r).__name__ for r in results) == ["ConversationBusy", "Turn"]
