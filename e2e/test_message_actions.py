"""Message actions in a real browser against the real model: regenerate and switch between the
versions, edit a question (a new branch), continue a reply cut at the token limit (with the
conversation's own max tokens set in its settings dialog), copy a message to the clipboard."""

from __future__ import annotations

import pytest

from .test_chat import ASSISTANT, FINISHED, REPLY_TIMEOUT_MS, USER, conversation_id, send, wait_finished

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def action(message, name: str):
    return message.locator(f'.message-actions button[data-action="{name}"]')


def wait_idle(page) -> None:
    """No reply in flight on the page: Send is back."""
    page.wait_for_selector("#stop", state="hidden", timeout=REPLY_TIMEOUT_MS)
    page.wait_for_selector(FINISHED, timeout=REPLY_TIMEOUT_MS)


def test_regenerate_then_switch_between_the_two_replies(page, sign_up):
    sign_up()
    send(page, "Name a colour.")
    first = wait_finished(page)
    wait_idle(page)
    first_id = first.get_attribute("data-message-id")
    first_text = first.locator(".message-body").inner_text()
    assert page.locator(ASSISTANT).last.locator(".branch-nav").is_hidden()

    first.hover()
    action(first, "regenerate").click()
    page.wait_for_function("id => !document.getElementById('msg-' + id)", arg=first_id)
    wait_idle(page)
    second = page.locator(ASSISTANT).last
    assert second.get_attribute("data-message-id") != first_id
    assert page.locator(ASSISTANT).count() == 1 and page.locator(USER).count() == 1
    assert second.locator(".branch-count").inner_text() == "2/2"

    action(second, "previous").click()
    page.wait_for_selector(f"#msg-{first_id}")
    back = page.locator(ASSISTANT).last
    assert back.locator(".branch-count").inner_text() == "1/2"
    assert back.locator(".message-body").inner_text() == first_text
    assert action(back, "previous").is_disabled() and action(back, "next").is_enabled()

    page.reload()  # the branch shown is stored, not just drawn
    page.wait_for_selector('#connection[data-state="open"]')
    assert page.locator(ASSISTANT).last.get_attribute("data-message-id") == first_id


def test_edit_a_question_makes_a_new_branch(page, sign_up):
    sign_up()
    send(page, "What is 2 + 2?")
    wait_idle(page)
    question = page.locator(USER).last
    old_id = question.get_attribute("data-message-id")
    question.hover()
    action(question, "edit").click()
    box = question.locator(".message-edit textarea")
    assert box.input_value() == "What is 2 + 2?"
    box.fill("What is 3 + 3?")
    question.locator(".message-edit button[type=submit]").click()
    page.wait_for_function("id => !document.getElementById('msg-' + id)", arg=old_id)
    wait_idle(page)
    edited = page.locator(USER).last
    assert edited.locator(".message-body").inner_text() == "What is 3 + 3?"
    assert edited.locator(".branch-count").inner_text() == "2/2"
    assert page.locator(USER).count() == 1 and page.locator(ASSISTANT).count() == 1

    action(edited, "previous").click()
    page.wait_for_selector(f"#msg-{old_id}")
    assert page.locator(USER).last.locator(".message-body").inner_text() == "What is 2 + 2?"
    assert page.locator(ASSISTANT).count() == 1


def test_continue_after_a_length_cut_extends_the_same_reply(page, sign_up):
    sign_up()
    send(page, "Hello")
    wait_idle(page)
    # The conversation's own settings: replies of at most 8 tokens.
    page.click("#conversation-settings")
    page.fill("#settings-max-tokens", "8")
    page.click("#settings-save")
    page.wait_for_selector("#settings-dialog", state="hidden")
    send(page, "Write a long story about a dragon who learns to bake bread.")
    wait_idle(page)
    reply = page.locator(ASSISTANT).last
    assert reply.get_attribute("data-finish-reason") == "length"
    assert reply.locator(".badge").inner_text() == "Cut at the token limit"
    reply_id = reply.get_attribute("data-message-id")
    before = reply.locator(".message-body").inner_text().strip()
    assert action(reply, "continue").is_visible()

    action(reply, "continue").click()
    page.wait_for_selector(f'#msg-{reply_id}[data-status="streaming"], #msg-{reply_id}[data-status="pending"]',
                           timeout=REPLY_TIMEOUT_MS)
    wait_idle(page)
    after = page.locator(f"#msg-{reply_id} .message-body").inner_text().strip()
    assert len(after) > len(before)
    assert after.startswith(before[: max(1, len(before) - 3)])  # the same text, extended
    assert page.locator(ASSISTANT).count() == 2  # continued in place, not a new message
    page.reload()
    page.wait_for_selector('#connection[data-state="open"]')
    assert page.locator(f"#msg-{reply_id} .message-body").inner_text().strip() == after


def test_copy_puts_the_markdown_source_on_the_clipboard(page, sign_up):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    sign_up()
    text = "Please repeat: **bold** and `code`"
    send(page, text)
    wait_idle(page)
    cid = conversation_id(page)
    question = page.locator(USER).last
    question.hover()
    action(question, "copy").click()
    page.wait_for_function("() => document.querySelector('#messages .message-action[data-action=copy]')"
                           ".textContent === 'Copied'")
    assert page.evaluate("navigator.clipboard.readText()") == text
    # A reply's copy is its Markdown source, as stored.
    reply = page.locator(ASSISTANT).last
    reply.hover()
    action(reply, "copy").click()
    stored = page.evaluate("""async (cid) => {
        const r = await fetch('/api/conversations/' + cid);
        const data = await r.json();
        return data.messages[data.messages.length - 1].content;
    }""", cid)
    page.wait_for_function("s => navigator.clipboard.readText().then(t => t === s)", arg=stored)
    # Timings stay behind the info button.
    assert reply.locator(".timings").is_hidden()
    action(reply, "info").click()
    assert reply.locator(".timings").is_visible()
    # Plain http has no async clipboard, and the fallback copy may be refused: "Copy failed".
    page.wait_for_function("() => document.querySelector('#messages .message-action[data-action=copy]')"
                           ".textContent === 'Copy'")
    page.evaluate("""() => {
        Object.defineProperty(navigator, 'clipboard', {value: undefined, configurable: true});
        document.execCommand = () => false;
    }""")
    question.hover()
    action(question, "copy").click()
    page.wait_for_function("() => document.querySelector('#messages .message-action[data-action=copy]')"
                           ".textContent === 'Copy failed'")


def test_a_continue_in_one_tab_shows_in_the_other(page, sign_up):
    sign_up()
    send(page, "Hello")
    wait_idle(page)
    page.click("#conversation-settings")
    page.fill("#settings-max-tokens", "6")
    page.click("#settings-save")
    page.wait_for_selector("#settings-dialog", state="hidden")
    send(page, "Write a long poem about the sea.")
    wait_idle(page)
    reply_id = page.locator(ASSISTANT).last.get_attribute("data-message-id")
    other = page.context.new_page()
    other.goto(page.url)
    other.wait_for_selector('#connection[data-state="open"]')
    before = other.locator(f"#msg-{reply_id} .message-body").inner_text().strip()

    action(page.locator(f"#msg-{reply_id}"), "continue").click()
    wait_idle(page)
    after = page.locator(f"#msg-{reply_id} .message-body").inner_text().strip()
    assert len(after) > len(before)
    other.wait_for_function("([id, text]) => document.querySelector('#msg-' + id + ' .message-body')"
                            ".innerText.trim() === text", arg=[reply_id, after], timeout=REPLY_TIMEOUT_MS)
    other.close()
