"""Markdown to safe HTML.

Rendering: markdown-it-py's "commonmark" preset plus the GFM table and strikethrough rules and
TeX math (backend.markdown_math: MathML rendered on the server), with `html=False` so raw HTML in
model output is shown as text. Code blocks (fenced and indented) come in a frame with their
language and a copy button (static/code_blocks.js), highlighted by Pygments line by line
(backend.highlight). Links: http(s) and mailto, and relative paths on this site; absolute http(s)
links open in a new tab (target="_blank"); a scheme-relative `//host` link or any other scheme
stays text. Images never load: `![alt](url)` becomes a link to url with the alt text. The result
then passes bleach with an allow-list (defence in depth): no script, no style, no event-handler
attributes, classes only from the fixed sets below, every link rel="noopener noreferrer nofollow".

Rendering while a reply streams is backend.markdown_stream, built on parse/render_tokens here.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape
from typing import Any, Sequence

import bleach
from bleach import html5lib_shim
from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from pygments.lexer import Lexer

from backend.highlight import HIGHLIGHT_CLASSES, State, find_lexer, highlight_line, initial_state
from backend.markdown_math import MATHML_ATTRIBUTES, MATHML_TAGS, MATHML_VALUE, math_plugin

ALLOWED_TAGS = frozenset(
    {
        "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code",
        "em", "strong", "s", "del", "ul", "ol", "li", "a", "div", "span", "button",
        "table", "thead", "tbody", "tr", "th", "td",
    }
) | MATHML_TAGS  # fmt: skip
ALLOWED_PROTOCOLS = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"
_LANGUAGE_CLASS = re.compile(r"language-[A-Za-z0-9_+#.-]{1,40}")
_LANGUAGE_NAME = re.compile(r"[A-Za-z0-9_+#.-]{1,40}")
_ALIGN_VALUES = frozenset({"left", "center", "right"})
# The classes this renderer emits, per tag; nothing else may carry a class.
_CLASSES = {
    "div": frozenset({"code-block", "code-head", "math-display"}),
    "span": HIGHLIGHT_CLASSES | {"code-lang"},
    "pre": frozenset({"code-tail"}),
    "button": frozenset({"code-copy"}),
}
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_SCHEME_RELATIVE = re.compile(r"[\\/]{2}")  # browsers read "\\" as "/" in a URL


def link_kind(href: str) -> str | None:
    """How a link target may be used: "external" (absolute http/https), "mailto", "local" (a
    relative path, query or fragment on this site), or None (scheme-relative "//host", or any
    other scheme: never a link). Tabs and line breaks, which browsers drop from URLs, are
    dropped before deciding."""
    target = re.sub(r"[\t\n\r]", "", href).strip()
    if not target or _SCHEME_RELATIVE.match(target):
        return None
    scheme = _SCHEME.match(target)
    if scheme is None:
        return "local"
    name = scheme.group(1).lower()
    if name in ("http", "https"):
        return "external"
    return "mailto" if name == "mailto" else None


def _allow_attribute(tag: str, name: str, value: str) -> bool:
    if tag == "a":
        return name in ("href", "title") or (name == "target" and value == "_blank")
    if tag == "ol":
        return name == "start" and value.isdigit()
    if tag == "code":
        return name == "class" and (_LANGUAGE_CLASS.fullmatch(value) is not None or value == "math-source")
    if tag in ("th", "td"):
        return name == "align" and value in _ALIGN_VALUES
    if tag == "button":
        return (name == "type" and value == "button") or (name == "class" and value == "code-copy")
    if tag in _CLASSES:
        return name == "class" and value in _CLASSES[tag]
    if tag in MATHML_TAGS:
        return name in MATHML_ATTRIBUTES and MATHML_VALUE.fullmatch(value) is not None
    return False


class _LinkFilter(html5lib_shim.Filter):
    """Sets rel on every <a>, replacing whatever was there; drops a scheme-relative href (the
    renderer never emits one: defence in depth)."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        for token in super().__iter__():
            if token["type"] in ("StartTag", "EmptyTag") and token["name"] == "a":
                attrs = dict(token["data"])
                href = attrs.get((None, "href"))
                if href is not None and link_kind(href) is None:
                    del attrs[(None, "href")]
                    attrs.pop((None, "target"), None)
                attrs[(None, "rel")] = LINK_REL
                token["data"] = attrs
            yield token


_CLEANER = bleach.Cleaner(
    tags=ALLOWED_TAGS,
    attributes=_allow_attribute,
    protocols=ALLOWED_PROTOCOLS,
    strip=False,
    strip_comments=True,
    filters=[_LinkFilter],
)


def sanitize_html(html: str) -> str:
    """Pass HTML through the allow-list (tags, attributes and their values, link schemes) and
    set link rel; returns the sanitized HTML (str). Disallowed tags are escaped as text."""
    return _CLEANER.clean(html)


# --- code blocks


def language_of(info: str) -> str:
    """A fence's language name, or "" when absent or not a plain name."""
    words = unescapeAll(info).split(maxsplit=1)
    return words[0] if words and _LANGUAGE_NAME.fullmatch(words[0]) else ""


def _shell_html(language: str) -> tuple[str, str]:
    """A code block's frame: (HTML up to and including <code>, HTML from </code> on)."""
    label = f'<span class="code-lang">{escape(language)}</span>' if language else ""
    code_class = f' class="language-{escape(language)}"' if language else ""
    head = f'<div class="code-head">{label}<button type="button" class="code-copy">Copy</button></div>'
    return f'<div class="code-block">{head}<pre><code{code_class}>', "</code></pre></div>\n"


@lru_cache(maxsize=128)
def sanitized_shell(language: str) -> tuple[str, str]:
    """A code block's frame, sanitized: (HTML up to and including <code>, HTML from </code> on)."""
    prefix, suffix = _shell_html(language)
    html = sanitize_html(prefix + suffix)
    cut = html.rindex("</code>")
    return html[:cut], html[cut:]


def line_html(lexer: Lexer | None, line: str, state: State) -> tuple[str, State]:
    """One code line (no "\\n") as HTML, highlighted when there is a lexer; the state after it."""
    if lexer is None:
        return escape(line, quote=False), state
    return highlight_line(lexer, line, state)


def _code_html(content: str, language: str) -> str:
    """A whole code block: its frame, and each line highlighted with the state carried over."""
    prefix, suffix = _shell_html(language)
    lexer = find_lexer(language)
    state = initial_state(lexer) if lexer is not None else ()
    lines = content.split("\n")  # content ends in "\n" but at the very end of the text
    parts = []
    for i, line in enumerate(lines):
        if i == len(lines) - 1 and not line:
            break
        html, state = line_html(lexer, line, state)
        parts.append(html + ("\n" if i < len(lines) - 1 else ""))
    return prefix + "".join(parts) + suffix


def _render_fence(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return _code_html(tokens[idx].content, language_of(tokens[idx].info))


def _render_code_block(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return _code_html(tokens[idx].content, "")


# --- links and images


def _apply_link_policy(state: StateCore) -> None:
    """Core rule: links per link_kind (external ones open in a new tab; forbidden ones become
    their text); images become links to their source with the alt text."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        dropping = False
        for token in block.children:
            if token.type == "link_open":
                kind = link_kind(str(token.attrGet("href") or ""))
                dropping = kind is None
                if dropping:
                    continue
                if kind == "external":
                    token.attrSet("target", "_blank")
            elif token.type == "link_close" and dropping:
                dropping = False
                continue
            elif token.type == "image":
                children.extend(_image_as_link(state, token))
                continue
            children.append(token)
        block.children = children


def _image_as_link(state: StateCore, image: Token) -> list[Token]:
    src = str(image.attrGet("src") or "")
    alt = state.md.renderer.renderInlineAsText(image.children or [], state.md.options, state.env)
    text = Token("text", "", 0, content=alt or src, level=image.level)
    kind = link_kind(src)
    if kind is None:
        return [text]
    link_open = Token("link_open", "a", 1, attrs={"href": src}, level=image.level)
    if image.attrGet("title"):
        link_open.attrSet("title", str(image.attrGet("title")))
    if kind == "external":
        link_open.attrSet("target", "_blank")
    return [link_open, text, Token("link_close", "a", -1, level=image.level)]


def _make_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"]).use(math_plugin)
    md.core.ruler.after("inline", "link_policy", _apply_link_policy)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("code_block", _render_code_block)
    return md


_MD = _make_parser()


def parse(source: str, env: dict[str, Any] | None = None) -> list[Token]:
    """The token stream of normalized Markdown `source`; `env` collects reference definitions."""
    return _MD.parse(source, env)


def render_tokens(tokens: Sequence[Token], env: dict[str, Any]) -> str:
    """Tokens from parse() (with the same `env`) to sanitized HTML."""
    for token in tokens:
        # Table alignment comes as an inline style, which the CSP (style-src 'self') blocks.
        if token.type in ("th_open", "td_open"):
            style = token.attrs.pop("style", None)
            if isinstance(style, str) and style.startswith("text-align:"):
                token.attrs["align"] = style.removeprefix("text-align:")
    return sanitize_html(_MD.renderer.render(tokens, _MD.options, env))


def normalize_source(text: str) -> str:
    """Line endings to "\\n" and NUL to U+FFFD, as markdown-it's normalize step does."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")


def render_markdown(text: str) -> str:
    """Markdown `text` to sanitized HTML (str). An unclosed code fence renders as code up to the end."""
    env: dict[str, Any] = {}
    return render_tokens(_MD.parse(normalize_source(text), env), env)
