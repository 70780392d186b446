"""Document passages as tool results: passage ids ("{document_id}:{chunk_id}") and the quoted,
numbered text the model reads (search_documents, read_passage)."""

from __future__ import annotations

import re
from typing import Sequence

from backend.models import MAX_CHUNK_ID
from backend.rag import Source, citation
from backend.rag.sources import source_label

PASSAGE_ID_PATTERN = r"^[0-9a-f]{32}:[0-9]{1,10}$"
# document_chunks.id is an INTEGER: on PostgreSQL a larger id is an error, not "not found".
_PASSAGE_ID = re.compile(PASSAGE_ID_PATTERN)
_MARKERS = re.compile(r"<{3,}|>{3,}")
QUOTE = "> "


def passage_id(source: Source) -> str:
    return f"{source.document_id}:{source.chunk_id}"


def parse_passage_id(value: str) -> tuple[str, int] | None:
    """(document_id, chunk_id), or None when `value` is not a passage id (or its chunk id is
    beyond the column's range, so no such passage can exist)."""
    if not _PASSAGE_ID.match(value):
        return None
    document_id, chunk = value.split(":")
    if int(chunk) > MAX_CHUNK_ID:
        return None
    return document_id, int(chunk)


# Between a passage's label and its id on its header line: no answer holds it (the model answering
# after a search ends its reply there rather than echo an id: backend.agent.model_step).
LABEL_SEPARATOR = " — passage "


def format_passages(sources: Sequence[Source]) -> str:
    """Source n (1-based) as a line "[n] label — passage <id>" then its text, every line quoted
    with "> " (document text is data: it cannot start a line of this structure)."""
    blocks = []
    for number, source in enumerate(sources, start=1):
        text = _MARKERS.sub(lambda m: " ".join(m.group(0)), source.text.replace("\r\n", "\n").replace("\r", "\n"))
        blocks.append(quote_block(f"[{number}] {source_label(source)}{LABEL_SEPARATOR}{passage_id(source)}", text))
    return "\n\n".join(blocks)


_HEADER = re.compile(r"^\[(\d+)\] (.*) — passage [0-9a-f]{32}:[0-9]+$")


def read_passages(content: str) -> list[tuple[str, str]]:
    """(label, text) of each passage quoted in `content`, a result that format_passages wrote
    (search_documents, read_passage): the "[n] label — passage <id>" line and the "> " lines
    after it, unquoted. Lines that are not part of a passage are skipped."""
    return [(label, text) for _, label, text in passage_blocks(content)]


def document_name(label: str) -> str:
    """The document's name in a passage's label ("price-list.txt (version 2, Hours)" ->
    "price-list.txt"; backend.rag.sources.source_label writes it)."""
    return label.rsplit(" (version ", 1)[0]


def passage_blocks(content: str) -> list[tuple[int, str, str]]:
    """(number, label, text) of each passage quoted in `content` (see read_passages)."""
    out: list[tuple[int, str, str]] = []
    header: re.Match[str] | None = None
    lines: list[str] = []
    for line in content.split("\n") + [""]:
        found = _HEADER.match(line)
        if header is not None and (found or not (line.startswith(QUOTE) or line == QUOTE.rstrip())):
            out.append((int(header.group(1)), header.group(2), "\n".join(lines)))
            header, lines = None, []
        if found:
            header = found
        elif header is not None:
            lines.append(line[len(QUOTE):])
    return out


def quote_block(header: str, text: str) -> str:
    """A passage as format_passages writes it: its header line, then `text` quoted line by line."""
    return "\n".join([header] + [QUOTE + line if line else QUOTE.rstrip() for line in text.strip("\n").split("\n")])


def passage_records(sources: Sequence[Source]) -> list[dict[str, object]]:
    """JSON-able records (backend.rag.citation plus passage_id) to store with the run."""
    return [{**citation(n, s), "passage_id": passage_id(s)} for n, s in enumerate(sources, start=1)]
