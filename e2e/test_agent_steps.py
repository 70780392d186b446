"""A person turns tools on for a conversation (the ⚙ dialog's "Use tools"), asks a question the
agent answers with a tool, watches the step appear in the reply while it runs, then the answer;
after a reload the step is still there, collapsed, above the answer (real server, real model).

The admin lets everyone use tools for the test (restored after it); the conversation's
temperature is 0. Waits are on DOM state (data-status of the reply, the step's element), never
on fixed sleeps.
"""

from __future__ import annotations

import json

import pytest

from .test_admin import csrf, log_in
from .test_chat import ASSISTANT, REPLY_TIMEOUT_MS, send
from .test_message_actions import wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# A question SmolLM2-135M answers with one calculator call at temperature 0 (the default agent
# policy "one_call": the first model step calls one tool, the next answers without tools), and
# what its answer and the step's summary must hold.
QUESTION = "What is 12 * 34?"
EXPECTED_NUMBER = "408"
STEP_SUMMARY = "Calculated"  # the calculator's one-line summary starts so

# Notes, in the page, how the last reply looked when its first tool step appeared: whether the
# reply had ended then (it must not have: the step is drawn from the live frame) and the step's
# summary. Runs through Playwright's evaluate, outside the page's CSP.
RECORD_FIRST_STEP = """() => {
  window.__firstStep = null;
  const observer = new MutationObserver(() => {
    if (window.__firstStep) return;
    const all = document.querySelectorAll('#messages .message[data-role="assistant"]');
    const last = all[all.length - 1];
    const step = last && last.querySelector(".agent-steps .agent-step-tool");
    if (!step) return;
    window.__firstStep = {status: last.dataset.status, messageId: last.dataset.messageId,
                          summary: step.querySelector("summary").textContent};
    observer.disconnect();
  });
  observer.observe(document.getElementById("messages"),
                   {subtree: true, childList: true, characterData: true, attributes: true});
}"""

LAST_REPLY_ENDED = """() => {
  const all = document.querySelectorAll('#messages .message[data-role="assistant"]');
  const last = all[all.length - 1];
  return all.length >= 2 && last.dataset.status !== "pending" && last.dataset.status !== "streaming";
}"""


def set_agent_tools(page, value: str) -> None:
    page.goto("/admin")
    response = page.request.post("/admin/api/settings", data=json.dumps({"agent_tools": value}),
                                  headers={"Content-Type": "application/json", "X-CSRF-Token": csrf(page)})
    assert response.ok, response.text()


def test_a_tool_step_shows_live_then_collapsed_above_the_answer_after_a_reload(page, admin_username):
    log_in(page, admin_username)
    original = page.request.get("/admin/api/settings").json()["settings"]["agent_tools"]
    set_agent_tools(page, "everyone")
    try:
        page.goto("/chat")
        page.wait_for_selector('#connection[data-state="open"]')
        send(page, "Hi")  # the ⚙ settings belong to a conversation: make one
        wait_idle(page)
        assert page.locator("#tools-badge").is_hidden()
        page.click("#conversation-settings")
        page.fill("#settings-temperature", "0")  # the question's behaviour was measured at 0
        assert page.locator("#settings-tools-off").is_hidden()  # the admin allows tools
        page.click("#settings-save")
        page.wait_for_selector("#settings-dialog", state="hidden")
        page.check("#use-tools")  # the composer's toggle stores the conversation's "Use tools"
        page.wait_for_selector("#tools-badge", state="visible")  # the header says tools are on
        page.click("#conversation-settings")  # ... and the ⚙ dialog shows it stored
        page.wait_for_function("document.getElementById('settings-use-tools').checked === true")
        page.click("#settings-cancel")

        page.evaluate(RECORD_FIRST_STEP)
        send(page, QUESTION)
        reply = page.locator(ASSISTANT).nth(1)
        page.wait_for_function(LAST_REPLY_ENDED, timeout=REPLY_TIMEOUT_MS)
        first = page.evaluate("window.__firstStep")
        assert first is not None, f"no tool step; the reply: {reply.inner_text()!r}"
        assert first["status"] in ("pending", "streaming"), first  # drawn from the live frame
        step = reply.locator(".agent-steps .agent-step-tool").first
        assert reply.get_attribute("data-status") == "complete"
        live_summary = step.locator("summary").inner_text()
        assert live_summary.startswith(STEP_SUMMARY), live_summary
        assert EXPECTED_NUMBER in live_summary.replace(",", "")
        answer = reply.locator(".md-committed").inner_text()
        assert EXPECTED_NUMBER in answer.replace(",", "").replace(" ", ""), answer

        page.reload()
        assert page.locator("#tools-badge").is_visible()  # drawn by the server too
        reply = page.locator(f'#msg-{first["messageId"]}')
        step = reply.locator(".agent-steps .agent-step-tool").first
        assert step.is_visible()
        assert step.evaluate("el => el.open") is False  # collapsed
        assert step.locator("summary").inner_text() == live_summary
        assert step.locator(".agent-call-result").is_hidden()  # inside the closed details
        above = step.evaluate(
            "el => Boolean(el.compareDocumentPosition(el.closest('.message').querySelector('.md-committed'))"
            " & Node.DOCUMENT_POSITION_FOLLOWING)")
        assert above  # the step, then the answer
        assert EXPECTED_NUMBER in reply.locator(".md-committed").inner_text().replace(",", "").replace(" ", "")
        step.locator("summary").click()  # opens: the call's tool and result
        assert step.evaluate("el => el.open") is True
        assert step.locator(".agent-call-tool").first.inner_text() == "calculator"
    finally:
        set_agent_tools(page, original)
