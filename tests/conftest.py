"""The test databases: every test that asks for a database runs on SQLite and, when
TEST_DATABASE_URL names a PostgreSQL server, on PostgreSQL too (ids ``test_x[sqlite]`` and
``test_x[postgresql]``).

TEST_DATABASE_URL is a server URL whose user may CREATE DATABASE, e.g.
``postgresql://postgres@/postgres?host=/tmp&port=5432`` (scripts/run_tests.sh starts a
throwaway cluster and sets it). The migrations run once per session into a template: a file on
SQLite, a database named ``crescent_tpl_<pid>_<hex>`` on PostgreSQL. Each test gets its own copy
(a file copy; ``CREATE DATABASE ... TEMPLATE ...``, dropped after the test).

Markers: ``sqlite_only`` (the test checks SQLite specifics: PRAGMAs, FTS5 tables, triggers) and
``postgresql_only`` (the test checks PostgreSQL specifics; skipped without TEST_DATABASE_URL).
"""

from __future__ import annotations

import os
import shutil
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import pytest

TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL", "").strip()
DATABASES = ("sqlite", "postgresql") if TEST_DATABASE_URL else ("sqlite",)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sqlite_only: checks SQLite specifics; runs on SQLite only")
    config.addinivalue_line(
        "markers", "postgresql_only: checks PostgreSQL specifics; runs only when TEST_DATABASE_URL is set")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize `database_kind` (and so every database fixture) over :data:`DATABASES`."""
    if "database_kind" not in metafunc.fixturenames:
        return
    if metafunc.definition.get_closest_marker("sqlite_only"):
        params = [pytest.param("sqlite", id="sqlite")]
    elif metafunc.definition.get_closest_marker("postgresql_only"):
        marks = () if TEST_DATABASE_URL else (pytest.mark.skip(reason="TEST_DATABASE_URL is not set"),)
        params = [pytest.param("postgresql", id="postgresql", marks=marks)]
    else:
        params = [pytest.param(kind, id=kind) for kind in DATABASES]
    metafunc.parametrize("database_kind", params, indirect=True)


@pytest.fixture
def database_kind(request: pytest.FixtureRequest) -> str:
    """"sqlite" or "postgresql": the database this test runs on."""
    return request.param


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file, copied by each test."""
    from backend.db import run_migrations

    path = tmp_path_factory.mktemp("db-template") / "template.db"
    run_migrations(f"sqlite:///{path}")
    return path


class PostgresServer:
    """TEST_DATABASE_URL's server: an AUTOCOMMIT engine on its maintenance database that makes
    and drops databases, and a migrated template database of this pytest process."""

    def __init__(self, base_url: str) -> None:
        from sqlalchemy import create_engine, make_url
        from sqlalchemy.pool import NullPool

        from backend.db import engine_url

        self.base = engine_url(base_url)
        self.admin = create_engine(self.base, isolation_level="AUTOCOMMIT", poolclass=NullPool)
        self.template: str | None = None
        # The next test's copy is made while the current test runs (a copy takes ~0.2-1 s).
        self._maker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pg-template-copy")
        self._spare: Future[str] | None = None

    def url(self, name: str) -> str:
        return self.base.set(database=name).render_as_string(hide_password=False)

    def execute(self, sql: str) -> None:
        from sqlalchemy import text

        with self.admin.connect() as conn:
            conn.execute(text(sql))

    def create(self, template: str | None = None) -> str:
        """A new empty database (or a copy of `template`); returns its name. FILE_COPY copies the
        files (a checkpoint, cheap with fsync off) instead of WAL-logging every block: faster
        for a small template."""
        name = f"crescent_t_{os.getpid()}_{uuid.uuid4().hex[:10]}"
        copy = f' TEMPLATE "{template}" STRATEGY FILE_COPY' if template else ""
        self.execute(f'CREATE DATABASE "{name}"{copy}')
        return name

    def drop(self, name: str) -> None:
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def copy_of_template(self) -> str:
        """A new copy of the migrated template (made ahead of time); returns its name."""
        template = self.migrated_template()
        spare, self._spare = self._spare, self._maker.submit(self.create, template)
        return spare.result() if spare is not None else self.create(template)

    def migrated_template(self) -> str:
        if self.template is None:
            from backend.db import run_migrations

            name = f"crescent_tpl_{os.getpid()}_{uuid.uuid4().hex[:8]}"
            self.execute(f'CREATE DATABASE "{name}"')
            self.template = name
            run_migrations(self.url(name))  # NullPool inside Alembic: no connection stays open
        return self.template

    def close(self) -> None:
        if self._spare is not None:
            self.drop(self._spare.result())
        self._maker.shutdown()
        if self.template is not None:
            self.drop(self.template)
        self.admin.dispose()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """TEST_DATABASE_URL's server (skips the test without it)."""
    if not TEST_DATABASE_URL:
        pytest.skip("TEST_DATABASE_URL is not set")
    server = PostgresServer(TEST_DATABASE_URL)
    yield server
    server.close()


@pytest.fixture
def fresh_database_url(database_kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a migrated database of this test's own (see the module docstring)."""
    if database_kind == "sqlite":
        path = tmp_path / "crescent.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    name = server.copy_of_template()
    try:
        yield server.url(name)
    finally:
        server.drop(name)


@pytest.fixture(autouse=True)
def _secret_file_in_tmp_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """On PostgreSQL, Settings without data_dir keep the server secret in DEFAULT_DATA_DIR (the
    working directory's .crescent/): a test's app keeps it in its tmp_path instead, as on SQLite
    (the database file's directory)."""
    if "database_kind" in request.fixturenames and request.getfixturevalue("database_kind") == "postgresql":
        import backend.settings

        monkeypatch.setattr(backend.settings, "DEFAULT_DATA_DIR",
                            str(request.getfixturevalue("tmp_path") / "data"))


@pytest.fixture
def empty_postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """An empty database on TEST_DATABASE_URL's server (for migration tests), dropped after."""
    name = postgres_server.create()
    try:
        yield postgres_server.url(name)
    finally:
        postgres_server.drop(name)
