"""Domain errors to HTTP statuses, error pages, error frames and WebSocket close codes.

The one place in the project that knows about HTTP: `backend` raises typed
:class:`backend.errors.DomainError` / :class:`backend.generator.GenerationError` subclasses with
stable codes, and every route and the WebSocket handler translate them here.

JSON errors (under ``/api/`` and ``/admin/api/``, and for the WebSocket) have the shape
``{"error": {"code": str, "message": str}}``; everything else gets the ``error.html`` page.
"""

from __future__ import annotations

import html
import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from backend.errors import DomainError
from backend.generator import GenerationError

log = logging.getLogger(__name__)

# WebSocket close codes (4000-4999 are free for applications, RFC 6455 section 7.4.2); the last
# three digits mirror the HTTP status a page would get.
WS_CLOSE_UNAUTHORIZED = 4401
WS_CLOSE_FORBIDDEN_ORIGIN = 4403
# While the model loads (web/startup.py): "Try Again Later" (RFC 6455 section 7.4.1, IANA).
WS_CLOSE_TRY_AGAIN_LATER = 1013

# Error codes the web layer itself produces (not raised by the backend).
CODE_BAD_FRAME = "bad_frame"
CODE_UNAUTHENTICATED = "unauthenticated"
CODE_FORBIDDEN_ORIGIN = "forbidden_origin"
CODE_TOO_MANY = "too_many_requests"
CODE_INTERNAL = "internal"

# Status per stable error code; codes not listed map to 400 (a domain error is the client's input
# meeting a rule, unless said otherwise).
_STATUS_BY_CODE: dict[str, int] = {
    "not_found": 404,
    "invalid_input": 400,
    "invalid_credentials": 401,
    "username_taken": 409,
    "busy": 409,
    "in_progress": 409,
    "invalid_params": 400,
    "prompt_too_long": 400,
    "unavailable": 503,
    "generation_error": 500,
    "signup_closed": 403,
    "account_pending": 403,
    "account_disabled": 403,
    "throttled": 429,
    "csrf_failed": 403,
    "forbidden": 403,
    # Documents (issue 6, backend.rag.errors).
    "document_too_large": 413,
    "unsupported_document": 415,
    "too_many_documents_processing": 429,
    "unreadable_document": 422,
    "import_too_large": 413,  # backend.conversation_import
    CODE_BAD_FRAME: 400,
    CODE_UNAUTHENTICATED: 401,
    CODE_FORBIDDEN_ORIGIN: 403,
    CODE_TOO_MANY: 429,
    CODE_INTERNAL: 500,
}

_TITLE_BY_STATUS: dict[int, str] = {
    400: "Bad request",
    401: "Not logged in",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Too large",
    415: "Unsupported file type",
    422: "Unreadable file",
    429: "Too many requests",
    500: "Server error",
    503: "Not ready",
}


def status_for_code(code: str) -> int:
    """HTTP status for a stable error code (``"not_found"`` -> 404, unknown codes -> 400)."""
    return _STATUS_BY_CODE.get(code, 400)


def error_code(exc: BaseException) -> str:
    """The stable code of a domain or generation error; ``"internal"`` for anything else."""
    if isinstance(exc, (DomainError, GenerationError)):
        return str(getattr(exc, "code", CODE_INTERNAL))
    return CODE_INTERNAL


def error_message(exc: BaseException) -> str:
    """A message safe to show the user. Unexpected exceptions never leak their text."""
    if isinstance(exc, DomainError):
        return str(getattr(exc, "message", None) or exc)
    if isinstance(exc, GenerationError):
        return str(exc) or "The model could not generate a reply."
    return "Something went wrong on the server."


def wants_json(conn: HTTPConnection) -> bool:
    """JSON for the API (and clients that ask only for JSON); HTML pages for browsers."""
    if conn.url.path.startswith(("/api/", "/admin/api/")):
        return True
    accept = conn.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def error_response(
    request: Request, status_code: int, code: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    """An error as JSON (``{"error": {"code", "message"}}``) or as the ``error.html`` page."""
    if wants_json(request):
        return JSONResponse(
            {"error": {"code": code, "message": message}}, status_code=status_code, headers=headers
        )
    title = _TITLE_BY_STATUS.get(status_code, "Error")
    app_state = getattr(request.app.state, "crescent", None) if "app" in request.scope else None
    templates = getattr(app_state, "templates", None)
    if templates is not None:
        try:
            return templates.TemplateResponse(
                request,
                "error.html",
                {"status_code": status_code, "title": title, "message": message},
                status_code=status_code,
                headers=headers,
            )
        except Exception:  # a broken error template must not hide the original error
            log.exception("rendering error.html failed")
    body = (
        "<!doctype html><html lang=en><meta charset=utf-8>"
        f"<title>{status_code} {html.escape(title)}</title>"
        f"<h1>{status_code} {html.escape(title)}</h1><p>{html.escape(message)}</p>"
        '<p><a href="/">Back to Crescent</a></p></html>'
    )
    return HTMLResponse(body, status_code=status_code, headers=headers)


def error_frame(
    code: str, message: str, *, client_msg_id: str | None = None, message_id: str | None = None
) -> dict[str, Any]:
    """A server -> client ``error`` frame; the optional ids are included only when known."""
    frame: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if client_msg_id is not None:
        frame["client_msg_id"] = client_msg_id
    if message_id is not None:
        frame["message_id"] = message_id
    return frame


async def _look_up_page_user(request: Request) -> None:
    """Before an HTML error page: find the logged-in user, so the page wears his theme and nav."""
    if wants_json(request) or getattr(request.app.state, "crescent", None) is None:
        return
    from web.session import current_user  # local: web.session imports web.state, which is heavier

    try:
        await current_user(request)
    except Exception:  # the error page must render even when the database does not answer
        log.debug("no user for the error page", exc_info=True)


async def domain_error_handler(request: Request, exc: Exception) -> Response:
    await _look_up_page_user(request)
    code = error_code(exc)
    retry_after = getattr(exc, "retry_after_s", None)
    headers = {"Retry-After": str(int(retry_after))} if isinstance(retry_after, (int, float)) else None
    return error_response(request, status_for_code(code), code, error_message(exc), headers=headers)


async def http_exception_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    await _look_up_page_user(request)
    code = {401: CODE_UNAUTHENTICATED, 404: "not_found"}.get(exc.status_code, "http_error")
    message = exc.detail if isinstance(exc.detail, str) else _TITLE_BY_STATUS.get(exc.status_code, "")
    return error_response(request, exc.status_code, code, message, headers=exc.headers)


async def server_error_handler(request: Request, exc: Exception) -> Response:
    """Starlette's ServerErrorMiddleware calls this outside the user middleware stack, so the
    security headers are added here directly."""
    from web.security import SECURITY_HEADERS  # local: security imports this module

    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    response = error_response(request, 500, CODE_INTERNAL, error_message(exc))
    response.headers.update(SECURITY_HEADERS)
    return response


EXCEPTION_HANDLERS = {
    DomainError: domain_error_handler,
    GenerationError: domain_error_handler,
    HTTPException: http_exception_handler,
    Exception: server_error_handler,
}
