"""Browser tests against the real server: fixtures.

One server per test session: ``python -m web serve`` as a subprocess with the real model, on a
free port, with a fresh SQLite database migrated by ``alembic upgrade head``; with
CRESCENT_E2E_DATABASE_URL (a PostgreSQL server URL whose user may CREATE DATABASE, such as
TEST_DATABASE_URL), a fresh database made there instead and dropped afterwards. One Chromium per
session (Debian's ``/usr/bin/chromium`` through Playwright); each test gets its own browser
context, so cookies and sessions never leak between tests.

This package imports nothing from the project: it drives the product over HTTP, as a person does.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("CRESCENT_E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Short replies keep the suite near a minute on two CPU cores; still long enough that a
# "write a long story" reply is mid-stream when the stop test clicks Stop.
E2E_MAX_TOKENS = "64"
SERVER_START_TIMEOUT_S = 180.0
PASSWORD = "correct horse battery staple"
# An admin made with the CLI before the server starts (so it is the first account whatever the
# tests' order). Against CRESCENT_E2E_BASE_URL, CRESCENT_E2E_ADMIN names one (password PASSWORD).
ADMIN_USERNAME = "e2e-admin"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _log_tail(path: Path, chars: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return "(no server log)"


def _health(base_url: str) -> dict:
    """/healthz's JSON, whatever the status (503 while the model loads); {} when no answer."""
    try:
        with urllib.request.urlopen(base_url + "/healthz", timeout=2) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:  # 503 {"status": "starting" | "failed", ...}
        try:
            return json.load(error)
        except (json.JSONDecodeError, OSError):
            return {}
    except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
        return {}


def _wait_ready(base_url: str, process: subprocess.Popen, log_path: Path) -> None:
    """Until /healthz says ready: the port opens at once, and answers 503 "starting" while the
    model loads."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"server exited with {process.returncode} before it was ready:\n{_log_tail(log_path)}")
        health = _health(base_url)
        if health.get("ready"):
            return
        if health.get("status") == "failed":
            pytest.fail(f"the server could not load the model: {health.get('error')}\n{_log_tail(log_path)}")
        time.sleep(0.25)
    pytest.fail(f"server not ready after {SERVER_START_TIMEOUT_S:.0f} s:\n{_log_tail(log_path)}")


@contextmanager
def _database(workdir: Path) -> Iterator[str]:
    """DATABASE_URL for the server: a SQLite file in `workdir`, or a new database on
    CRESCENT_E2E_DATABASE_URL's PostgreSQL server (dropped on exit)."""
    server_url = os.environ.get("CRESCENT_E2E_DATABASE_URL", "").strip()
    if not server_url:
        yield f"sqlite:///{workdir / 'e2e.db'}"
        return
    import psycopg  # crescent[postgresql]

    parts = urllib.parse.urlsplit(server_url)
    libpq = urllib.parse.urlunsplit(("postgresql", parts.netloc, parts.path, parts.query, ""))
    name = f"crescent_e2e_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(libpq, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))
    finally:
        with psycopg.connect(libpq, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT``) of a running Crescent server with the real model.

    CRESCENT_E2E_BASE_URL points the suite at a server that is already running instead.
    """
    external = os.environ.get("CRESCENT_E2E_BASE_URL")
    if external:
        yield external.rstrip("/")
        return
    workdir = tmp_path_factory.mktemp("e2e")
    with _database(workdir) as database_url:
        yield from _serve(workdir, database_url)


def _serve(workdir: Path, database_url: str) -> Iterator[str]:
    port = _free_port()
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url,
        CRESCENT_DATA_DIR=str(workdir),  # the server secret's file
        HOST="127.0.0.1",
        PORT=str(port),
        CRESCENT_MAX_TOKENS=E2E_MAX_TOKENS,
        # The browser tests sign many users up from 127.0.0.1.
        CRESCENT_SIGNUP_RATE="1000/hour",
        PYTHONUNBUFFERED="1",
    )
    subprocess.run(
        [sys.executable, "-m", "alembic", "upgrade", "head"],
        cwd=REPO_ROOT, env=env, check=True, capture_output=True, timeout=120,
    )
    subprocess.run(
        [sys.executable, "-m", "web", "admin", "create-user", ADMIN_USERNAME, "--admin"],
        cwd=REPO_ROOT, env=env, input=PASSWORD + "\n", text=True, check=True, capture_output=True, timeout=120,
    )
    log_path = workdir / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "web", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base_url, process, log_path)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def admin_username(server: str) -> str:
    """The username of an admin account on `server` (password PASSWORD)."""
    if os.environ.get("CRESCENT_E2E_BASE_URL"):
        name = os.environ.get("CRESCENT_E2E_ADMIN")
        if not name:
            pytest.skip("CRESCENT_E2E_ADMIN names no admin account on the external server")
        return name
    return ADMIN_USERNAME


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip(f"no Chromium at {CHROMIUM} (make chromium installs Debian's)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, server: str) -> Iterator[object]:
    """A page in a fresh browser context (no cookies). Fails the test on a JavaScript error or a
    Content-Security-Policy violation (inline script or style would be one)."""
    context = browser.new_context(base_url=server, viewport={"width": 1100, "height": 800})
    context.set_default_timeout(15_000)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda msg: problems.append(f"console {msg.type}: {msg.text}")
        if msg.type == "error" and "Content Security Policy" in msg.text
        else None,
    )
    yield page
    context.close()
    assert not problems, "\n".join(problems)


@pytest.fixture
def sign_up(page) -> Callable[[], str]:
    """Sign up a new user through the form; returns the username. Lands on /chat."""

    def _sign_up() -> str:
        username = "e2e-" + uuid.uuid4().hex[:10]
        page.goto("/signup")
        page.fill("#username", username)
        page.fill("#password", PASSWORD)
        page.click("#submit")
        page.wait_for_url("**/chat")
        page.wait_for_selector('#connection[data-state="open"]')
        return username

    return _sign_up


@pytest.fixture
def log_in(page) -> Callable[[str], None]:
    """Log `username` in through the form (password as set by `sign_up`). Lands on /chat."""

    def _log_in(username: str) -> None:
        page.fill("#username", username)
        page.fill("#password", PASSWORD)
        page.click("#submit")
        page.wait_for_url("**/chat")

    return _log_in
