"""Managing conversations in a real browser (issue 12): rename in place, delete with a
confirmation, pin (in every tab), the list grouped by date, search that opens a conversation at
the message, export (Markdown, JSON, the whole account) and import.

Most conversations here are made by importing a file (no model time); one test sends a real
message so that search is checked on text the chat itself stored. Waits are on DOM state.
"""

from __future__ import annotations

import io
import json
import re
import uuid
import zipfile
from datetime import datetime, timedelta

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPLY_TIMEOUT_MS = 90_000
ITEM = '#conversation-list li.conversation-item'
FINISHED = ('#messages .message[data-role="assistant"]:not([data-status="pending"])'
            ':not([data-status="streaming"])')


def conversation_file(title: str, texts: list[str], **conversation) -> bytes:
    """Our JSON format: one branch of alternating user/assistant messages."""
    messages = []
    for i, text in enumerate(texts):
        messages.append({"id": f"m{i}", "parent_id": f"m{i - 1}" if i else None,
                         "role": "user" if i % 2 == 0 else "assistant", "content": text,
                         "status": "complete", "finish_reason": None if i % 2 == 0 else "stop",
                         "created_at": "2026-11-01T10:00:00+00:00"})
    return json.dumps({"format": "crescent.conversation", "version": 1,
                       "conversation": {"title": title, **conversation}, "messages": messages}).encode()


def import_file(page, data: bytes, name: str = "conversation.json") -> str:
    """Import through the sidebar; returns the new conversation's id (the page opens it)."""
    before = page.url
    page.set_input_files("#conversation-import", files=[{"name": name, "mimeType": "application/json",
                                                          "buffer": data}])
    page.wait_for_url(lambda url: url != before and "/c/" in url)
    page.wait_for_selector('#connection[data-state="open"]')
    return page.url.rsplit("/c/", 1)[1].split("#")[0]


def rare_word(stem: str) -> str:
    """A word no other test writes, that the porter stemmer leaves whole (no vowels, no s or y
    after the stem, ends in x), so any prefix of it is a prefix of the indexed term."""
    consonants = "bcdfghjklmnpqrtvwz"
    return stem + "".join(consonants[b % len(consonants)] for b in uuid.uuid4().bytes[:6]) + "x"


def item(page, conversation_id: str):
    return page.locator(f'{ITEM}[data-conversation-id="{conversation_id}"]')


def open_menu(page, conversation_id: str):
    row = item(page, conversation_id)
    row.hover()
    row.locator(".conversation-actions").click()
    return page.locator("#conversation-menu")


def test_rename_in_place_enter_saves_escape_cancels(page, sign_up):
    sign_up()
    cid = import_file(page, conversation_file("Original title", ["hello", "hi"]))
    link = item(page, cid).locator("a")
    open_menu(page, cid).locator('[data-action="rename"]').click()
    field = item(page, cid).locator("input.conversation-rename")
    assert field.input_value() == "Original title"
    field.fill("Never saved")
    field.press("Escape")
    assert link.inner_text() == "Original title"
    link.dblclick()
    field.fill("  Renamed   in place ")
    field.press("Enter")
    page.wait_for_function("() => document.getElementById('chat-title').textContent === 'Renamed in place'")
    assert link.inner_text() == "Renamed in place"
    page.reload()
    assert item(page, cid).locator("a").inner_text() == "Renamed in place"


def test_delete_asks_first(page, sign_up):
    sign_up()
    keep = import_file(page, conversation_file("Keep me", ["a", "b"]))
    doomed = import_file(page, conversation_file("Delete me", ["c", "d"]))
    page.goto(f"/c/{keep}")
    page.once("dialog", lambda dialog: dialog.dismiss())
    open_menu(page, doomed).locator('[data-action="delete"]').click()
    assert item(page, doomed).count() == 1
    messages = []

    def accept(dialog):
        messages.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    open_menu(page, doomed).locator('[data-action="delete"]').click()
    item(page, doomed).wait_for(state="detached")
    assert "Delete me" in messages[0]
    page.reload()
    assert item(page, doomed).count() == 0 and item(page, keep).count() == 1
    assert page.goto(f"/c/{doomed}").status == 404


def test_pin_moves_to_the_pinned_group_in_every_tab(page, sign_up):
    sign_up()
    first = import_file(page, conversation_file("First", ["a", "b"]))
    second = import_file(page, conversation_file("Second", ["c", "d"]))
    other = page.context.new_page()
    other.goto(f"/c/{second}")
    other.wait_for_selector('#connection[data-state="open"]')
    groups = "#conversation-list .conversation-group"
    assert page.locator(groups).first.get_attribute("data-group") == "today"
    assert page.locator(f"{ITEM} a").all_inner_texts() == ["Second", "First"]
    menu = open_menu(page, first)
    assert menu.locator('[data-action="pin"]').inner_text() == "Pin"
    menu.locator('[data-action="pin"]').click()
    page.wait_for_selector(f'{ITEM}[data-conversation-id="{first}"][data-pinned="true"]')
    assert page.locator(f"{groups} >> nth=0").get_attribute("data-group") == "pinned"
    assert page.locator(f"{groups} >> nth=0 >> h3").inner_text().lower() == "pinned"
    assert page.locator(f"{ITEM} a").all_inner_texts() == ["First", "Second"]
    # The other tab hears of it (a "conversation" frame, event "pinned").
    other.wait_for_selector(f'{ITEM}[data-conversation-id="{first}"][data-pinned="true"]')
    assert other.locator(f"{ITEM} a").all_inner_texts() == ["First", "Second"]
    page.reload()
    assert page.locator(f"{ITEM} a").all_inner_texts() == ["First", "Second"]
    open_menu(page, first).locator('[data-action="pin"]').click()  # now "Unpin"
    page.wait_for_selector(f'{ITEM}[data-conversation-id="{first}"][data-pinned="false"]')
    other.wait_for_selector(f'{ITEM}[data-conversation-id="{first}"][data-pinned="false"]')
    assert page.locator(f"{ITEM} a").all_inner_texts() == ["Second", "First"]
    other.close()


@pytest.mark.parametrize("days_later, group", [(1, "Yesterday"), (5, "Previous 7 days"),
                                               (20, "Previous 30 days"), (70, None)])
def test_the_list_is_grouped_by_date_in_local_time(page, sign_up, days_later, group):
    sign_up()
    import_file(page, conversation_file("Dated", ["a", "b"]))
    # The browser's clock moves on; the conversation's time stays (its import time).
    later = datetime.now() + timedelta(days=days_later)
    page.clock.set_fixed_time(later)
    page.reload()
    heading = page.locator("#conversation-list .conversation-group-title").first.inner_text()
    if group is None:  # older than 30 days: a month of its own
        expected = datetime.now().strftime("%B %Y")
        assert heading.lower() == expected.lower()
    else:
        assert heading.lower() == group.lower()


def test_search_opens_the_conversation_at_the_message(page, sign_up):
    sign_up()
    word = rare_word("zebra")
    texts = [f"filler message number {i} " * 30 for i in range(40)]
    texts[5] = f"the {word} lives <b>here</b> in the middle"
    cid = import_file(page, conversation_file("Long talk", texts))
    import_file(page, conversation_file("Another talk", ["nothing to see", "indeed"]))
    page.fill("#conversation-search", word[:-2])  # a prefix is enough
    result = page.locator("#search-result-list a.search-result")
    result.first.wait_for()
    assert result.count() == 1
    assert page.locator("#conversations-nav").is_hidden()
    snippet = result.locator(".search-result-snippet")
    assert snippet.locator("mark").inner_text().lower().startswith(word[:-2])
    assert "<b>here</b>" in snippet.inner_text()  # shown as text, not markup
    assert snippet.locator("b").count() == 0
    message_id = result.get_attribute("data-message-id")
    result.click()
    page.wait_for_url(f"**/c/{cid}#m-{message_id}")
    target = page.locator(f"#msg-{message_id}")
    target.wait_for()
    page.wait_for_function("id => document.getElementById('msg-' + id).classList.contains('message-found')",
                           arg=message_id)
    box, viewport = target.bounding_box(), page.viewport_size
    assert box and 0 <= box["y"] < viewport["height"], box
    # Hostile queries are just words; nothing fails, Escape brings the list back.
    for query in ['"', "NEAR(", "*", "a OR", "zebra*"]:
        page.fill("#conversation-search", query)
        page.wait_for_function("""q => {
          const results = document.getElementById("search-results");
          return results.dataset.state === "done" && results.dataset.query === q;
        }""", arg=query)
    page.press("#conversation-search", "Escape")
    assert page.locator("#conversations-nav").is_visible()


def test_search_finds_a_message_sent_in_the_chat(page, sign_up):
    sign_up()
    word = rare_word("quokka")
    page.fill("#composer", f"Say hello to the {word}.")
    page.press("#composer", "Enter")
    page.wait_for_selector(FINISHED, timeout=REPLY_TIMEOUT_MS)
    page.wait_for_url(re.compile(r".*/c/\w+$"))
    page.fill("#conversation-search", word)
    result = page.locator("#search-result-list a.search-result")
    result.first.wait_for()
    # The reply may repeat the word (the snippet then marks it twice, in any case): every mark
    # is the word.
    marks = result.first.locator(".search-result-snippet mark").all_inner_texts()
    assert marks and all(m.lower() == word.lower() for m in marks), marks


def test_export_markdown_and_json_then_import_it_back(page, sign_up, tmp_path):
    sign_up()
    cid = import_file(page, conversation_file("Export me", ["What is **2+2**?", "It is 4."],
                                              settings={"system_prompt": "Be terse.", "temperature": 0.5}))
    with page.expect_download() as info:
        open_menu(page, cid).locator('[data-action="export-md"]').click()
    markdown = (tmp_path / "c.md")
    info.value.save_as(markdown)
    assert info.value.suggested_filename == "Export-me.md"
    text = markdown.read_text()
    assert text.startswith("# Export me") and "What is **2+2**?" in text and "It is 4." in text
    with page.expect_download() as info:
        open_menu(page, cid).locator('[data-action="export-md-tree"]').click()
    assert info.value.suggested_filename == "Export-me-tree.md"
    with page.expect_download() as info:
        open_menu(page, cid).locator('[data-action="export-json"]').click()
    exported = tmp_path / "c.json"
    info.value.save_as(exported)
    doc = json.loads(exported.read_text())
    assert doc["conversation"]["settings"]["system_prompt"] == "Be terse."
    assert [m["content"] for m in doc["messages"]] == ["What is **2+2**?", "It is 4."]
    new_id = import_file(page, exported.read_bytes())
    assert new_id != cid
    assert page.locator("#messages .message").count() == 2
    assert page.locator('#messages .message[data-role="assistant"] strong').count() == 0
    assert page.locator('#messages .message[data-role="user"] .message-body').inner_text().strip() == \
        "What is **2+2**?"
    assert page.locator(f"{ITEM} a", has_text="Export me").count() == 2
    # A file that is not ours is refused with the server's reason, and nothing opens.
    page.set_input_files("#conversation-import", files=[{"name": "bad.json", "mimeType": "application/json",
                                                          "buffer": b'{"format": "other"}'}])
    status = page.locator('#conversation-import-status[data-state="error"]')
    status.wait_for()
    assert "not a Crescent conversation file" in status.inner_text()
    assert page.url.endswith(f"/c/{new_id}")


def test_account_page_exports_everything_and_imports(page, sign_up, tmp_path):
    username = sign_up()
    import_file(page, conversation_file("In the archive", ["q", "a"]))
    page.goto("/account")
    with page.expect_download() as info:
        page.click("#export-all")
    archive = tmp_path / "all.zip"
    info.value.save_as(archive)
    assert info.value.suggested_filename.startswith(f"crescent-{username}-")
    with zipfile.ZipFile(io.BytesIO(archive.read_bytes())) as z:
        names = z.namelist()
        assert json.loads(z.read("account.json"))["username"] == username
        conversation = next(n for n in names if n.startswith("conversations/") and n.endswith(".json"))
        data = z.read(conversation)
    assert any(n.endswith(".md") for n in names) and "documents.json" in names
    page.set_input_files("#account-import", files=[{"name": "c.json", "mimeType": "application/json",
                                                     "buffer": data}])
    page.wait_for_url(re.compile(r".*/c/\w+$"))
    assert page.locator("#chat-title").inner_text() == "In the archive"


def test_a_result_on_another_branch_switches_to_that_branch(page, sign_up):
    sign_up()
    word = rare_word("walrus")
    # q0 -> a1 (regenerated away: holds the word) and q0 -> a2 (the active branch).
    tree = {"format": "crescent.conversation", "version": 1,
            "conversation": {"title": "Branches", "current_message_id": "a2"},
            "messages": [
                {"id": "q0", "parent_id": None, "role": "user", "content": "Tell me about seals"},
                {"id": "a1", "parent_id": "q0", "role": "assistant", "content": f"The {word} is a seal cousin.",
                 "status": "complete", "finish_reason": "stop"},
                {"id": "a2", "parent_id": "q0", "role": "assistant", "content": "Seals are pinnipeds.",
                 "status": "complete", "finish_reason": "stop"},
            ]}
    cid = import_file(page, json.dumps(tree).encode())
    assert word not in page.locator("#messages").inner_text()
    page.fill("#conversation-search", word)
    result = page.locator("#search-result-list a.search-result")
    result.first.wait_for()
    message_id = result.first.get_attribute("data-message-id")
    result.first.click()
    # The page asks the server to make that branch active, then shows it with the message found.
    page.wait_for_function("id => { const el = document.getElementById('msg-' + id);"
                           " return el && el.classList.contains('message-found'); }", arg=message_id)
    assert page.url.endswith(f"/c/{cid}#m-{message_id}")
    assert word in page.locator("#messages").inner_text()
    assert "pinnipeds" not in page.locator("#messages").inner_text()
