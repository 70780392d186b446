"""The admin's pages of agent runs (issue 15), server-rendered, no script:

- ``GET /admin/runs[?page=N]``: recent runs of every user, newest first, 50 a page (user,
  started, status, ending, steps, tool calls, tokens, duration, the trace waterfall's link when
  the reply has a trace id). A page that is not an integer from 1 to 10000 -> 400.
- ``GET /admin/runs/{run_id}``: one run, its steps and each step's tool calls (tool, arguments,
  status, result summary, timings, idempotency key). An unknown id -> 404; a run id that is not
  an id matches no route (``{run_id:id}``, web/inputs.py) -> 404.

Anonymous -> 303 to /login; a non-admin -> 403, as every admin page (web.session.admin_or_error).
Everything the model, a tool or a user wrote (arguments, results, endings, usernames) is text,
escaped by the templates. Reads only: no form, so no CSRF token is needed.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from backend.agent.run_admin import MAX_PAGE
import web.inputs  # noqa: F401  (registers the {name:id} path convertor)
from web.errors import error_response
from web.session import admin_or_error
from web.state import app_state

NO_STORE = {"Cache-Control": "no-store"}


def _page_number(request: Request) -> int | None:
    raw = request.query_params.get("page", "1")
    if not raw.isascii() or not raw.isdigit() or len(raw) > 6:
        return None
    page = int(raw)
    return page if 1 <= page <= MAX_PAGE else None


async def runs_page(request: Request) -> Response:
    user = await admin_or_error(request)
    if isinstance(user, Response):
        return user
    page = _page_number(request)
    if page is None:
        return error_response(request, 400, "invalid_input", f"page must be a whole number from 1 to {MAX_PAGE}.")
    state = app_state(request)
    if state.run_admin is None:
        return error_response(request, 404, "not_found", "This server keeps no agent runs.")
    runs, more = await asyncio.to_thread(state.run_admin.recent, page)
    return state.templates.TemplateResponse(
        request, "admin_runs.html", {"user": user, "runs": runs, "page": page, "more": more}, headers=NO_STORE)


async def run_page(request: Request) -> Response:
    user = await admin_or_error(request)
    if isinstance(user, Response):
        return user
    state = app_state(request)
    detail = (await asyncio.to_thread(state.run_admin.detail, request.path_params["run_id"])
              if state.run_admin is not None else None)
    if detail is None:
        return error_response(request, 404, "not_found", "There is no agent run with this id.")
    return state.templates.TemplateResponse(request, "admin_run.html", {"user": user, "detail": detail},
                                            headers=NO_STORE)


routes = [
    Route("/admin/runs", runs_page, methods=["GET"]),
    Route("/admin/runs/{run_id:id}", run_page, methods=["GET"]),
]
