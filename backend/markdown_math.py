"""TeX math in Markdown, rendered to MathML on the server.

Delimiters: `$…$` and `\\(…\\)` inline; `$$…$$` and `\\[…\\]` on their own lines as a display
block, or inside a paragraph as display math in the line. Dollars are parsed by mdit-py-plugins'
dollarmath with the usual rule for prose: an opening `$` not followed by a space, a closing `$`
not preceded by a space nor followed by a digit, and no digit before an opening `$` — so "costs
$5 and $10" stays text. The bracket delimiters are this module's own rules (dollarmath has none).
Math is an inline or block token, so it is never looked for inside code spans or code blocks, and
a `$$` block still unclosed (while a reply streams) is ordinary paragraph text.

Conversion: latex2mathml, then its XML is rebuilt element by element keeping only MathML
presentation elements (`MATHML_TAGS`) and a few layout attributes with plain values
(`MATHML_ATTRIBUTES`): no href (latex2mathml turns `\\href` into one), no style, no colour. When
the TeX does not convert (latex2mathml raises, or its output holds anything else, e.g. raw markup
from `\\text{<b>}`), the math shows as its escaped source, delimiters included, in
`<code class="math-source">`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from functools import lru_cache
from html import escape
from typing import Any, Sequence

from latex2mathml.converter import convert
from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

MATHML_TAGS = frozenset(
    {
        "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msup", "msub", "msubsup",
        "mfrac", "msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd",
        "mstyle", "mpadded", "mphantom", "menclose", "merror", "mmultiscripts", "mprescripts", "none",
    }
)  # fmt: skip
MATHML_ATTRIBUTES = frozenset(
    {
        "display", "mathvariant", "stretchy", "fence", "separator", "form", "lspace", "rspace",
        "movablelimits", "largeop", "symmetric", "minsize", "maxsize", "accent", "accentunder",
        "columnalign", "rowalign", "columnlines", "rowlines", "columnspacing", "rowspacing", "frame",
        "displaystyle", "scriptlevel", "linethickness", "width", "height", "depth", "voffset",
        "notation", "linebreak",
    }
)  # fmt: skip
# Attribute values are words, numbers and lengths: nothing that could hold a URL or a rule.
MATHML_VALUE = re.compile(r"[A-Za-z0-9 .%+-]{0,64}")
_MATHML_NS = "{http://www.w3.org/1998/Math/MathML}"
_CLOSING = {"$": "$", "$$": "$$", "\\(": "\\)", "\\[": "\\]"}
MAX_TEX_CHARS = 4000  # longer math shows as source: conversion time grows with it


class MathConversionError(ValueError):
    """latex2mathml failed, or produced something outside the MathML allow-list."""


def math_plugin(md: MarkdownIt) -> None:
    """Add the math rules and their renderers to `md` (see the module docstring)."""
    dollarmath_plugin(md, allow_labels=False, allow_space=False, allow_digits=False,
                      allow_blank_lines=False, double_inline=True)
    md.inline.ruler.before("escape", "math_bracket_inline", _bracket_inline)
    md.block.ruler.before("fence", "math_bracket_block", _bracket_block)
    md.add_render_rule("math_inline", _render_inline)
    md.add_render_rule("math_inline_double", _render_display)
    md.add_render_rule("math_block", _render_block)


def tex_to_mathml(tex: str, display: bool) -> str:
    """TeX source (without delimiters) -> one `<math>` element as an HTML string.

    Raises:
        MathConversionError: empty or longer than MAX_TEX_CHARS, latex2mathml raised, or its
            output has an element outside MATHML_TAGS (attributes outside MATHML_ATTRIBUTES
            are dropped instead)."""
    html = _converted(tex, display)
    if html is None:
        raise MathConversionError(f"not convertible: {tex[:40]!r}")
    return html


@lru_cache(maxsize=2048)  # a streaming reply re-renders its tail, and the math in it, each update
def _converted(tex: str, display: bool) -> str | None:
    if not tex.strip() or len(tex) > MAX_TEX_CHARS:
        return None
    try:
        root = ElementTree.fromstring(convert(tex, display="block" if display else "inline"))
        return _element_html(root, display)
    except Exception:  # latex2mathml raises many kinds for bad TeX; expat ParseError; ours
        return None


def _element_html(element: ElementTree.Element, display: bool) -> str:
    tag = element.tag.removeprefix(_MATHML_NS)
    if tag not in MATHML_TAGS:
        raise MathConversionError(f"<{tag}> is not allowed")
    attrs = {name: value for name, value in element.attrib.items()
             if name in MATHML_ATTRIBUTES and MATHML_VALUE.fullmatch(value)}
    if tag == "math":
        attrs = {"display": "block" if display else "inline"}
    parts = [f"<{tag}", *(f' {name}="{escape(value)}"' for name, value in attrs.items()), ">"]
    parts.append(escape(element.text or "", quote=False))
    for child in element:
        parts.append(_element_html(child, display))
        parts.append(escape(child.tail or "", quote=False))
    parts.append(f"</{tag}>")
    return "".join(parts)


def _math_or_source(token: Token, display: bool) -> str:
    try:
        return tex_to_mathml(token.content.strip(), display)
    except MathConversionError:
        source = token.markup + token.content + _CLOSING.get(token.markup, "")
        return f'<code class="math-source">{escape(source, quote=False)}</code>'


def _render_inline(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return _math_or_source(tokens[idx], display=False)


def _render_display(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return _math_or_source(tokens[idx], display=True)


def _render_block(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f'<div class="math-display">{_math_or_source(tokens[idx], display=True)}</div>\n'


def _bracket_inline(state: StateInline, silent: bool) -> bool:
    """`\\(…\\)` inline math, `\\[…\\]` display math inside a paragraph. Placed before the escape
    rule, which would otherwise read `\\(` as an escaped parenthesis."""
    src, pos = state.src, state.pos
    if src[pos] != "\\" or pos + 1 >= state.posMax or src[pos + 1] not in "([":
        return False
    opening = src[pos : pos + 2]
    end = src.find(_CLOSING[opening], pos + 2, state.posMax)
    if end < 0 or not src[pos + 2 : end].strip():
        return False
    if not silent:
        token = state.push("math_inline" if opening == "\\(" else "math_inline_double", "math", 0)
        token.content = src[pos + 2 : end]
        token.markup = opening
    state.pos = end + 2
    return True


def _bracket_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """`\\[` at the start of a line, up to the first line that ends with `\\]`, with no blank
    line between. Like dollarmath's `$$` block it cannot interrupt a paragraph."""
    if state.sCount[start_line] - state.blkIndent >= 4:  # an indented code block
        return False
    begin = state.bMarks[start_line] + state.tShift[start_line]
    first = state.src[begin : state.eMarks[start_line]].rstrip()
    if not first.startswith("\\["):
        return False
    if first.endswith("\\]") and len(first) >= 4:
        last, lines = start_line, [first[2:-2]]
    elif "\\]" in first:  # closed mid-line: inline display math in a paragraph
        return False
    else:
        lines = [first[2:]]
        last = start_line + 1
        while True:
            if last >= end_line:
                return False
            text = state.src[state.bMarks[last] + state.tShift[last] : state.eMarks[last]].rstrip()
            if not text:
                return False
            if text.endswith("\\]"):
                lines.append(text[:-2])
                break
            lines.append(text)
            last += 1
    content = "\n".join(lines)
    if not content.strip():
        return False
    if silent:
        return True
    state.line = last + 1
    token = state.push("math_block", "math", 0)
    token.block = True
    token.content = content
    token.markup = "\\["
    token.map = [start_line, state.line]
    return True
