"""Finished spans kept for the admin's waterfall: :class:`TraceStore`, the last N traces in this
process's memory (an OpenTelemetry SpanExporter), and :class:`SpanRecord`, the plain form of a
span that the waterfall draws and that backend.cluster.shared_traces keeps in Redis.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import StatusCode

DEFAULT_STORE_SIZE = 200
MAX_SPANS_PER_TRACE = 512  # a trace past this keeps its first spans, and its root (ended last)
AttributeValue = str | bool | int | float | tuple[Any, ...]


@dataclass(frozen=True)
class SpanRecord:
    """One finished span. span_id, parent_id: 64-bit ids (parent None: a root); start_ns,
    end_ns: Unix nanoseconds (end None: not ended); error: its status is ERROR; attributes:
    (name, value) pairs, values as OpenTelemetry gives them (str, bool, int, float or a tuple)."""

    name: str
    trace_id: str
    span_id: int
    parent_id: int | None
    start_ns: int | None
    end_ns: int | None
    error: bool
    attributes: tuple[tuple[str, AttributeValue], ...]

    @classmethod
    def of(cls, span: ReadableSpan) -> SpanRecord:
        return cls(name=span.name, trace_id=trace.format_trace_id(span.context.trace_id),
                   span_id=span.context.span_id, parent_id=span.parent.span_id if span.parent is not None else None,
                   start_ns=span.start_time, end_ns=span.end_time, error=span.status.status_code is StatusCode.ERROR,
                   attributes=tuple(sorted((str(k), v) for k, v in (span.attributes or {}).items())))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "trace_id": self.trace_id, "span_id": self.span_id, "parent_id": self.parent_id,
                "start_ns": self.start_ns, "end_ns": self.end_ns, "error": self.error,
                "attributes": [[k, list(v) if isinstance(v, tuple) else v] for k, v in self.attributes]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpanRecord:
        """Raises KeyError / TypeError / ValueError for a malformed record."""
        def number(value: Any) -> int | None:
            return None if value is None else int(value)

        return cls(name=str(data["name"]), trace_id=str(data["trace_id"]), span_id=int(data["span_id"]),
                   parent_id=number(data["parent_id"]), start_ns=number(data["start_ns"]), end_ns=number(data["end_ns"]),
                   error=bool(data["error"]),
                   attributes=tuple((str(k), tuple(v) if isinstance(v, list) else v) for k, v in data["attributes"]))


class TraceStore(SpanExporter):
    """The last `max_traces` traces' finished spans, in memory (thread-safe). A trace is
    forgotten, oldest first (by its first span's export), when a newer one needs its place.

    Raises ValueError for max_traces < 1."""

    def __init__(self, max_traces: int = DEFAULT_STORE_SIZE) -> None:
        if max_traces < 1:
            raise ValueError("the trace store holds at least one trace")
        self.max_traces = max_traces
        self._traces: OrderedDict[str, list[ReadableSpan]] = OrderedDict()
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            for span in spans:
                trace_id = trace.format_trace_id(span.context.trace_id)
                kept = self._traces.get(trace_id)
                if kept is None:
                    kept = self._traces[trace_id] = []
                    while len(self._traces) > self.max_traces:
                        self._traces.popitem(last=False)
                if len(kept) < MAX_SPANS_PER_TRACE or span.parent is None:
                    kept.append(span)
        return SpanExportResult.SUCCESS

    def get(self, trace_id: str) -> list[ReadableSpan] | None:
        """The spans of `trace_id` (32 lowercase hex digits) by start time, or None if not kept."""
        with self._lock:
            spans = self._traces.get(trace_id)
            return None if spans is None else sorted(spans, key=lambda s: (s.start_time or 0))

    def records(self, trace_id: str) -> list[SpanRecord] | None:
        """get() as SpanRecords."""
        spans = self.get(trace_id)
        return None if spans is None else [SpanRecord.of(s) for s in spans]

    def trace_ids(self) -> list[str]:
        """The kept traces, oldest first."""
        with self._lock:
            return list(self._traces)

    def clear(self) -> None:
        with self._lock:
            self._traces.clear()

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
