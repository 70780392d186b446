"""Split a document's text into chunks of at most `max_tokens` tokens with overlap.

Structure first: a Markdown heading (ATX `#` lines, outside code fences) always starts a new
chunk (a heading with no text before the next heading joins that next chunk), and each chunk
records the heading path above it. Inside a section, whole paragraphs are
packed together; a paragraph that does not fit starts the next chunk when the current one is at
least half full, otherwise it is split at sentence ends (an over-long sentence at its line ends,
so that no row of a price list is cut from its price, and an over-long line at words).
Consecutive chunks of one section overlap by the trailing sentences of the previous chunk, up to
`overlap_tokens`. Tokens are counted by any `count_tokens(text) -> int` (the embedder's
tokenizer in production; `approx_token_count` by default).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from backend.rag.extract import Page

CountTokens = Callable[[str], int]
HEADING_SEPARATOR = " > "
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# (not dot leaders: "Small (up to 5 cm) ........ $150" is one row, not a sentence ending before its price)
_SENTENCE_END = re.compile(r"(?<=[.!?。])(?<!\.\.)\s+")
_PIECE = re.compile(r"\w{1,6}|[^\w\s]")
# Characters per token a chunk may hold at most (English averages about 4).
MAX_CHARS_PER_TOKEN = 8


def approx_token_count(text: str) -> int:
    """A tokenizer-free estimate close to word-piece counts: every 6 word characters and every
    punctuation mark count as one token."""
    return len(_PIECE.findall(text))


@dataclass(frozen=True)
class Chunk:
    """position: 0-based within the document; heading_path: headings joined with " > ";
    page: 1-based PDF page where the chunk starts (None for other kinds)."""

    text: str
    position: int
    heading_path: str
    page: int | None
    num_tokens: int


@dataclass
class _Unit:
    """A sentence (or lines of an over-long one, or a word window of an over-long line).
    starts_paragraph: a new paragraph; starts_line: a new line of the same sentence."""

    text: str
    tokens: int
    page: int | None
    starts_paragraph: bool
    starts_line: bool = False


def chunk_pages(
    pages: Sequence[Page],
    count_tokens: CountTokens = approx_token_count,
    max_tokens: int = 200,
    overlap_tokens: int = 40,
    max_chars: int | None = None,
) -> list[Chunk]:
    """Chunks of `pages` in reading order (see the module docstring).

    Chunks are also capped in characters: max_chars (default max_tokens * MAX_CHARS_PER_TOKEN).
    A tokenizer may count a very long "word" as one token (MiniLM: one [UNK]), so a word longer
    than the cap is cut into pieces of at most max_chars characters.

    Raises:
        ValueError: max_tokens < 8, or overlap_tokens not in [0, max_tokens // 2].
    """
    if max_tokens < 8 or not 0 <= overlap_tokens <= max_tokens // 2:
        raise ValueError(f"need max_tokens >= 8 and 0 <= overlap_tokens <= max_tokens // 2, got {max_tokens}, {overlap_tokens}")
    cap = max_tokens * MAX_CHARS_PER_TOKEN if max_chars is None else max_chars
    if cap < 16:
        raise ValueError(f"max_chars must be >= 16, got {cap}")

    def count(text: str) -> int:
        # A unit's cost is the larger of its tokens and its share of the character cap, so a
        # window of units never passes either limit.
        # (+2: the separator that joins it to the previous unit).
        return max(count_tokens(text), -(-(len(text) + 2) * max_tokens // cap))

    chunks: list[Chunk] = []
    for heading_path, paragraphs in _sections(pages):
        units = [u for text, page in paragraphs for u in _units(_split_long_words(text, cap // 2), page, count, max_tokens)]
        for window in _pack(units, max_tokens, overlap_tokens):
            text = _join(window)
            chunks.append(Chunk(text, len(chunks), heading_path, window[0].page, count_tokens(text)))
    return chunks


def _sections(pages: Sequence[Page]) -> list[tuple[str, list[tuple[str, int | None]]]]:
    """[(heading path, [(paragraph text, page)])]; a heading line is its section's first paragraph."""
    sections: list[tuple[str, list[tuple[str, int | None]]]] = []
    stack: list[tuple[int, str]] = []
    paragraphs: list[tuple[str, int | None]] = []
    lines: list[str] = []
    in_fence = False

    def end_paragraph(page: int | None) -> None:
        text = "\n".join(lines).strip()
        lines.clear()
        if text:
            paragraphs.append((text, page))

    def end_section(final: bool = False) -> None:
        # A heading with no text of its own (a title right above a subheading) is not a chunk:
        # it stays at the front of the next section's first chunk.
        if paragraphs and (final or not all(_HEADING.match(text) for text, _ in paragraphs)):
            sections.append((HEADING_SEPARATOR.join(title for _, title in stack), list(paragraphs)))
            paragraphs.clear()

    for page in pages:
        for line in page.text.split("\n"):
            if _FENCE.match(line):
                in_fence = not in_fence
                lines.append(line)
                continue
            heading = None if in_fence else _HEADING.match(line)
            if heading:
                end_paragraph(page.number)
                end_section()
                level = len(heading.group(1))
                stack = [(lvl, title) for lvl, title in stack if lvl < level] + [(level, heading.group(2))]
                paragraphs.append((line.strip(), page.number))
            elif not line.strip() and not in_fence:
                end_paragraph(page.number)
            else:
                lines.append(line.rstrip())
        end_paragraph(page.number)
    end_section(final=True)
    return sections


def _split_long_words(text: str, limit: int) -> str:
    """`text` with every run of more than `limit` non-space characters broken by spaces."""
    if len(text) <= limit:
        return text
    return re.sub(rf"\S{{{limit + 1},}}",
                  lambda m: " ".join(m.group(0)[i : i + limit] for i in range(0, len(m.group(0)), limit)), text)


def _units(text: str, page: int | None, count_tokens: CountTokens, max_tokens: int) -> list[_Unit]:
    units: list[_Unit] = []
    for sentence in _SENTENCE_END.split(text):
        if not sentence.strip():
            continue
        tokens = count_tokens(sentence)
        if tokens <= max_tokens:
            units.append(_Unit(sentence, tokens, page, not units))
            continue
        # an over-long sentence is cut at its line ends first (a price list's rows, a table's lines: no
        # row is cut from its price), then a line longer than a chunk at words
        for i, line in enumerate(part for part in sentence.split("\n") if part.strip()):
            line_tokens = count_tokens(line)
            if line_tokens <= max_tokens:
                units.append(_Unit(line, line_tokens, page, not units, starts_line=i > 0))
                continue
            window: list[str] = []
            for word in line.split():
                if window and count_tokens(" ".join(window + [word])) > max_tokens:
                    piece = " ".join(window)
                    units.append(_Unit(piece, count_tokens(piece), page, not units))
                    window = []
                window.append(word)
            if window:
                piece = " ".join(window)
                units.append(_Unit(piece, count_tokens(piece), page, not units))
    return units


def _pack(units: list[_Unit], max_tokens: int, overlap_tokens: int) -> list[list[_Unit]]:
    windows: list[list[_Unit]] = []
    current: list[_Unit] = []
    fresh = 0  # units in `current` that are not overlap carried from the previous window
    for index, unit in enumerate(units):
        used = sum(u.tokens for u in current)
        paragraph_left = _paragraph_tokens(units, index) if unit.starts_paragraph else unit.tokens
        breaks_here = unit.starts_paragraph and used >= max_tokens // 2 and used + paragraph_left > max_tokens
        if fresh and (used + unit.tokens > max_tokens or breaks_here):
            windows.append(current)
            current = _overlap(current, overlap_tokens, max_tokens - unit.tokens)
            fresh = 0
        current.append(unit)
        fresh += 1
    if fresh:
        windows.append(current)
    return windows


def _paragraph_tokens(units: list[_Unit], start: int) -> int:
    total = units[start].tokens
    for unit in units[start + 1 :]:
        if unit.starts_paragraph:
            break
        total += unit.tokens
    return total


def _overlap(window: list[_Unit], overlap_tokens: int, room: int) -> list[_Unit]:
    """The trailing units of `window` that fit in overlap_tokens (and in the room left)."""
    carried: list[_Unit] = []
    total = 0
    for unit in reversed(window[1:]):
        if total + unit.tokens > min(overlap_tokens, room):
            break
        carried.insert(0, unit)
        total += unit.tokens
    return carried


def _join(units: list[_Unit]) -> str:
    parts: list[str] = []
    for i, unit in enumerate(units):
        if i:
            parts.append("\n\n" if unit.starts_paragraph else "\n" if unit.starts_line else " ")
        parts.append(unit.text)
    return "".join(parts)
