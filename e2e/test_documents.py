"""Documents in the chat, in a real browser against the real server, model and embedder.

A person uploads a Markdown file from the chat page's sidebar, waits for it to be ready, turns
"Use my documents" on, asks about it and follows the reply's source link to the exact passage.
Bad files get the server's clear error without losing what is already there; delete removes a
document. Waits are on DOM state (data-status on documents and messages), never fixed sleeps.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from e2e.conftest import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPLY_TIMEOUT_MS = 90_000
# The first document of a server loads the embedding model; a slow shared machine needs room.
READY_TIMEOUT_MS = 180_000

ASSISTANT = '#messages .message[data-role="assistant"]'
FINISHED = ASSISTANT + ':not([data-status="pending"]):not([data-status="streaming"])'

# A made-up fact no model knows, so a reply can only get it from the document.
PASSAGE = (
    "The Quillon Observatory lends its brass telescope to visitors every Thursday evening; "
    "the keeper, Marisol Evenbright, asks each visitor to sign the blue ledger first."
)
DOCUMENT_MD = f"""# Quillon Observatory handbook

## History

The observatory was built on the northern ridge in 1911 from local granite.

## Visiting rules

{PASSAGE}

## Maintenance

The dome motor is oiled twice a year, in March and in September.
"""
QUESTION = "On which evening does the Quillon Observatory lend its telescope to visitors?"


def _sign_up_in(context, username: str) -> None:
    page = context.new_page()
    page.goto("/signup")
    page.fill("#username", username)
    page.fill("#password", PASSWORD)
    page.click("#submit")
    page.wait_for_url("**/chat")
    page.close()


@pytest.fixture(scope="module")
def accounts(browser, server) -> tuple[str, str]:
    """Two users for this module (sign-ups are limited per address and hour, so the module makes
    two, not one per test): the one who uploads, and another who must never see his documents."""
    context = browser.new_context(base_url=server)
    try:
        names = ("e2e-" + uuid.uuid4().hex[:10], "e2e-" + uuid.uuid4().hex[:10])
        for name in names:
            context.clear_cookies()
            _sign_up_in(context, name)
        return names
    finally:
        context.close()


def log_in_as(page, log_in, username: str) -> None:
    page.goto("/login")
    log_in(username)
    page.wait_for_selector('#connection[data-state="open"]')


def screenshot(page, name: str) -> None:
    """Saves a screenshot under $CRESCENT_E2E_SCREENSHOTS when it is set (for a person to look at)."""
    folder = os.environ.get("CRESCENT_E2E_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def send(page, text: str) -> None:
    page.fill("#composer", text)
    page.press("#composer", "Enter")


def wait_finished(page):
    page.wait_for_selector(FINISHED, timeout=REPLY_TIMEOUT_MS)
    return page.locator(ASSISTANT).last


def document_item(page, name: str, status: str | None = None):
    selector = f'#document-list li[data-name="{name}"]'
    if status:
        selector += f'[data-status="{status}"]'
    return page.locator(selector)


# Drops a text file on the conversation area, as dragging one from the desktop does. Runs through
# Playwright's evaluate, outside the page's CSP.
DROP_FILE = """([name, text]) => {
  const transfer = new DataTransfer();
  transfer.items.add(new File([text], name, {type: "text/plain"}));
  const target = document.getElementById("messages");
  for (const type of ["dragenter", "dragover", "drop"]) {
    target.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: transfer}));
  }
}"""


def upload(page, name: str, data: bytes, mime: str = "text/markdown") -> None:
    page.set_input_files("#document-upload", files=[{"name": name, "mimeType": mime, "buffer": data}])


def test_upload_ask_and_follow_the_source_to_its_passage(page, log_in, accounts, browser, server):
    owner, other_user = accounts
    log_in_as(page, log_in, owner)
    name = f"quillon-{uuid.uuid4().hex[:6]}.md"
    upload(page, name, DOCUMENT_MD.encode())

    # Listed at once (processing or already ready), then ready with its chunks counted.
    document_item(page, name).wait_for()
    document_item(page, name, "ready").wait_for(timeout=READY_TIMEOUT_MS)
    item = document_item(page, name)
    meta = item.locator(".document-meta").inner_text()
    assert re.search(r"\bv1\b", meta), meta
    assert re.search(r"\b[1-9]\d* chunks?\b", meta), meta
    assert re.search(r"\d+(\.\d)? (B|KB)\b", meta), meta
    assert item.locator(".document-state").inner_text().strip() == "Ready"
    assert page.locator("#document-error").is_hidden()

    # A new conversation: the toggle travels with the first message.
    assert not page.locator("#use-documents").is_checked()
    page.check("#use-documents")
    send(page, QUESTION)
    reply = wait_finished(page)
    assert reply.get_attribute("data-status") == "complete"

    links = reply.locator(".sources a.source-link")
    assert links.count() >= 1, reply.inner_html()
    first = links.first
    assert first.inner_text().startswith("[1] " + name + " v1"), first.inner_text()
    href = first.get_attribute("href")
    assert re.fullmatch(r"/documents/[0-9a-f]{32}/chunks/\d+", href), href
    live_sources = [(links.nth(i).inner_text(), links.nth(i).get_attribute("href")) for i in range(links.count())]
    # Markers the model wrote as [n] link to the same chunk pages as the list (none is fine too:
    # a 135M model does not always cite).
    source_hrefs = {h for _, h in live_sources}
    for i in range(reply.locator(".message-body a.citation").count()):
        assert reply.locator(".message-body a.citation").nth(i).get_attribute("href") in source_hrefs

    # After a reload the stored message shows the same sources, and the toggle shows the
    # conversation's stored choice.
    conversation_url = page.url
    assert re.search(r"/c/[0-9A-Za-z_-]+$", conversation_url), conversation_url
    page.reload()
    stored = page.locator(ASSISTANT).last
    stored_links = stored.locator(".sources a.source-link")
    assert [(stored_links.nth(i).inner_text(), stored_links.nth(i).get_attribute("href"))
            for i in range(stored_links.count())] == live_sources
    assert page.locator("#use-documents").is_checked()
    screenshot(page, "chat-with-sources")

    # The source that holds the passage opens on its own page with the document's name.
    passage_link = None
    for _, link in live_sources:
        page.goto(link)
        if "Marisol Evenbright" in page.locator("#chunk-text").inner_text():
            passage_link = link
            break
    assert passage_link is not None, f"no source holds the passage: {live_sources}"
    assert page.locator("#chunk-document").inner_text() == name
    assert page.locator("#chunk-version").inner_text() == "1"
    assert "Visiting rules" in page.locator("#chunk-heading").inner_text()
    assert PASSAGE in " ".join(page.locator("#chunk-text").inner_text().split())
    screenshot(page, "chunk-page")

    # Following the link from the conversation, the back link returns to it.
    page.goto(conversation_url)
    page.locator(ASSISTANT).last.locator(f'.sources a.source-link[href="{passage_link}"]').click()
    page.wait_for_url("**" + passage_link)
    page.click("#chunk-back")
    page.wait_for_url(conversation_url)

    # Switching the toggle off in an existing conversation is stored on the server.
    with page.expect_response(lambda r: r.request.method == "PATCH" and "/api/conversations/" in r.url) as patched:
        page.uncheck("#use-documents")
    assert patched.value.status == 204
    page.reload()
    assert not page.locator("#use-documents").is_checked()

    # Another user asking the same question with documents on gets no sources: the document is
    # not his.
    other = browser.new_context(base_url=server, viewport={"width": 1100, "height": 800})
    try:
        other_page = other.new_page()
        other_page.goto("/login")
        other_page.fill("#username", other_user)
        other_page.fill("#password", PASSWORD)
        other_page.click("#submit")
        other_page.wait_for_url("**/chat")
        other_page.wait_for_selector('#connection[data-state="open"]')
        other_page.wait_for_function(
            "() => !document.getElementById('documents-empty').textContent.includes('Loading')")
        assert document_item(other_page, name).count() == 0
        other_page.check("#use-documents")
        send(other_page, QUESTION)
        other_reply = wait_finished(other_page)
        assert other_reply.locator(".sources").count() == 0
        assert other_reply.locator("a.citation").count() == 0
    finally:
        other.close()


SHARE_BOX = "input[data-action='share']"


def test_admin_shares_a_document_with_everyone_and_stops(page, log_in, admin_username, accounts, browser, server):
    log_in_as(page, log_in, admin_username)
    name = f"shared-{uuid.uuid4().hex[:6]}.md"
    upload(page, name, b"# Harbour notes\n\nThe ferry leaves the north pier at seven.\n")
    document_item(page, name, "ready").wait_for(timeout=READY_TIMEOUT_MS)
    box = document_item(page, name).locator(SHARE_BOX)
    assert not box.is_checked()
    assert "shared" not in document_item(page, name).locator(".document-meta").inner_text()

    # Sharing goes to the server, and the list shows what it stored (also after a reload).
    with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/share")) as shared:
        box.check()
    assert shared.value.status == 200 and shared.value.json()["shared"] is True
    page.wait_for_function(
        f"""() => /\\bshared\\b/.test(document.querySelector('#document-list li[data-name="{name}"] .document-meta')
          ?.textContent || "")""")
    page.reload()
    assert document_item(page, name).locator(SHARE_BOX).is_checked()
    assert page.locator("#document-error").is_hidden()

    # Another (not admin) user sees it as shared with him, and nowhere a box to share anything.
    other = browser.new_context(base_url=server, viewport={"width": 1100, "height": 800})
    try:
        other_page = other.new_page()
        other_page.goto("/login")
        other_page.fill("#username", accounts[1])
        other_page.fill("#password", PASSWORD)
        other_page.click("#submit")
        other_page.wait_for_url("**/chat")
        assert other_page.get_attribute("#documents", "data-is-admin") == "false"
        document_item(other_page, name, "ready").wait_for()
        assert "shared with you" in document_item(other_page, name).locator(".document-meta").inner_text()
        assert document_item(other_page, name).locator("button[data-action='delete']").count() == 0
        assert other_page.locator("#document-list " + SHARE_BOX).count() == 0

        # The admin stops sharing; after a reload the other user no longer has it.
        with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/share")) as unshared:
            document_item(page, name).locator(SHARE_BOX).uncheck()
        assert unshared.value.status == 200 and unshared.value.json()["shared"] is False
        page.reload()
        assert not document_item(page, name).locator(SHARE_BOX).is_checked()
        other_page.reload()
        other_page.wait_for_function(
            "() => !document.getElementById('documents-empty').textContent.includes('Loading')")
        assert document_item(other_page, name).count() == 0
    finally:
        other.close()


def test_bad_files_show_the_servers_error_and_delete_removes(page, log_in, accounts):
    log_in_as(page, log_in, accounts[0])
    keep = f"keep-{uuid.uuid4().hex[:6]}.txt"
    upload(page, keep, b"Plain notes about tide tables and harbour times.\n", "text/plain")
    document_item(page, keep).wait_for()

    # Unsupported kind: refused with the server's reason; the list keeps what it had.
    upload(page, "slides.pptx", b"PK\x03\x04 not a document we take", "application/octet-stream")
    error = page.locator("#document-error")
    error.wait_for()
    text = error.inner_text()
    assert "slides.pptx is not a supported kind of file" in text and ".pdf" in text, text
    assert document_item(page, "slides.pptx").count() == 0
    assert document_item(page, keep).count() == 1

    # A PDF that is not one: unreadable, said clearly.
    upload(page, "broken.pdf", b"%PDF-1.4 this is not really a pdf at all", "application/pdf")
    page.wait_for_function(
        "() => document.getElementById('document-error').textContent.includes('broken.pdf')"
    )
    assert "broken.pdf could not be read" in error.inner_text(), error.inner_text()
    assert document_item(page, "broken.pdf").count() == 0

    # Too large (over the default 10 MiB limit): refused, said clearly.
    upload(page, "huge.txt", b"a" * (10 * 1024 * 1024 + 1), "text/plain")
    page.wait_for_function(
        "() => document.getElementById('document-error').textContent.includes('huge.txt')",
        timeout=60_000,
    )
    assert "huge.txt is too large" in error.inner_text(), error.inner_text()
    assert document_item(page, "huge.txt").count() == 0
    assert document_item(page, keep).count() == 1

    # A good upload afterwards clears the error; the same name makes version 2, which replaces
    # version 1 in the list once it is ready.
    # (Version 2 arrives by drag and drop onto the chat, as a person would drop a file.)
    document_item(page, keep, "ready").wait_for(timeout=READY_TIMEOUT_MS)
    page.evaluate(DROP_FILE, [keep, "Second version of the tide notes.\n"])
    page.wait_for_function(
        f"""() => Array.from(document.querySelectorAll('#document-list li[data-name="{keep}"]'))
          .some((li) => li.dataset.status === "ready"
                && /\\bv2\\b/.test(li.querySelector('.document-meta').textContent))""",
        timeout=READY_TIMEOUT_MS,
    )
    assert error.is_hidden()
    assert document_item(page, keep).count() == 1

    # Delete asks first; dismissing keeps the document (nothing is even started).
    page.once("dialog", lambda dialog: dialog.dismiss())
    document_item(page, keep).locator("button[data-action='delete']").click()
    assert document_item(page, keep).count() == 1
    assert document_item(page, keep).get_attribute("data-deleting") is None

    # Accepting removes it, from the list and from the server (a reload does not bring it back).
    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_response(lambda r: r.request.method == "DELETE" and "/api/documents/" in r.url) as deleted:
        document_item(page, keep).locator("button[data-action='delete']").click()
    assert deleted.value.status == 204
    document_item(page, keep).wait_for(state="detached")
    page.reload()
    page.wait_for_function("() => !document.getElementById('documents-empty').textContent.includes('Loading')")
    assert document_item(page, keep).count() == 0


# Builds an assistant message whose body holds `html` (test-authored, trusted), renders `sources`
# under it with the page's own code, and returns what the page made of it. Runs through
# Playwright's evaluate, outside the page's CSP.
RENDER_SOURCES = """([html, sources]) => {
  const el = document.createElement("article");
  el.className = "message";
  el.dataset.role = "assistant";
  el.innerHTML = '<div class="message-bubble"><div class="message-body"><div class="md-committed">'
    + html + '</div><div class="md-tail"></div></div></div>';
  document.getElementById("messages").appendChild(el);
  window.CrescentSources.render(el, sources);
  return {
    citations: Array.from(el.querySelectorAll(".message-body a.citation"),
                          (a) => [a.textContent, a.getAttribute("href")]),
    links: Array.from(el.querySelectorAll(".sources a.source-link"),
                      (a) => [a.textContent, a.getAttribute("href")]),
    text: el.querySelector(".message-body").textContent,
    images: el.querySelectorAll("img").length,
    codeHtml: el.querySelector("code") ? el.querySelector("code").innerHTML : null,
  };
}"""


def test_citation_markers_link_to_their_sources_and_nothing_else(page, log_in, accounts):
    log_in_as(page, log_in, accounts[1])
    sources = [
        {"n": 1, "chunk_id": 41, "document_id": "d1", "name": "guide.md", "version": 2, "heading_path": "Setup > Linux",
         "page": None, "excerpt": "install it"},
        {"n": 2, "chunk_id": 42, "document_id": "d/2", "name": "<img src=x>.pdf", "version": 1, "heading_path": "",
         "page": 3, "excerpt": ""},
    ]
    html = ("<p>Install it first [1], then read [1, 2]. Not a source: [3]. "
            "Text &lt;img src=x&gt; stays text.</p><p><code>a[1]</code></p>")
    result = page.evaluate(RENDER_SOURCES, [html, sources])
    assert result["links"] == [
        ["[1] guide.md v2 — Setup > Linux", "/documents/d1/chunks/41"],
        ["[2] <img src=x>.pdf v1 — p. 3", "/documents/d%2F2/chunks/42"],
    ]
    assert result["citations"] == [
        ["[1]", "/documents/d1/chunks/41"],
        ["[1]", "/documents/d1/chunks/41"],
        ["[2]", "/documents/d%2F2/chunks/42"],
    ]
    # Everything else is the text it was: the unknown [3], the escaped tag, code untouched.
    assert "Not a source: [3]." in result["text"]
    assert "Text <img src=x> stays text." in result["text"]
    assert result["images"] == 0
    assert result["codeHtml"] == "a[1]"

    # No sources: no list, no links.
    result = page.evaluate(RENDER_SOURCES, ["<p>Plain [1] answer.</p>", []])
    assert result["links"] == [] and result["citations"] == []
    assert result["text"] == "Plain [1] answer."


def test_upload_is_a_button_that_opens_the_file_picker_from_the_keyboard(page, log_in, accounts):
    # A new user: "Upload" was a <label> for a hidden file input, so it was no button for the
    # keyboard or a screen reader (no role, and Tab reached only the invisible input).
    log_in_as(page, log_in, accounts[0])
    button = page.get_by_role("button", name="Upload", exact=True)
    assert button.count() == 1
    assert button.evaluate("(b) => b.tagName") == "BUTTON"  # not the file input (a "button" too)
    assert button.get_attribute("title") == "Upload .txt, .md, .html or .pdf files (or drop them here)"
    # The file input stays (it holds the chosen files) but is no stop of its own.
    file_input = page.locator("#document-upload")
    assert file_input.get_attribute("tabindex") == "-1"
    assert file_input.get_attribute("aria-hidden") == "true"

    # Reached with the keyboard, it shows its own focus ring; Tab goes on past the hidden input.
    button.focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") != "document-upload"
    page.keyboard.press("Shift+Tab")
    assert button.evaluate("(b) => b === document.activeElement && b.matches(':focus-visible')")
    assert button.evaluate("(b) => getComputedStyle(b).outlineStyle") == "solid"

    # Enter and Space each open the file picker; a file chosen there is uploaded and listed.
    for key in ("Enter", "Space"):
        name = f"keyboard-{key.lower()}-{uuid.uuid4().hex[:6]}.txt"
        button.focus()
        # Headless Chromium now and then opens no chooser for the keypress (1 run in 5, CI and
        # here, after the first upload); pressed again it does. Three presses at most.
        for attempt in range(3):
            try:
                with page.expect_file_chooser(timeout=5_000) as chooser_info:
                    page.keyboard.press(key)
                break
            except PlaywrightTimeoutError:
                if attempt == 2:
                    raise
                button.focus()
        chooser = chooser_info.value
        assert chooser.is_multiple()
        chooser.set_files(files=[{"name": name, "mimeType": "text/plain",
                                  "buffer": f"Notes chosen with {key}: the tide turns at noon.\n".encode()}])
        document_item(page, name).wait_for(timeout=60_000)  # listed once the upload is stored
    assert page.locator("#document-error").is_hidden()
