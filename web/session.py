"""The session cookie: reading the logged-in user, setting and clearing the cookie.

The cookie holds only an opaque random token; the server keeps the session (a hash of the token)
in the database through :class:`backend.auth.AuthService`.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection
from starlette.responses import Response

from backend.auth import UserInfo
from backend.settings import Settings
from web.state import app_state

SESSION_COOKIE = "crescent_session"


def session_token(conn: HTTPConnection) -> str | None:
    """The raw session token from the cookie, or None."""
    return conn.cookies.get(SESSION_COOKIE) or None


async def current_user(conn: HTTPConnection) -> UserInfo | None:
    """The user of the session cookie, or None (no cookie, unknown, expired or logged out).

    The lookup is a blocking database query, so it runs in the thread pool.
    """
    token = session_token(conn)
    if token is None:
        return None
    return await run_in_threadpool(app_state(conn).auth.user_for_session, token)


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
