"""The admin page in a real browser against the real server and model: a refused value is shown
next to its field; a saved system prompt and reply limit apply to the very next chat (no
restart); the engine charts fill and refresh on their own.

What the model says is not checked (a 135M model follows no instruction reliably). The system
prompt is checked through the prompt's token count the server stores with the reply: a long
prompt must add at least its own word count of tokens over a reply asked before the change;
the limit through the reply's finish_reason and completion-token count.
"""

from __future__ import annotations

import json
import re

import pytest

from .conftest import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPLY_TIMEOUT_MS = 90_000
ASSISTANT = '#messages .message[data-role="assistant"]'
FINISHED = ASSISTANT + ':not([data-status="pending"]):not([data-status="streaming"])'
QUESTION = "Write a long story about a dragon who learns to bake bread."
# 6 words x 40 = 240 words: far more tokens than the chat template's default system prompt.
SYSTEM_PROMPT = " ".join(["Always remember the secret word zebra."] * 40)
SYSTEM_PROMPT_WORDS = len(SYSTEM_PROMPT.split())
REPLY_LIMIT = 5


def log_in(page, username: str) -> None:
    page.goto("/login")
    page.fill("#username", username)
    page.fill("#password", PASSWORD)
    page.click("#submit")
    page.wait_for_url("**/chat")


def csrf(page) -> str:
    return page.get_attribute('meta[name="csrf-token"]', "content")


def ask(page) -> dict:
    """Send QUESTION in a new conversation; returns the stored assistant message (JSON API)."""
    page.goto("/chat")
    page.wait_for_selector('#connection[data-state="open"]')
    page.fill("#composer", QUESTION)
    page.press("#composer", "Enter")
    page.wait_for_selector(FINISHED, timeout=REPLY_TIMEOUT_MS)
    page.wait_for_url(re.compile(r".*/c/[0-9A-Za-z_-]+$"))
    conversation_id = page.url.rsplit("/", 1)[1]
    view = page.request.get(f"/api/conversations/{conversation_id}").json()
    return [m for m in view["messages"] if m["role"] == "assistant"][-1]


def restore(page, settings: dict) -> None:
    page.goto("/admin")
    response = page.request.post(
        "/admin/api/settings", data=json.dumps(settings),
        headers={"Content-Type": "application/json", "X-CSRF-Token": csrf(page)},
    )
    assert response.ok, response.text()


def test_settings_page_changes_apply_to_the_next_chat(page, admin_username):
    log_in(page, admin_username)
    original = page.request.get("/admin/api/settings").json()["settings"]
    before = ask(page)
    assert before["completion_tokens"] > REPLY_LIMIT, "the question must draw a reply longer than the limit"

    try:
        page.goto("/admin")
        page.wait_for_selector("#settings-form")

        # A bad value: refused, shown next to its field, and nothing (not even the good value
        # submitted with it) is stored.
        page.fill("#setting-default_max_tokens", str(REPLY_LIMIT))
        page.fill("#setting-default_temperature", "9")
        page.click("#settings-save")
        error = page.locator("#error-default_temperature")
        assert error.is_visible()
        assert "Default temperature" in error.inner_text()
        assert page.locator("#settings-saved").count() == 0
        assert page.request.get("/admin/api/settings").json()["settings"]["default_max_tokens"] == original["default_max_tokens"]

        # Good values: saved and shown.
        page.fill("#setting-default_temperature", "0")
        page.fill("#setting-default_max_tokens", str(REPLY_LIMIT))
        page.fill("#setting-system_prompt", SYSTEM_PROMPT)
        page.click("#settings-save")
        page.wait_for_selector("#settings-saved")
        assert page.input_value("#setting-default_max_tokens") == str(REPLY_LIMIT)
        assert page.locator("#error-default_temperature").count() == 0

        after = ask(page)
        reply = page.locator(ASSISTANT).last
        assert reply.get_attribute("data-finish-reason") == "length"
        assert after["finish_reason"] == "length"
        assert after["completion_tokens"] == REPLY_LIMIT
        assert f"{REPLY_LIMIT} tokens" in reply.locator(".timings").inner_text()
        # Same question, same (empty) history: only the system prompt differs.
        assert after["prompt_tokens"] - before["prompt_tokens"] >= SYSTEM_PROMPT_WORDS - 40
    finally:
        restore(page, original)

    assert page.request.get("/admin/api/settings").json()["settings"] == original


def test_engine_panel_fills_and_refreshes_itself(page, admin_username):
    log_in(page, admin_username)
    page.goto("/admin")
    # The lifespan samples at start-up, so the first fetch already has points.
    # Selectors, not wait_for_function: the page's CSP forbids the eval that one would need.
    page.wait_for_selector('#engine-updated[data-samples]:not([data-samples="0"])')
    first = page.get_attribute("#engine-updated", "data-last")  # time of the newest point
    assert int(page.get_attribute("#chart-kv_usage", "data-points")) >= 1
    assert re.fullmatch(r"\d+(\.\d)? %", page.inner_text("#engine-kv_usage"))
    assert re.fullmatch(r"\d+", page.inner_text("#engine-running"))
    # No reload, no click: the page asks again every 5 s and the server samples every 5 s.
    page.wait_for_selector(f'#engine-updated[data-last]:not([data-last="{first}"])', timeout=20_000)
    assert float(page.get_attribute("#engine-updated", "data-last")) > float(first)
