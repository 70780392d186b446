"""Fixtures for backend tests: a real migrated database per test, and a scripted generator.

`db_url` is tests/conftest.py's `fresh_database_url`: a copy of a template migrated once per
session, on SQLite and (with TEST_DATABASE_URL) on PostgreSQL, so each test using it runs on both.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Sequence

import pytest
from argon2 import PasswordHasher

from backend.db import create_db_engine, make_session_factory
from backend.generator import (
    ChatMessage,
    GenerationDone,
    GenerationEvent,
    GenerationParams,
    GeneratorStats,
    GeneratorUnavailable,
    InvalidGenerationParams,
    PromptTooLong,
    TextDelta,
)


@pytest.fixture
def db_url(fresh_database_url: str) -> str:
    return fresh_database_url


@pytest.fixture
def db_engine(db_url):
    engine = create_db_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def session_factory(db_engine):
    return make_session_factory(db_engine)


@pytest.fixture(scope="session")
def fast_hasher() -> PasswordHasher:
    # Same algorithm (argon2id), tiny cost: tests check behaviour, not hardness.
    return PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


def fake_count_tokens(messages: Sequence[ChatMessage]) -> int:
    """A stand-in for a chat template + tokenizer: 3 tokens of framing per message, one per
    whitespace-separated word, 2 for the generation prompt."""
    return sum(3 + len(m.content.split()) for m in messages) + 2


@dataclass
class StreamCall:
    request_id: str
    messages: list[ChatMessage]
    params: GenerationParams


@dataclass
class FakeGenerator:
    """A scripted TextGenerator that honours the protocol.

    stream() validates synchronously (PromptTooLong, InvalidGenerationParams,
    GeneratorUnavailable) and records the call; the iterator yields `script` as TextDelta events
    and then one GenerationDone. `hold_after=n` pauses after n deltas until `release()` or an
    abort; `end_after=(n, reason, error)` ends early with that GenerationDone; `raise_after=n`
    raises RuntimeError. abort() and closing the iterator end the request with "abort".
    """

    script: list[str] = field(default_factory=lambda: ["Hello", ", ", "**world**", "!"])
    finish_reason: str = "stop"
    context_length: int = 2048
    model_name: str = "fake-model"
    hold_after: int | None = None
    end_after: tuple[int, str, str | None] | None = None
    raise_after: int | None = None
    unavailable: bool = False
    max_temperature: float = 2.0
    calls: list[StreamCall] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)
    closed_early: list[str] = field(default_factory=list)
    active: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.n_of: dict[str, int] = {}
        self._wake: dict[str, asyncio.Event] = {}
        self.held = asyncio.Event()

    def count_prompt_tokens(self, messages: Sequence[ChatMessage], tools: Sequence[Any] = ()) -> int:
        return fake_count_tokens(messages)

    def count_text_tokens(self, text: str) -> int:
        return len(text.split())

    def stats(self) -> GeneratorStats:
        return GeneratorStats(running=len(self.active), waiting=0, kv_blocks_used=len(self.active),
                              kv_blocks_total=64, kv_usage=len(self.active) / 64, prefix_cache_queries=0,
                              prefix_cache_hits=0, preemptions=0, prompt_tokens_total=0,
                              generation_tokens_total=0)

    def stream_prompt(self, request_id: str, prompt: str, params: GenerationParams) -> AsyncIterator[GenerationEvent]:
        """As stream(), with the prompt recorded as one ChatMessage("prompt", prompt)."""
        return self.stream(request_id, [ChatMessage("prompt", prompt)], params)

    def stream(
        self, request_id: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> AsyncIterator[GenerationEvent]:
        if self.unavailable:
            raise GeneratorUnavailable("the engine is loading")
        if params.max_tokens < 1:
            raise InvalidGenerationParams(f"max_tokens must be >= 1, got {params.max_tokens}")
        if not 0 <= params.temperature <= self.max_temperature:
            raise InvalidGenerationParams(f"temperature must be in [0, {self.max_temperature}], got {params.temperature}")
        if not 0 < params.top_p <= 1:
            raise InvalidGenerationParams(f"top_p must be in (0, 1], got {params.top_p}")
        prompt_tokens = self.count_prompt_tokens(messages)
        if prompt_tokens + params.max_tokens > self.context_length:
            raise PromptTooLong(f"{prompt_tokens} + {params.max_tokens} > {self.context_length}")
        if request_id in self.active:
            raise ValueError(f"duplicate request id {request_id}")
        self.calls.append(StreamCall(request_id, list(messages), params))
        self.n_of[request_id] = params.n
        self.active.add(request_id)
        self._wake[request_id] = asyncio.Event()
        return self._run(request_id, prompt_tokens)

    async def _run(self, request_id: str, prompt_tokens: int) -> AsyncIterator[GenerationEvent]:
        sent = 0
        finished = False
        try:
            for piece in self.script:
                if request_id in self.aborted:
                    break
                if self.end_after is not None and sent == self.end_after[0]:
                    _, reason, error = self.end_after
                    finished = True
                    code = "queue_timeout" if (error or "").startswith("queue_timeout:") else None
                    for index in range(self.n_of.get(request_id, 1)):
                        yield GenerationDone(reason, prompt_tokens, sent, 1.0, 2.0, 30.0, error, index=index,
                                             error_code=code)
                    return
                if self.raise_after is not None and sent == self.raise_after:
                    raise RuntimeError("engine exploded")
                for index in range(self.n_of.get(request_id, 1)):
                    yield TextDelta(piece, index=index)
                sent += 1
                if self.hold_after is not None and sent == self.hold_after:
                    self.held.set()
                    await self._wake[request_id].wait()
                await asyncio.sleep(0)
            reason = "abort" if request_id in self.aborted else self.finish_reason
            finished = True
            for index in range(self.n_of.get(request_id, 1)):
                yield GenerationDone(reason, prompt_tokens, sent, 1.5, 12.5, 40.0, None, index=index)
        finally:
            if not finished:
                self.closed_early.append(request_id)
            self.active.discard(request_id)

    def release(self) -> None:
        for event in self._wake.values():
            event.set()

    async def abort(self, request_id: str) -> None:
        if request_id in self.active:
            self.aborted.append(request_id)
            self._wake[request_id].set()


@pytest.fixture
def count_tokens():
    return fake_count_tokens


@pytest.fixture
def fake_generator_cls():
    return FakeGenerator


class FakeWallClock:
    """Unix seconds that move only when a test says so. Installed as the `time` module of the
    `limits` memory storage and of backend.limits (the per-minute window keeps its own wall
    clock), and passed as the limiter's clock, so retry-after values are exact."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def wall_clock(monkeypatch) -> FakeWallClock:
    import limits.storage.memory

    import backend.limits

    clock = FakeWallClock(1_800_000_000.0)  # 2027-01-15 08:00:00 UTC
    monkeypatch.setattr(limits.storage.memory, "time", clock)
    monkeypatch.setattr(backend.limits, "time", clock)
    return clock
