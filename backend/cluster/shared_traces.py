"""Traces shared by several server processes through Redis (with REDIS_URL, when spans are not
exported over OTLP): every process writes its finished spans to Redis, so the admin's waterfall
(web/trace_routes.py) served by any process finds a reply's trace whichever process made it.

Layout: ``crescent:trace:<trace_id>``, a list of span records (backend.trace_store.SpanRecord
as JSON), its first MAX_SPANS_PER_TRACE spans and its root kept, expiring TRACE_TTL_S after its last span; and
``crescent:traces``, a sorted set of trace ids scored by first export time, trimmed to the
newest `max_traces` (the trimmed traces' lists are deleted). Writes run on the tracer's batch
thread (tracing.add_exporter), never on the event loop; a Redis error drops that batch from the
shared store (logged; the process's own store still has it).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence

import redis
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from backend.cluster.redis_link import RedisLink, RedisUnavailable
from backend.trace_store import MAX_SPANS_PER_TRACE, SpanRecord

log = logging.getLogger(__name__)

TRACE_TTL_S = 24 * 3600


class SharedTraces(SpanExporter):
    """A SpanExporter writing to Redis, and the reader of what every process wrote.

    Args:
        link: the process's RedisLink (its sync client is used: export runs on a thread).
        max_traces: how many traces the shared store keeps (Settings.trace_store_size).
    """

    def __init__(self, link: RedisLink, max_traces: int) -> None:
        if max_traces < 1:
            raise ValueError("the shared trace store holds at least one trace")
        self._link = link
        self.max_traces = max_traces
        self._index = link.key("traces")

    def _key(self, trace_id: str) -> str:
        return self._link.key("trace", trace_id)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        # trace id -> (spans with a parent, roots): a trace past MAX_SPANS_PER_TRACE keeps its
        # first spans and always its root (pushed after the trim; it ends last), as TraceStore.
        by_trace: dict[str, tuple[list[str], list[str]]] = {}
        for span in spans:
            record = SpanRecord.of(span)
            children, roots = by_trace.setdefault(record.trace_id, ([], []))
            (roots if record.parent_id is None else children).append(json.dumps(record.to_json(), ensure_ascii=False))
        now = time.time()
        try:
            with self._link.sync.pipeline(transaction=False) as pipe:
                for trace_id, (children, roots) in by_trace.items():
                    key = self._key(trace_id)
                    if children:
                        pipe.rpush(key, *children)
                        pipe.ltrim(key, 0, MAX_SPANS_PER_TRACE - 1)
                    if roots:
                        pipe.rpush(key, *roots)
                    pipe.expire(key, TRACE_TTL_S)
                    pipe.zadd(self._index, {trace_id: now}, nx=True)
                pipe.expire(self._index, TRACE_TTL_S)
                pipe.execute()
            self._trim()
        except redis.RedisError as exc:
            log.warning("%d spans not written to the shared trace store (%s)", len(spans), exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def _trim(self) -> None:
        sync = self._link.sync
        excess = int(sync.zcard(self._index)) - self.max_traces
        if excess <= 0:
            return
        oldest = [tid.decode() if isinstance(tid, bytes) else str(tid)
                  for tid, _ in sync.zpopmin(self._index, excess)]
        if oldest:
            sync.delete(*(self._key(tid) for tid in oldest))

    def records(self, trace_id: str) -> list[SpanRecord] | None:
        """The spans of `trace_id` that any process wrote, by start time; None if none.
        Blocking (call from a worker thread). Raises RedisUnavailable. A record that does not
        parse is skipped (logged)."""
        try:
            raw = self._link.sync.lrange(self._key(trace_id), 0, -1)
        except redis.RedisError as exc:
            raise RedisUnavailable() from exc
        records = []
        for item in raw:
            try:
                records.append(SpanRecord.from_json(json.loads(item)))
            except (ValueError, KeyError, TypeError):
                log.warning("an unreadable span record in the shared trace %s", trace_id)
        if not records:
            return None
        return sorted(records, key=lambda r: r.start_ns or 0)

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
