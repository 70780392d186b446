"""Log-in, sign-up and log-out: HTML form posts that set or clear the session cookie.

Success answers 303 See Other to ``/chat`` (so a reload never re-posts the form); failure
re-renders the form with an error and the status of the domain error (400 invalid input,
401 wrong credentials, 409 username taken). The log-in error is the same whether or not the
account exists.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

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


async def login_page(request: Request) -> Response:
    if await current_user(request) is not None:
        return RedirectResponse("/chat", status_code=303)
    return _form(request, "login.html", 200, None, "")


async def login_submit(request: Request) -> Response:
    credentials = await _read_credentials(request)
    if credentials is None:
        return _form(request, "login.html", 413, "The form is too large.", "")
    username, password = credentials
    if not username or not password:
        return _form(request, "login.html", 400, MISSING_FIELDS, username)
    try:
        token = await run_in_threadpool(app_state(request).auth.log_in, username, password)
    except DomainError:
        # Whatever the backend's reason (unknown user, wrong password, malformed name), the
        # answer is the same, so the form cannot be used to probe for accounts.
        return _form(request, "login.html", 401, LOGIN_FAILED, username)
    return _logged_in_redirect(request, token)


async def signup_page(request: Request) -> Response:
    if await current_user(request) is not None:
        return RedirectResponse("/chat", status_code=303)
    return _form(request, "signup.html", 200, None, "")


async def signup_submit(request: Request) -> Response:
    credentials = await _read_credentials(request)
    if credentials is None:
        return _form(request, "signup.html", 413, "The form is too large.", "")
    username, password = credentials
    if not username or not password:
        return _form(request, "signup.html", 400, MISSING_FIELDS, username)
    auth = app_state(request).auth
    try:
        await run_in_threadpool(auth.sign_up, username, password)
        token = await run_in_threadpool(auth.log_in, username, password)
    except DomainError as exc:
        status = status_for_code(error_code(exc))
        return _form(request, "signup.html", status, error_message(exc), username)
    return _logged_in_redirect(request, token)


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
