"""Fixtures of the cluster tests: two real server processes (A and B) on loopback sharing one
PostgreSQL database, one Redis database and one CRESCENT_SECRET_KEY, as in production behind a
router (README, "Several processes / several machines").

- ``cluster_postgres``: a database migrated once per session, on TEST_DATABASE_URL's server when
  it is set, else on a throwaway PostgreSQL started here (tests/cluster/processes.py).
- ``cluster_session``: processes ``a`` and ``b`` (``python -m tests.cluster.scripted_server``,
  CRESCENT_INSTANCE=a/b) for the session, and the admin account (signed up first).
- ``cluster``: the same, per test: a process a previous test killed is started again, and the
  scripted generators are reset (no hold, no delay, the default tokens). Its ``user()`` makes
  browsers (closed after the test); ``cluster.a.kill()`` / ``.stop()`` / ``.restart(extra_env)``.

Several processes need the shared services: without PostgreSQL, redis-server or psycopg the tests
skip, except under CI=true, where they fail. The processes' Redis database is 15, which the root
conftest's per-test ``redis_url`` (database 0) never flushes; its keys live for the session.
"""

from __future__ import annotations

import os
import secrets
import signal
from pathlib import Path
from typing import Iterator

import pytest

from tests.cluster.clients import User
from tests.cluster.processes import Cluster, Proxy, ServerProcess, ThrowawayPostgres, Unavailable

CLUSTER_REDIS_DB = 15


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the cluster tests must run)")
    pytest.skip(reason)


@pytest.fixture(scope="session", autouse=False)
def _teardown_on_sigterm() -> None:
    """SIGTERM (``timeout``, CI cancelling) becomes KeyboardInterrupt, so pytest still runs the
    session's teardown and stops PostgreSQL, the servers and the proxy."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        def interrupt(signum: int, frame: object) -> None:
            raise KeyboardInterrupt(f"signal {signum}")

        signal.signal(signal.SIGTERM, interrupt)


@pytest.fixture(scope="session")
def postgres_server(_teardown_on_sigterm: None) -> Iterator[ThrowawayPostgres]:
    """TEST_DATABASE_URL's PostgreSQL server when it names one, else a throwaway one started
    here; :meth:`ThrowawayPostgres.create_database` makes databases on it."""
    base = os.environ.get("TEST_DATABASE_URL") or ""
    # TEST_DATABASE_URL naming SQLite (or nothing): start our own server.
    server = ThrowawayPostgres(base if base.startswith("postgresql") else None)
    try:
        server.start()
    except Unavailable as exc:
        _unavailable(str(exc))
    try:
        yield server
    finally:
        server.stop()


def migrated_database(server: ThrowawayPostgres) -> Iterator[str]:
    """A new database on `server`, migrated; dropped when the generator is closed."""
    from backend.db import run_migrations

    url = server.create_database()
    try:
        run_migrations(url)
        yield url
    finally:
        server.drop_database(url)


@pytest.fixture(scope="session")
def cluster_postgres(postgres_server: ThrowawayPostgres) -> Iterator[str]:
    """A migrated PostgreSQL database for the session's processes; yields its URL."""
    yield from migrated_database(postgres_server)


def server_environment(database_url: str, redis_url: str, secret_key: str, data_dir: Path) -> dict[str, str]:
    """The environment every server process of a cluster shares (CRESCENT_INSTANCE, HOST and
    PORT are added per process)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CRESCENT_", "SCRIPTED_")) and k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CRESCENT_SECRET_KEY": secret_key,
        "CRESCENT_DATA_DIR": str(data_dir),
        # Every test browser signs up from 127.0.0.1: the default 5/hour would stop the session.
        "CRESCENT_SIGNUP_RATE": "100000/hour",
        "CRESCENT_MAX_TOKENS": "64",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                    os.environ.get("PYTHONPATH")])),
        "PYTHONUNBUFFERED": "1",
    })
    return env


@pytest.fixture(scope="session")
def cluster_session(cluster_postgres: str, redis_server: str,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Processes A and B for the whole session (see the module's docstring)."""
    root: Path = tmp_path_factory.mktemp("cluster")
    secret_key = secrets.token_urlsafe(48)
    redis_url = f"{redis_server}/{CLUSTER_REDIS_DB}"
    env = server_environment(cluster_postgres, redis_url, secret_key, root)
    servers = {name: ServerProcess(name, env, root / name) for name in ("a", "b")}
    cluster = Cluster(database_url=cluster_postgres, redis_url=redis_url, secret_key=secret_key,
                      servers=servers)
    try:
        for server in servers.values():
            server.start(wait=False)
        for server in servers.values():
            server.wait_ready()
        # The first account ever is the admin: take it before any test signs up.
        with User(servers["a"].url) as admin:
            admin.sign_up(cluster.admin_username)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def cluster(cluster_session: Cluster) -> Iterator[Cluster]:
    """The session's processes, all running and with reset generators; browsers closed after."""
    cluster_session.ensure_running()
    try:
        yield cluster_session
    finally:
        cluster_session.close_users()
        for server in cluster_session.servers.values():
            server.control.reset()


@pytest.fixture(scope="session")
def proxy_session(cluster_session: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    """HAProxy with deploy/haproxy.cfg in front of A and B, for the session."""
    try:
        proxy = Proxy(cluster_session.servers, tmp_path_factory.mktemp("proxy"))
    except Unavailable as exc:
        _unavailable(str(exc))
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture
def proxy(cluster: Cluster, proxy_session: Proxy) -> Proxy:
    """The proxy, once its health checks see every process up (a previous test may have killed
    one)."""
    proxy_session.wait_all_up()
    return proxy_session
