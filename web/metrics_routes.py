"""``GET /metrics``: the app's Prometheus metrics (the text exposition format).

Who may read them: a request with ``Authorization: Bearer <CRESCENT_METRICS_TOKEN>`` (for the
Prometheus scraper; compared in constant time; only when the token is configured), or a logged-in
admin's session (for a person looking). Anyone else: 401 without a session (``WWW-Authenticate:
Bearer``), 403 for a session that is not an admin's. A wrong bearer token is a 401 even with an
admin's cookie, so a misconfigured scraper fails loudly.
"""

from __future__ import annotations

import hmac

from prometheus_client import CONTENT_TYPE_LATEST
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from web.session import bearer_token, current_user
from web.state import app_state

def token_matches(provided: str, expected: str | None) -> bool:
    """Constant-time comparison; never true when no token is configured."""
    if not expected:
        return False
    return hmac.compare_digest(provided.encode("utf-8"), expected.encode("utf-8"))


def _refuse(status: int, message: str) -> Response:
    headers = {"Cache-Control": "no-store"}
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="metrics"'
    return PlainTextResponse(message + "\n", status_code=status, headers=headers)


async def metrics(request: Request) -> Response:
    state = app_state(request)
    provided = bearer_token(request)
    if provided is not None:
        if not token_matches(provided, state.settings.metrics_token):
            return _refuse(401, "invalid metrics token")
    else:
        user = await current_user(request)
        if user is None:
            return _refuse(401, "log in as an admin or send Authorization: Bearer <CRESCENT_METRICS_TOKEN>")
        if not user.is_admin:
            return _refuse(403, "metrics are for administrators")
    body = await run_in_threadpool(state.metrics.render)
    return Response(body, media_type=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})


routes = [Route("/metrics", metrics, methods=["GET"])]
