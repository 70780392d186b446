"""The cluster tests' processes (fixtures in tests/cluster/conftest.py; the clients that talk to
them are in tests/cluster/clients.py).

- :class:`ThrowawayPostgres`: ``initdb`` + ``pg_ctl`` listening only on a unix socket in its own
  0700 temporary directory (trust auth there, fsync off), as the ``postgres`` account when run as
  root; or databases on TEST_DATABASE_URL's server.
- :class:`ServerProcess`: one ``python -m tests.cluster.scripted_server`` (uvicorn + the scripted
  generator) on a free port: start, wait for /healthz, kill (SIGKILL), stop (SIGTERM), restart;
  its scripted generator steered through :attr:`ServerProcess.control` (hold, delay, tokens).
- :class:`Cluster`: the server processes sharing one database, one Redis and one secret key.
- :class:`Proxy`: HAProxy with deploy/haproxy.cfg in front of them.

A requirement that is missing (a binary, the driver) is :class:`Unavailable`; the fixtures turn
it into a skip, or a failure under CI=true.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import httpx

from tests.cluster.clients import User, wait_for

REPO_ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 60.0


class Unavailable(Exception):
    """Something the cluster tests need is not installed (skip, or fail under CI=true)."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]

def log_tail(path: Path, chars: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


# --- PostgreSQL ----------------------------------------------------------------------------------

def _postgres_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), reverse=True)
    if found:
        return found[0].parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise Unavailable("PostgreSQL is not installed (make services installs it)")


class ThrowawayPostgres:
    """A throwaway PostgreSQL cluster listening only on a unix socket in its 0700 temporary
    directory (trust auth: only this account, and root, can enter it; fsync off), or
    TEST_DATABASE_URL's server (`base_url`) instead. :meth:`create_database` makes a fresh
    database and returns its URL (``postgresql://...``)."""

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = base_url
        self.workdir: Path | None = None
        self.port: int | None = None
        self._as_postgres: list[str] = []

    def start(self) -> None:
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:
            raise Unavailable("psycopg is not installed (pip install 'crescent[postgresql]')") from exc
        if self.base_url:
            return
        bindir = _postgres_bin()
        self.workdir = Path(tempfile.mkdtemp(prefix="crescent-cluster-pg-"))
        if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to the postgres account
            if shutil.which("runuser") is None:
                raise Unavailable("running as root needs runuser to start PostgreSQL")
            shutil.chown(self.workdir, "postgres")
            self._as_postgres = ["runuser", "-u", "postgres", "--"]
        self.port = free_port()
        data = self.workdir / "data"
        self._run([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"])
        self._run([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(self.workdir / "log"), "-w", "-t", "60",
                   "-o", f"-p {self.port} -k {self.workdir} -c listen_addresses='' -c fsync=off "
                         "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
                   "start"])
        self.base_url = f"postgresql://postgres@/postgres?host={self.workdir}&port={self.port}"
        self._bindir = bindir

    def _run(self, argv: list[str]) -> None:
        result = subprocess.run(self._as_postgres + argv, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {result.stdout}{result.stderr}"
                               f"{log_tail(self.workdir / 'log') if self.workdir else ''}")

    def create_database(self, prefix: str = "crescent_cluster") -> str:
        from sqlalchemy import create_engine, text
        from sqlalchemy.engine import make_url

        from backend.db import engine_url

        assert self.base_url
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        admin = create_engine(engine_url(self.base_url), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
        finally:
            admin.dispose()
        return make_url(self.base_url).set(database=name).render_as_string(hide_password=False)

    def drop_database(self, url: str) -> None:
        from sqlalchemy import create_engine, text
        from sqlalchemy.engine import make_url

        from backend.db import engine_url

        assert self.base_url
        name = make_url(url).database
        admin = create_engine(engine_url(self.base_url), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        finally:
            admin.dispose()

    def stop(self) -> None:
        if self.workdir is None:
            return
        subprocess.run(self._as_postgres + [str(self._bindir / "pg_ctl"), "-D", str(self.workdir / "data"),
                                            "-m", "immediate", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(self.workdir, ignore_errors=True)
        self.workdir = None


# --- server processes ------------------------------------------------------------------------------

class ScriptControl:
    """The control directory of one process's scripted generator
    (tests/cluster/scripted_generator.py)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)

    def hold(self, after: int = 0) -> None:
        """Streams that have emitted `after` tokens pause before their next one until
        :meth:`release` (0: before the first token)."""
        (self.path / "hold").write_text(str(after))

    def release(self) -> None:
        (self.path / "hold").unlink(missing_ok=True)

    def set_delay(self, seconds: float) -> None:
        """Seconds before each token from now on (0: as fast as possible)."""
        (self.path / "delay_s").write_text(str(seconds))

    def set_tokens(self, tokens: list[str]) -> None:
        (self.path / "tokens").write_text(json.dumps(tokens))

    def hold_embedding(self) -> None:
        """Document embedding waits from now on until :meth:`release_embedding`."""
        (self.path / "hold_embedding").touch()

    def release_embedding(self) -> None:
        (self.path / "hold_embedding").unlink(missing_ok=True)

    def embedding_held(self) -> bool:
        """True while an embed call waits on the hold."""
        return (self.path / "embedding").exists()

    def reset(self) -> None:
        for name in ("hold", "delay_s", "tokens", "hold_embedding"):
            (self.path / name).unlink(missing_ok=True)

    def events(self) -> list[dict[str, Any]]:
        """The stream start/end events recorded so far, oldest first."""
        path = self.path / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class ServerProcess:
    """One Crescent server process (``tests.cluster.scripted_server``) named `name`
    (CRESCENT_INSTANCE) on 127.0.0.1:`port`."""

    def __init__(self, name: str, env: Mapping[str, str], workdir: Path, port: int | None = None,
                 argv: tuple[str, ...] = ("-m", "tests.cluster.scripted_server"),
                 ready_timeout: float = READY_TIMEOUT_S) -> None:
        self.name = name
        self.port = port or free_port()
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.control = ScriptControl(workdir / "control")
        self.log_path = workdir / "server.log"
        self.argv = argv
        self.ready_timeout = ready_timeout
        self.base_env = dict(env)
        self.extra_env: dict[str, str] = {}
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT`` (for the proxy's configuration)."""
        return f"127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return {**self.base_env, "CRESCENT_INSTANCE": self.name, "HOST": "127.0.0.1",
                "PORT": str(self.port), "SCRIPTED_CONTROL_DIR": str(self.control.path),
                **self.extra_env}

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, wait: bool = True) -> None:
        """Start the process (the same port) and, with `wait`, return once /healthz says ready."""
        assert not self.is_running(), f"{self.name} is already running"
        with open(self.log_path, "ab") as log:
            log.write(f"\n--- start {time.strftime('%H:%M:%S')} ---\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                [sys.executable, *self.argv], cwd=REPO_ROOT, env=self.env(),
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout: float | None = None) -> None:
        timeout = self.ready_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while True:
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"server {self.name} exited:\n{log_tail(self.log_path)}")
            try:
                response = httpx.get(self.url + "/healthz", timeout=2.0)
                if response.status_code == 200 and response.json().get("ready"):
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"server {self.name} not ready after {timeout} s:\n{log_tail(self.log_path)}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL, as a crash: no shutdown code runs. Returns once the process is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM (uvicorn's graceful shutdown, the lifespan's cleanup); SIGKILL after `timeout`."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()

    def restart(self, extra_env: Mapping[str, str] | None = None, graceful: bool = True) -> None:
        """Stop (SIGTERM, or SIGKILL without `graceful`) and start again on the same port, with
        `extra_env` added to the environment from now on (None: keep the current extra). The
        ``cluster`` fixture starts the next test without it."""
        if graceful:
            self.stop()
        else:
            self.kill()
        if extra_env is not None:
            self.extra_env = dict(extra_env)
        self.start()

    def log(self) -> str:
        return log_tail(self.log_path, 20000)


@dataclass
class Cluster:
    """Two (or more) server processes sharing one PostgreSQL database, one Redis database and
    one secret key. ``cluster.a`` / ``cluster.b``; ``cluster.user()`` a new browser."""

    database_url: str
    redis_url: str
    secret_key: str
    servers: dict[str, ServerProcess]
    admin_username: str = "admin"
    _users: list[User] = field(default_factory=list)

    @property
    def a(self) -> ServerProcess:
        return self.servers["a"]

    @property
    def b(self) -> ServerProcess:
        return self.servers["b"]

    def user(self, base_url: str | None = None) -> User:
        """A new browser (no cookies) aimed at `base_url` (default: process A); closed after the test."""
        user = User(base_url or self.a.url)
        self._users.append(user)
        return user

    def admin(self, base_url: str | None = None) -> User:
        """A browser logged in as the cluster's admin (the first account)."""
        user = self.user(base_url)
        user.log_in(self.admin_username)
        return user

    def ensure_running(self) -> None:
        """Start every process a previous test killed or stopped, restart one a previous test
        left with an extra environment (``restart(extra_env=...)``), and reset the generators."""
        for server in self.servers.values():
            server.control.reset()
            if server.extra_env:
                server.extra_env = {}
                server.stop()
            if not server.is_running():
                server.start(wait=False)
        for server in self.servers.values():
            server.wait_ready()

    def close_users(self) -> None:
        while self._users:
            self._users.pop().close()

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop(timeout=15)


# --- the router (deploy/haproxy.cfg) ------------------------------------------------------------

HAPROXY_CONFIG = REPO_ROOT / "deploy" / "haproxy.cfg"


class Proxy:
    """HAProxy running deploy/haproxy.cfg in the foreground on a free port, in front of
    `servers` (CRESCENT_SERVER_A, _B, ...: the names must match the file's ``server`` lines)."""

    def __init__(self, servers: Mapping[str, ServerProcess], workdir: Path) -> None:
        binary = shutil.which("haproxy")
        if binary is None:
            raise Unavailable("haproxy is not installed (make services installs it)")
        self.binary = binary
        self.servers = dict(servers)
        self.port = free_port()
        self.stats_port = free_port()
        self.log_path = workdir / "haproxy.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        env = {**os.environ, "CRESCENT_PROXY_BIND": f"127.0.0.1:{self.port}",
               "CRESCENT_PROXY_STATS_BIND": f"127.0.0.1:{self.stats_port}"}
        for name, server in self.servers.items():
            env[f"CRESCENT_SERVER_{name.upper()}"] = server.address
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([self.binary, "-db", "-f", str(HAPROXY_CONFIG)], env=env,
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(lambda: self._stats() is not None or self.process.poll() is not None, 10, "haproxy to listen")
        if self.process.poll() is not None:
            raise RuntimeError(f"haproxy exited:\n{log_tail(self.log_path)}")

    def _stats(self) -> dict[str, str] | None:
        """{server name: status ("UP", "DOWN", "UP 1/2", ...)} from the stats page's CSV."""
        try:
            text = httpx.get(f"http://127.0.0.1:{self.stats_port}/stats;csv", timeout=2.0).text
        except httpx.HTTPError:
            return None
        lines = text.splitlines()
        if not lines or not lines[0].startswith("# "):
            return None
        header = lines[0][2:].split(",")
        rows = [dict(zip(header, line.split(","))) for line in lines[1:] if line]
        return {r["svname"]: r["status"] for r in rows if r.get("pxname") == "crescent_servers"
                and r["svname"] not in ("FRONTEND", "BACKEND")}

    def server_status(self) -> dict[str, str]:
        return self._stats() or {}

    def wait_all_up(self, timeout: float = 30.0) -> None:
        """Until the proxy's health checks see every server UP (after a restart: `rise` checks)."""
        wait_for(lambda: all(self.server_status().get(n) == "UP" for n in self.servers), timeout,
                 f"haproxy to see every server up ({self.server_status()})")

    def wait_down(self, name: str, timeout: float = 30.0) -> None:
        wait_for(lambda: self.server_status().get(name, "").startswith("DOWN"), timeout, f"{name} DOWN")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
