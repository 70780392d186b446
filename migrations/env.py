"""Alembic environment: URL from Settings.from_env() (or the caller), metadata from backend.models.

`backend.db.run_migrations(url)` passes its URL in `config.attributes["database_url"]`; the
command line (`alembic upgrade head`) reads DATABASE_URL through Settings. A bad setting or a
missing driver (``postgresql://`` without ``crescent[postgresql]``) is Alembic's one-line
``FAILED: ...`` (a CommandError), not a traceback.
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from alembic.util import CommandError
from sqlalchemy import create_engine, pool

from backend.db import check_driver, engine_url
from backend.models import Base, include_in_autogenerate
from backend.settings import Settings

config = context.config
if config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


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
    engine = create_engine(_database_url(), poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            _configure(connection=conn)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
