"""Generation.account_outside: work that ran under a generation's gates without its own stream
(an agent run's model steps) is recorded at close() like a stream's usage: one usage record
through the lease, the metrics once, and nothing when the generation has a stream of its own."""

from __future__ import annotations

from sqlalchemy import select

from backend.generation import Generations
from backend.generator import GenerationDone, GenerationParams
from backend.limits import UsageLimiter
from backend.models import UsageRecord
from backend.runtime_settings import RuntimeSettingsStore
from backend.settings import Settings

from .test_generation import Recorder, alice, generator  # noqa: F401 (fixtures)


def make_hub(session_factory, generator, wall_clock) -> Generations:  # noqa: F811
    store = RuntimeSettingsStore(session_factory, Settings(max_tokens=64), context_length=2048)
    return Generations(generator, session_factory, limiter=UsageLimiter(session_factory, store, clock=wall_clock),
                       metrics=Recorder())


def rows(session_factory) -> list[tuple[str, int, int]]:
    with session_factory() as db:
        return [(r.source, r.prompt_tokens, r.completion_tokens) for r in db.scalars(select(UsageRecord))]


async def test_outside_usage_is_recorded_once_at_close(session_factory, generator, alice, wall_clock):  # noqa: F811
    hub = make_hub(session_factory, generator, wall_clock)
    generation = hub.admit(alice.id, "chat", prompt_tokens=5)
    generation.account_outside(GenerationDone("stop", 420, 24))
    assert rows(session_factory) == []  # recorded when the gates are given back
    await generation.close()
    await generation.close()
    generation.account_outside(GenerationDone("stop", 1, 1))  # after close: ignored
    assert rows(session_factory) == [("chat", 420, 24)]
    assert hub.metrics.done == [("stop", "chat", 0)]
    assert hub.limiter.tokens_today(alice.id) == 444


async def test_without_outside_usage_an_unstarted_generation_records_nothing(session_factory, generator, alice,  # noqa: F811
                                                                              wall_clock):
    hub = make_hub(session_factory, generator, wall_clock)
    await hub.admit(alice.id, "chat", prompt_tokens=5).close()
    assert rows(session_factory) == []


async def test_a_generation_with_its_own_stream_ignores_outside_usage(session_factory, generator, alice,  # noqa: F811
                                                                      wall_clock):
    hub = make_hub(session_factory, generator, wall_clock)
    generation = hub.admit(alice.id, "chat", prompt_tokens=5)
    generation.start("r1", GenerationParams(max_tokens=4), prompt="hi")
    generation.account_outside(GenerationDone("stop", 999, 999))
    async for _ in generation.events():
        pass
    await generation.close()
    [(source, prompt, completion)] = rows(session_factory)
    assert source == "chat" and prompt != 999 and completion != 999
