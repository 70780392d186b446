"""The chat product in a real browser against the real server and model.

Waits are on DOM state the page exposes for this purpose (data-status, data-finish-reason on
each .message; #connection[data-state]), never on fixed sleeps, except the documented
composition grace period and the Stop grace period after a send.
"""

from __future__ import annotations

import re

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# A reply of up to CRESCENT_MAX_TOKENS tokens on two CPU cores, with room for a slow CI machine.
REPLY_TIMEOUT_MS = 90_000
# static/chat.js ignores a click on Stop this soon after sending (a double-click on Send).
STOP_GRACE_MS = 350

ASSISTANT = '#messages .message[data-role="assistant"]'
USER = '#messages .message[data-role="user"]'
FINISHED = ASSISTANT + ':not([data-status="pending"]):not([data-status="streaming"])'

# Records every distinct innerHTML the last assistant .message-body takes while its
# data-status is "streaming". Runs through Playwright's evaluate, outside the page's CSP.
RECORD_STREAM = """() => {
  window.__states = [];
  const observer = new MutationObserver(() => {
    const all = document.querySelectorAll('#messages .message[data-role="assistant"]');
    const last = all[all.length - 1];
    if (!last || last.dataset.status !== "streaming") return;
    const html = last.querySelector(".message-body").innerHTML;
    const text = last.querySelector(".message-body").textContent.trim();
    const states = window.__states;
    if (text && (states.length === 0 || states[states.length - 1] !== html)) states.push(html);
  });
  observer.observe(document.getElementById("messages"),
                   {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def send(page, text: str) -> None:
    page.fill("#composer", text)
    page.press("#composer", "Enter")


def wait_finished(page):
    page.wait_for_selector(FINISHED, timeout=REPLY_TIMEOUT_MS)
    return page.locator(ASSISTANT).last


def stop_and_wait(page) -> None:
    """End the reply in flight so the next test does not share the engine with it. A script click:
    the reply may already be done (and #stop hidden), and stopping nothing is harmless."""
    page.evaluate("document.getElementById('stop').click()")
    wait_finished(page)


def conversation_id(page) -> str:
    match = re.fullmatch(r".*/c/([0-9A-Za-z_-]+)", page.url)
    assert match, page.url
    return match.group(1)


def test_reply_streams_in_and_renders_markdown(page, sign_up):
    sign_up()
    page.evaluate(RECORD_STREAM)
    question = "Write a Markdown list of three fruits."
    send(page, question)

    # Optimistic echo: the question is on the page before the server could have answered.
    user = page.locator(USER).last
    assert user.locator(".message-body").inner_text() == question
    assert page.locator("#composer").input_value() == ""
    assert page.locator("#stop").is_visible()
    assert page.locator("#send").is_disabled()

    reply = wait_finished(page)
    assert reply.get_attribute("data-status") == "complete"
    assert reply.get_attribute("data-finish-reason") in ("stop", "length")
    states = page.evaluate("window.__states")
    assert len(set(states)) >= 2, f"saw {len(states)} intermediate states: {states!r}"
    assert reply.locator(".message-body").locator("li, p, strong").count() > 0
    if reply.get_attribute("data-finish-reason") == "length":
        assert reply.locator(".badge").inner_text() == "Cut at the token limit"
    else:
        assert not reply.locator(".badge").is_visible()
    assert re.search(r"\d+ tokens?", reply.locator(".timings").inner_text())
    assert "TTFT" in reply.locator(".timings").inner_text()
    # the reply's total time is its last figure (static/chat.js setTimings, from the done frame)
    figures = reply.locator(".timings span.timing").all_inner_texts()
    assert re.fullmatch(r"total \d+(?: ms|\.\d\d s)", figures[-1]), figures

    # The new conversation got its URL and its highlighted place in the sidebar.
    conversation_id(page)
    current = page.locator('#conversation-list a[aria-current="page"]')
    assert current.count() == 1
    assert page.url.endswith(current.get_attribute("href"))
    assert page.locator("#stop").is_hidden()
    assert page.locator("#send").is_enabled()

    # A reload renders the stored HTML: the same reply, finished the same way.
    body_text = reply.locator(".message-body").inner_text()
    page.reload()
    stored = page.locator(ASSISTANT).last
    assert stored.get_attribute("data-status") == "complete"
    assert stored.locator(".message-body").inner_text() == body_text


def test_stop_keeps_the_partial_reply_after_reload(page, sign_up):
    sign_up()
    # Replies long enough to be stopped mid-way on a fast machine: the conversation's own max tokens.
    send(page, "Hi")
    wait_finished(page)
    page.wait_for_selector("#stop", state="hidden")
    page.click("#conversation-settings")
    page.fill("#settings-max-tokens", "400")
    page.click("#settings-save")
    page.wait_for_selector("#settings-dialog", state="hidden")
    send(page, "Write a long story about a dragon who learns to cook. Use many paragraphs.")
    page.wait_for_function(
        """() => {
          const all = document.querySelectorAll('#messages .message[data-role="assistant"]');
          const m = all[all.length - 1];
          return m && m.dataset.status === "streaming"
            && m.querySelector(".message-body").textContent.trim().length > 0;
        }""",
        timeout=REPLY_TIMEOUT_MS,
    )
    # The second documented wait: a click on Stop within 300 ms of sending is the second click
    # of a double-click on Send (STOP_GRACE_MS in chat.js), which must not stop.
    page.wait_for_timeout(STOP_GRACE_MS)
    page.click("#stop")
    page.wait_for_selector("#stop", state="hidden", timeout=REPLY_TIMEOUT_MS)  # this reply ended
    reply = page.locator(ASSISTANT).last
    assert reply.get_attribute("data-finish-reason") == "abort"
    assert reply.locator(".badge").inner_text() == "Stopped"
    partial = reply.locator(".message-body").inner_text().strip()
    assert partial
    assert page.locator("#stop").is_hidden()

    page.reload()
    stored = page.locator(ASSISTANT).last
    assert stored.get_attribute("data-finish-reason") == "abort"
    assert stored.locator(".badge").inner_text() == "Stopped"
    assert stored.locator(".badge").is_visible()
    assert stored.locator(".message-body").inner_text().strip() == partial


def test_enter_confirming_an_ime_candidate_does_not_send(page, sign_up):
    sign_up()
    composer = page.locator("#composer")
    composer.focus()
    cdp = page.context.new_cdp_session(page)

    page.evaluate(
        """() => {
          window.__enters = [];
          document.getElementById("composer").addEventListener("keydown", (e) => {
            if (e.key === "Enter") window.__enters.push(e.isComposing);
          }, {capture: true});
        }"""
    )

    # Standard path: the Enter that confirms the candidate arrives while the composition is open
    # (isComposing true). rawKeyDown: the IME consumes the key, so it carries no text.
    cdp.send("Input.imeSetComposition", {"text": "にほんご", "selectionStart": 4, "selectionEnd": 4})
    cdp.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": "Enter", "code": "Enter",
                                        "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13})
    cdp.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Enter", "code": "Enter",
                                        "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13})
    cdp.send("Input.insertText", {"text": "日本語"})
    assert page.evaluate("window.__enters") == [True]  # the browser did see a composing Enter
    assert composer.input_value() == "日本語"
    assert page.locator("#messages .message").count() == 0

    # Safari's order: compositionend first, then the confirming Enter's keydown in the same turn,
    # with isComposing false.
    page.evaluate(
        """() => {
          const c = document.getElementById("composer");
          c.dispatchEvent(new CompositionEvent("compositionstart", {bubbles: true}));
          c.dispatchEvent(new CompositionEvent("compositionend", {bubbles: true, data: "語"}));
          c.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true, cancelable: true}));
        }"""
    )
    assert page.locator("#messages .message").count() == 0
    assert composer.input_value() == "日本語"

    # Past the composition grace period (100 ms in chat.js): an IME that reports keyCode 229 and
    # no composition events still does not send; a plain Enter does.
    page.wait_for_timeout(300)
    page.evaluate(
        """() => document.getElementById("composer").dispatchEvent(
             new KeyboardEvent("keydown", {key: "Enter", keyCode: 229, bubbles: true, cancelable: true}))"""
    )
    assert page.locator("#messages .message").count() == 0
    page.keyboard.press("Enter")
    page.wait_for_selector(USER + '[data-status="complete"]', timeout=REPLY_TIMEOUT_MS)
    assert page.locator(USER).count() == 1
    assert page.locator(USER).last.locator(".message-body").inner_text() == "日本語"
    assert composer.input_value() == ""
    stop_and_wait(page)
    # Only the one plain Enter reached the server.
    assert len(page.request.get("/api/conversations").json()["conversations"]) == 1
    stored = page.request.get(f"/api/conversations/{conversation_id(page)}").json()
    assert [m["content"] for m in stored["messages"] if m["role"] == "user"] == ["日本語"]


def test_shift_enter_adds_a_line_and_blank_text_never_sends(page, sign_up):
    sign_up()
    composer = page.locator("#composer")
    composer.focus()
    page.keyboard.type("   ")
    page.keyboard.press("Enter")
    page.keyboard.press("Shift+Enter")
    page.keyboard.press("Enter")
    assert page.locator("#messages .message").count() == 0

    composer.fill("")
    page.keyboard.type("first line")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("second line")
    assert composer.input_value() == "first line\nsecond line"
    assert page.locator("#messages .message").count() == 0

    page.keyboard.press("Enter")
    assert page.locator(USER).last.locator(".message-body").inner_text() == "first line\nsecond line"
    page.wait_for_selector(USER + '[data-status="complete"]', timeout=REPLY_TIMEOUT_MS)
    stop_and_wait(page)
    stored = page.request.get(f"/api/conversations/{conversation_id(page)}").json()
    assert [m["content"] for m in stored["messages"] if m["role"] == "user"] == ["first line\nsecond line"]


def test_log_out_and_in_again_finds_the_conversation(page, sign_up, log_in):
    username = sign_up()
    send(page, "Say hello in one short sentence.")
    reply = wait_finished(page)
    conversation_url = page.url
    reply_text = reply.locator(".message-body").inner_text()
    status = reply.get_attribute("data-status")

    page.click("#logout")
    page.wait_for_url("**/login")
    page.goto(conversation_url)
    page.wait_for_url("**/login")  # the old session cookie no longer opens it

    log_in(username)
    link = page.locator("#conversation-list a")
    assert link.count() == 1
    link.click()
    page.wait_for_url(conversation_url)
    assert page.locator('#conversation-list a[aria-current="page"]').count() == 1
    assert page.locator(USER).last.locator(".message-body").inner_text() == "Say hello in one short sentence."
    stored = page.locator(ASSISTANT).last
    assert stored.get_attribute("data-status") == status
    assert stored.locator(".message-body").inner_text() == reply_text


def test_wrong_password_shows_an_error(page, sign_up):
    username = sign_up()
    page.click("#logout")
    page.wait_for_url("**/login")
    page.fill("#username", username)
    page.fill("#password", "not the password")
    page.click("#submit")
    assert page.locator("#form-error").inner_text() == "Invalid username or password."
    assert page.locator("#username").input_value() == username


def test_another_users_conversation_is_a_404_page(page, sign_up):
    sign_up()
    send(page, "Say hi.")
    page.wait_for_selector(USER + '[data-status="complete"]', timeout=REPLY_TIMEOUT_MS)
    stop_and_wait(page)
    conversation_url = page.url

    page.click("#logout")
    page.wait_for_url("**/login")
    sign_up()
    response = page.goto(conversation_url)
    assert response.status == 404
    # Server-rendered: nothing to wait for. templates/error.html, not a bare fallback page.
    assert page.locator(".error-code").all_inner_texts() == ["404"]


def test_an_over_long_message_is_kept_with_a_notice_not_cut(page, sign_up):
    sign_up()
    text = "long " * 6500  # 32,500 characters: over the 32,000 limit
    page.locator("#composer").fill(text)
    page.locator("#composer").press("Enter")
    notice = page.locator("#notice")
    notice.wait_for(state="visible")
    assert "32,000" in notice.inner_text()
    # Nothing sent, nothing cut: the person can shorten it.
    assert page.locator("#messages .message").count() == 0
    assert page.locator("#composer").input_value() == text
