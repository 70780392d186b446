"""Syntax highlighting of code blocks with Pygments, one line at a time.

A code block is highlighted line by line, with the lexer's state carried from each line to the
next, so a block streamed line by line gets exactly the markup of the same block rendered whole
(backend.markdown relies on this: a line, once highlighted, is never highlighted again).

State is carried for lexers built on Pygments' `RegexLexer` (most languages: Python, JavaScript,
TypeScript, Rust, Go, Java, C, C++, shell, SQL, HTML, diff...): the loop below walks the lexer's
compiled state table the way `RegexLexer.get_tokens_unprocessed` does, but keeps the state stack
between lines. Two consequences, accepted for the streaming guarantee: a token whose one regex
spans several lines (a C `/* ... */` comment in one rule) is seen line by line and so coloured
less well; and a subclass's post-processing of tokens (C's standard-library type names) is
skipped. Other lexers (`ExtendedRegexLexer` ones such as Ruby and YAML, hand-written ones such as
JSON) highlight each line on its own.

Output: each token becomes `<span class="hl-XX">`, XX one of Pygments' short names for a small
set of token kinds (`HIGHLIGHT_CLASSES`, the sanitizer's allow-list); other text is plain. Text
is HTML-escaped. static/markdown.css colours the classes for light and dark themes.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from typing import Iterable, Iterator

from pygments.lexer import ExtendedRegexLexer, Lexer, RegexLexer
from pygments.lexers import get_lexer_by_name
from pygments.token import (
    STANDARD_TYPES, Comment, Error, Generic, Keyword, Name, Number, Operator, String, Token, Whitespace,
    _TokenType,
)  # fmt: skip
from pygments.util import ClassNotFound

# The token kinds that get a colour; a token of a subtype takes its nearest listed ancestor's.
_COLOURED = (
    Keyword, Keyword.Constant, Keyword.Type, Keyword.Namespace, Keyword.Declaration,
    Name.Builtin, Name.Builtin.Pseudo, Name.Function, Name.Class, Name.Decorator, Name.Tag,
    Name.Attribute, Name.Exception, Name.Variable,
    String, String.Escape, String.Interpol, String.Doc, String.Regex, Number,
    Operator, Operator.Word, Comment, Comment.Preproc,
    Generic.Inserted, Generic.Deleted, Generic.Heading, Generic.Subheading, Generic.Emph,
    Generic.Strong, Generic.Prompt, Error,
)  # fmt: skip
_CLASS_OF = {ttype: "hl-" + STANDARD_TYPES[ttype] for ttype in _COLOURED}
HIGHLIGHT_CLASSES = frozenset(_CLASS_OF.values())

State = tuple[str, ...]  # a RegexLexer state stack; () for lexers whose state is not carried
_ROOT: State = ("root",)
# Longer lines (minified code, data) are escaped, not lexed, to bound the time one line can take;
# the lexer's state carries over them unchanged.
MAX_LINE_CHARS = 2000


@lru_cache(maxsize=256)
def find_lexer(language: str) -> Lexer | None:
    """The Pygments lexer for a fence's language name or alias ("python", "py", "c++"...), or
    None when Pygments knows no such language. Lexers keep no state between calls, so they are
    shared."""
    if not language:
        return None
    try:
        return get_lexer_by_name(language.lower(), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def initial_state(lexer: Lexer) -> State:
    """The state to highlight a block's first line with."""
    return _ROOT if _carries_state(lexer) else ()


def highlight_line(lexer: Lexer, line: str, state: State) -> tuple[str, State]:
    """One line of code (without its "\\n") -> (HTML with spans, the state for the next line).

    The line is lexed as `line + "\\n"`, since lexers' rules expect line ends; the newline is
    not part of the HTML. A line over MAX_LINE_CHARS is only escaped."""
    if len(line) > MAX_LINE_CHARS:
        return escape(line, quote=False), state
    text = line + "\n"
    if _carries_state(lexer):
        stack = list(state or _ROOT)
        tokens: Iterable[tuple[_TokenType, str]] = list(_lex(lexer, text, stack))
        state = tuple(stack)
    else:
        tokens = ((ttype, value) for _, ttype, value in lexer.get_tokens_unprocessed(text))
    return _to_html(tokens, len(line)), state


def _carries_state(lexer: Lexer) -> bool:
    return isinstance(lexer, RegexLexer) and not isinstance(lexer, ExtendedRegexLexer)


def _lex(lexer: RegexLexer, text: str, stack: list[str]) -> Iterator[tuple[_TokenType, str]]:
    """(token type, text) pairs of `text`, starting in state `stack` and leaving `stack` as the
    state at its end. The same walk as Pygments' RegexLexer.get_tokens_unprocessed."""
    table = lexer._tokens
    rules = table[stack[-1]]
    pos = 0
    while pos < len(text):
        for match_at, action, new_state in rules:
            m = match_at(text, pos)
            if not m:
                continue
            if action is not None:
                if type(action) is _TokenType:
                    yield action, m.group()
                else:
                    yield from ((ttype, value) for _, ttype, value in action(lexer, m))
            pos = m.end()
            if new_state is not None:
                _apply_transition(stack, new_state)
                rules = table[stack[-1]]
            break
        else:
            if text[pos] == "\n":  # no rule matches at a line end: back to the root state
                del stack[:]
                stack.append("root")
                rules = table["root"]
                yield Whitespace, "\n"
            else:
                yield Error, text[pos]
            pos += 1


def _apply_transition(stack: list[str], new_state: tuple[str, ...] | int | str) -> None:
    if isinstance(new_state, tuple):
        for name in new_state:
            if name == "#pop":
                if len(stack) > 1:
                    stack.pop()
            elif name == "#push":
                stack.append(stack[-1])
            else:
                stack.append(name)
    elif isinstance(new_state, int):  # pop that many, keeping the bottom state
        if abs(new_state) >= len(stack):
            del stack[1:]
        else:
            del stack[new_state:]
    elif new_state == "#push":
        stack.append(stack[-1])


def _class_of(ttype: _TokenType) -> str | None:
    while ttype is not Token:
        css = _CLASS_OF.get(ttype)
        if css is not None:
            return css
        ttype = ttype.parent
    return None


def _to_html(tokens: Iterable[tuple[_TokenType, str]], length: int) -> str:
    """Spans for `tokens`, cut at `length` characters (the line without its newline); runs of
    the same class share one span."""
    runs: list[tuple[str | None, str]] = []
    taken = 0
    for ttype, value in tokens:
        value = value[: length - taken]
        if not value:
            continue
        taken += len(value)
        css = _class_of(ttype)
        if runs and runs[-1][0] == css:
            runs[-1] = (css, runs[-1][1] + value)
        else:
            runs.append((css, value))
    html = (escape(value, quote=False) for _, value in runs)
    return "".join(text if css is None else f'<span class="{css}">{text}</span>'
                   for (css, _), text in zip(runs, html))
