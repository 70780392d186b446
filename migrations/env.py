"""Alembic environment: URL from Settings.from_env() (or the caller), metadata from backend.models.

`backend.db.run_migrations(url)` passes its URL in `config.attributes["database_url"]`; the
command line (`alembic upgrade head`) reads DATABASE_URL through Settings. A bad setting or a
missing driver (``postgresql://`` without ``crescent[postgresql]``) is Alembic's one-line
``FAILED: ...`` (a CommandError), not a traceback.

Migrations run once under a lock, so processes (or ``alembic upgrade head`` runs) starting
together never migrate at the same time: the later one waits, then finds the schema at head.
PostgreSQL: a session-level advisory lock (:data:`MIGRATION_LOCK_KEY`) held by the migrating
connection (released when it closes, also if the process dies). SQLite file: an exclusive
``flock`` on ``<database>.migrations.lock`` beside it (SQLite's own locking does not cover
Alembic's read-then-migrate; without it two runs fail with "duplicate column" errors). An
in-memory SQLite database belongs to one process and needs none.
"""

from __future__ import annotations

import fcntl
import hashlib
from contextlib import contextmanager
from logging.config import fileConfig
from typing import Iterator

from alembic import context
from alembic.util import CommandError
from sqlalchemy import Connection, create_engine, make_url, pool, text
from sqlalchemy.exc import DBAPIError

from backend.db import check_driver, engine_url
from backend.models import Base, include_in_autogenerate
from backend.settings import Settings

config = context.config
if config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata

# pg_advisory_lock key: the first 8 bytes of SHA-256("crescent:migrations"), signed.
MIGRATION_LOCK_KEY = int.from_bytes(hashlib.sha256(b"crescent:migrations").digest()[:8], "big", signed=True)


def _database_url(connect: bool = True) -> str:
    """The URL to migrate; with `connect`, its driver must be installed (offline SQL needs none)."""
    try:
        url = config.attributes.get("database_url") or Settings.from_env().database_url
        if connect:
            check_driver(url)
    except (ValueError, ImportError) as exc:  # SettingsError, DatabaseDriverMissing
        raise CommandError(str(exc)) from None
    return engine_url(url).render_as_string(hide_password=False)


def _configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things in place; batch mode rebuilds the table instead.
        render_as_batch=True,
        compare_type=True,
        # FTS5 shadow tables and other objects the ORM does not model are not autogenerate's.
        include_name=include_in_autogenerate,
        **kwargs,
    )


def run_migrations_offline() -> None:
    _configure(url=_database_url(connect=False), literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection=connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = _database_url()
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn, _migration_lock(conn, url):
            _configure(connection=conn)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


@contextmanager
def _migration_lock(conn: Connection, url: str) -> Iterator[None]:
    """Hold the database's migration lock (see the module docstring) around the block."""
    backend = conn.dialect.name
    if backend == "postgresql":
        conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
        conn.commit()  # a session lock outlives the transaction; Alembic begins its own
        try:
            yield
        finally:
            try:
                conn.rollback()
                conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK_KEY})
                conn.commit()
            except DBAPIError:  # the connection is gone, and its session lock with it
                pass
        return
    database = make_url(url).database if backend == "sqlite" else None
    if not database or database == ":memory:" or database.startswith("file:"):
        yield
        return
    with open(f"{database}.migrations.lock", "a") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)  # released when the file closes
        yield


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
