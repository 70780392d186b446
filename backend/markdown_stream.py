"""Render a growing Markdown reply so that each update re-renders only its tail.

The source is split into *committed* top-level blocks, each rendered once, and a *tail* (the
last blocks, which later text may still change) re-rendered on every update, so an update costs
O(tail), not O(reply). See `_is_final` for when a block is final. A fenced code block still open
is committed line by line (see `RenderUpdate.code_html`), so a reply that is one long code block
costs O(line) per update, not O(block). Rendering and sanitizing are backend.markdown's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from markdown_it.token import Token
from pygments.lexer import Lexer

from backend.highlight import State, find_lexer, initial_state
from backend.markdown import (
    language_of,
    line_html,
    normalize_source,
    parse,
    render_tokens,
    sanitize_html,
    sanitized_shell,
)


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
    content = parse(f"{opening}\n{line}\n")[0].content
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
        tokens = parse(source, env)
        if final:
            html = render_tokens(tokens, env)
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
            html = render_tokens(tokens[:token0], env)
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
            self._open_fence(lines[last.first_line], language_of(tokens[last.first_token].info), out)
            return True
        self._tail_html = render_tokens(tokens[token0:], env)
        return False

    def _open_fence(self, opening: str, language: str, out: list[str]) -> None:
        prefix, suffix = sanitized_shell(language)
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
        html, fence.state = line_html(fence.lexer, content, fence.state)
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
        html, _ = line_html(fence.lexer, content, fence.state)
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
