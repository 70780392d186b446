"""Browser test: a stored reply's highlighted code block and MathML, and the code block's copy
button (static/code_blocks.js) filling the clipboard.

The model's output cannot be steered, so the reply comes from an imported conversation (our JSON
format, POST /api/conversations/import): its messages are rendered by the same Markdown renderer
as a streamed reply's final HTML.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
CODE = 'def greet(name):\n    return "<b>hi</b> " + name  # say hello'
REPLY = (
    "Here is the function:\n\n```python\n" + CODE + "\n```\n\n"
    "The area is $\\pi r^2$, it costs $5 and $10, and\n\n$$\n\\frac{a}{b}\n$$\n\n"
    "See [the docs](https://example.com/docs) and ![a diagram](https://example.com/d.png).\n"
)


def import_conversation(page, reply: str) -> str:
    """Import a conversation of one question and `reply`; returns its page's path."""
    messages = [
        {"id": "q", "parent_id": None, "role": "user", "content": "show me", "status": "complete"},
        {"id": "a", "parent_id": "q", "role": "assistant", "content": reply, "status": "complete",
         "finish_reason": "stop"},
    ]
    data = json.dumps({"format": "crescent.conversation", "version": 1,
                       "conversation": {"title": "Rendering"}, "messages": messages}).encode()
    token = page.get_attribute('meta[name="csrf-token"]', "content")
    response = page.request.post(
        "/api/conversations/import", headers={"X-CSRF-Token": token},
        multipart={"file": {"name": "rendering.json", "mimeType": "application/json", "buffer": data}},
    )
    assert response.status == 201, response.text()
    return response.json()["url"]


def test_stored_reply_shows_highlighted_code_and_math_and_copies_the_code(page, sign_up, server):
    sign_up()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    page.goto(import_conversation(page, REPLY))
    body = page.locator('#messages .message[data-role="assistant"] .message-body')
    block = body.locator(".code-block")
    assert block.count() == 1
    assert block.locator(".code-head .code-lang").inner_text() == "python"
    code = block.locator("pre > code.language-python")
    assert code.locator("span.hl-k").first.inner_text() == "def"
    assert code.locator("span.hl-nf").inner_text() == "greet"
    assert code.locator("span.hl-c").inner_text() == "# say hello"
    assert code.locator("b").count() == 0  # the <b> in the string is text
    assert code.evaluate("el => el.textContent") == CODE + "\n"
    # Highlighting is coloured (static/markdown.css loaded): a keyword differs from plain code.
    colours = code.evaluate(
        "el => [getComputedStyle(el.querySelector('.hl-k')).color, getComputedStyle(el).color]")
    assert colours[0] != colours[1]

    inline = body.locator('math[display="inline"]')
    assert inline.count() == 1 and inline.locator("msup").count() == 1
    display = body.locator('.math-display > math[display="block"]')
    assert display.locator("mfrac").count() == 1
    assert display.evaluate("el => el.namespaceURI") == MATHML_NS
    assert display.evaluate("el => el.getBoundingClientRect().height") > 10  # laid out as math
    assert "costs $5 and $10" in body.inner_text()

    link = body.locator('a[href="https://example.com/docs"]')
    assert link.get_attribute("target") == "_blank"
    assert link.get_attribute("rel") == "noopener noreferrer nofollow"
    assert body.locator("img").count() == 0
    assert body.locator('a[href="https://example.com/d.png"]').inner_text() == "a diagram"

    button = block.locator("button.code-copy")
    assert button.inner_text() == "Copy"
    button.click()
    page.wait_for_function("() => document.querySelector('.code-block .code-copy').dataset.state === 'copied'")
    assert page.evaluate("() => navigator.clipboard.readText()") == CODE


SHELL = ('<div class="code-block"><div class="code-head"><span class="code-lang">python</span>'
         '<button type="button" class="code-copy">Copy</button></div><pre><code class="language-python">')
LINE_1 = '<span class="hl-k">import</span> os\n'
LINE_2 = 'x <span class="hl-o">=</span> <span class="hl-m">1</span>\n'
END = "</code></pre></div>\n"
# The frames the server sends for "Code:\n\n```python\nimport os\nx = 1\n```\n\nDone." in small
# deltas (backend.markdown_stream.IncrementalMarkdown): the block's frame with its first line, then
# each further line inside its <code>, the unfinished line as the tail.
DELTAS = [
    {"seq": 1, "text": "Code:\n\n```python\nimport os\nx", "code_html": "",
     "committed_html": "<p>Code:</p>\n" + SHELL + LINE_1 + END,
     "tail_html": '<pre class="code-tail"><code>x</code></pre>'},
    {"seq": 2, "text": " = 1\n", "code_html": LINE_2, "committed_html": "", "tail_html": ""},
    {"seq": 3, "text": "```\n\nDo", "code_html": "", "committed_html": "", "tail_html": "<p>Do</p>\n"},
]
COMMITTED = "<p>Code:</p>\n" + SHELL + LINE_1 + LINE_2 + END


def test_a_streamed_code_block_grows_in_place_and_a_catch_up_rebuilds_the_same_dom(page, sign_up):
    """static/chat.js applies code_html inside the open block; after a gap it attaches again and
    the catch-up (reset) gives the same DOM. The socket is played by the test."""
    sign_up()
    seen: list[dict] = []
    sockets: list = []

    def serve(ws) -> None:
        sockets.append(ws)

        def on_message(message: str) -> None:
            frame = json.loads(message)
            seen.append(frame)
            if frame["type"] == "ping":
                ws.send(json.dumps({"type": "pong"}))
            elif frame["type"] == "send":
                ws.send(json.dumps({"type": "ack", "client_msg_id": frame["client_msg_id"], "conversation_id": None,
                                    "user_message_id": "u1", "assistant_message_id": "a1", "duplicate": False,
                                    "title": "", "action": "send", "parent_id": None}))
                for delta in DELTAS:
                    ws.send(json.dumps({"type": "delta", "message_id": "a1", **delta}))
            elif frame["type"] == "attach":
                ws.send(json.dumps({"type": "delta", "message_id": "a1", "seq": 5, "text": "ne. More", "reset": True,
                                    "code_html": "", "committed_html": COMMITTED, "tail_html": "<p>Done. More</p>\n"}))

        ws.on_message(on_message)

    page.route_web_socket("**/ws", serve)
    page.goto("/chat")
    page.wait_for_selector('#connection[data-state="open"]')
    page.fill("#composer", "code please")
    page.press("#composer", "Enter")
    reply = page.locator('#messages .message[data-role="assistant"]')
    page.wait_for_function("() => document.querySelector('.message[data-role=\"assistant\"] .md-tail')"
                           "?.innerHTML === '<p>Do</p>\\n'")
    assert reply.locator(".md-committed").evaluate("el => el.innerHTML") == COMMITTED
    assert reply.locator(".code-block").count() == 1

    # Delta 4 is lost: delta 5 shows a gap, so the page attaches from seq 3 and the catch-up
    # (reset: the whole committed rendering) must give the same DOM.
    sockets[0].send(json.dumps({"type": "delta", "message_id": "a1", "seq": 5, "text": " More", "code_html": "",
                                "committed_html": "", "tail_html": "<p>Done. More</p>\n"}))
    page.wait_for_function("() => document.querySelector('.message[data-role=\"assistant\"] .md-tail')"
                           "?.innerHTML === '<p>Done. More</p>\\n'")
    assert [f["seq"] for f in seen if f["type"] == "attach"] == [3]
    assert reply.locator(".md-committed").evaluate("el => el.innerHTML") == COMMITTED
    assert reply.get_attribute("data-status") == "streaming"


def test_wide_inline_math_stays_within_its_message_and_does_not_widen_the_page(page, sign_up):
    sign_up()
    page.goto(import_conversation(page, "Wide: $\\hspace{99999em}$ and $x^2$ end.\n"))
    body = page.locator('#messages .message[data-role="assistant"] .message-body')
    wide, small = body.locator('math[display="inline"]').nth(0), body.locator('math[display="inline"]').nth(1)
    assert wide.locator("mspace").count() == 1
    body_width = body.evaluate("el => el.getBoundingClientRect().width")
    assert wide.evaluate("el => el.getBoundingClientRect().width") <= body_width + 1
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert small.locator("msup").evaluate("el => el.getBoundingClientRect().height") > 10  # still math


def test_highlight_colours_follow_the_system_theme_when_the_browser_prefers_dark(page, sign_up):
    sign_up()
    page.emulate_media(color_scheme="dark")
    keyword = "() => getComputedStyle(document.documentElement).getPropertyValue('--hl-keyword').trim()"
    page.evaluate("document.documentElement.dataset.theme = 'system'")
    assert page.evaluate(keyword) == "#ff7b72"
    page.evaluate("document.documentElement.dataset.theme = 'light'")
    assert page.evaluate(keyword) == "#cf222e"
