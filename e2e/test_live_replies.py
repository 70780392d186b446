"""Replies that outlive the page, and tabs that stay live, in a real browser with the real model.

An admin raises the default reply length for these tests (restored after), so a reply is still
streaming when the test reloads, navigates away or cuts the socket. Waits are on the DOM state
the page exposes (data-status on each .message, #connection[data-state]).
"""

from __future__ import annotations

import json
import re
import time
from typing import Iterator

import pytest

from .conftest import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPLY_TIMEOUT_MS = 180_000
LONG_REPLY_TOKENS = 160
STORY = "Write a long story about a lighthouse keeper and a whale. Use many paragraphs."
ASSISTANT = '#messages .message[data-role="assistant"]'
USER = '#messages .message[data-role="user"]'
STREAMING_WITH_TEXT = """(minChars) => {
  const all = document.querySelectorAll('#messages .message[data-role="assistant"]');
  const m = all[all.length - 1];
  return m && m.dataset.status === "streaming"
    && m.querySelector(".message-body").textContent.trim().length >= minChars;
}"""


def _csrf(page) -> str:
    return page.get_attribute('meta[name="csrf-token"]', "content")


@pytest.fixture
def long_replies(browser, server: str, admin_username: str) -> Iterator[None]:
    """Replies of up to LONG_REPLY_TOKENS tokens while the test runs."""
    context = browser.new_context(base_url=server)
    admin = context.new_page()
    admin.goto("/login")
    admin.fill("#username", admin_username)
    admin.fill("#password", PASSWORD)
    admin.click("#submit")
    admin.wait_for_url("**/chat")
    admin.goto("/admin")
    original = admin.request.get("/admin/api/settings").json()["settings"]

    def post(settings: dict) -> None:
        response = admin.request.post("/admin/api/settings", data=json.dumps(settings),
                                      headers={"Content-Type": "application/json", "X-CSRF-Token": _csrf(admin)})
        assert response.ok, response.text()

    post({"default_max_tokens": LONG_REPLY_TOKENS})
    try:
        yield
    finally:
        post({"default_max_tokens": original["default_max_tokens"]})
        context.close()


def send(page, text: str) -> None:
    page.fill("#composer", text)
    page.press("#composer", "Enter")


def wait_streaming(page, min_chars: int = 1) -> None:
    page.wait_for_function(STREAMING_WITH_TEXT, arg=min_chars, timeout=REPLY_TIMEOUT_MS)


LAST_FINISHED = """() => {
  const all = document.querySelectorAll('#messages .message[data-role="assistant"]');
  const m = all[all.length - 1];
  return m && m.dataset.status !== "streaming" && m.dataset.status !== "pending";
}"""


def wait_finished(page):
    """The last reply on the page has ended (an earlier finished one does not count)."""
    page.wait_for_function(LAST_FINISHED, timeout=REPLY_TIMEOUT_MS)
    return page.locator(ASSISTANT).last


def conversation_id(page) -> str:
    page.wait_for_url(re.compile(r".*/c/[0-9A-Za-z_-]+$"))
    return page.url.rsplit("/", 1)[1]


def stored_reply(page, conversation: str) -> dict:
    view = page.request.get(f"/api/conversations/{conversation}").json()
    return [m for m in view["messages"] if m["role"] == "assistant"][-1]


def body_text(page) -> str:
    return page.locator(ASSISTANT).last.locator(".message-body").inner_text().strip()


def assert_matches_store(page, conversation: str) -> dict:
    """The finished reply on the page is the stored one, badge included (never "Generating…")."""
    reply = wait_finished(page)
    stored = stored_reply(page, conversation)
    assert stored["status"] == reply.get_attribute("data-status") == "complete"
    assert reply.get_attribute("data-finish-reason") == stored["finish_reason"] in ("stop", "length")
    badge = reply.locator(".badge")
    if stored["finish_reason"] == "length":
        assert badge.inner_text() == "Cut at the token limit" and badge.is_visible()
    else:
        assert not badge.is_visible()
    shown = body_text(page)
    page.reload()
    assert body_text(page) == shown  # what streamed in is what the server stored
    return stored


def test_reload_mid_stream_keeps_streaming_and_ends_with_its_badge(page, sign_up, long_replies):
    sign_up()
    send(page, STORY)
    wait_streaming(page, 20)
    conversation = conversation_id(page)
    page.reload()
    reply = page.locator(ASSISTANT).last
    assert reply.get_attribute("data-status") == "streaming"  # reloaded mid-stream
    before = len(body_text(page))
    wait_streaming(page, before + 10)  # it goes on streaming into the reloaded page
    assert_matches_store(page, conversation)
    assert len(body_text(page)) > before


def test_switching_conversation_and_back_finds_the_reply_complete(page, sign_up, long_replies):
    sign_up()
    send(page, STORY)
    wait_streaming(page, 10)
    conversation = conversation_id(page)
    page.click("#new-chat")
    page.wait_for_url("**/chat")
    page.wait_for_selector('#connection[data-state="open"]')
    time.sleep(1.0)  # away for a moment while it goes on
    page.click(f'#conversation-list a[data-conversation-id="{conversation}"]')
    page.wait_for_url(f"**/c/{conversation}")
    reply = wait_finished(page)
    assert reply.get_attribute("data-status") == "complete"
    assert stored_reply(page, conversation)["status"] == "complete"


def test_two_tabs_see_each_others_messages_live(page, sign_up, long_replies):
    sign_up()
    send(page, "Say hello.")
    wait_finished(page)
    conversation = conversation_id(page)
    other = page.context.new_page()  # the same browser: the same account
    other.goto(f"/c/{conversation}")
    other.wait_for_selector('#connection[data-state="open"]')
    lobby = page.context.new_page()  # a third tab on "New chat" watches the list
    lobby.goto("/chat")
    lobby.wait_for_selector('#connection[data-state="open"]')

    send(page, STORY)
    other.wait_for_function(
        """(text) => [...document.querySelectorAll('#messages .message[data-role="user"]')]
              .some((m) => m.textContent.trim() === text)""", arg=STORY, timeout=30_000)
    wait_streaming(other, 10)  # the other tab shows the reply while it streams
    wait_finished(page)
    wait_finished(other)
    assert body_text(other) == body_text(page)
    assert other.locator(ASSISTANT).count() == page.locator(ASSISTANT).count() == 2

    # A rename in one tab retitles the conversation in every tab and list.
    page.click("#rename")  # the title becomes a text field in place
    page.fill("#chat-title-input", "Whale stories")
    page.press("#chat-title-input", "Enter")
    for tab in (page, other):
        tab.wait_for_function("() => document.getElementById('chat-title').textContent === 'Whale stories'")
    lobby.wait_for_selector(f'#conversation-list a[data-conversation-id="{conversation}"]:text-is("Whale stories")')

    # The conversation list follows too: a new conversation in one tab appears in the others.
    page.click("#new-chat")
    page.wait_for_selector('#connection[data-state="open"]')
    send(page, "Name one colour.")
    new_conversation = conversation_id(page)
    for tab in (other, lobby):
        tab.wait_for_selector(f'#conversation-list a[data-conversation-id="{new_conversation}"]', timeout=30_000)
    wait_finished(page)
    # And a deletion: the conversation leaves every list; the tab showing it goes to a new chat.
    other.goto(f"/c/{new_conversation}")
    other.wait_for_selector('#connection[data-state="open"]')
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#delete-conversation")
    page.wait_for_url("**/chat")
    other.wait_for_url("**/chat", timeout=30_000)
    lobby.wait_for_selector(f'#conversation-list a[data-conversation-id="{new_conversation}"]', state="detached")
    assert page.locator(f'#conversation-list a[data-conversation-id="{new_conversation}"]').count() == 0
    other.close()
    lobby.close()


def test_a_socket_closed_for_five_seconds_resumes_without_a_reload(page, sign_up, long_replies):
    state = {"blocked": False, "routes": []}

    def route(ws) -> None:
        if state["blocked"]:
            ws.close()
            return
        state["routes"].append((ws, ws.connect_to_server()))

    page.route_web_socket(re.compile(r".*/ws$"), route)
    sign_up()
    send(page, STORY)
    wait_streaming(page, 10)
    conversation = conversation_id(page)
    navigations: list[str] = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))
    state["blocked"] = True
    for ws, server_side in state["routes"]:
        ws.close()  # the network drops: both ends see the socket close
        server_side.close()
    page.wait_for_selector('#connection:not([data-state="open"])')
    time.sleep(5.0)
    reply = page.locator(ASSISTANT).last
    assert reply.get_attribute("data-status") == "streaming"  # not given up for lost
    state["blocked"] = False
    page.wait_for_selector('#connection[data-state="open"]', timeout=30_000)
    wait_finished(page)
    assert navigations == []  # resumed in place: no reload
    assert_matches_store(page, conversation)


BUSY_NOTICE = "A reply is still being written: wait for it or press Stop."


def second_tab(page, conversation: str, route=None):
    """A second tab of the same browser (the same account) on `conversation`, its socket open;
    `route`: a proxy for its WebSocket (Playwright's Page.route_web_socket handler)."""
    other = page.context.new_page()
    if route is not None:
        other.route_web_socket(re.compile(r".*/ws$"), route)
    other.goto(f"/c/{conversation}")
    other.wait_for_selector('#connection[data-state="open"]')
    return other


def test_enter_in_a_second_tab_while_the_reply_streams_says_to_wait(page, sign_up, long_replies):
    # A new user: in a second tab following a reply, Enter was reported to do nothing, with no
    # notice. The tab that follows must say so like the tab that sent, and keep what was typed.
    sign_up()
    send(page, "Say hello.")
    wait_finished(page)
    conversation = conversation_id(page)
    other = second_tab(page, conversation)

    send(page, STORY)
    wait_streaming(other, 10)  # tab B follows the reply live
    assert other.is_disabled("#send") and other.is_visible("#stop")
    typed = "And what happened to the whale next?"
    other.click("#composer")
    other.keyboard.type(typed)
    other.keyboard.press("Enter")
    notice = other.locator("#notice")
    notice.wait_for(state="visible", timeout=5_000)
    assert notice.inner_text() == BUSY_NOTICE
    assert notice.get_attribute("data-tone") == "info"
    assert other.input_value("#composer") == typed  # nothing typed is lost
    assert other.locator(USER).count() == page.locator(USER).count() == 2  # and nothing was sent

    # Stop from tab B ends the reply in both tabs; the notice goes, the text stays for a send.
    other.click("#stop")
    for tab in (page, other):
        assert wait_finished(tab).get_attribute("data-finish-reason") == "abort"
    other.wait_for_selector("#notice", state="hidden", timeout=5_000)
    assert other.input_value("#composer") == typed
    view = other.request.get(f"/api/conversations/{conversation}").json()
    assert [m["role"] for m in view["messages"]].count("user") == 2
    other.close()


FAILED_MESSAGE = "The model stopped answering."


def test_a_followed_reply_that_fails_frees_the_composer_in_the_tab_that_follows(page, sign_up, long_replies):
    # Tab B follows a reply sent from tab A; the reply ends there with an error frame. Tab B used
    # to drop the stream without updating its controls: Send stayed disabled and Stop visible,
    # although nothing streamed any more. Only tab B's socket gets the error (a proxy between the
    # page and the server puts it in place of the reply's next frame); tab A streams on.
    sign_up()
    send(page, "Say hello.")
    wait_finished(page)
    conversation = conversation_id(page)
    state = {"fail": None, "injected": False}

    def route(ws) -> None:
        server_side = ws.connect_to_server()

        def from_server(message) -> None:
            target = state["fail"]
            if target and isinstance(message, str) and json.loads(message).get("message_id") == target:
                if not state["injected"]:
                    state["injected"] = True
                    ws.send(json.dumps({"type": "error", "message_id": target, "code": "generation_error",
                                        "message": FAILED_MESSAGE}))
                return  # the reply's real frames never reach tab B after its error
            ws.send(message)

        server_side.on_message(from_server)
        ws.on_message(server_side.send)

    other = second_tab(page, conversation, route)

    send(page, STORY)
    wait_streaming(other, 10)  # tab B follows the reply live
    followed = other.locator(ASSISTANT).last
    assert other.is_disabled("#send") and other.is_visible("#stop")
    state["fail"] = followed.get_attribute("data-message-id")
    followed.locator('.badge[data-ending="error"]').wait_for(timeout=REPLY_TIMEOUT_MS)
    assert state["injected"]
    assert followed.get_attribute("data-status") == "error"
    assert followed.get_attribute("data-finish-reason") == "error"
    assert followed.locator(".badge").inner_text() == "Failed: " + FAILED_MESSAGE
    # Nothing streams in tab B any more: Stop goes and Send comes back.
    other.wait_for_selector("#stop", state="hidden", timeout=10_000)
    assert other.is_enabled("#send")
    assert other.get_attribute("#composer-form", "data-busy") == "false"

    # Tab A stops the real reply (unless it ended meanwhile); then tab B's composer sends, and
    # its reply ends in tab B.
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    if page.is_visible("#stop"):
        try:
            page.click("#stop", timeout=5_000)
        except PlaywrightTimeoutError:
            assert page.is_hidden("#stop")  # the reply ended on its own just before the click
    wait_finished(page)
    assert other.locator(USER).count() == 2
    send(other, "Say hello again.")
    other.wait_for_function(  # the body only: the message's actions add their labels to its text
        """(text) => [...document.querySelectorAll('#messages .message[data-role="user"] .message-body')]
              .some((b) => b.textContent.trim() === text)""", arg="Say hello again.", timeout=30_000)
    assert other.locator(USER).count() == 3
    wait_finished(other)
    other.wait_for_selector("#stop", state="hidden", timeout=10_000)
    view = other.request.get(f"/api/conversations/{conversation}").json()
    assert [m["role"] for m in view["messages"]].count("user") == 3
    other.close()
