"""web.startup: the port serves at once while the model loads (starting page, /healthz 503,
WebSocket close 1013, /v1 and /api 503), and turns into the app when the engine has started."""

from __future__ import annotations

import sys
import threading
import time
import types
from typing import Iterator

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from backend.settings import Settings
from web.app import create_app
from web.errors import WS_CLOSE_TRY_AGAIN_LATER
from web.startup import Startup

from .conftest import FakeGenerator, wait_until


class SlowLoad:
    """A stand-in for backend.engine_adapter whose create_generator reports progress, then
    blocks until released (or raises `error`)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.reported = threading.Event()
        self.error: Exception | None = None
        self.generator = FakeGenerator()
        self.started = 0

    def create_generator(self, model_path, progress=None, **engine_options):
        progress("repacking layer 10/30", 0.5)
        self.reported.set()
        self.release.wait(10)
        if self.error is not None:
            raise self.error
        self.generator.start = lambda: setattr(self, "started", self.started + 1)  # type: ignore[method-assign]
        self.generator.shutdown = lambda: None  # type: ignore[attr-defined]
        return self.generator


@pytest.fixture
def slow(monkeypatch: pytest.MonkeyPatch) -> SlowLoad:
    load = SlowLoad()
    adapter = types.ModuleType("backend.engine_adapter")
    adapter.create_generator = load.create_generator  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "backend.engine_adapter", adapter)
    return load


@pytest.fixture
def starting(slow: SlowLoad, database_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(database_url=database_url)), follow_redirects=False) as client:
        assert slow.reported.wait(5)
        yield client
        slow.release.set()


def test_healthz_is_503_with_the_progress_until_the_model_has_loaded(starting: TestClient, slow: SlowLoad) -> None:
    response = starting.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "starting" and body["ready"] is False
    assert body["progress"] == pytest.approx(0.45)  # half of the load, which is 90 % of start-up
    assert body["stage"] == "repacking layer 10/30"
    slow.release.set()
    wait_until(lambda: starting.get("/healthz").status_code == 200, what="ready")
    assert starting.get("/healthz").json() == {"status": "ok", "model": "fake-model", "ready": True}
    assert slow.started == 1


def test_pages_get_the_starting_page_then_the_app(starting: TestClient, slow: SlowLoad) -> None:
    for path in ("/", "/login", "/chat"):
        response = starting.get(path)
        assert response.status_code == 503, path
        assert response.headers["retry-after"]
        assert 'id="starting"' in response.text and 'id="starting-percent">45<' in response.text
        assert '<script src="/static/starting.js"' in response.text
        assert "<script>" not in response.text  # the CSP allows no inline script
        assert "content-security-policy" in response.headers
    assert starting.get("/static/starting.js").status_code == 200
    slow.release.set()
    wait_until(lambda: starting.get("/healthz").status_code == 200, what="ready")
    assert starting.get("/login").status_code == 200


def test_the_websocket_v1_and_api_refuse_cleanly_while_starting(starting: TestClient) -> None:
    with pytest.raises(WebSocketDisconnect) as closed:
        with starting.websocket_connect("/ws") as ws:
            ws.receive_text()
    assert closed.value.code == WS_CLOSE_TRY_AGAIN_LATER
    response = starting.post("/v1/chat/completions", json={"model": "x", "messages": []})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "starting"
    assert response.json()["error"]["type"] == "server_error"
    response = starting.get("/api/conversations")
    assert response.status_code == 503 and response.json()["error"]["code"] == "starting"


def test_a_failed_load_is_reported_and_the_port_stays_open(starting: TestClient, slow: SlowLoad) -> None:
    slow.error = RuntimeError("cannot load the model: no such file")
    slow.release.set()
    wait_until(lambda: starting.get("/healthz").json()["status"] == "failed", what="failed")
    body = starting.get("/healthz").json()
    assert body["error"] == "the model could not be loaded; see the server log" and body["ready"] is False
    assert "no such file" not in starting.get("/healthz").text  # the cause is for the log, not for anyone
    page = starting.get("/chat")
    assert page.status_code == 503 and 'id="starting-error"' in page.text


def test_progress_never_moves_backwards_and_the_load_is_90_percent() -> None:
    startup = Startup()
    startup.loader_progress("weights", 1.0)
    assert startup.view().progress == pytest.approx(0.9)
    startup.report("earlier", 0.2)
    assert startup.view().progress == pytest.approx(0.9) and startup.view().stage == "earlier"
    startup.set_ready()
    assert startup.is_ready and startup.view().progress == 1.0


def test_stopping_while_the_model_loads_is_immediate(slow: SlowLoad, database_url: str) -> None:
    started = time.monotonic()
    with TestClient(create_app(Settings(database_url=database_url))) as client:
        assert slow.reported.wait(5)
        assert client.get("/healthz").status_code == 503
    assert time.monotonic() - started < 5  # not the 10 s the load would still take
    slow.release.set()
