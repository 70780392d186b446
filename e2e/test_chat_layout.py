"""Layout a new user tripped over, measured in a real browser: the conversation menu inside the
sidebar, the phone header keeping the title readable, a conversation opening at its newest
message with the action bars in place."""

from __future__ import annotations

import pytest

from .test_conversation_management import conversation_file, import_file, open_menu

pytestmark = [pytest.mark.e2e]

LONG = ["A question about rivers, long enough to wrap onto a few lines in the page. " * 3,
        "An answer with several paragraphs.\n\n" + "More text here. " * 40] * 3


def test_the_conversation_menu_stays_inside_the_sidebar(page, sign_up):
    sign_up()
    cid = import_file(page, conversation_file("Menu check", LONG[:2]))
    menu = open_menu(page, cid)
    sidebar = page.locator("#sidebar").bounding_box()
    box = menu.bounding_box()
    assert box["x"] >= sidebar["x"] and box["x"] + box["width"] <= sidebar["x"] + sidebar["width"] + 0.5, (box, sidebar)
    for entry in menu.locator(".conversation-menu-item").all():
        item_box = entry.bounding_box()
        assert item_box["x"] >= sidebar["x"], entry.inner_text()


def test_a_phone_header_keeps_the_title_readable(page, sign_up):
    sign_up()
    cid = import_file(page, conversation_file("Whales of the northern seas", LONG[:2]))
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/c/{cid}")
    page.wait_for_selector('#connection[data-state="open"]')
    title = page.locator("#chat-title").bounding_box()
    assert title["width"] >= 80, title  # it was squeezed to 11 px by the header's buttons
    assert page.locator("#conversation-settings").is_visible() and page.locator("#new-chat-head").is_visible()
    header = page.locator(".chat-head").bounding_box()
    assert header["height"] < 70


def test_a_conversation_opens_at_its_newest_message(page, sign_up):
    sign_up()
    cid = import_file(page, conversation_file("Long one", LONG))
    page.goto(f"/c/{cid}")
    page.wait_for_selector('#connection[data-state="open"]')
    page.wait_for_selector("#messages .message:last-child .message-actions")
    gap = page.evaluate("(() => { const s = document.getElementById('scroller');"
                        " return s.scrollHeight - s.scrollTop - s.clientHeight; })()")
    assert gap < 2, gap
    assert page.locator("#messages .message:last-child .message-actions").is_visible()
