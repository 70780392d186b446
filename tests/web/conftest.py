"""Fixtures for the web tests: a migrated database per test, a scripted fake generator, and a
TestClient running the app's lifespan.

`database_url` is tests/conftest.py's `fresh_database_url`: a copy of a template migrated once
per session, on SQLite and (with TEST_DATABASE_URL) on PostgreSQL, so each test runs on both.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator, Sequence

import pytest
from starlette.testclient import TestClient

from backend.generator import (
    FINISH_ABORT,
    FINISH_LENGTH,
    FINISH_STOP,
    ChatMessage,
    GenerationDone,
    GenerationEvent,
    GenerationParams,
    GeneratorStats,
    PromptTooLong,
    TextDelta,
    TokenLogprob,
)
from backend.rag import HashingEmbedder
from backend.settings import Settings
from web.app import create_app
from web.session import SESSION_COOKIE

PASSWORD = "correct horse battery staple"


class FakeGenerator:
    """A scripted :class:`backend.generator.TextGenerator`.

    Streams `tokens` one TextDelta each (at most params.max_tokens of them), then a
    GenerationDone. With `hold_after=n` it pauses after the n-th delta until :meth:`release`,
    an :meth:`abort`, or the iterator being closed, so a test can act mid-stream without timing
    guesses. Records every request, every abort call and every stream closed before its end;
    it runs on the app's event-loop thread while tests read it from theirs, hence the lock-free
    append-only containers and the polling :meth:`wait_until`.

    stream_prompt() records its prompt as one ChatMessage("prompt", text). With
    params.logprobs = k, token i of the script carries logprob -(i + 1) / 10 and k alternatives
    (the token itself first, then "alt1".."altk-1"). `fail_after=n` ends the stream after n
    deltas with finish_reason "error". A prompt that cannot fit with max_tokens raises
    PromptTooLong, as a real generator does.
    """

    model_name = "fake-model"
    context_length = 2048

    def __init__(self, tokens: Sequence[str] = ("Hello", ", ", "**world**", "!"), hold_after: int | None = None) -> None:
        self.tokens = list(tokens)
        self.hold_after = hold_after
        self.fail_after: int | None = None
        self.delay_s = 0.0  # between two tokens, so a test can act while a reply streams
        self.budget: int | None = None  # tokens it may emit so far (None: all), for paced tests
        self.requests: list[tuple[str, list[ChatMessage], GenerationParams]] = []
        self.abort_calls: list[str] = []
        self.closed_early: list[str] = []
        self.finished: dict[str, str] = {}
        self._released = threading.Event()

    def count_prompt_tokens(self, messages: Sequence[ChatMessage], tools: Sequence[Any] = ()) -> int:
        return sum(4 + len(m.content.split()) for m in messages) + 2

    def count_text_tokens(self, text: str) -> int:
        return len(text.split()) + 1

    def stats(self) -> GeneratorStats:
        return GeneratorStats(running=1, waiting=2, kv_blocks_used=3, kv_blocks_total=10, kv_usage=0.3,
                              prefix_cache_queries=40, prefix_cache_hits=16, preemptions=0,
                              prompt_tokens_total=100, generation_tokens_total=50)

    def stream(
        self, request_id: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> AsyncIterator[GenerationEvent]:
        return self._start(request_id, list(messages), params, self.count_prompt_tokens(messages))

    def stream_prompt(self, request_id: str, prompt: str, params: GenerationParams) -> AsyncIterator[GenerationEvent]:
        return self._start(request_id, [ChatMessage("prompt", prompt)], params, self.count_text_tokens(prompt))

    def _start(self, request_id: str, messages: list[ChatMessage], params: GenerationParams,
               prompt_tokens: int) -> AsyncIterator[GenerationEvent]:
        if prompt_tokens + params.max_tokens > self.context_length:
            raise PromptTooLong(f"{prompt_tokens} + {params.max_tokens} > {self.context_length}")
        self.requests.append((request_id, messages, params))
        return self._events(request_id, prompt_tokens, params)

    async def abort(self, request_id: str) -> None:
        self.abort_calls.append(request_id)

    def release(self) -> None:
        self._released.set()

    async def _events(
        self, request_id: str, prompt_tokens: int, params: GenerationParams
    ) -> AsyncIterator[GenerationEvent]:
        ended = False
        emitted = 0
        n = params.n

        def done(reason: str, error: str | None = None, index: int = 0) -> GenerationDone:
            self.finished[request_id if n == 1 else f"{request_id}#{index}"] = reason
            return GenerationDone(
                finish_reason=reason,
                prompt_tokens=prompt_tokens,
                completion_tokens=emitted,
                queue_ms=1.5,
                ttft_ms=2.5,
                decode_tokens_per_s=100.0,
                error=error,
                e2e_ms=9.5,
                tpot_ms=2.0,
                itl_ms=(2.0,) * max(emitted - 1, 0),
                index=index,
            )

        try:
            for token in self.tokens[: params.max_tokens]:
                if self.hold_after is not None and emitted == self.hold_after:
                    deadline = time.monotonic() + 10.0
                    while not self._released.is_set() and request_id not in self.abort_calls:
                        if time.monotonic() > deadline:
                            raise AssertionError("FakeGenerator held for 10 s: the test never released it")
                        await asyncio.sleep(0.005)
                if request_id in self.abort_calls:
                    ended = True
                    for final in [done(FINISH_ABORT, index=i) for i in range(n)]:
                        yield final
                    return
                if emitted == self.fail_after:
                    ended = True
                    for i in range(n):
                        yield done("error", "engine exploded", index=i)
                    return
                while self.budget is not None and emitted >= self.budget:
                    await asyncio.sleep(0.002)
                await asyncio.sleep(self.delay_s)
                emitted += 1
                for i in range(n):  # samples interleave, as the engine's do
                    yield TextDelta(token, _fake_logprobs(token, emitted, params.logprobs), index=i)
            ended = True
            for i in range(n):
                yield done(FINISH_LENGTH if params.max_tokens < len(self.tokens) else FINISH_STOP, index=i)
        finally:
            if not ended:
                self.closed_early.append(request_id)


def _fake_logprobs(token: str, position: int, k: int | None) -> tuple[TokenLogprob, ...]:
    if k is None:
        return ()
    alternatives = [token] + [f"alt{j}" for j in range(1, k)]
    top = tuple(TokenLogprob(t, -position / 10 - j, tuple(t.encode())) for j, t in enumerate(alternatives[:k]))
    return (TokenLogprob(token, -position / 10, tuple(token.encode()), top),)


def wait_until(predicate: Callable[[], Any], timeout: float = 5.0, what: str = "condition") -> Any:
    """Poll `predicate` (from the test thread) until it returns a truthy value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


@pytest.fixture
def database_url(fresh_database_url: str) -> str:
    return fresh_database_url


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    # data_dir: the secret file goes to tmp_path on PostgreSQL too (SQLite's is the file's directory).
    return Settings(database_url=database_url, max_tokens=64, temperature=0.0, data_dir=str(tmp_path))


@pytest.fixture
def fake() -> FakeGenerator:
    return FakeGenerator()


@pytest.fixture
def client(settings: Settings, fake: FakeGenerator) -> Iterator[TestClient]:
    # HashingEmbedder: documents are embedded without loading a model (tests/web/test_app.py
    # checks that the default embedder is lazy).
    app = create_app(settings, generator=fake, embedder=HashingEmbedder())
    # follow_redirects=False: the tests check the redirects themselves.
    with TestClient(app, follow_redirects=False) as test_client:
        yield test_client


def sign_up(client: TestClient, username: str, password: str = PASSWORD) -> str:
    """Sign up through the form; returns the session token the response set."""
    response = client.post("/signup", data={"username": username, "password": password, **csrf_field(client)})
    assert response.status_code == 303, response.text
    token = response.cookies.get(SESSION_COOKIE)
    assert token
    return token


_CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]*)">')


def csrf_token(client: TestClient) -> str:
    """The CSRF token for `client`'s current cookies, as a page would embed it (docs/INTERFACES.md
    6.5): read from the meta tag of a page (a 404 page: every page has it, logged in or not).
    Anonymous clients also receive the double-submit cookie here. Ask again after the session
    cookie changes (log-in, log-out, use_session)."""
    response = client.get("/__csrf_probe__", headers={"Accept": "text/html"})
    match = _CSRF_META.search(response.text)
    assert match and match.group(1), "no csrf-token meta tag in the page"
    return match.group(1)


def csrf_headers(client: TestClient) -> dict[str, str]:
    """``{"X-CSRF-Token": ...}`` for fetch-style JSON requests (POST/PUT/PATCH/DELETE)."""
    return {"X-CSRF-Token": csrf_token(client)}


def csrf_field(client: TestClient) -> dict[str, str]:
    """``{"csrf_token": ...}`` to merge into form data."""
    return {"csrf_token": csrf_token(client)}


def use_session(client: TestClient, token: str | None) -> None:
    """Make `client` act as the user of `token` (None: logged out)."""
    client.cookies.clear()
    if token is not None:
        client.cookies.set(SESSION_COOKIE, token)


def app_state(client: TestClient):
    return client.app.state.crescent  # type: ignore[attr-defined]


def user_id(client: TestClient, token: str) -> str:
    user = app_state(client).auth.user_for_session(token)
    assert user is not None
    return user.id


@pytest.fixture(scope="session")
def real_generator() -> Iterator[Any]:
    """The real engine with the packaged model, once per session (slow tests only)."""
    adapter = pytest.importorskip("backend.engine_adapter", reason="backend.engine_adapter not written yet")
    generator = adapter.create_generator(None)
    generator.start()
    yield generator
    generator.shutdown()
