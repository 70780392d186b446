"""web.app: the lifespan (interrupted replies, owning the engine), paths, static files."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from backend.auth import AuthService
from backend.db import create_db_engine, make_session_factory
from backend.models import Conversation, Message
from backend.settings import Settings
from web.app import REPO_ROOT, STATIC_DIR, TEMPLATES_DIR, create_app

from .conftest import PASSWORD, FakeGenerator, csrf_field, wait_until


class LifecycleGenerator(FakeGenerator):
    def __init__(self) -> None:
        super().__init__()
        self.started = 0
        self.stopped = 0

    def start(self) -> None:
        self.started += 1

    def shutdown(self) -> None:
        self.stopped += 1


def test_startup_marks_replies_left_streaming_as_interrupted(database_url: str) -> None:
    engine = create_db_engine(database_url)
    factory = make_session_factory(engine)
    user = AuthService(factory, 3600).sign_up("alice", PASSWORD)
    with factory() as db:
        conversation = Conversation(user_id=user.id, title="Crashed")
        db.add(conversation)
        db.flush()
        reply = Message(
            conversation_id=conversation.id, user_id=user.id, position=0, role="assistant",
            content="half an ans", status="streaming",
        )
        db.add(reply)
        db.commit()
        conversation_id, reply_id = conversation.id, reply.id
    engine.dispose()

    settings = Settings(database_url=database_url)
    with TestClient(create_app(settings, generator=FakeGenerator()), follow_redirects=False) as client:
        login = {"username": "alice", "password": PASSWORD, **csrf_field(client)}
        assert client.post("/login", data=login).status_code == 303
        messages = client.get(f"/api/conversations/{conversation_id}").json()["messages"]
    (stored,) = [m for m in messages if m["id"] == reply_id]
    assert stored["status"] == "interrupted"
    assert stored["content"] == "half an ans"


def test_without_a_generator_the_lifespan_owns_the_engine(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    created: list[LifecycleGenerator] = []
    calls: list[tuple[str | None, object, dict]] = []

    def create_generator(model_path: str | None, progress=None, **engine_options) -> LifecycleGenerator:
        calls.append((model_path, progress, engine_options))
        progress("weights", 0.5)  # the app's callback accepts (stage, fraction)
        created.append(LifecycleGenerator())
        return created[-1]

    adapter = types.ModuleType("backend.engine_adapter")
    adapter.create_generator = create_generator  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "backend.engine_adapter", adapter)

    settings = Settings(database_url=database_url, model_path="/models/some.gguf", queue_timeout_s=42.5,
                        quantization="none", kv_host_cache_gib=1.5)
    with TestClient(create_app(settings)) as client:
        # The model loads in the background: the port answers before it is ready.
        wait_until(lambda: client.get("/healthz").status_code == 200, what="the engine started")
        assert [c[0] for c in calls] == ["/models/some.gguf"]
        # CRESCENT_QUEUE_TIMEOUT_S, CRESCENT_QUANTIZATION and CRESCENT_KV_HOST_CACHE_GIB reach the engine
        assert calls[0][2] == {"queue_timeout_s": 42.5, "quantization": "none", "kv_host_cache_gib": 1.5}
        assert created[0].started == 1 and created[0].stopped == 0
        assert client.get("/healthz").json() == {"status": "ok", "model": "fake-model", "ready": True}
    assert created[0].stopped == 1


def test_a_given_generator_is_left_to_its_owner(database_url: str) -> None:
    generator = LifecycleGenerator()
    with TestClient(create_app(Settings(database_url=database_url), generator=generator)) as client:
        assert client.get("/healthz").status_code == 200
    assert (generator.started, generator.stopped) == (0, 0)


def test_paths_are_resolved_from_the_package_not_the_working_directory(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert TEMPLATES_DIR == REPO_ROOT / "templates" and TEMPLATES_DIR.is_dir()
    assert STATIC_DIR == REPO_ROOT / "static" and STATIC_DIR.is_dir()
    assert (REPO_ROOT / "web" / "app.py").is_file()
    monkeypatch.chdir(tmp_path)
    assert client.get("/login").status_code == 200


def test_static_files_are_served_with_the_security_headers(client: TestClient) -> None:
    files = sorted(p for p in STATIC_DIR.iterdir() if p.is_file())
    if not files:
        pytest.skip("static/ is empty")
    response = client.get(f"/static/{files[0].name}")
    assert response.status_code == 200
    assert response.content == files[0].read_bytes()
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" in response.headers
    assert client.get("/static/../backend/settings.py").status_code == 404


def test_importing_the_web_layer_loads_neither_engine_nor_torch() -> None:
    import subprocess

    code = (
        "import sys, web.app, web.ws, web.__main__; "
        "loaded = sorted(m for m in ('engine', 'torch', 'backend.engine_adapter') if m in sys.modules); "
        "print(','.join(loaded))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
