from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import backend.markdown as markdown_module
from backend.chat.events import Delta
from backend.markdown import render_markdown
from backend.markdown_stream import IncrementalMarkdown, RenderUpdate
from web.ws_frames import delta_frame

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


# --- code blocks


def test_code_block_shows_its_language_a_copy_button_and_highlighted_tokens():
    html = render_markdown("```python\ndef f(x):\n    return '<script>alert(1)</script>'\n```")
    assert html.startswith('<div class="code-block"><div class="code-head"><span class="code-lang">python</span>'
                           '<button type="button" class="code-copy">Copy</button></div>'
                           '<pre><code class="language-python">')
    assert '<span class="hl-k">def</span> <span class="hl-nf">f</span>(x):' in html
    assert "<span class=\"hl-s\">'&lt;script&gt;alert(1)&lt;/script&gt;'</span>" in html
    assert "<script" not in html


def test_highlighting_carries_the_lexer_state_across_lines():
    html = render_markdown('```py\nx = """first\nsecond line"""\ny = 1\n```')
    # The second line is still inside the string, not read as code.
    assert '<span class="hl-s">second line"""</span>' in html
    assert '<span class="hl-m">1</span>' in html


def test_a_very_long_line_is_escaped_not_lexed():
    long_line = "x = [" + "1, " * 1000 + "'<b>']"
    html = render_markdown(f"```python\n{long_line}\ny = 2\n```")
    assert "[1, 1, 1" in html and "&lt;b&gt;" in html
    assert html.count('<span class="hl-m">') == 1  # only the "2" of the next line


@pytest.mark.parametrize("fence", ["```nosuchlanguage", "```", "~~~"])
def test_unknown_or_absent_language_is_escaped_without_highlighting(fence):
    html = render_markdown(f"{fence}\n<b>x</b> & def\n{fence[:3]}")
    assert "<code" in html and "&lt;b&gt;x&lt;/b&gt; &amp; def" in html
    assert "hl-" not in html and "<b>" not in html
    assert ('<span class="code-lang">nosuchlanguage</span>' in html) == ("nosuch" in fence)
    assert '<button type="button" class="code-copy">Copy</button>' in html


def test_indented_code_gets_the_frame_too():
    html = render_markdown("text\n\n    a < b\n")
    assert '<div class="code-block">' in html and "<pre><code>a &lt; b\n</code></pre>" in html


def test_sanitizer_keeps_only_the_classes_and_attributes_the_renderer_emits():
    dirty = ('<span class="evil">a</span><span class="hl-k" onclick="x()">b</span>'
             '<button type="submit" class="code-copy" formaction="https://e.com">c</button>'
             '<div class="code-block" style="color:red">d</div><pre class="x">e</pre><img src="https://e.com/x.png">')
    clean = markdown_module.sanitize_html(dirty)
    assert '<span>a</span><span class="hl-k">b</span>' in clean
    assert '<button class="code-copy">c</button>' in clean
    assert '<div class="code-block">d</div><pre>e</pre>' in clean
    assert "<img" not in clean and "onclick" not in clean and "style" not in clean and "formaction" not in clean


# --- math


@pytest.mark.parametrize(
    ("source", "display", "inner"),
    [
        ("Area $\\pi r^2$ here.", "inline", "<msup><mi>r</mi><mn>2</mn></msup>"),
        ("Half: \\(\\frac{1}{2}\\).", "inline", "<mfrac>"),
        ("$$\n\\sqrt{x}\n$$", "block", "<msqrt>"),
        ("\\[\n\\sum_{i=1}^n i\n\\]", "block", "<munderover>"),
        ("\\[x^2\\]", "block", "<msup>"),
        ("In text $$a+b$$ too.", "block", "<mo>+</mo>"),
        ("In text \\[a-b\\] too.", "block", "<mo>\u2212</mo>"),
    ],
)
def test_each_math_delimiter_renders_mathml(source, display, inner):
    html = render_markdown(source)
    assert f'<math display="{display}">' in html and inner in html
    assert "$" not in html and "\\(" not in html and "\\[" not in html


def test_display_math_on_its_own_lines_is_a_block():
    assert render_markdown("$$\nx\n$$").startswith('<div class="math-display"><math display="block">')


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("Bad $\\frac{$ math.", "$\\frac{$"),
        ("$$\n\\frac{\n$$", "$$\\frac{$$"),
        ("Raw \\(\\text{<b>x</b>}\\) markup.", "\\(\\text{&lt;b&gt;x&lt;/b&gt;}\\)"),
    ],
)
def test_math_that_does_not_convert_shows_its_escaped_source(source, shown):
    html = render_markdown(source)
    assert "<math" not in html and "<b>" not in html
    assert f'<code class="math-source">{shown}</code>' in html.replace("\n", "")


@pytest.mark.parametrize(
    "source",
    ["It costs $5 and $10.", "From $5 to $ 10", "a $ b $ c", "Price: 5$ or 10$", "escaped \\$x\\$ dollars"],
)
def test_dollars_in_prose_stay_text(source):
    html = render_markdown(source)
    assert "<math" not in html and "$" in html


def test_math_is_not_looked_for_in_code():
    html = render_markdown("`$x^2$` and `\\(y\\)`\n\n```\n$$\nz\n$$\n```\n\n    $w$\n")
    assert "<math" not in html
    assert "<code>$x^2$</code>" in html and "<code>\\(y\\)</code>" in html


def test_mathml_is_rebuilt_from_an_allow_list():
    html = render_markdown("$\\href{javascript:alert(1)}{x} \\style{color:red}{y} \\color{red}{z}$")
    assert "<math" in html and "<mi>x</mi>" in html
    assert "href=" not in html and "style=" not in html and "mathcolor" not in html and "javascript" not in html


def test_sanitizer_strips_mathml_attributes_and_elements_outside_the_allow_list():
    dirty = ('<math display="block"><mi href="javascript:alert(1)" mathvariant="bold">x</mi>'
             '<mtext style="background:url(https://e.com)" xlink:href="https://e.com">t</mtext>'
             '<maction actiontype="statusline">y</maction><mo stretchy="url(x)">(</mo></math>')
    clean = markdown_module.sanitize_html(dirty)
    assert '<mi mathvariant="bold">x</mi>' in clean and "<mtext>t</mtext>" in clean
    assert "href" not in clean and "style" not in clean and "url(" not in clean
    assert "<maction" not in clean  # not an allowed element: escaped as text


def test_math_streams_and_an_unclosed_block_stays_text():
    renderer = IncrementalMarkdown()
    update = renderer.feed("Intro with $x$.\n\n$$\n\\frac{1}{2}\n")
    assert "<math" in update.committed_html  # the paragraph is final, its math rendered
    assert "<math" not in update.tail_html and "$$" in update.tail_html
    update = renderer.feed("$$\n\nAfter.\n")
    assert "<mfrac>" in update.committed_html + update.tail_html + renderer.html
    renderer.finish()
    assert renderer.html == render_markdown(renderer.text)


# --- links and images


@pytest.mark.parametrize(
    "source",
    ["[s](//evil.example)", "[s](//evil.example/path)", "[s](<//evil.example>)", "[s]( //evil.example )",
     "[s](javascript:alert(1))", "[s](ftp://evil.example)"],
)
def test_forbidden_link_targets_stay_text(source):
    html = render_markdown(source)
    assert "<a" not in html and "href" not in html and html.startswith("<p>") and "s" in html


def test_a_scheme_relative_link_is_only_its_text():
    assert render_markdown("[s](//evil.example)") == "<p>s</p>\n"


@pytest.mark.parametrize("source", ["[s](/\\evil.example)", "[s](\\\\evil.example)"])
def test_backslashes_cannot_make_a_link_scheme_relative(source):
    # Browsers read a raw "\\" as "/" in a URL; markdown-it percent-encodes it, so this is a path.
    html = render_markdown(source)
    assert "%5Cevil.example" in html and "\\" not in html and 'href="//' not in html and "target" not in html


def test_off_site_links_open_in_a_new_tab_and_local_ones_do_not():
    html = render_markdown("[a](https://example.com/x) [b](/docs/page) [c](mailto:a@b.c) [d](#part) <https://e.org>")
    assert f'<a href="https://example.com/x" target="_blank" {REL}>a</a>' in html
    assert f'<a href="/docs/page" {REL}>b</a>' in html
    assert f'<a href="mailto:a@b.c" {REL}>c</a>' in html
    assert f'<a href="#part" {REL}>d</a>' in html
    assert f'<a href="https://e.org" target="_blank" {REL}>https://e.org</a>' in html


def test_images_become_plain_links_never_img():
    html = render_markdown('![a *cat*](https://evil.example/x.png "t") ![](/local.png) ![x](//evil.example/y.png)')
    assert "<img" not in html
    assert f'<a href="https://evil.example/x.png" title="t" target="_blank" {REL}>a cat</a>' in html
    assert f'<a href="/local.png" {REL}>/local.png</a>' in html
    assert "//evil.example/y.png" not in html and " x</p>" in html


def test_sanitizer_drops_scheme_relative_hrefs_and_odd_targets():
    clean = markdown_module.sanitize_html(
        '<a href="//evil.example" target="_blank">x</a><a href="/a" target="_top">y</a>')
    assert "evil.example" not in clean and 'target="_top"' not in clean
    assert f'<a {REL}>x</a>' in clean and f'<a href="/a" {REL}>y</a>' in clean


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


def stream_code_block(num_lines: int, chunk: int = 3) -> tuple[list[int], list[int], str, str, str]:
    """Stream a reply that is one long Python code block in `chunk`-character deltas through a
    LiveReply's renderer and the frame builder. Returns, per update, the bytes of the delta
    frame as sent (JSON, UTF-8) and the characters the renderer parsed and rendered; then the
    final HTML, what a client built from the frames, and render_markdown of the whole text."""
    body = "".join(f"def step_{i:04d}(value):  # step {i:04d}\n    return value * {i % 7} + len('abc')\n"
                   for i in range(num_lines // 2))
    text = "Here is the program:\n\n```python\n" + body + "```\n\nThat is all.\n"
    renderer = IncrementalMarkdown()
    frame_bytes, rendered, view, tail = [], [], "", ""
    for seq, start in enumerate(range(0, len(text), chunk), 1):
        update = renderer.feed(text[start : start + chunk])
        frame = delta_frame(Delta("m" * 32, seq, text[start : start + chunk], update.committed_html,
                                  update.tail_html, code_html=update.code_html))
        frame_bytes.append(len(json.dumps(frame).encode()))
        rendered.append(renderer.last_rendered_chars)
        view, tail = apply_update(view, update), update.tail_html
        # A viewer attaching now gets the rendering as of this update: the same as this client's.
        assert renderer.rendering_at(renderer.mark()) == (view, tail)
    view = apply_update(view, renderer.finish())
    return frame_bytes, rendered, renderer.html, view, render_markdown(text)


# Per update, whatever the block's length: one delta's text, about one line of code (a finished
# one and the unfinished one) with its highlighting spans, and the frame's field names.
MAX_FRAME_BYTES = 1024
MAX_RENDERED_CHARS = 240


def test_streaming_a_long_code_block_costs_the_same_per_update_at_150_and_600_lines():
    short_bytes, short_rendered, short_html, short_view, short_expected = stream_code_block(150)
    long_bytes, long_rendered, long_html, long_view, long_expected = stream_code_block(600)
    assert len(long_bytes) > 3.9 * len(short_bytes)  # four times the updates
    for frame_bytes, rendered in ((short_bytes, short_rendered), (long_bytes, long_rendered)):
        assert max(frame_bytes) <= MAX_FRAME_BYTES, max(frame_bytes)
        assert max(rendered) <= MAX_RENDERED_CHARS, max(rendered)
    # Not merely under the bound: the same per-update cost at the end of both blocks.
    assert max(long_bytes[-100:]) <= max(short_bytes) + 16 and max(long_rendered) <= max(short_rendered) + 8
    # So the whole stream grows with the text (4x), not with its square (16x).
    assert sum(long_bytes) < 4.5 * sum(short_bytes) and sum(long_rendered) < 4.5 * sum(short_rendered)
    assert short_html == short_view == short_expected and long_html == long_view == long_expected
    assert long_expected.count('<span class="hl-nf">') == 300


FRAGMENTS = [
    "para", "more words", "*em*", "**strong**", "`code`", "~~del~~", "# head", "## h2", "- item",
    "* star", "+ plus", "1. one", "2) two", "10. ten", "> quote", ">> deep", "```", "```py", "~~~",
    "    indented", "  - nested", "   continued", "| a | b |", "|---|---|", "| 1 | 2 |", "---",
    "***", "===", "<b>raw</b>", "[l](https://x.y)", "1", "2", "-", "#", "\t- tab", "a | b", "\\", "",
    "````", "  ```js", "x = 1  # c", '"""doc', "$x$", "$$", "$$y$$", "$5 and $10", "\\[", "\\]", "\\(a\\)",
    "![i](https://x.y/i.png)", "[r](//x.y)",
]  # fmt: skip


@st.composite
def markdownish(draw):
    lines = draw(st.lists(st.sampled_from(FRAGMENTS), max_size=14))
    text = "\n".join(lines)
    if draw(st.booleans()):
        text += "\n"
    return text


SOUP = st.text(alphabet="ab1.-*+>#`~|=\n \t_()\\$[]", max_size=60)


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
