from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import backend.markdown as markdown_module
from backend.markdown import IncrementalMarkdown, RenderUpdate, render_markdown

REL = 'rel="noopener noreferrer nofollow"'


# --- whole-text rendering and sanitizing


def test_commonmark_tables_and_strikethrough():
    html = render_markdown("# T\n\n*a* **b** ~~c~~ `d`\n\n| x | y |\n|---|--:|\n| 1 | 2 |\n")
    assert "<h1>T</h1>" in html
    assert "<em>a</em> <strong>b</strong> <s>c</s> <code>d</code>" in html
    assert '<th align="right">y</th>' in html and "<td>1</td>" in html
    assert "style=" not in html


def test_raw_html_is_escaped():
    html = render_markdown('<script>alert(1)</script>\n\n<img src=x onerror="alert(1)">')
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "&lt;img" in html


@pytest.mark.parametrize(
    "source",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](vbscript:msgbox(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "![x](data:image/png;base64,AAAA)",
        "<javascript:alert(1)>",
        "[x](java\tscript:alert(1))",
    ],
)
def test_unsafe_link_schemes_never_become_links(source):
    html = render_markdown(source)
    assert not re.search(r"(href|src)=\"\s*(javascript|vbscript|data):", html, re.I)
    assert "<a" not in html or "href" not in html


def test_links_get_rel_and_keep_safe_hrefs():
    html = render_markdown('[site](https://example.com "t") <https://example.org> [m](mailto:a@b.c)')
    assert html.count(REL) == 3
    assert 'href="https://example.com"' in html and 'title="t"' in html


def test_sanitizer_strips_event_handlers_even_if_the_renderer_let_them_through():
    dirty = '<p onclick="x()">a</p><a href="https://e.com" onmouseover="x()" rel="opener">b</a><script>x()</script>'
    clean = markdown_module.sanitize_html(dirty)
    assert "onclick" not in clean and "onmouseover" not in clean and "<script" not in clean
    assert REL in clean and 'rel="opener"' not in clean


def test_code_language_class_is_kept_only_when_plain():
    assert 'class="language-python"' in render_markdown("```python\nx\n```")
    html = render_markdown('```"><script>\nx\n```')
    assert "<code>x" in html and "language-" not in html and "<script" not in html


def test_unclosed_fence_renders_as_code():
    html = render_markdown("Look:\n\n```py\ndef f():\n    return 1")
    assert '<pre><code class="language-py"><span class="hl-k">def</span>' in html
    assert html.endswith('<span class="hl-k">return</span> <span class="hl-m">1</span></code></pre></div>\n')


# --- incremental rendering


def feed_in_chunks(text: str, cuts: list[int]) -> tuple[IncrementalMarkdown, list[RenderUpdate]]:
    renderer = IncrementalMarkdown()
    updates = []
    points = sorted({c for c in cuts if 0 < c < len(text)})
    for start, end in zip([0, *points], [*points, len(text)]):
        updates.append(renderer.feed(text[start:end]))
    updates.append(renderer.finish())
    return renderer, updates


OPEN_BLOCK_END = "</code></pre></div>\n"


def apply_update(committed: str, update: RenderUpdate) -> str:
    """What static/chat.js does with an update's code_html and committed_html: the code lines
    go inside the <code> of the committed part's last element (the open code block)."""
    if update.code_html:
        assert committed.endswith(OPEN_BLOCK_END), "code_html without an open code block"
        committed = committed[: -len(OPEN_BLOCK_END)] + update.code_html + OPEN_BLOCK_END
    return committed + update.committed_html


def client_view(updates: list[RenderUpdate]) -> str:
    """What a browser holding committed + tail shows after applying every update."""
    committed, tail = "", ""
    for update in updates:
        committed = apply_update(committed, update)
        tail = update.tail_html
    return committed + tail


SAMPLE = (
    "# Title\n\nIntro with *emphasis* and a [link](https://e.com).\n\n"
    "- one\n- two\n\n  still two\n- three\n\n1. first\n2. second\n\n"
    "```python\nprint('hi')\n\n```\nAfter the fence.\n\n> quoted\nlazy line\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n    indented code\n\n    more code\n\n"
    "Setext\n======\n\n***\n\nParagraph\n#not heading\n\n2\n2. list\n\nEnd ~~struck~~.\n"
)


def test_streamed_equals_whole_render_char_by_char():
    renderer, updates = feed_in_chunks(SAMPLE, list(range(len(SAMPLE))))
    expected = render_markdown(SAMPLE)
    assert renderer.html == expected
    assert client_view(updates) == expected
    assert updates[-1].tail_html == ""


def test_blocks_are_committed_once_and_before_the_end():
    renderer = IncrementalMarkdown()
    committed, view = [], ""
    for ch in SAMPLE:
        update = renderer.feed(ch)
        if update.committed_html:
            committed.append(update.committed_html)
        view = apply_update(view, update)
    # Many blocks became final while streaming, each reported once.
    assert len(committed) >= 8
    assert apply_update(view, renderer.finish()) == render_markdown(SAMPLE)


def test_open_fence_streams_line_by_line_then_closes():
    renderer = IncrementalMarkdown()
    update = renderer.feed("Text\n\n```js\nlet a = 1;\nlet b")
    # The fence opened: its frame with the complete line is committed, the open line is the tail.
    assert update.committed_html.startswith('<p>Text</p>\n<div class="code-block"><div class="code-head">')
    assert update.committed_html.endswith("1</span>;\n</code></pre></div>\n")
    assert update.tail_html.startswith('<pre class="code-tail"><code>') and "> b</code></pre>" in update.tail_html
    update = renderer.feed(" = 2;\n")
    # The finished line goes inside the open block's <code>; nothing else is re-sent.
    assert update.committed_html == "" and update.tail_html == ""
    assert update.code_html.startswith('<span class="hl-kd">let</span> b') and update.code_html.endswith(";\n")
    update = renderer.feed("```\n\nNext paragraph\n")
    assert update.code_html == update.committed_html == ""
    assert update.tail_html == "<p>Next paragraph</p>\n"
    renderer.finish()
    assert renderer.html == render_markdown(renderer.text)


def test_crlf_split_across_chunks_is_one_line_break():
    renderer, _ = feed_in_chunks("a\r\n\r\nb\rc", [1, 2, 3, 4, 7])
    assert renderer.html == render_markdown("a\n\nb\nc")


def test_reference_definition_before_use_across_a_commit():
    text = "[r]: https://e.com\n\nSome para.\n\nUse [r] here.\n\nMore.\n"
    renderer, _ = feed_in_chunks(text, list(range(len(text))))
    assert renderer.html == render_markdown(text)
    assert 'href="https://e.com"' in renderer.html


@pytest.mark.parametrize(
    "text",
    [
        "1. one\n\n10. ten\n",  # "1" alone is a paragraph until "0. " makes it a list item
        "- a\n\n-\n",  # an empty item joins the list (and makes it loose)
        "para\n#x\n",  # "#" alone is a heading, "#x" a continuation
        "para\n```a`b\n",  # not a fence: backticks in the info string
        "    code\n\n    more\n\nend\n",
        "> q\nlazy\n\n> again\n",
    ],
)
def test_tricky_prefixes_char_by_char(text):
    renderer, updates = feed_in_chunks(text, list(range(len(text))))
    assert renderer.html == client_view(updates) == render_markdown(text)


def test_feed_after_finish_is_an_error():
    renderer = IncrementalMarkdown()
    renderer.finish()
    with pytest.raises(RuntimeError):
        renderer.feed("x")


def test_cost_per_update_does_not_grow_with_the_reply():
    paragraph = "Some words in a sentence that keeps going for a while. " * 3 + "\n\n"
    text = "".join(f"## Section {i}\n\n{paragraph}- item a\n- item b\n\n" for i in range(60))
    renderer = IncrementalMarkdown()
    rendered = []
    for i in range(0, len(text), 7):
        renderer.feed(text[i : i + 7])
        rendered.append(renderer.last_rendered_chars)
    renderer.finish()
    assert renderer.html == render_markdown(text)
    longest_block = len(paragraph) + 40
    # Each update parses only the tail: bounded by a couple of blocks, not by the reply (~15k chars).
    assert len(text) > 40 * longest_block
    assert max(rendered) <= 2 * longest_block
    assert max(rendered[-50:]) <= 2 * longest_block


FRAGMENTS = [
    "para", "more words", "*em*", "**strong**", "`code`", "~~del~~", "# head", "## h2", "- item",
    "* star", "+ plus", "1. one", "2) two", "10. ten", "> quote", ">> deep", "```", "```py", "~~~",
    "    indented", "  - nested", "   continued", "| a | b |", "|---|---|", "| 1 | 2 |", "---",
    "***", "===", "<b>raw</b>", "[l](https://x.y)", "1", "2", "-", "#", "\t- tab", "a | b", "\\", "",
]  # fmt: skip


@st.composite
def markdownish(draw):
    lines = draw(st.lists(st.sampled_from(FRAGMENTS), max_size=14))
    text = "\n".join(lines)
    if draw(st.booleans()):
        text += "\n"
    return text


SOUP = st.text(alphabet="ab1.-*+>#`~|=\n \t_()\\", max_size=60)


def chunked(texts):
    """(text, cut points): random cuts, or a cut after every character (every prefix is seen)."""
    return texts.flatmap(
        lambda t: st.tuples(
            st.just(t),
            st.one_of(st.lists(st.integers(0, max(len(t), 1)), max_size=12), st.just(list(range(len(t))))),
        )
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunked(st.one_of(markdownish(), SOUP)))
def test_property_streamed_render_equals_whole_render(case):
    """For random Markdown-ish texts cut into random chunks, the streamed HTML equals the whole
    render exactly (no whitespace normalization). Texts hold no link reference definitions
    (no ':'), the one documented exception."""
    text, cuts = case
    renderer, updates = feed_in_chunks(text, cuts)
    expected = render_markdown(text)
    assert renderer.html == expected
    assert client_view(updates) == expected
