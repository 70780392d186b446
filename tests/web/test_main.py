"""web.__main__: `python -m web serve` settings and the uvicorn call (uvicorn.run replaced)."""

from __future__ import annotations

import os
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette

from web.__main__ import main


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch, tmp_path) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    # The default database is ./crescent.db; its secret file goes to tmp_path, not the checkout.
    monkeypatch.setenv("CRESCENT_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("CRESCENT_SECRET_KEY", raising=False)

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


# --- the admin CLI --------------------------------------------------------------------------------


@pytest.fixture
def cli_db(monkeypatch: pytest.MonkeyPatch, tmp_path) -> str:
    """A fresh, unmigrated database: the CLI migrates it itself."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    return url


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(text))


def _services(url: str):
    from backend.api_keys import ApiKeyService
    from backend.auth import AuthService
    from backend.db import create_db_engine, make_session_factory

    factory = make_session_factory(create_db_engine(url))
    return AuthService(factory, 3600), ApiKeyService(factory)


def test_create_user_reads_the_password_from_stdin(cli_db, monkeypatch, capsys) -> None:
    _stdin(monkeypatch, "a strong password\n")
    assert main(["admin", "create-user", "root", "--admin"]) == 0
    _stdin(monkeypatch, "another password\n")
    assert main(["admin", "create-user", "bob"]) == 0
    auth, _keys = _services(cli_db)
    assert auth.find_user("root").role == "admin" and auth.find_user("bob").role == "user"
    token = auth.log_in("root", "a strong password")  # the newline is not part of the password
    assert auth.user_for_session(token).is_admin
    assert "created user root (admin)" in capsys.readouterr().err


def test_the_first_cli_user_is_admin_even_without_the_flag(cli_db, monkeypatch) -> None:
    _stdin(monkeypatch, "a strong password\n")
    assert main(["admin", "create-user", "first"]) == 0
    assert _services(cli_db)[0].find_user("first").role == "admin"


@pytest.mark.parametrize("password", ["short\n", "\n"])
def test_create_user_refuses_a_bad_password(cli_db, monkeypatch, capsys, password) -> None:
    _stdin(monkeypatch, password)
    assert main(["admin", "create-user", "root"]) == 1
    assert "at least 8" in capsys.readouterr().err


def test_create_user_refuses_a_taken_name(cli_db, monkeypatch) -> None:
    _stdin(monkeypatch, "a strong password\n")
    assert main(["admin", "create-user", "root"]) == 0
    _stdin(monkeypatch, "a strong password\n")
    assert main(["admin", "create-user", "ROOT"]) == 1


def test_create_key_prints_only_a_working_secret(cli_db, monkeypatch, capsys) -> None:
    _stdin(monkeypatch, "a strong password\n")
    main(["admin", "create-user", "alice"])
    capsys.readouterr()
    assert main(["admin", "create-key", "alice", "--name", "ci"]) == 0
    out = capsys.readouterr().out
    secret = out.strip()
    assert out == secret + "\n" and secret.startswith("crk_")
    auth, keys = _services(cli_db)
    assert keys.user_for_key(secret).username == "alice"
    assert [k.name for k in keys.list_keys(auth.find_user("alice").id)] == ["ci"]


def test_create_key_for_an_unknown_user_fails(cli_db, capsys) -> None:
    assert main(["admin", "create-key", "ghost"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "ghost" in captured.err


def test_proxy_headers_are_trusted_only_from_forwarded_allow_ips(served, monkeypatch) -> None:
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    assert main(["serve"]) == 0
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "10.0.0.5")
    assert main(["serve"]) == 0
    assert [(c["proxy_headers"], c["forwarded_allow_ips"]) for c in served] == [
        (True, "127.0.0.1,::1"), (True, "10.0.0.5")]


@pytest.mark.parametrize("url", ["foo://x", "postgresql+nosuchdriver://u@h/db"])
def test_an_unknown_database_dialect_exits_2_with_one_line(monkeypatch, capsys, url) -> None:
    monkeypatch.setenv("DATABASE_URL", url)
    assert main(["admin", "create-key", "bob"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "DATABASE_URL" in err and "Traceback" not in err


def test_a_short_secret_key_is_refused_at_start_with_one_line(served, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CRESCENT_SECRET_KEY", "too short")
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert served == []
    assert err.count("\n") == 1 and "CRESCENT_SECRET_KEY must be at least 32 characters" in err


def test_serve_creates_the_secret_file_in_the_data_directory(served, tmp_path) -> None:
    assert main(["serve"]) == 0
    assert (tmp_path / "crescent.secret").stat().st_mode & 0o777 == 0o600


# --- a database that cannot be reached: one line naming the cause, exit 2 -------------------------


def _closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("argv", [["check-db"], ["admin", "create-user", "root"], ["admin", "create-key", "bob"]])
def test_refused_postgresql_connection_is_one_line_with_the_password_masked(monkeypatch, capsys, argv) -> None:
    pytest.importorskip("psycopg")
    monkeypatch.setenv("DATABASE_URL", f"postgresql://crescent:hunter2secret@127.0.0.1:{_closed_port()}/crescent")
    _stdin(monkeypatch, "a strong password\n")
    assert main(argv) == 2
    err = _one_line(capsys.readouterr().err)
    assert "connection refused" in err and "hunter2secret" not in err and "crescent:***@127.0.0.1" in err


@pytest.mark.parametrize("argv", [["check-db"], ["admin", "create-user", "root"]])
def test_a_missing_postgresql_database_is_named_in_one_line(postgres_server, monkeypatch, capsys, argv) -> None:
    monkeypatch.setenv("DATABASE_URL", postgres_server.url("crescent_no_such_database"))
    _stdin(monkeypatch, "a strong password\n")
    assert main(argv) == 2
    err = _one_line(capsys.readouterr().err)
    assert "database 'crescent_no_such_database' does not exist" in err and "createdb" in err


def test_check_db_passes_silently_on_a_reachable_postgresql_database(postgres_server, monkeypatch, capsys) -> None:
    name = postgres_server.create()
    try:
        monkeypatch.setenv("DATABASE_URL", postgres_server.url(name))
        assert main(["check-db"]) == 0
    finally:
        postgres_server.drop(name)
    assert capsys.readouterr().err == ""


def test_check_db_passes_silently_on_a_new_sqlite_file(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'new.db'}")
    assert main(["check-db"]) == 0
    assert capsys.readouterr().err == ""


def test_an_sqlite_file_in_a_missing_directory_is_one_line(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "not-a-dir").write_text("a file where a directory should be")
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'not-a-dir' / 'crescent.db'}")
    _stdin(monkeypatch, "a strong password\n")
    assert main(["check-db"]) == 2
    assert main(["admin", "create-user", "root"]) == 2
    err = capsys.readouterr().err
    assert err.count("unable to open database file") == 2 and "Traceback" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any directory")
def test_an_sqlite_file_in_an_unwritable_directory_is_one_line(tmp_path, monkeypatch, capsys) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        monkeypatch.setenv("DATABASE_URL", f"sqlite:///{locked / 'crescent.db'}")
        assert main(["check-db"]) == 2
    finally:
        locked.chmod(0o700)
    err = _one_line(capsys.readouterr().err)
    assert "unable to open database file" in err and str(locked) in err


def test_with_an_instance_name_every_log_line_names_the_process(
    served: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import logging
    import logging.config

    monkeypatch.setenv("CRESCENT_INSTANCE", "b")
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        assert main(["serve"]) == 0
        record = logging.LogRecord("web", logging.INFO, __file__, 1, "hello", None, None)
        assert "[b] INFO web: hello" in root.handlers[0].format(record)
        (call,) = served
        logging.config.dictConfig(call["log_config"])  # what uvicorn does with it
        for name in ("uvicorn", "uvicorn.access"):  # uvicorn.error propagates to "uvicorn"
            line = logging.getLogger(name).handlers[0].formatter._fmt  # type: ignore[union-attr]
            assert line.startswith("[b] "), (name, line)
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])


def test_without_an_instance_name_log_lines_are_as_before(served: list[dict[str, Any]], monkeypatch) -> None:
    monkeypatch.delenv("CRESCENT_INSTANCE", raising=False)
    assert main(["serve"]) == 0
    (call,) = served
    assert all(not f["fmt"].startswith("[") for f in call["log_config"]["formatters"].values())
