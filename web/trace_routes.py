"""The admin's waterfall of one trace: ``GET /admin/traces/{trace_id}``.

Anonymous -> 303 to /login; a non-admin -> 403 (as every admin page); a trace id that is not 32
lowercase hex digits matches no route (`{trace_id:id}`, web/inputs.py) -> 404; a trace neither this process's store nor (with REDIS_URL) the shared store in Redis keeps
(forgotten by the bounded stores, or exported over OTLP) -> 404 saying so. Server-side HTML: bars placed
by start and duration, names and attributes escaped by the template; no script.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from backend import tracing
from backend.cluster.redis_link import RedisUnavailable
from backend.trace_view import waterfall
import web.inputs  # noqa: F401  (registers the {name:id} path convertor)
from web.errors import error_response
from web.session import admin_or_error
from web.state import app_state


async def trace_page(request: Request) -> Response:
    user = await admin_or_error(request)
    if isinstance(user, Response):
        return user
    trace_id = request.path_params["trace_id"]
    if not tracing.valid_trace_id(trace_id):
        return error_response(request, 404, "not_found", "A trace id is 32 lowercase hexadecimal digits.")
    store = tracing.store()
    spans = store.records(trace_id) if store is not None else None
    shared = app_state(request).shared_traces
    if not spans and shared is not None:
        try:
            spans = await run_in_threadpool(shared.records, trace_id)
        except RedisUnavailable:
            spans = None
    if not spans:
        where = ("the last traces only are kept; this one was forgotten"
                 + ("" if shared is not None else " or made by another server process")
                 if store is not None else "traces are exported over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT): "
                 "open it in your tracing backend")
        return error_response(request, 404, "not_found", f"No trace {trace_id} here: {where}.")
    response = app_state(request).templates.TemplateResponse(
        request, "trace.html", {"user": user, "waterfall": waterfall(trace_id, spans)})
    response.headers["Cache-Control"] = "no-store"
    return response


routes = [Route("/admin/traces/{trace_id:id}", trace_page, methods=["GET"])]
