"""Database engine, session factory, programmatic migrations, and the write lock.

SQLite gets WAL (readers do not block the writer that streams a reply), foreign keys (off by
default in SQLite, needed for ON DELETE CASCADE) and a busy timeout (a second writer waits
instead of failing at once). A plain ``postgresql://`` URL means psycopg 3 (the
``crescent[postgresql]`` extra); :func:`engine_url` is the one place that says so.

:func:`lock_for_write` serializes check-then-act transactions (the first account is the admin;
the last active admin stays): ``BEGIN IMMEDIATE`` on SQLite, a transaction-scoped advisory lock
on PostgreSQL.

:func:`check_database` connects once and turns a database that cannot be reached into one line
(:class:`DatabaseUnreachable`), for the command line (``python -m web check-db`` before
``alembic upgrade head`` in ``make migrate``; the admin CLI).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

SQLITE_BUSY_TIMEOUT_MS = 5000
MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
POSTGRESQL_DRIVER = "postgresql+psycopg"


class DatabaseDriverMissing(ImportError):
    """The URL's database driver is not installed; the message says what to install."""


class DatabaseUnreachable(Exception):
    """The database at DATABASE_URL cannot be used; ``str()`` is one line that names the cause
    and the URL with its password masked.

    Attributes:
        reason: "missing_database", "connection_refused", "authentication_failed",
            "no_such_host", "cannot_open" (a SQLite file) or "unreachable" (anything else).
        url: the URL as shown (password masked).
    """

    def __init__(self, reason: str, url: str, detail: str) -> None:
        self.reason = reason
        self.url = url
        super().__init__(f"cannot use the database at {url}: {detail}")


# (reason, pattern in the driver's message, what to say). psycopg reports connection failures
# with no SQLSTATE, so the message text is all there is; the first match wins.
_POSTGRESQL_CAUSES = (
    ("missing_database", r'database ".*" does not exist',
     "database {database!r} does not exist (create it: sudo -u postgres createdb -O {user} "
     "{database}; README, PostgreSQL)"),
    ("authentication_failed", r'role ".*" does not exist',
     "role {user!r} does not exist (create it: sudo -u postgres createuser --pwprompt {user}; "
     "README, PostgreSQL)"),
    ("authentication_failed", r"authentication failed|no password supplied",
     "authentication failed for user {user!r}"),
    ("connection_refused", r"Connection refused",
     "connection refused (is PostgreSQL running on {where}?)"),
    ("connection_refused", r"No such file or directory",
     "connection refused: no server socket at {where} (is PostgreSQL running?)"),
    ("no_such_host", r"resolve host|translate host name", "unknown host {host!r}"),
)


def _first_line(message: str) -> str:
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return lines[0] if lines else "unknown error"


def _postgresql_cause(parsed: URL, message: str) -> tuple[str, str]:
    host = parsed.host or parsed.query.get("host") or "localhost"
    if isinstance(host, tuple):
        host = ",".join(host)
    port = parsed.port or parsed.query.get("port") or 5432
    where = f"{host} port {port}"
    fields = {"database": parsed.database or parsed.username or "",
              "user": parsed.username or "postgres", "host": host, "where": where}
    for reason, pattern, says in _POSTGRESQL_CAUSES:
        if re.search(pattern, message):
            return reason, says.format(**fields)
    return "unreachable", _first_line(message.removeprefix("connection failed: "))


def check_database(url: str) -> None:
    """Connect to `url` once (SQLite: also take the write lock, as migrating will) and disconnect.

    Raises:
        DatabaseUnreachable: the database does not exist, refuses the connection or the
            credentials, or (SQLite) the file cannot be opened or written.
        DatabaseDriverMissing: the driver is not installed.
    """
    parsed = engine_url(url)
    # As the user wrote it unless there is a password to mask (rendering escapes the query).
    shown = url if parsed.password is None else make_url(url).render_as_string(hide_password=True)
    sqlite = parsed.get_backend_name() == "sqlite"
    if sqlite and parsed.database in (None, "", ":memory:"):
        return
    engine = create_db_engine(url)
    try:
        with engine.connect() as conn:
            if sqlite:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
                conn.exec_driver_sql("ROLLBACK")
            else:
                conn.execute(text("SELECT 1"))
    except DBAPIError as exc:
        message = str(exc.orig) if exc.orig is not None else str(exc)
        if sqlite:
            directory = Path(parsed.database or ".").resolve().parent
            raise DatabaseUnreachable("cannot_open", shown, f"{_first_line(message)} (does the "
                                      f"directory {directory} exist and is it writable?)") from None
        reason, detail = _postgresql_cause(parsed, message)
        raise DatabaseUnreachable(reason, shown, detail) from None
    finally:
        engine.dispose()


def engine_url(url: str | URL) -> URL:
    """`url` with a bare ``postgresql://`` mapped to ``postgresql+psycopg://`` (SQLAlchemy's own
    default for it is psycopg2, which Crescent does not install); any other URL as is."""
    parsed = make_url(url)
    if parsed.drivername == "postgresql":
        return parsed.set(drivername=POSTGRESQL_DRIVER)
    return parsed


def check_driver(url: str | URL) -> None:
    """Raise DatabaseDriverMissing (one line, naming the fix) when `url`'s driver cannot be
    imported."""
    parsed = engine_url(url)
    try:
        parsed.get_dialect().import_dbapi()
    except ImportError as exc:
        hint = ("pip install 'crescent[postgresql]' (make run does it when DATABASE_URL is a "
                "PostgreSQL URL)") if parsed.get_backend_name() == "postgresql" else "install it"
        raise DatabaseDriverMissing(
            f"the database driver for {parsed.drivername} is not installed ({exc}); {hint}") from None


def create_db_engine(url: str) -> Engine:
    """An Engine for `url` (plain SQLAlchemy URL); SQLite connections get WAL, foreign_keys=ON
    and busy_timeout. An in-memory SQLite database is shared by all threads (one connection).

    Raises:
        DatabaseDriverMissing: the driver is not installed.
    """
    parsed = engine_url(url)
    if parsed.get_backend_name() != "sqlite":
        check_driver(parsed)
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


def lock_for_write(db: Session, name: str) -> None:
    """Make `db`'s transaction the only one holding `name` until it commits or rolls back.

    Call it first in the session, before the check whose answer the writes depend on. SQLite:
    ``BEGIN IMMEDIATE`` takes the database's write lock now (Python's sqlite3 would begin only
    at the first write, after the check; a second writer waits up to the busy timeout), so
    `name` does not matter. PostgreSQL: ``pg_advisory_xact_lock`` on a 64-bit key hashed from
    `name`; it locks even rows that do not exist yet (the first account).

    Raises:
        RuntimeError: on SQLite, `db` already wrote in this transaction.
    """
    connection = db.connection()
    backend = connection.dialect.name
    if backend == "sqlite":
        if connection.connection.dbapi_connection.in_transaction:
            raise RuntimeError("lock_for_write must come before the transaction's first write")
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    elif backend == "postgresql":
        key = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big", signed=True)
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
    else:  # pragma: no cover - only SQLite and PostgreSQL are supported
        raise RuntimeError(f"no write lock for database {backend!r}")


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
    """Apply every migration to `url` (``alembic upgrade head``). Safe to call from several
    processes at once: migrations/env.py holds a lock (PostgreSQL advisory lock, a file lock
    beside a SQLite file) while it migrates, so the later caller waits and finds head.

    Raises:
        DatabaseDriverMissing: the driver is not installed.
    """
    check_driver(url)
    command.upgrade(alembic_config(url), "head")
