"""Database engine, session factory and programmatic migrations.

SQLite gets WAL (readers do not block the writer that streams a reply), foreign keys (off by
default in SQLite, needed for ON DELETE CASCADE) and a busy timeout (a second writer waits
instead of failing at once). Any other URL (PostgreSQL) is used as is.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

SQLITE_BUSY_TIMEOUT_MS = 5000
MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def create_db_engine(url: str) -> Engine:
    """An Engine for `url` (plain SQLAlchemy URL); SQLite connections get WAL, foreign_keys=ON
    and busy_timeout. An in-memory SQLite database is shared by all threads (one connection)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(parsed, pool_pre_ping=True)
    in_memory = parsed.database in (None, "", ":memory:")
    kwargs: dict[str, object] = {}
    if in_memory:
        kwargs = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
    engine = create_engine(parsed, **kwargs)

    @event.listens_for(engine, "connect")
    def _configure_sqlite(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            if not in_memory:
                cursor.execute("PRAGMA journal_mode=WAL")
                # With WAL, NORMAL only risks the last commits on power loss, never corruption.
                cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    return engine


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded attributes after commit (services return plain data)."""
    return sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str | None = None) -> Config:
    """An Alembic Config pointing at `migrations/`; `url` overrides Settings.from_env()."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        config.attributes["database_url"] = url
    return config


def run_migrations(url: str) -> None:
    """Apply every migration to `url` (``alembic upgrade head``)."""
    command.upgrade(alembic_config(url), "head")
