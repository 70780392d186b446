"""Log-in, sign-up and log-out: HTML form posts that set or clear the session cookie.

Success answers 303 See Other to ``/chat`` (so a reload never re-posts the form); failure
re-renders the form with an error and the status of the domain error (400 invalid input,
401 wrong credentials, 409 username taken). The log-in error is the same whether or not the
account exists.
"""

from __future__ import annotations

from typing import Awaitable, Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from backend.auth import AuthService
from backend.errors import DomainError
from web.errors import error_message, error_code, status_for_code
from web.session import clear_session_cookie, current_user, session_token, set_session_cookie
from web.state import app_state

LOGIN_FAILED = "Invalid username or password."
MISSING_FIELDS = "Enter a username and a password."
MAX_FORM_BYTES = 16 * 1024  # a username and a password; anything bigger is not our form


async def _read_credentials(request: Request) -> tuple[str, str] | None:
    """(username, password) from the posted form; None when the body is too large."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_FORM_BYTES:
        return None
    form = await request.form(max_files=0, max_fields=8)
    username, password = form.get("username"), form.get("password")
    return (
        username.strip() if isinstance(username, str) else "",
        password if isinstance(password, str) else "",
    )


def _form(request: Request, template: str, status_code: int, error: str | None, username: str) -> Response:
    return app_state(request).templates.TemplateResponse(
        request, template, {"error": error, "username": username}, status_code=status_code
    )


def _logged_in_redirect(request: Request, token: str) -> Response:
    response = RedirectResponse("/chat", status_code=303)
    set_session_cookie(response, token, app_state(request).settings)
    return response


def _form_page(template: str) -> Callable[[Request], Awaitable[Response]]:
    """The GET handler of a credentials form: the empty form, or /chat when already logged in."""

    async def page(request: Request) -> Response:
        if await current_user(request) is not None:
            return RedirectResponse("/chat", status_code=303)
        return _form(request, template, 200, None, "")

    return page


async def _submit(
    request: Request,
    template: str,
    open_session: Callable[[AuthService, str, str], str],
    failure: Callable[[DomainError], tuple[int, str]],
) -> Response:
    """The POST handler of a credentials form: `open_session` (run in a thread) returns the
    session token; a DomainError re-renders the form with `failure`'s (status, message)."""
    credentials = await _read_credentials(request)
    if credentials is None:
        return _form(request, template, 413, "The form is too large.", "")
    username, password = credentials
    if not username or not password:
        return _form(request, template, 400, MISSING_FIELDS, username)
    try:
        token = await run_in_threadpool(open_session, app_state(request).auth, username, password)
    except DomainError as exc:
        status, message = failure(exc)
        return _form(request, template, status, message, username)
    return _logged_in_redirect(request, token)


def _sign_up_and_log_in(auth: AuthService, username: str, password: str) -> str:
    auth.sign_up(username, password)
    return auth.log_in(username, password)


async def login_submit(request: Request) -> Response:
    # Whatever the backend's reason (unknown user, wrong password, malformed name), the answer
    # is the same, so the form cannot be used to probe for accounts.
    return await _submit(request, "login.html", AuthService.log_in, lambda _exc: (401, LOGIN_FAILED))


async def signup_submit(request: Request) -> Response:
    return await _submit(
        request, "signup.html", _sign_up_and_log_in,
        lambda exc: (status_for_code(error_code(exc)), error_message(exc)),
    )  # fmt: skip


login_page = _form_page("login.html")
signup_page = _form_page("signup.html")


async def logout(request: Request) -> Response:
    state = app_state(request)
    token = session_token(request)
    if token is not None:
        await run_in_threadpool(state.auth.log_out, token)
    response = RedirectResponse("/login", status_code=303)
    clear_session_cookie(response, state.settings)
    return response


routes = [
    Route("/login", login_page, methods=["GET"]),
    Route("/login", login_submit, methods=["POST"]),
    Route("/signup", signup_page, methods=["GET"]),
    Route("/signup", signup_submit, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
]
