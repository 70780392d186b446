"""Log-in, sign-up and log-out: HTML form posts that set or clear the session cookie.

Success answers 303 See Other to ``/chat`` (so a reload never re-posts the form); failure
re-renders the form with an error and the status of the domain error (400 invalid input,
401 wrong credentials, 403 sign-up closed or account disabled, 409 username taken, 429 too many
attempts with ``Retry-After``). The log-in error is the same whether or not the account exists;
"pending" and "disabled" are told only after a correct password. A pending account (sign-up mode
"approval") gets the "waiting for approval" page instead of a session.

Throttling (:class:`backend.throttle.LoginThrottle` on ``AppState.throttle``): failed log-ins
count per (account name, client IP), per account name and per client IP, sign-up attempts per
IP; a throttled attempt is refused before any password check. The client IP is the ASGI peer
address, which uvicorn's proxy headers rewrite to the real client's when the peer is a trusted
proxy (``FORWARDED_ALLOW_IPS``; ``python -m web serve`` turns them on, README "Behind a reverse
proxy"). Logging out also closes that session's open WebSockets (backend/live.py).
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from backend.auth import UserInfo, hash_token
from backend.errors import (
    AccountDisabled,
    AccountPending,
    DomainError,
    InvalidCredentials,
    SignUpClosed,
    Throttled,
    ValidationFailed,
)
from backend.live import REASON_LOGGED_OUT
from web.errors import error_code, error_message, status_for_code
from web.inputs import check_texts
from web.session import clear_session_cookie, current_user, session_token, set_session_cookie
from web.state import AppState, app_state

LOGIN_FAILED = "Invalid username or password."
MISSING_FIELDS = "Enter a username and a password."
ACCOUNT_DISABLED = "This account has been disabled. Contact an administrator."
SIGNUP_CLOSED = "Sign-up is closed. Ask an administrator to create an account for you."
MAX_FORM_BYTES = 16 * 1024  # a username, a password and a CSRF token; anything bigger is not our form


def signup_mode(state: AppState) -> str:
    """The sign-up mode from the runtime settings store ("open" while none is installed)."""
    store = getattr(state, "runtime_settings", None)
    if store is None:
        return "open"
    return str(store.get().signup_mode)


def client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"


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


def _page(request: Request, template: str, status_code: int, context: dict[str, Any],
          headers: dict[str, str] | None = None) -> Response:
    response = app_state(request).templates.TemplateResponse(
        request, template, context, status_code=status_code, headers=headers
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def _form(request: Request, template: str, status_code: int, error: str | None, username: str,
          **extra: Any) -> Response:
    return _page(request, template, status_code, {"error": error, "username": username, **extra})


def _throttled(request: Request, template: str, exc: Throttled, username: str) -> Response:
    metrics = getattr(app_state(request), "metrics", None)
    if metrics is not None:
        metrics.count_rejection("throttled")
    return _page(
        request, template, 429,
        {"error": exc.message, "username": username, "retry_after_s": exc.retry_after_s},
        headers={"Retry-After": str(exc.retry_after_s)},
    )


def _pending(request: Request, status_code: int, username: str) -> Response:
    return _page(request, "pending.html", status_code, {"username": username})


def _logged_in_redirect(request: Request, token: str) -> Response:
    response = RedirectResponse("/chat", status_code=303)
    set_session_cookie(response, token, app_state(request).settings)
    return response


async def login_page(request: Request) -> Response:
    if await current_user(request) is not None:
        return RedirectResponse("/chat", status_code=303)
    return _form(request, "login.html", 200, None, "")


async def signup_page(request: Request) -> Response:
    if await current_user(request) is not None:
        return RedirectResponse("/chat", status_code=303)
    state = app_state(request)
    # The first account may always be made (it becomes the admin), whatever the mode.
    closed = signup_mode(state) == "closed" and await run_in_threadpool(state.auth.has_users)
    return _form(request, "signup.html", 200, None, "", closed=closed, mode=signup_mode(state))


async def _admitted_credentials(request: Request, template: str, action: str) -> tuple[str, str, str] | Response:
    """(username, password, client IP) of a log-in or sign-up form that is complete and not
    throttled for `action` ("login" | "signup"); otherwise the form page to answer with
    (413 too large, 400 missing fields or a control character, 429 throttled)."""
    credentials = await _read_credentials(request)
    if credentials is None:
        return _form(request, template, 413, "The form is too large.", "")
    username, password = credentials
    if not username or not password:
        return _form(request, template, 400, MISSING_FIELDS, username)
    try:
        check_texts([("username", username), ("password", password)])
    except ValidationFailed as exc:  # before the throttle and any query (web/inputs.py)
        return _form(request, template, 400, f"The {exc.message}.", "")
    ip = client_ip(request)
    try:
        await run_in_threadpool(app_state(request).throttle.check, ip, username, action)
    except Throttled as exc:
        return _throttled(request, template, exc, username)
    return username, password, ip


async def login_submit(request: Request) -> Response:
    state = app_state(request)
    admitted = await _admitted_credentials(request, "login.html", "login")
    if isinstance(admitted, Response):
        return admitted
    username, password, ip = admitted
    try:
        token = await run_in_threadpool(state.auth.log_in, username, password)
    except AccountPending:
        return _pending(request, 403, username)
    except AccountDisabled:
        return _form(request, "login.html", 403, ACCOUNT_DISABLED, username)
    except (InvalidCredentials, DomainError):
        # Whatever the backend's reason (unknown user, wrong password, malformed name), the
        # answer is the same, so the form cannot be used to probe for accounts.
        await run_in_threadpool(state.throttle.hit, ip, username, "login")
        return _form(request, "login.html", 401, LOGIN_FAILED, username)
    await run_in_threadpool(state.throttle.succeeded, ip, username)
    return _logged_in_redirect(request, token)


async def signup_submit(request: Request) -> Response:
    state = app_state(request)
    admitted = await _admitted_credentials(request, "signup.html", "signup")
    if isinstance(admitted, Response):
        return admitted
    username, password, ip = admitted
    # Every attempt counts, failed ones too: "username taken" answers are what a prober wants.
    await run_in_threadpool(state.throttle.hit, ip, username, "signup")
    mode = signup_mode(state)
    try:
        user: UserInfo = await run_in_threadpool(state.auth.sign_up, username, password, mode)
    except SignUpClosed:
        return _form(request, "signup.html", 403, SIGNUP_CLOSED, username, closed=True, mode=mode)
    except DomainError as exc:
        return _form(request, "signup.html", status_for_code(error_code(exc)), error_message(exc), username, mode=mode)
    if user.status == "pending":
        return _pending(request, 200, user.username)
    token = await run_in_threadpool(state.auth.log_in, username, password)
    return _logged_in_redirect(request, token)


async def logout(request: Request) -> Response:
    state = app_state(request)
    token = session_token(request)
    if token is not None:
        user = await current_user(request)
        await run_in_threadpool(state.auth.log_out, token)
        if user is not None:  # this session's open sockets (other tabs) close too
            await state.chat.live.end_sessions(user.id, REASON_LOGGED_OUT, only=hash_token(token))
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
