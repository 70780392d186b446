"""Search the user's conversations: ``GET /api/search?q=...&limit=20``.

-> ``{"query": str, "results": [{conversation_id, title, title_html, message_id, role,
snippet_html, updated_at, pinned, url}, ...]}``, best first (backend.conversation_search).
``title_html`` and ``snippet_html`` are escaped HTML whose hits are wrapped in ``<mark>``;
``url`` opens the conversation at the message (``/c/{id}#m-{message_id}``). A query without
words gives no results; any text is a valid query. Session only (401 without one); 400
``invalid_input`` for a bad ``limit``.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from backend.conversation_search import MAX_RESULTS, SearchHit
from backend.errors import ValidationFailed
from web.api import to_jsonable
from web.errors import CODE_UNAUTHENTICATED, error_response
from web.inputs import check_text
from web.session import current_user
from web.state import app_state


def message_url(conversation_id: str, message_id: str | None) -> str:
    return f"/c/{conversation_id}" + (f"#m-{message_id}" if message_id else "")


def hit_json(hit: SearchHit) -> dict[str, object]:
    item = to_jsonable(hit)
    del item["score"]
    item["url"] = message_url(hit.conversation_id, hit.message_id)
    return item


async def search(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return error_response(request, 401, CODE_UNAUTHENTICATED, "Log in first.")
    query = check_text("q", request.query_params.get("q", ""))
    raw_limit = request.query_params.get("limit", "20")
    if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= MAX_RESULTS:
        raise ValidationFailed(f"limit must be a whole number from 1 to {MAX_RESULTS}")
    hits = await run_in_threadpool(app_state(request).search.search, user.id, query, int(raw_limit))
    return JSONResponse({"query": query, "results": [hit_json(h) for h in hits]},
                        headers={"Cache-Control": "no-store"})


routes = [Route("/api/search", search, methods=["GET"])]
