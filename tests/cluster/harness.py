"""The cluster tests' harness: a throwaway PostgreSQL, real server processes, HTTP users and chat
sockets (fixtures in tests/cluster/conftest.py).

- :class:`PostgresServer`: ``initdb`` + ``pg_ctl`` on a free loopback port (fsync off), as the
  ``postgres`` account when run as root; or databases on TEST_DATABASE_URL's server.
- :class:`ServerProcess`: one ``python -m tests.cluster.scripted_server`` (uvicorn + the scripted
  generator) on a free port: start, wait for /healthz, kill (SIGKILL), stop (SIGTERM), restart;
  its scripted generator steered through :attr:`ServerProcess.control` (hold, delay, tokens).
- :class:`User`: one browser's cookies (httpx), signing up / logging in through the forms with
  their CSRF tokens, JSON calls with the X-CSRF-Token header, and :class:`ChatSocket` on /ws.

A requirement that is missing (a binary, the driver) is :class:`Unavailable`; the fixtures turn
it into a skip, or a failure under CI=true.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import httpx

from web.session import SESSION_COOKIE

REPO_ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery staple"
READY_TIMEOUT_S = 60.0
INSTANCE_HEADER = "X-Crescent-Instance"
_CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]*)">')


class Unavailable(Exception):
    """Something the cluster tests need is not installed (skip, or fail under CI=true)."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def unique_name(prefix: str = "user") -> str:
    """A username no other test uses (the cluster's database is shared by the whole session)."""
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition",
             interval: float = 0.02) -> Any:
    """Poll `predicate` until it returns a truthy value (returned); AssertionError at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


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


class PostgresServer:
    """A throwaway PostgreSQL cluster on 127.0.0.1:`port` (trust auth, fsync off), or `None`
    when TEST_DATABASE_URL names a server to use instead. :meth:`create_database` makes a fresh
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
                   "-o", f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 -c fsync=off "
                         "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
                   "start"])
        self.base_url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
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

    def reset(self) -> None:
        for name in ("hold", "delay_s", "tokens"):
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
    _users: list["User"] = field(default_factory=list)

    @property
    def a(self) -> ServerProcess:
        return self.servers["a"]

    @property
    def b(self) -> ServerProcess:
        return self.servers["b"]

    def user(self, base_url: str | None = None) -> "User":
        """A new browser (no cookies) aimed at `base_url` (default: process A); closed after the test."""
        user = User(base_url or self.a.url)
        self._users.append(user)
        return user

    def admin(self, base_url: str | None = None) -> "User":
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


# --- browsers --------------------------------------------------------------------------------------

class User:
    """One browser: a cookie jar (httpx; cookies are per host, so one session works against
    every process on 127.0.0.1), the forms' CSRF handling and chat sockets.

    `base_url` is where relative paths go; every method also takes an absolute URL, or
    ``base=`` another process's URL, to send the same cookies elsewhere."""

    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = httpx.Client(follow_redirects=False, timeout=timeout)
        self.username: str | None = None
        self.password = PASSWORD

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "User":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _url(self, path: str, base: str | None) -> str:
        if path.startswith(("http://", "https://")):
            return path
        return (base or self.base_url).rstrip("/") + path

    @property
    def session_token(self) -> str | None:
        return self.http.cookies.get(SESSION_COOKIE)

    def csrf_token(self, base: str | None = None) -> str:
        """The CSRF token for the current cookies, read from a page's meta tag (a 404 page:
        every page has one); anonymous browsers get the double-submit cookie here too."""
        response = self.http.get(self._url("/__csrf_probe__", base), headers={"Accept": "text/html"})
        match = _CSRF_META.search(response.text)
        assert match and match.group(1), f"no csrf-token meta tag in the page ({response.status_code})"
        return match.group(1)

    def request(self, method: str, path: str, base: str | None = None, csrf: bool | str = True,
                **kwargs: Any) -> httpx.Response:
        """An HTTP request; unsafe methods carry ``X-CSRF-Token`` (fetched from `base` unless
        `csrf` is a token, or False for none)."""
        headers = dict(kwargs.pop("headers", None) or {})
        if method.upper() in ("POST", "PUT", "PATCH", "DELETE") and csrf:
            headers.setdefault("X-CSRF-Token", csrf if isinstance(csrf, str) else self.csrf_token(base))
        return self.http.request(method, self._url(path, base), headers=headers, **kwargs)

    def get(self, path: str, base: str | None = None, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, base, **kwargs)

    def post(self, path: str, base: str | None = None, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, base, **kwargs)

    def form(self, path: str, data: Mapping[str, str], base: str | None = None,
             csrf: str | None = None) -> httpx.Response:
        """A form POST with the hidden ``csrf_token`` field (taken from `base` unless given)."""
        token = csrf or self.csrf_token(base)
        return self.http.post(self._url(path, base), data={**data, "csrf_token": token})

    def sign_up(self, username: str | None = None, base: str | None = None) -> str:
        """Sign up through the form (a fresh unique name by default); returns the username."""
        username = username or unique_name()
        response = self.form("/signup", {"username": username, "password": self.password}, base)
        assert response.status_code == 303, f"sign-up failed ({response.status_code}): {response.text[:500]}"
        assert self.session_token, "sign-up set no session cookie"
        self.username = username
        return username

    def log_in(self, username: str, password: str | None = None, base: str | None = None) -> None:
        response = self.form("/login", {"username": username, "password": password or self.password}, base)
        assert response.status_code == 303, f"log-in failed ({response.status_code}): {response.text[:500]}"
        self.username = username

    def websocket(self, base: str | None = None, timeout: float = 30.0) -> "ChatSocket":
        """A chat socket on ``/ws`` of `base` (default: this browser's process) with the cookies."""
        url = self._url("/ws", base).replace("http://", "ws://", 1).replace("https://", "wss://", 1)
        return ChatSocket(url, self.http.cookies, timeout)


class ChatSocket:
    """A chat WebSocket (docs/INTERFACES.md section 4) with a receive timeout; a context manager.

    The handshake response's headers are in :attr:`response_headers` (``X-Crescent-Instance``
    says which process took the socket)."""

    def __init__(self, url: str, cookies: httpx.Cookies, timeout: float = 30.0) -> None:
        from websockets.sync.client import connect

        cookie = "; ".join(f"{name}={value}" for name, value in cookies.items())
        self.timeout = timeout
        self._stack = ExitStack()
        self.connection = self._stack.enter_context(connect(
            url, additional_headers={"Cookie": cookie} if cookie else None, open_timeout=timeout,
            max_size=1 << 22))
        # websockets' Headers: case-insensitive names.
        self.response_headers = self.connection.response.headers

    @property
    def instance(self) -> str | None:
        return self.response_headers.get(INSTANCE_HEADER)

    def __enter__(self) -> "ChatSocket":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()

    def send_json(self, frame: Mapping[str, Any]) -> None:
        self.connection.send(json.dumps(frame))

    def receive_json(self, timeout: float | None = None) -> dict[str, Any]:
        return json.loads(self.connection.recv(timeout=self.timeout if timeout is None else timeout))

    def receive_until(self, kinds: tuple[str, ...] = ("done",), limit: int = 5000,
                      timeout: float | None = None) -> list[dict[str, Any]]:
        """Frames up to and including the first whose type is in `kinds`."""
        frames = []
        for _ in range(limit):
            frame = self.receive_json(timeout)
            frames.append(frame)
            if frame.get("type") in kinds:
                return frames
        raise AssertionError(f"no {kinds} frame in {limit} frames")

    def send_message(self, text: str, conversation_id: str | None = None,
                     client_msg_id: str | None = None) -> dict[str, Any]:
        """Send a ``send`` frame; returns it (its ``client_msg_id`` identifies the ``ack``)."""
        frame = {"type": "send", "client_msg_id": client_msg_id or uuid.uuid4().hex,
                 "conversation_id": conversation_id, "text": text}
        self.send_json(frame)
        return frame

    def ping(self) -> None:
        self.send_json({"type": "ping"})
        assert self.receive_json() == {"type": "pong"}



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
