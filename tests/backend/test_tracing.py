"""backend.tracing: the bounded store, the OTLP choice (and a real protobuf POST to a loopback
receiver), engine spans from the engine's timings, log records, the waterfall layout."""

from __future__ import annotations

import json

import logging
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from backend import trace_store, tracing
from backend.generator import EngineTimeline
from backend.settings import Settings, SettingsError
from backend.trace_store import SpanRecord
from backend.trace_view import waterfall


@pytest.fixture
def fresh() -> Iterator[tracing.Tracing]:
    """A fresh in-memory tracing for the test (the process's, replaced)."""
    yield tracing.configure(8, env={})
    tracing.configure(env={})


def one_trace(name: str) -> str:
    root = tracing.start_root(name)
    with tracing.use(root), tracing.span("child"):
        pass
    root.end()
    return tracing.trace_id_of(root)


def test_the_store_keeps_the_last_n_traces_only():
    store = tracing.configure(3, env={}).store
    try:
        ids = [one_trace(f"t{i}") for i in range(5)]
    finally:
        tracing.configure(env={})
    assert store.trace_ids() == ids[2:]
    assert store.get(ids[0]) is None and store.get(ids[1]) is None
    assert [s.name for s in store.get(ids[4])] == ["t4", "child"]


def test_a_trace_keeps_at_most_max_spans(monkeypatch, fresh):
    monkeypatch.setattr(trace_store, "MAX_SPANS_PER_TRACE", 5)
    root = tracing.start_root("big")
    with tracing.use(root):
        for _ in range(20):
            with tracing.span("s"):
                pass
    root.end()
    kept = fresh.store.get(tracing.trace_id_of(root))
    assert len(kept) == 6  # the first 5, and the root (ended last) over the cap
    assert [s.name for s in kept].count("big") == 1 and kept[0].name == "big"


def test_the_store_size_setting_has_one_home_and_a_range():
    assert Settings.from_env({"CRESCENT_TRACE_STORE_SIZE": "7"}).trace_store_size == 7
    assert Settings().trace_store_size == 200
    for bad in ("0", "-1", "10001"):
        with pytest.raises(SettingsError):
            Settings.from_env({"CRESCENT_TRACE_STORE_SIZE": bad})
    assert tracing.configure(7, env={}).store.max_traces == 7
    tracing.configure(env={})


def test_otlp_is_chosen_when_the_endpoint_variable_is_set():
    chosen = tracing.build(5, env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    assert isinstance(chosen.exporter, OTLPSpanExporter) and chosen.store is None
    chosen.provider.shutdown()
    assert isinstance(tracing.build(5, env={"OTEL_EXPORTER_OTLP_ENDPOINT": " "}).exporter, tracing.TraceStore)
    assert isinstance(tracing.build(5, env={}).exporter, tracing.TraceStore)


def test_spans_reach_a_loopback_otlp_receiver_as_protobuf(monkeypatch):
    received: list[tuple[str, str, bytes]] = []
    got = threading.Event()

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, self.headers["Content-Type"], body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()
            got.set()

        def log_message(self, *args) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        # The SDK's own variables configure the exporter (endpoint + /v1/traces).
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
        configured = tracing.configure(3)
        assert tracing.store() is None
        trace_id = one_trace("exported")
        assert configured.provider.force_flush(10_000)
        assert got.wait(10)
    finally:
        tracing.configure(env={})
        server.shutdown()
    path, content_type, body = received[0]
    assert path == "/v1/traces" and content_type == "application/x-protobuf"
    request = ExportTraceServiceRequest.FromString(body)
    spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert {s.name for s in spans} == {"exported", "child"}
    assert {s.trace_id.hex() for s in spans} == {trace_id}


def test_engine_spans_take_the_engines_times_and_nest(fresh):
    base = 1_700_000_000_000_000_000
    ms = 1_000_000
    timeline = EngineTimeline(arrival_ns=base, scheduled_ns=base + 5 * ms, first_token_ns=base + 30 * ms,
                              finished_ns=base + 80 * ms,
                              prefill_chunks=((base + 5 * ms, base + 15 * ms, 16), (base + 15 * ms, base + 30 * ms, 8)))
    root = tracing.start_root("r")
    with tracing.use(root):
        tracing.record_engine(timeline, finish_reason="stop", prompt_tokens=24, completion_tokens=9)
    root.end()
    spans = {s.name: s for s in fresh.store.get(tracing.trace_id_of(root))}
    chunks = [s for s in fresh.store.get(tracing.trace_id_of(root)) if s.name == "engine.prefill.chunk"]
    assert (spans["engine.queue"].start_time, spans["engine.queue"].end_time) == (base, base + 5 * ms)
    assert (spans["engine.prefill"].start_time, spans["engine.prefill"].end_time) == (base + 5 * ms, base + 30 * ms)
    assert [(c.start_time, c.end_time, c.attributes["tokens"]) for c in chunks] == [
        (base + 5 * ms, base + 15 * ms, 16), (base + 15 * ms, base + 30 * ms, 8)]
    assert (spans["engine.decode"].start_time, spans["engine.decode"].end_time) == (base + 30 * ms, base + 80 * ms)
    assert spans["engine.decode"].attributes["completion_tokens"] == 9
    root_id = root.get_span_context().span_id
    assert all(spans[n].parent.span_id == root_id for n in ("engine.queue", "engine.prefill", "engine.decode"))
    assert all(c.parent.span_id == spans["engine.prefill"].context.span_id for c in chunks)


def test_engine_spans_use_the_given_parent_outside_a_span_and_nothing_without_one(fresh):
    timeline = EngineTimeline(arrival_ns=1, scheduled_ns=2, first_token_ns=3, finished_ns=4, prefill_chunks=((2, 3, 1),))
    tracing.record_engine(timeline)  # no current span, no parent: no trace at all
    assert fresh.store.trace_ids() == []
    root = tracing.start_root("r")
    tracing.record_engine(timeline, parent=root)
    root.end()
    names = [s.name for s in fresh.store.get(tracing.trace_id_of(root))]
    assert sorted(names) == sorted(["r", "engine.queue", "engine.prefill", "engine.prefill.chunk", "engine.decode"])


def test_log_records_carry_the_trace_id_inside_a_trace_only(fresh, caplog):
    caplog.set_level(logging.INFO)
    logger = logging.getLogger("tests.tracing")
    logger.info("outside")
    root = tracing.start_root("r")
    with tracing.use(root):
        logger.info("inside")
    root.end()
    outside, inside = caplog.records[-2:]
    assert outside.trace_id == "" and outside.trace == ""
    assert inside.trace_id == tracing.trace_id_of(root)
    from web.__main__ import log_format

    line = logging.Formatter(log_format()).format(inside)
    assert line.endswith(f"INFO tests.tracing trace_id={inside.trace_id}: inside")
    assert logging.Formatter(log_format()).format(outside).endswith("INFO tests.tracing: outside")


def test_trace_ids_are_checked_for_format():
    assert tracing.valid_trace_id("0123456789abcdef" * 2)
    for bad in ("0" * 32, "0123456789ABCDEF" * 2, "abc", "../" + "a" * 29, None, "a" * 33):
        assert not tracing.valid_trace_id(bad)


def test_waterfall_rows_in_tree_order_placed_by_start_and_duration(fresh):
    base, ms = 10**18, 10**6
    root = tracing.start_root("root", {"hostile": "<b>"})
    root_ctx = tracing.trace.set_span_in_context(root)
    t = tracing.tracer()
    b = t.start_span("b", context=root_ctx, start_time=base + 50 * ms)
    b.end(end_time=base + 100 * ms)
    a = t.start_span("a", context=root_ctx, start_time=base)
    t.start_span("a.1", context=tracing.trace.set_span_in_context(a), start_time=base + 10 * ms).end(end_time=base + 20 * ms)
    a.end(end_time=base + 50 * ms)
    root.end()
    spans = [s for s in fresh.store.records(tracing.trace_id_of(root)) if s.name != "root"]
    view = waterfall("x", spans)  # root's parent is not among them: a and b are the roots here
    assert [(r.name, r.depth) for r in view.rows] == [("a", 0), ("a.1", 1), ("b", 0)]
    assert [(r.offset_pct, r.width_pct) for r in view.rows] == [(0.0, 50.0), (10.0, 10.0), (50.0, 50.0)]
    assert view.duration_ms == 100.0


def test_a_span_record_survives_json_as_the_waterfall_reads_it(fresh):
    root = tracing.start_root("root", {"tokens": 3, "ok": True, "ratio": 0.5, "ids": ("a", "b"), "text": "<b>"})
    with tracing.use(root), tracing.span("child") as child:
        child.set_status(tracing.Status(tracing.StatusCode.ERROR))
    root.end()
    records = fresh.store.records(tracing.trace_id_of(root))
    again = [SpanRecord.from_json(json.loads(json.dumps(r.to_json()))) for r in records]
    assert again == records
    assert [r.parent_id for r in again] == [None, again[0].span_id] and again[1].error and not again[0].error
    assert dict(again[0].attributes) == {"tokens": 3, "ok": True, "ratio": 0.5, "ids": ("a", "b"), "text": "<b>"}
