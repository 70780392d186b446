"""backend.db: the URL mapping, the missing-driver message, and lock_for_write."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from alembic.config import main as alembic_main
from sqlalchemy import insert

from backend.db import DatabaseDriverMissing, check_driver, engine_url, lock_for_write, run_migrations
from backend.models import User

REPO_ROOT = Path(__file__).resolve().parents[2]
PG_URL = "postgresql://crescent:pw@db.example:5432/crescent"


@pytest.mark.parametrize(("url", "driver"), [
    (PG_URL, "postgresql+psycopg"),
    ("postgresql+psycopg://u@h/db", "postgresql+psycopg"),
    ("postgresql+psycopg2://u@h/db", "postgresql+psycopg2"),
    ("sqlite:///crescent.db", "sqlite"),
])
def test_a_plain_postgresql_url_means_psycopg_3(url, driver) -> None:
    mapped = engine_url(url)
    assert mapped.drivername == driver
    assert mapped.set(drivername="x") == engine_url(url).set(drivername="x")  # nothing else changes
    assert mapped.password == engine_url(url).password


def test_the_mapped_dialect_is_psycopg_3() -> None:
    pytest.importorskip("psycopg")
    assert engine_url(PG_URL).get_dialect().driver == "psycopg"
    check_driver(PG_URL)  # installed: no error


@pytest.fixture
def no_psycopg(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg now raises ImportError


def test_a_missing_driver_is_one_clear_line(no_psycopg) -> None:
    with pytest.raises(DatabaseDriverMissing) as caught:
        run_migrations(PG_URL)
    message = str(caught.value)
    assert "\n" not in message and "crescent[postgresql]" in message


def test_alembic_upgrade_without_the_driver_fails_in_one_line(no_psycopg, monkeypatch, capsys) -> None:
    monkeypatch.chdir(REPO_ROOT)
    monkeypatch.setenv("DATABASE_URL", PG_URL)
    with pytest.raises(SystemExit) as exited:
        alembic_main(argv=["upgrade", "head"])
    assert exited.value.code != 0
    captured = capsys.readouterr()
    out = captured.out.strip()  # Alembic prints FAILED: on stdout (and logs it on stderr)
    assert out.startswith("FAILED: the database driver") and "crescent[postgresql]" in out
    assert "\n" not in out and "Traceback" not in captured.out + captured.err


@pytest.mark.sqlite_only  # PostgreSQL's advisory lock may come at any point of the transaction
def test_lock_for_write_must_come_before_the_first_write(session_factory) -> None:
    with session_factory() as db:
        lock_for_write(db, "x")  # BEGIN IMMEDIATE
        db.rollback()
        db.execute(insert(User).values(id="u1", username="ann", username_key="ann", password_hash="h",
                                       role="user", status="active"))
        with pytest.raises(RuntimeError, match="before the transaction's first write"):
            lock_for_write(db, "x")
