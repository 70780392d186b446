"""Markdown to safe HTML, whole or incrementally while a reply streams.

Rendering: markdown-it-py's "commonmark" preset plus the GFM table and strikethrough rules and
TeX math (backend.markdown_math: MathML rendered on the server), with `html=False` so raw HTML in
model output is shown as text. Code blocks (fenced and indented) come in a frame with their
language and a copy button (static/code_blocks.js), highlighted by Pygments line by line
(backend.highlight). Links: http(s) and mailto, and relative paths on this site; absolute http(s)
links open in a new tab (target="_blank"); a scheme-relative `//host` link or any other scheme
stays text. Images never load: `![alt](url)` becomes a link to url with the alt text. The result
then passes bleach with an allow-list (defence in depth): no script, no style, no event-handler
attributes, classes only from the fixed sets below, every link rel="noopener noreferrer nofollow".

Streaming (`IncrementalMarkdown`): the source is split into *committed* top-level blocks, each
rendered once, and a *tail* (the last blocks, which later text may still change) re-rendered on
every update, so an update costs O(tail), not O(reply). See `_is_final` for when a block is final.
A fenced code block still open is committed line by line (see `RenderUpdate.code_html`), so a
reply that is one long code block costs O(line) per update, not O(block).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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


def _language_of(info: str) -> str:
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
def _sanitized_shell(language: str) -> tuple[str, str]:
    prefix, suffix = _shell_html(language)
    html = sanitize_html(prefix + suffix)
    cut = html.rindex("</code>")
    return html[:cut], html[cut:]


def _line_html(lexer: Lexer | None, line: str, state: State) -> tuple[str, State]:
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
        html, state = _line_html(lexer, line, state)
        parts.append(html + ("\n" if i < len(lines) - 1 else ""))
    return prefix + "".join(parts) + suffix


def _render_fence(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return _code_html(tokens[idx].content, _language_of(tokens[idx].info))


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
    """What one feed() changed, applied in this order:

    code_html: HTML of new complete lines of the code block left open by the previous update
        (the committed part's last element); append it inside that block's <code>.
    committed_html: HTML of blocks that became final (or of a code block that opened: its whole
        frame with its lines so far; later lines come as code_html); append it.
    tail_html: HTML of everything after them (replace the previous tail with it). Inside an
        open code block, the tail is its unfinished last line, as `<pre class="code-tail">`.
    """

    committed_html: str
    tail_html: str
    code_html: str = ""


@dataclass(frozen=True)
class RenderMark:
    """The rendering as of one update, taken in O(1) (IncrementalMarkdown.mark), read later
    with IncrementalMarkdown.rendering_at."""

    parts: int
    open_suffix: str
    tail_html: str


@dataclass(frozen=True)
class _Block:
    first_token: int  # index into the token list
    first_line: int  # source line (0-based) where the block starts
    kind: str  # token type of its opening token


@dataclass
class _OpenFence:
    """A top-level fenced code block being committed line by line."""

    opening: str  # its opening line, as written
    lexer: Lexer | None
    state: State  # the highlighter's state after the last committed line
    suffix: str  # the sanitized closing tags of its frame
    sent: bool = False  # its frame went out in a committed_html


def _top_level_blocks(tokens: Sequence[Token]) -> list[_Block]:
    blocks = []
    for i, token in enumerate(tokens):
        if token.level == 0 and token.nesting >= 0 and token.map is not None:
            blocks.append(_Block(i, token.map[0], token.type))
    return blocks


# Blocks that end on their own line: a following block (with its first line complete) proves
# they are done even without a blank line between. A closed fence or math block is final the
# same way: an unclosed fence would still run to the end of the text, and an unclosed `$$` or
# `\[` is not a math block at all, so no block would follow it.
_SELF_ENDING = frozenset({"heading_open", "hr", "fence", "math_block"})


def _fence_line_content(opening: str, line: str) -> str | None:
    """A line of an open fence as markdown-it reads it (indentation under the opening fence
    removed, no "\\n"), or None when the line closes the fence. The fence's rules are
    line-local, so parsing the opening line and this one alone decides it exactly."""
    content = _MD.parse(f"{opening}\n{line}\n")[0].content
    return content[:-1] if content else None


class IncrementalMarkdown:
    """Render a growing Markdown text so that each update re-renders only its tail.

    A top-level block B is final (committed, never rendered again) when a next top-level block
    N exists, N's first line is complete (ends in "\\n"), and either B ends itself (ATX or setext
    heading, thematic break, closed fence or math block) or N is a fence (it interrupts whatever
    came before), and no line of B opens a `$$` or `\\[` math block that is still unclosed; or a
    blank line separates B from N. A blank line ends
    paragraphs, block quotes (no lazy continuation across it) and tables; a list or indented
    code block continues only with lines indented under it, and N's first line, being complete
    and outside B, is not (requiring it complete rules out "2" growing into the list item "2.").
    After B is committed, the rest of the text is parsed on its own: block parsing restarts at
    top level after a closed block, so this equals parsing it in place.

    A top-level fence whose opening line is complete is committed line by line: its frame
    first, then each complete line (highlighted with the lexer state carried over), until a
    line closes it; the unfinished last line is the tail. Per update this costs the new lines
    and the last one, whatever the block's length.

    Equality: after finish(), `html` equals `render_markdown(text)` exactly, with one known
    exception: a link reference definition (`[x]: /url`) only applies to blocks parsed after
    it is committed or in the same tail, whereas a whole-text render applies it everywhere.

    Cost: `last_rendered_chars` reports how many source characters the last update parsed and
    rendered.
    """

    def __init__(self) -> None:
        # While a fence is open its frame's prefix and lines are parts; its suffix is not yet.
        self._committed_parts: list[str] = []
        self._committed_sources: list[str] = []
        self._tail_source = ""  # normalized, not yet committed
        self._tail_html = ""
        self._fence: _OpenFence | None = None
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
        return self.committed_html + self._tail_html

    @property
    def committed_html(self) -> str:
        """The HTML of every committed block so far, an open code block closed (what the
        updates' code_html and committed_html add up to)."""
        return self.rendering_at(self.mark())[0]

    @property
    def tail_html(self) -> str:
        """The HTML of the uncommitted tail (the last feed()'s tail_html)."""
        return self._tail_html

    def mark(self) -> RenderMark:
        """The rendering as it stands, in O(1): committed parts only ever grow."""
        suffix = self._fence.suffix if self._fence is not None else ""
        return RenderMark(len(self._committed_parts), suffix, self._tail_html)

    def rendering_at(self, mark: RenderMark) -> tuple[str, str]:
        """(committed_html, tail_html) as they were when `mark` was taken."""
        return "".join(self._committed_parts[: mark.parts]) + mark.open_suffix, mark.tail_html

    def feed(self, delta: str) -> RenderUpdate:
        """Append `delta` to the source; returns what changed (see RenderUpdate).

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
        committed: list[str] = []
        code: list[str] = []
        self.last_rendered_chars = 0
        while True:
            if self._fence is not None:
                self._advance_fence(committed, code, final)
                if self._fence is not None:
                    self._tail_html = self._fence_tail_html()
                    break
            if not self._update_blocks(committed, final):
                break
        return RenderUpdate("".join(committed), self._tail_html, "".join(code))

    def _update_blocks(self, out: list[str], final: bool) -> bool:
        """Parse the tail, commit its final blocks; True when a fence opened (its lines next)."""
        source = self._tail_source
        self.last_rendered_chars += len(source)
        env: dict[str, Any] = {"references": dict(self._references)}
        tokens = _MD.parse(source, env)
        if final:
            html = _render_tokens(tokens, env)
            self._commit(html, source, env, len(source.splitlines()) + 1)
            out.append(html)
            self._tail_source, self._tail_html = "", ""
            return False
        blocks = _top_level_blocks(tokens)
        lines = source.split("\n")  # the last item is the incomplete last line ("" if none)
        keep = 0
        while keep + 1 < len(blocks) and _is_final(blocks[keep], blocks[keep + 1], lines):
            keep += 1
        line0 = token0 = 0  # where the tail's lines and tokens start in `lines` and `tokens`
        if keep:
            boundary = blocks[keep]
            line0, token0 = boundary.first_line, boundary.first_token
            html = _render_tokens(tokens[:token0], env)
            cut = sum(len(line) + 1 for line in lines[:line0])
            self._commit(html, source[:cut], env, line0)
            out.append(html)
            source = self._tail_source = source[cut:]
        last = blocks[-1] if blocks else None
        if last is not None and keep == len(blocks) - 1 and last.kind == "fence" and last.first_line + 1 < len(lines):
            first = last.first_line - line0  # > 0: blank lines or reference definitions before it
            if first:
                cut = sum(len(line) + 1 for line in lines[line0 : last.first_line])
                self._commit("", source[:cut], env, last.first_line)
                self._tail_source = source[cut:]
            self._open_fence(lines[last.first_line], _language_of(tokens[last.first_token].info), out)
            return True
        self._tail_html = _render_tokens(tokens[token0:], env)
        return False

    def _open_fence(self, opening: str, language: str, out: list[str]) -> None:
        prefix, suffix = _sanitized_shell(language)
        lexer = find_lexer(language)
        self._fence = _OpenFence(opening, lexer, initial_state(lexer) if lexer is not None else (), suffix)
        self._committed_parts.append(prefix)
        self._committed_sources.append(opening + "\n")
        self._tail_source = self._tail_source[len(opening) + 1 :]
        out.append(prefix)

    def _advance_fence(self, out: list[str], code: list[str], final: bool) -> None:
        """Commit the open fence's complete lines (the last one too when final), until one
        closes it; the text after a closing line goes back to block parsing."""
        fence = self._fence
        assert fence is not None
        *complete, partial = self._tail_source.split("\n")
        for i, line in enumerate(complete):
            if self._fence_line(line, "\n", out, code):
                self._tail_source = "\n".join([*complete[i + 1 :], partial])
                return
        self._tail_source = partial
        if final:
            if not (partial and self._fence_line(partial, "", out, code)):
                self._close_fence("", out)
            self._tail_source = ""
        elif not fence.sent:
            out.append(fence.suffix)
            fence.sent = True

    def _fence_line(self, line: str, end: str, out: list[str], code: list[str]) -> bool:
        """Commit one line of the open fence; True when it closed the fence instead."""
        fence = self._fence
        assert fence is not None
        self.last_rendered_chars += len(fence.opening) + len(line)
        content = _fence_line_content(fence.opening, line)
        if content is None:
            self._close_fence(line + end, out)
            return True
        html, fence.state = _line_html(fence.lexer, content, fence.state)
        html = sanitize_html(html + end)
        self._committed_parts.append(html)
        self._committed_sources.append(line + end)
        (code if fence.sent else out).append(html)
        return False

    def _close_fence(self, source: str, out: list[str]) -> None:
        fence = self._fence
        assert fence is not None
        self._committed_parts.append(fence.suffix)
        self._committed_sources.append(source)
        if not fence.sent:
            out.append(fence.suffix)
        self._fence = None

    def _fence_tail_html(self) -> str:
        fence = self._fence
        assert fence is not None
        line = self._tail_source
        if not line:
            return ""
        self.last_rendered_chars += len(fence.opening) + len(line)
        content = _fence_line_content(fence.opening, line)
        if content is None:  # a closing fence still being written: show it as it is
            content = line
        html, _ = _line_html(fence.lexer, content, fence.state)
        return sanitize_html(f'<pre class="code-tail"><code>{html}</code></pre>')

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
    before = following.first_line - 1
    if before >= 0 and lines[before].strip(" \t") == "":
        return True
    # Without a blank line: a line of B that starts with `$$` or `\[` (inside its container
    # markers) is a math block opener still unclosed, and a closing line to come would turn it
    # into a math block running over N and beyond. (A blank line stops that scan.)
    if block.kind not in ("fence", "math_block") and any(
        _MATH_OPENER.match(line) for line in lines[block.first_line : following.first_line]
    ):
        return False
    return block.kind in _SELF_ENDING or following.kind == "fence"


_MATH_OPENER = re.compile(r"[ \t>*+\-\d.)]*(\$\$|\\\[)")
