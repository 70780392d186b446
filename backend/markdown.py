"""Markdown to safe HTML, whole or incrementally while a reply streams.

Rendering: markdown-it-py's "commonmark" preset plus the GFM table and strikethrough rules,
with `html=False` so raw HTML in model output is shown as text. The result then passes bleach
with an allow-list (defence in depth): no script, no event-handler attributes, links only to
http(s)/mailto, and every link gets rel="nofollow noopener noreferrer".

Streaming (`IncrementalMarkdown`): the source is split into *committed* top-level blocks, each
rendered once, and a *tail* (the last blocks, which later text may still change) re-rendered on
every update, so an update costs O(tail), not O(reply). See `_is_final` for when a block is final.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import bleach
from bleach import html5lib_shim
from markdown_it import MarkdownIt
from markdown_it.token import Token

ALLOWED_TAGS = frozenset(
    {
        "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code",
        "em", "strong", "s", "del", "ul", "ol", "li", "a", "img",
        "table", "thead", "tbody", "tr", "th", "td",
    }
)  # fmt: skip
ALLOWED_PROTOCOLS = frozenset({"http", "https", "mailto"})
LINK_REL = "nofollow noopener noreferrer"
_LANGUAGE_CLASS = re.compile(r"language-[A-Za-z0-9_+#.-]{1,40}")
_ALIGN_VALUES = frozenset({"left", "center", "right"})


def _allow_attribute(tag: str, name: str, value: str) -> bool:
    if tag == "a":
        return name in ("href", "title")
    if tag == "img":
        return name in ("src", "alt", "title")
    if tag == "ol":
        return name == "start" and value.isdigit()
    if tag == "code":
        return name == "class" and _LANGUAGE_CLASS.fullmatch(value) is not None
    if tag in ("th", "td"):
        return name == "align" and value in _ALIGN_VALUES
    return False


class _LinkRelFilter(html5lib_shim.Filter):
    """Sets rel on every <a>, replacing whatever was there."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        for token in super().__iter__():
            if token["type"] in ("StartTag", "EmptyTag") and token["name"] == "a":
                attrs = dict(token["data"])
                attrs[(None, "rel")] = LINK_REL
                token["data"] = attrs
            yield token


_CLEANER = bleach.Cleaner(
    tags=ALLOWED_TAGS,
    attributes=_allow_attribute,
    protocols=ALLOWED_PROTOCOLS,
    strip=False,
    strip_comments=True,
    filters=[_LinkRelFilter],
)


def _make_parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


_MD = _make_parser()


def sanitize_html(html: str) -> str:
    """Pass HTML through the allow-list (tags, attributes, link schemes) and set link rel."""
    return _CLEANER.clean(html)


def _render_tokens(tokens: Sequence[Token], env: dict[str, Any]) -> str:
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
    return _render_tokens(_MD.parse(normalize_source(text), env), env)


@dataclass(frozen=True)
class RenderUpdate:
    """committed_html: HTML of blocks that became final since the last update (append it).
    tail_html: HTML of everything after them (replace the previous tail with it)."""

    committed_html: str
    tail_html: str


@dataclass(frozen=True)
class _Block:
    first_token: int  # index into the token list
    first_line: int  # source line (0-based) where the block starts
    kind: str  # token type of its opening token


def _top_level_blocks(tokens: Sequence[Token]) -> list[_Block]:
    blocks = []
    for i, token in enumerate(tokens):
        if token.level == 0 and token.nesting >= 0 and token.map is not None:
            blocks.append(_Block(i, token.map[0], token.type))
    return blocks


# Blocks that end on their own line: a following block (with its first line complete) proves
# they are done even without a blank line between. A closed fence is final the same way: an
# unclosed one would still run to the end of the text, so no block would follow it.
_SELF_ENDING = frozenset({"heading_open", "hr", "fence"})


class IncrementalMarkdown:
    """Render a growing Markdown text so that each update re-renders only its tail.

    A top-level block B is final (committed, never rendered again) when a next top-level block
    N exists, N's first line is complete (ends in "\\n"), and either B ends itself (ATX or setext
    heading, thematic break, closed fence) or a blank line separates B from N. A blank line ends
    paragraphs, block quotes (no lazy continuation across it) and tables; a list or indented
    code block continues only with lines indented under it, and N's first line, being complete
    and outside B, is not (requiring it complete rules out "2" growing into the list item "2.").
    After B is committed, the rest of the text is parsed on its own: block parsing restarts at
    top level after a closed block, so this equals parsing it in place.

    Equality: after finish(), `html` equals `render_markdown(text)` exactly, with one known
    exception: a link reference definition (`[x]: /url`) only applies to blocks parsed after
    it is committed or in the same tail, whereas a whole-text render applies it everywhere.

    Cost: each feed parses and renders the tail only; `last_rendered_chars` reports its size.
    """

    def __init__(self) -> None:
        self._committed_parts: list[str] = []
        self._committed_sources: list[str] = []
        self._tail_source = ""  # normalized, not yet committed
        self._tail_html = ""
        self._pending_cr = False  # a "\r" that may be the first half of "\r\n"
        self._references: dict[str, Any] = {}
        self._finished = False
        self.last_rendered_chars = 0

    @property
    def text(self) -> str:
        """The source fed so far (normalized line endings)."""
        return "".join(self._committed_sources) + self._tail_source

    @property
    def html(self) -> str:
        """All HTML so far: committed blocks then the tail."""
        return "".join(self._committed_parts) + self._tail_html

    @property
    def committed_html(self) -> str:
        """The HTML of every committed block so far (what the appends of feed() add up to)."""
        return "".join(self._committed_parts)

    @property
    def tail_html(self) -> str:
        """The HTML of the uncommitted tail (the last feed()'s tail_html)."""
        return self._tail_html

    def feed(self, delta: str) -> RenderUpdate:
        """Append `delta` to the source; returns the newly committed HTML and the new tail HTML.

        Raises:
            RuntimeError: called after finish().
        """
        if self._finished:
            raise RuntimeError("feed() after finish()")
        if self._pending_cr:
            delta = "\r" + delta
            self._pending_cr = False
        if delta.endswith("\r"):
            delta = delta[:-1]
            self._pending_cr = True
        self._tail_source += normalize_source(delta)
        return self._update(final=False)

    def finish(self) -> RenderUpdate:
        """End of text: everything is committed; tail_html becomes ""."""
        if self._finished:
            return RenderUpdate("", "")
        if self._pending_cr:
            self._tail_source += "\n"
            self._pending_cr = False
        update = self._update(final=True)
        self._finished = True
        return update

    def _update(self, final: bool) -> RenderUpdate:
        source = self._tail_source
        self.last_rendered_chars = len(source)
        env: dict[str, Any] = {"references": dict(self._references)}
        tokens = _MD.parse(source, env)
        if final:
            html = _render_tokens(tokens, env)
            self._commit(html, source, env, len(source.splitlines()) + 1)
            self._tail_source, self._tail_html = "", ""
            return RenderUpdate(html, "")
        blocks = _top_level_blocks(tokens)
        lines = source.split("\n")  # the last item is the incomplete last line ("" if none)
        keep = 0
        while keep + 1 < len(blocks) and _is_final(blocks[keep], blocks[keep + 1], lines):
            keep += 1
        committed_html = ""
        if keep:
            boundary = blocks[keep]
            committed_html = _render_tokens(tokens[: boundary.first_token], env)
            cut = sum(len(line) + 1 for line in lines[: boundary.first_line])
            self._commit(committed_html, source[:cut], env, boundary.first_line)
            self._tail_source = source[cut:]
            tokens = tokens[boundary.first_token :]
        self._tail_html = _render_tokens(tokens, env)
        return RenderUpdate(committed_html, self._tail_html)

    def _commit(self, html: str, source: str, env: dict[str, Any], end_line: int) -> None:
        self._committed_parts.append(html)
        self._committed_sources.append(source)
        # Keep reference definitions that lie wholly in the committed part; ones in the tail
        # may still be half-written.
        for label, ref in env.get("references", {}).items():
            if label not in self._references and ref["map"][1] <= end_line:
                self._references[label] = ref


def _is_final(block: _Block, following: _Block, lines: list[str]) -> bool:
    # lines[-1] is the unterminated last line; a line index < len(lines) - 1 ended in "\n".
    if following.first_line >= len(lines) - 1:
        return False
    if block.kind in _SELF_ENDING:
        return True
    before = following.first_line - 1
    return before >= 0 and lines[before].strip(" \t") == ""
