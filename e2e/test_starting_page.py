"""Until the model has loaded the port answers: a "starting — loading the model: N%" page that
turns into the app by itself, /healthz 503 "starting" with the progress.

Starts a second server of its own (the session's is already loaded), so it costs one more model
load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import Error as PlaywrightError

from e2e.conftest import REPO_ROOT, _free_port, _log_tail

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

START_TIMEOUT_S = 180.0


def _get(url: str) -> tuple[int, dict] | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


@pytest.fixture
def starting_server(tmp_path, server):  # `server` first: its model load is not competing
    if os.environ.get("CRESCENT_E2E_BASE_URL"):
        pytest.skip("needs to start a server of its own")
    port = _free_port()
    env = dict(os.environ, DATABASE_URL=f"sqlite:///{tmp_path / 'starting.db'}", PYTHONUNBUFFERED="1")
    subprocess.run([sys.executable, "-m", "alembic", "upgrade", "head"], cwd=REPO_ROOT, env=env,
                   check=True, capture_output=True, timeout=120)
    log_path = tmp_path / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "web", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while _get(base + "/healthz") is None:  # the port opens in seconds, not after the load
            assert process.poll() is None, _log_tail(log_path)
            assert time.monotonic() < deadline, "the port did not open:\n" + _log_tail(log_path)
            time.sleep(0.1)
        yield base, log_path
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_starting_page_shows_the_progress_and_turns_into_the_app(browser, starting_server):
    base, log_path = starting_server
    status, body = _get(base + "/healthz")
    assert status == 503, (status, body)
    assert body["status"] == "starting" and 0 <= body["progress"] < 1 and body["ready"] is False

    context = browser.new_context(base_url=base)
    try:
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.goto("/")
        assert page.locator("#starting").is_visible()
        assert "Loading the model" in page.locator("#starting-status").inner_text()
        seen = {page.locator("#starting-percent").inner_text()}
        deadline = time.monotonic() + START_TIMEOUT_S
        # The page polls /healthz and reloads itself into the app: "/" becomes the sign-up page
        # (a fresh database: the first visitor makes the admin account).
        while "/signup" not in page.url:
            assert time.monotonic() < deadline, "never turned into the app:\n" + _log_tail(log_path)
            try:
                percent = page.locator("#starting-percent")
                if percent.count():
                    seen.add(percent.inner_text(timeout=1000))
            except PlaywrightError:  # the page reloading under us
                pass
            time.sleep(0.25)
        page.wait_for_selector("#username")
        assert len(seen) >= 2, f"the percentage never moved: {seen}"
        assert not problems, problems
    finally:
        context.close()
    status, body = _get(base + "/healthz")
    assert status == 200 and body["ready"] is True
