"""Traces: one OpenTelemetry trace per chat turn and per /v1 request (opentelemetry-sdk).

Spans of a chat turn, under one trace id, root first: ``chat.turn`` (web/ws.py, from the frame's
receipt to the last event) > ``ws.receive``, ``persistence.read``, ``retrieval``,
``prompt.assemble``, ``admission``, ``persistence.store_question`` (backend/chat/opening.py) and
``chat.reply`` (backend/chat/service.py) > ``engine.queue``, ``engine.prefill`` >
``engine.prefill.chunk`` (one per prefill step), ``engine.decode``, ``persistence.final_write``;
an agent reply's ``chat.reply`` holds ``agent.prompt_fit``, then per model step ``agent.model_step``
> ``engine.*`` and per tool call ``agent.tool_call`` (backend/agent/runs.py), in the run's order;
a planned run adds ``agent.plan``, ``agent.candidates`` (the calculator's candidates written) and
``agent.quote`` (a fact quoted from the documents), and a step choosing among candidates has one
``agent.candidate`` per scored request (record_request) instead of ``engine.*``.
A /v1 request: ``v1.request`` > ``prompt.assemble``, ``admission``, ``engine.*``.

Engine spans are made after the request ends, with explicit start and end times, from the
engine's own timings (backend.generator.EngineTimeline, filled by backend/engine_adapter.py): the
engine knows nothing of OpenTelemetry and no span work is done per token.

Where spans go: over OTLP/HTTP (protobuf) when ``OTEL_EXPORTER_OTLP_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set (the SDK's standard variables configure the
exporter: headers, timeout...), batched; otherwise into a :class:`TraceStore`, a ring buffer of
the last ``Settings.trace_store_size`` traces that the admin waterfall reads.

The current span travels in ``contextvars`` (tasks and ``asyncio.to_thread`` copy it), and
:func:`install_log_records` gives every log record ``trace_id`` (32 hex digits, "" outside a
trace) and ``trace`` (" trace_id=<id>" or "") for the log format (web/__main__.py).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from backend.generator import EngineTimeline
from backend.trace_store import DEFAULT_STORE_SIZE, MAX_SPANS_PER_TRACE, TraceStore  # noqa: F401 (re-exported)

log = logging.getLogger(__name__)

TRACER_NAME = "crescent"
TRACE_ID_RE = re.compile(r"^[0-9a-f]{32}$")
T = TypeVar("T")
OTLP_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


@dataclass
class Tracing:
    """The process's tracer provider and where its spans go (`store` None: exported over OTLP)."""

    provider: TracerProvider
    store: TraceStore | None
    exporter: SpanExporter

    @property
    def tracer(self) -> trace.Tracer:
        return self.provider.get_tracer(TRACER_NAME)


def otlp_endpoint(env: Mapping[str, str] | None = None) -> str | None:
    """The OTLP endpoint the SDK's environment variables name, or None."""
    env = os.environ if env is None else env
    for name in OTLP_ENDPOINT_VARS:
        if env.get(name, "").strip():
            return env[name].strip()
    return None


def build(store_size: int = DEFAULT_STORE_SIZE, env: Mapping[str, str] | None = None) -> Tracing:
    """A provider exporting over OTLP/HTTP when the environment names an endpoint (batched, in
    a background thread), else into a new TraceStore of `store_size` traces."""
    provider = TracerProvider()
    if otlp_endpoint(env) is not None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter: SpanExporter = OTLPSpanExporter()  # endpoint, headers, timeout: OTEL_* variables
        provider.add_span_processor(BatchSpanProcessor(exporter))
        return Tracing(provider, None, exporter)
    store = TraceStore(store_size)
    provider.add_span_processor(SimpleSpanProcessor(store))
    return Tracing(provider, store, store)


_current = build(env={})  # in memory until configure(): importing never starts an exporter thread


def configure(store_size: int = DEFAULT_STORE_SIZE, env: Mapping[str, str] | None = None) -> Tracing:
    """Replace the process's tracing (web/app.py calls it at start-up); the old provider is
    flushed and shut down. Returns the new one."""
    global _current
    old, _current = _current, build(store_size, env)
    try:
        old.provider.shutdown()
    except Exception:
        log.exception("shutting down the previous tracer provider failed")
    install_log_records()
    return _current


def add_exporter(exporter: SpanExporter, schedule_delay_ms: int = 500) -> None:
    """Also send the current provider's spans to `exporter`, batched on a background thread
    (e.g. backend.cluster.shared_traces, so that every process's waterfall sees every trace)."""
    _current.provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=schedule_delay_ms))


def current() -> Tracing:
    return _current


def store() -> TraceStore | None:
    """The in-memory store the waterfall reads (None when spans go over OTLP)."""
    return _current.store


def tracer() -> trace.Tracer:
    return _current.tracer


def start_root(name: str, attributes: Mapping[str, Any] | None = None) -> Span:
    """A new trace's root span (a server span, not made current): the caller ends it."""
    from opentelemetry.context import Context

    return tracer().start_span(name, context=Context(), kind=SpanKind.SERVER, attributes=dict(attributes or {}))


def use(root: Span) -> Any:
    """Make `root` current for a block (a task created inside inherits it); the block's end
    does not end it."""
    return trace.use_span(root, end_on_exit=False)


async def iterate_within(root: Span, items: AsyncIterator[T]) -> AsyncIterator[T]:
    """`items`, each step run with `root` current, and nothing current between steps: for a
    response body that the server iterates after the handler has returned (a streamed /v1
    reply), so its log lines keep the request's trace id. The context is attached and detached
    around each step, never held across a yield (an async generator resumed or closed from
    another context would otherwise fail to detach). Closing this closes `items` the same way."""
    ctx = trace.set_span_in_context(root)
    try:
        while True:
            token = otel_context.attach(ctx)
            try:
                item = await anext(items)
            except StopAsyncIteration:
                return
            finally:
                otel_context.detach(token)
            yield item
    finally:
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            token = otel_context.attach(ctx)
            try:
                await aclose()
            finally:
                otel_context.detach(token)


def current_span() -> Span:
    """The current span (an invalid one outside a trace)."""
    return trace.get_current_span()


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[Span]:
    """A child of the current span, current while the block runs; an exception escaping the
    block is recorded on it and sets its status to error."""
    with tracer().start_as_current_span(name, attributes={k: v for k, v in attributes.items() if v is not None}) as s:
        yield s


def current_trace_id() -> str | None:
    """The current trace's id (32 lowercase hex digits), or None outside a trace."""
    ctx = trace.get_current_span().get_span_context()
    return trace.format_trace_id(ctx.trace_id) if ctx.is_valid else None


def trace_id_of(span: Span) -> str:
    """`span`'s trace id, 32 lowercase hex digits."""
    return trace.format_trace_id(span.get_span_context().trace_id)


def valid_trace_id(value: object) -> bool:
    return isinstance(value, str) and TRACE_ID_RE.fullmatch(value) is not None and value != "0" * 32


def record_engine(timeline: EngineTimeline | None, *, sample: int = 0, finish_reason: str | None = None,
                  prompt_tokens: int | None = None, completion_tokens: int | None = None,
                  parent: Span | None = None) -> None:
    """The engine's part of one finished request (one sample) as spans under the current span,
    with the engine's own times: engine.queue (arrival to first scheduled step),
    engine.prefill with one engine.prefill.chunk per step that computed prompt tokens, and
    engine.decode (first token to finish). Their parent: the current span, else `parent`. No-op
    for None or outside a trace."""
    if timeline is None:
        return
    current = trace.get_current_span()
    if not current.get_span_context().is_valid:
        if parent is None or not parent.get_span_context().is_valid:
            return
        current = parent
    with trace.use_span(current, end_on_exit=False):
        _engine_spans(timeline, sample, finish_reason, prompt_tokens, completion_tokens)


def record_request(name: str, timeline: EngineTimeline | None, attributes: Mapping[str, Any], *,
                   finish_reason: str | None = None, prompt_tokens: int | None = None,
                   completion_tokens: int | None = None) -> None:
    """One finished engine request as a span `name` (its arrival to its finish, with
    `attributes`) under the current span, its engine spans (record_engine's) under it: for a
    step that ran several requests side by side (backend.agent.choice's candidates). No-op for
    None or outside a trace."""
    if timeline is None or not trace.get_current_span().get_span_context().is_valid:
        return
    request = tracer().start_span(name, start_time=timeline.arrival_ns,
                                  attributes={k: v for k, v in attributes.items() if v is not None})
    with trace.use_span(request, end_on_exit=False):
        _engine_spans(timeline, 0, finish_reason, prompt_tokens, completion_tokens)
    request.end(end_time=timeline.finished_ns or time.time_ns())


def _engine_spans(timeline: EngineTimeline, sample: int, finish_reason: str | None, prompt_tokens: int | None,
                  completion_tokens: int | None) -> None:
    t = tracer()
    common = {"sample": sample}
    end = timeline.finished_ns or time.time_ns()
    if timeline.scheduled_ns is not None or timeline.finished_ns is not None:
        queued_until = timeline.scheduled_ns or end
        t.start_span("engine.queue", start_time=timeline.arrival_ns, attributes=common).end(end_time=queued_until)
    chunks = timeline.prefill_chunks
    if chunks:
        prefill = t.start_span("engine.prefill", start_time=chunks[0][0], attributes={
            **common, "prompt_tokens": prompt_tokens or 0, "chunks": len(chunks)})
        ctx = trace.set_span_in_context(prefill)
        for i, (start, stop, tokens) in enumerate(chunks):
            t.start_span("engine.prefill.chunk", context=ctx, start_time=start,
                         attributes={"chunk": i, "tokens": tokens}).end(end_time=stop)
        prefill.end(end_time=chunks[-1][1])
    if timeline.first_token_ns is not None:
        decode = t.start_span("engine.decode", start_time=timeline.first_token_ns, attributes={
            **common, "completion_tokens": completion_tokens or 0, "finish_reason": finish_reason or ""})
        if finish_reason == "error":
            decode.set_status(Status(StatusCode.ERROR))
        decode.end(end_time=end)


# --- log records -----------------------------------------------------------------------------

_log_lock = threading.Lock()
_installed = False


def install_log_records() -> None:
    """Give every log record from now on `trace_id` and `trace` (idempotent, process-wide)."""
    global _installed
    with _log_lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            trace_id = current_trace_id()
            record.trace_id = trace_id or ""
            record.trace = f" trace_id={trace_id}" if trace_id else ""
            return record

        logging.setLogRecordFactory(factory)
        _installed = True


install_log_records()
