"""Who is calling: the session cookie (pages, JSON under /api, the WebSocket) and API keys
(``Authorization: Bearer``, for /v1 and /metrics); setting and clearing the cookie; guards.

The cookie holds only an opaque random token; the server keeps the session (a hash of the token)
in the database through :class:`backend.auth.AuthService`. Both lookups return only active users:
a disabled or pending user is anonymous here.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection
from starlette.responses import RedirectResponse, Response

from backend.auth import UserInfo
from backend.settings import Settings
from web.errors import CODE_UNAUTHENTICATED, error_response, wants_json
from web.state import app_state

SESSION_COOKIE = "crescent_session"
USER_STATE_KEY = "crescent_user"  # per-request cache in scope["state"]


def session_token(conn: HTTPConnection) -> str | None:
    """The raw session token from the cookie, or None."""
    return conn.cookies.get(SESSION_COOKIE) or None


async def current_user(conn: HTTPConnection, fresh: bool = False) -> UserInfo | None:
    """The active user of the session cookie, or None (no cookie, unknown, expired, logged out,
    or the user is pending or disabled).

    The lookup is a blocking database query, so it runs in the thread pool; its result is kept
    for the rest of the request (templates read it for the navigation links). fresh: ask the
    database again (a long-lived WebSocket re-checks its session before each send).
    """
    state = conn.scope.setdefault("state", {})
    if USER_STATE_KEY in state and not fresh:
        return state[USER_STATE_KEY]
    token = session_token(conn)
    user = None if token is None else await run_in_threadpool(app_state(conn).auth.user_for_session, token)
    state[USER_STATE_KEY] = user
    return user



async def session_user_or_401(conn: HTTPConnection) -> UserInfo | Response:
    """The session's user, or the 401 `unauthenticated` JSON answer for an API route."""
    user = await current_user(conn)
    if user is None:
        return error_response(conn, 401, CODE_UNAUTHENTICATED, "Log in first.")  # type: ignore[arg-type]
    return user

def bearer_token(conn: HTTPConnection) -> str | None:
    """The credential of an ``Authorization: Bearer <token>`` header (scheme case-insensitive),
    or None."""
    scheme, _, credential = conn.headers.get("authorization", "").partition(" ")
    credential = credential.strip()
    if scheme.lower() != "bearer" or not credential:
        return None
    return credential


async def user_for_bearer(conn: HTTPConnection) -> UserInfo | None:
    """The active owner of the API key in ``Authorization: Bearer``, or None (no header, an
    unknown or revoked key, or an owner who is not active)."""
    secret = bearer_token(conn)
    if secret is None:
        return None
    return await run_in_threadpool(app_state(conn).api_keys.user_for_key, secret)


async def page_user_or_redirect(conn: HTTPConnection) -> UserInfo | Response:
    """For HTML pages: the logged-in user, or a 303 redirect to /login."""
    user = await current_user(conn)
    return RedirectResponse("/login", status_code=303) if user is None else user


async def admin_or_error(conn: HTTPConnection) -> UserInfo | Response:
    """For admin pages and JSON: the logged-in admin; otherwise a response to return as is:
    anonymous -> redirect to /login (pages) or 401 (JSON); not an admin -> 403."""
    user = await current_user(conn)
    if user is None:
        if wants_json(conn):
            return error_response(conn, 401, CODE_UNAUTHENTICATED, "Log in first.")  # type: ignore[arg-type]
        return RedirectResponse("/login", status_code=303)
    if not user.is_admin:
        return error_response(conn, 403, "forbidden", "Only administrators can open this page.")  # type: ignore[arg-type]
    return user


def set_session_cookie(response: Response, token: str, settings: Settings) -> None:
    """HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site POSTs), Secure when
    served over HTTPS; lives as long as the server-side session."""
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=settings.session_ttl_s,
        path="/",
        httponly=True,
        samesite="lax",
        secure=settings.cookie_secure,
    )


def clear_session_cookie(response: Response, settings: Settings) -> None:
    response.delete_cookie(
        SESSION_COOKIE, path="/", httponly=True, samesite="lax", secure=settings.cookie_secure
    )
