"""What a new user hit (issue 12), each in a real browser against the real server and model:
a double-click on Send, the sidebar footer's name, the admin settings form's redirect, the
confirmation before disabling, upload errors, the TTFT card, notice tones, long messages, and
the phone's hint and New chat button."""

from __future__ import annotations

import uuid

import pytest

from e2e.conftest import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPLY_TIMEOUT_MS = 90_000
ASSISTANT = '#messages .message[data-role="assistant"]'
USER = '#messages .message[data-role="user"]'
LONG_QUESTION = "Write a long story about a dragon who learns to bake bread."


def log_in(page, username: str) -> None:
    page.goto("/login")
    page.fill("#username", username)
    page.fill("#password", PASSWORD)
    page.click("#submit")
    page.wait_for_url("**/chat")
    page.wait_for_selector('#connection[data-state="open"]')


def sign_up_in(context) -> str:
    """A new account signed up in `context` (its own cookies); returns the username."""
    username = "e2e-" + uuid.uuid4().hex[:10]
    page = context.new_page()
    page.goto("/signup")
    page.fill("#username", username)
    page.fill("#password", PASSWORD)
    page.click("#submit")
    page.wait_for_url("**/chat")
    page.wait_for_selector('#connection[data-state="open"]')
    return username


def wait_finished(page):
    """The last reply on the page, once it has ended."""
    page.wait_for_function("""(selector) => {
      const all = document.querySelectorAll(selector);
      const last = all[all.length - 1];
      return last && !["pending", "streaming"].includes(last.dataset.status);
    }""", arg=ASSISTANT, timeout=REPLY_TIMEOUT_MS)
    return page.locator(ASSISTANT).last


def test_a_double_click_on_send_does_not_stop_the_reply(page, sign_up):
    sign_up()
    page.fill("#composer", LONG_QUESTION)
    box = page.locator("#send").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.dblclick(x, y)
    # Stop took Send's place: the second click landed on it.
    stop_box = page.locator("#stop").bounding_box()
    assert stop_box["x"] <= x <= stop_box["x"] + stop_box["width"], (box, stop_box)
    reply = wait_finished(page)
    assert reply.get_attribute("data-finish-reason") != "abort"
    assert "Stopped" not in reply.locator(".badge").inner_text()
    assert page.locator(USER).count() == 1  # and it sent once

    # A deliberate Stop, later, still stops.
    page.fill("#composer", LONG_QUESTION)
    page.press("#composer", "Enter")
    page.wait_for_selector(ASSISTANT + '[data-status="streaming"]', timeout=REPLY_TIMEOUT_MS)
    page.wait_for_timeout(400)
    page.click("#stop")
    page.wait_for_selector("#stop", state="hidden", timeout=REPLY_TIMEOUT_MS)  # this reply ended
    assert page.locator(ASSISTANT).last.get_attribute("data-finish-reason") == "abort"


def test_a_message_sent_right_after_stop_goes_out_when_the_reply_has_stopped(page, sign_up):
    # The new user of 2026-12-02 (fifth session): Stop, then Enter at once, before the server had
    # confirmed the stop. The send was refused as "still being written", the reply's end then
    # cleared that notice, and the message sat unsent in the box (2 of 5 tries).
    sign_up()
    page.fill("#composer", LONG_QUESTION)
    page.press("#composer", "Enter")
    page.wait_for_selector(ASSISTANT + '[data-status="streaming"]', timeout=REPLY_TIMEOUT_MS)
    page.wait_for_timeout(400)
    # Stop and Enter in one task of the page: the stop cannot have been confirmed in between.
    notice = page.evaluate("""() => {
      document.getElementById("stop").click();
      const composer = document.getElementById("composer");
      composer.value = "What is the capital of France?";
      composer.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true, cancelable: true}));
      return document.getElementById("notice").textContent;
    }""")
    assert "goes out as soon as it has stopped" in notice
    page.wait_for_function("""(selector) => {
      const all = document.querySelectorAll(selector);
      return all.length === 2 && all[1].textContent.includes("capital of France");
    }""", arg=USER, timeout=REPLY_TIMEOUT_MS)
    assert page.locator(ASSISTANT).first.get_attribute("data-finish-reason") == "abort"
    reply = wait_finished(page)
    assert reply.get_attribute("data-finish-reason") != "abort"
    assert page.input_value("#composer") == ""
    assert page.locator("#notice").is_hidden() or "stopped" not in page.locator("#notice").inner_text()


def test_a_harmless_notice_is_not_an_error_and_a_long_message_collapses(page, sign_up):
    sign_up()
    # 300 short lines: thousands of pixels tall, a few hundred tokens.
    long_text = "\n".join(f"line {i}" for i in range(300))
    page.fill("#composer", long_text)
    page.press("#composer", "Enter")
    page.wait_for_selector(ASSISTANT + '[data-status="streaming"]', timeout=REPLY_TIMEOUT_MS)

    # Sending while the reply is written: a note, in the info style, not a red error.
    page.fill("#composer", "and another thing")
    page.press("#composer", "Enter")
    notice = page.locator("#notice")
    assert "still being written" in notice.inner_text()
    assert notice.get_attribute("data-tone") == "info"
    colours = page.evaluate("""() => {
      const probe = document.createElement("p");
      probe.className = "notice";
      document.body.append(probe);
      const error = getComputedStyle(probe).color;
      probe.remove();
      return [getComputedStyle(document.getElementById("notice")).color, error];
    }""")
    assert colours[0] != colours[1], colours
    page.evaluate("document.getElementById('stop').click()")
    wait_finished(page)
    # The reply ended: the note about it goes (it stayed up, stale, until the next send).
    page.wait_for_selector("#notice", state="hidden", timeout=5_000)

    def check_collapsed() -> None:
        user = page.locator(USER).first
        assert user.get_attribute("data-collapsed") == "true"
        assert user.bounding_box()["height"] < 600
        button = user.locator(".show-more")
        assert button.inner_text() == "Show more"
        button.click()
        assert user.get_attribute("data-collapsed") == "false"
        assert user.bounding_box()["height"] > 3000
        assert button.inner_text() == "Show less"
        button.click()
        assert user.bounding_box()["height"] < 600

    check_collapsed()  # the echo this page made
    page.reload()
    page.wait_for_selector(USER)
    check_collapsed()  # and the message the server rendered


def test_the_admins_name_in_the_sidebar_footer_is_readable(page, admin_username):
    log_in(page, admin_username)
    name = page.locator(".account .account-name")
    assert name.inner_text() == admin_username
    fits = page.evaluate("""() => {
      const el = document.querySelector(".account .account-name");
      return {width: el.getBoundingClientRect().width, scroll: el.scrollWidth, client: el.clientWidth};
    }""")
    assert fits["scroll"] <= fits["client"], fits  # not cut
    assert fits["width"] >= 60, fits  # was 13 px: "a."


def test_admin_settings_redirect_after_post_and_disable_asks_first(page, admin_username, browser, server):
    other = browser.new_context(base_url=server)
    try:
        victim = sign_up_in(other)
    finally:
        other.close()
    log_in(page, admin_username)
    page.goto("/admin")
    page.click("#settings-save")
    page.wait_for_selector("#settings-saved")
    assert page.url.endswith("/admin#settings"), page.url  # not the POST URL
    page.reload()  # a GET: nothing is posted again, and the notice was shown once
    assert page.locator("#settings-saved").count() == 0

    row = page.locator(f'tr[data-username="{victim}"]')
    dialogs: list[str] = []

    def dismiss(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    row.locator('button[data-value="disabled"]').click()
    page.wait_for_timeout(300)
    assert dialogs and victim in dialogs[0]
    assert row.get_attribute("data-status") == "active"

    page.once("dialog", lambda dialog: dialog.accept())
    row.locator('button[data-value="disabled"]').click()
    page.wait_for_selector(f'tr[data-username="{victim}"][data-status="disabled"]')


def test_the_ttft_card_stays_on_one_line_at_1280_px(page, admin_username):
    page.set_viewport_size({"width": 1280, "height": 800})
    log_in(page, admin_username)
    page.goto("/admin")
    lines = page.evaluate("""() => {
      const el = document.getElementById("engine-ttft");
      el.textContent = "12.34 s · 56.78 s";  // the widest value the card shows
      const range = document.createRange();
      range.selectNodeContents(el);
      return {lines: range.getClientRects().length, scroll: el.scrollWidth, client: el.clientWidth};
    }""")
    assert lines["lines"] == 1 and lines["scroll"] <= lines["client"], lines


def test_upload_errors_name_the_file_once_in_readable_sizes(page, sign_up):
    sign_up()
    page.set_input_files("#document-upload", files=[
        {"name": "huge.txt", "mimeType": "text/plain", "buffer": b"a" * 14_859_832},
    ])
    error = page.locator("#document-error")
    page.wait_for_function("() => document.getElementById('document-error').textContent.includes('huge.txt')",
                           timeout=60_000)
    text = error.inner_text()
    assert text.count("huge.txt") == 1, text
    assert "bytes" not in text and "14859832" not in text, text
    assert "14.2 MB" in text and "10 MB" in text, text


def test_on_a_phone_the_hint_says_tap_and_the_header_has_new_chat(browser, server):
    context = browser.new_context(base_url=server, viewport={"width": 390, "height": 844},
                                  is_mobile=True, has_touch=True)
    try:
        sign_up_in(context)
        page = context.pages[0]
        assert page.evaluate("matchMedia('(pointer: coarse)').matches")
        hint = page.locator("#empty-state").inner_text()
        assert "Tap Send" in hint and "Enter sends" not in hint, hint
        button = page.locator("#new-chat-head")
        assert button.is_visible()
        # Return adds a line on a phone; Send sends.
        page.fill("#composer", "first line")
        page.press("#composer", "Enter")
        assert page.locator(USER).count() == 0
        page.tap("#send")
        page.wait_for_url("**/c/*")
        wait_finished(page)
        button.tap()
        page.wait_for_url("**/chat")
    finally:
        context.close()
