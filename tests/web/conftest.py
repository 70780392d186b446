"""Fixtures for the web tests: a migrated SQLite file per test, a scripted fake generator, and a
TestClient running the app's lifespan.

The real migrations run once per session into a template database; each test gets a copy of it,
so tests are isolated and cost a file copy, not a migration run.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator, Sequence

import pytest
from starlette.testclient import TestClient

from backend.db import run_migrations
from backend.generator import (
    FINISH_ABORT,
    FINISH_LENGTH,
    FINISH_STOP,
    ChatMessage,
    GenerationDone,
    GenerationEvent,
    GenerationParams,
    TextDelta,
)
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
    """

    model_name = "fake-model"
    context_length = 2048

    def __init__(self, tokens: Sequence[str] = ("Hello", ", ", "**world**", "!"), hold_after: int | None = None) -> None:
        self.tokens = list(tokens)
        self.hold_after = hold_after
        self.requests: list[tuple[str, list[ChatMessage], GenerationParams]] = []
        self.abort_calls: list[str] = []
        self.closed_early: list[str] = []
        self.finished: dict[str, str] = {}
        self._released = threading.Event()

    def count_prompt_tokens(self, messages: Sequence[ChatMessage]) -> int:
        return sum(4 + len(m.content.split()) for m in messages) + 2

    def stream(
        self, request_id: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> AsyncIterator[GenerationEvent]:
        self.requests.append((request_id, list(messages), params))
        return self._events(request_id, list(messages), params)

    async def abort(self, request_id: str) -> None:
        self.abort_calls.append(request_id)

    def release(self) -> None:
        self._released.set()

    async def _events(
        self, request_id: str, messages: list[ChatMessage], params: GenerationParams
    ) -> AsyncIterator[GenerationEvent]:
        ended = False
        emitted = 0

        def done(reason: str) -> GenerationDone:
            self.finished[request_id] = reason
            return GenerationDone(
                finish_reason=reason,
                prompt_tokens=self.count_prompt_tokens(messages),
                completion_tokens=emitted,
                queue_ms=1.5,
                ttft_ms=2.5,
                decode_tokens_per_s=100.0,
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
                    yield done(FINISH_ABORT)
                    return
                await asyncio.sleep(0)
                emitted += 1
                yield TextDelta(token)
            ended = True
            yield done(FINISH_LENGTH if params.max_tokens < len(self.tokens) else FINISH_STOP)
        finally:
            if not ended:
                self.closed_early.append(request_id)


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


@pytest.fixture(scope="session")
def migrated_db_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("db-template") / "template.db"
    run_migrations(f"sqlite:///{path}")
    return path


@pytest.fixture
def database_url(migrated_db_template: Path, tmp_path: Path) -> str:
    path = tmp_path / "crescent.db"
    shutil.copyfile(migrated_db_template, path)
    return f"sqlite:///{path}"


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url, max_tokens=64, temperature=0.0)


@pytest.fixture
def fake() -> FakeGenerator:
    return FakeGenerator()


@pytest.fixture
def client(settings: Settings, fake: FakeGenerator) -> Iterator[TestClient]:
    app = create_app(settings, generator=fake)
    # follow_redirects=False: the tests check the redirects themselves.
    with TestClient(app, follow_redirects=False) as test_client:
        yield test_client


def sign_up(client: TestClient, username: str, password: str = PASSWORD) -> str:
    """Sign up through the form; returns the session token the response set."""
    response = client.post("/signup", data={"username": username, "password": password})
    assert response.status_code == 303, response.text
    token = response.cookies.get(SESSION_COOKIE)
    assert token
    return token


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
