"""web.__main__: `python -m web serve` settings and the uvicorn call (uvicorn.run replaced)."""

from __future__ import annotations

from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette

from web.__main__ import main


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def fake_run(app: Any, **kwargs: Any) -> None:
        calls.append({"app": app, **kwargs})

    monkeypatch.setattr(uvicorn, "run", fake_run)
    for name in ("HOST", "PORT", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return calls


def test_defaults_are_localhost_8000_with_one_worker(served: list[dict[str, Any]]) -> None:
    assert main(["serve"]) == 0
    (call,) = served
    assert (call["host"], call["port"], call["workers"]) == ("127.0.0.1", 8000, 1)
    assert isinstance(call["app"], Starlette)


def test_environment_then_flags_override(served: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOST", "0.0.0.0")
    monkeypatch.setenv("PORT", "9000")
    main(["serve"])
    main(["serve", "--host", "127.0.0.2", "--port", "9100"])
    assert [(c["host"], c["port"]) for c in served] == [("0.0.0.0", 9000), ("127.0.0.2", 9100)]


@pytest.mark.parametrize("argv, env", [(["serve", "--port", "70000"], {}), (["serve"], {"PORT": "eighty"})])
def test_invalid_settings_exit_2_without_serving(
    served: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main(argv) == 2
    assert served == []
    assert "PORT" in capsys.readouterr().err


def test_a_command_is_required(served: list[dict[str, Any]]) -> None:
    with pytest.raises(SystemExit):
        main([])
