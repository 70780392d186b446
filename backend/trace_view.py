"""A trace's spans laid out as a waterfall (the admin page /admin/traces/{trace_id}).

Rows in tree order (a span, then its children by start time), each with its depth, its offset
and width as percentages of the trace's whole span, its times in milliseconds and its attributes
as text (the template escapes them; nothing here is markup).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backend.trace_store import SpanRecord

MAX_ATTRIBUTE_CHARS = 200


@dataclass(frozen=True)
class WaterfallRow:
    """One span. start_ms: from the trace's first start; offset_pct, width_pct: of the trace's
    duration (0-100); attributes: (name, value as text, cut at MAX_ATTRIBUTE_CHARS)."""

    name: str
    span_id: str
    depth: int
    start_ms: float
    duration_ms: float
    offset_pct: float
    width_pct: float
    error: bool
    attributes: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Waterfall:
    trace_id: str
    duration_ms: float
    rows: tuple[WaterfallRow, ...]


def waterfall(trace_id: str, spans: Sequence[SpanRecord]) -> Waterfall:
    """The rows of `spans` (one trace's): roots are spans whose parent is not among them."""
    finished = [s for s in spans if s.start_ns is not None]
    if not finished:
        return Waterfall(trace_id, 0.0, ())
    first = min(s.start_ns or 0 for s in finished)
    last = max((s.end_ns or s.start_ns or 0) for s in finished)
    total = max(last - first, 1)
    ids = {s.span_id for s in finished}
    children: dict[int | None, list[SpanRecord]] = {}
    for s in finished:
        parent = s.parent_id if s.parent_id in ids else None
        children.setdefault(parent, []).append(s)
    rows: list[WaterfallRow] = []

    def visit(parent: int | None, depth: int) -> None:
        for s in sorted(children.get(parent, ()), key=lambda x: (x.start_ns or 0, x.end_ns or 0)):
            start = (s.start_ns or 0) - first
            duration = max((s.end_ns or s.start_ns or 0) - (s.start_ns or 0), 0)
            rows.append(WaterfallRow(
                name=s.name, span_id=format(s.span_id, "016x"), depth=depth,
                start_ms=start / 1e6, duration_ms=duration / 1e6,
                offset_pct=round(100.0 * start / total, 3), width_pct=round(max(100.0 * duration / total, 0.2), 3),
                error=s.error, attributes=tuple((k, _text(v)) for k, v in s.attributes)))
            visit(s.span_id, depth + 1)

    visit(None, 0)
    return Waterfall(trace_id, total / 1e6, tuple(rows))


def _text(value: object) -> str:
    text = ", ".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)
    return text if len(text) <= MAX_ATTRIBUTE_CHARS else text[:MAX_ATTRIBUTE_CHARS] + "…"
