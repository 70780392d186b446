"""The /account page and its JSON endpoints: change the password, create / list / revoke API keys.

- ``GET /account``: the page (logged-in users; others are sent to /login).
- ``GET /api/account/keys`` -> ``{"keys": [{id, name, prefix, created_at, last_used_at,
  revoked_at}]}`` (newest first, revoked ones included).
- ``POST /api/account/keys`` ``{"name": str}`` -> 201 ``{"key": {...}, "secret": "crk_..."}``:
  the only time the secret is ever shown.
- ``DELETE /api/account/keys/{key_id}`` -> 204; another user's or an unknown id: 404.
- ``POST /api/account/password`` ``{"current_password", "new_password"}`` -> 200
  ``{"ended_sessions": true}``; every other session of the user ends, this one stays. A wrong
  current password: 401 ``invalid_credentials`` (and counts as a failed log-in for throttling).
- ``POST /api/account/theme`` ``{"theme": "system" | "light" | "dark"}`` -> 200 ``{"theme"}``:
  remembered for the user; every page renders ``<html data-theme="...">`` from it. Another
  value: 400 ``invalid_input``.

All need the session cookie (an API key cannot manage keys) and, being unsafe, the CSRF header.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from backend.auth import UserInfo, hash_token
from backend.errors import InvalidCredentials, ValidationFailed
from backend.live import REASON_PASSWORD_CHANGED
import web.inputs  # noqa: F401  (registers the {name:id} path convertor)
from web.api import read_json_object, to_jsonable
from web.auth_routes import client_ip
from web.session import page_user_or_redirect, session_token, session_user_or_401
from web.state import app_state

MAX_JSON_BYTES = 16 * 1024
_NO_STORE = {"Cache-Control": "no-store"}


def _string(body: dict[str, Any], name: str) -> str:
    value = body.get(name, "")
    if not isinstance(value, str):
        raise ValidationFailed(f"{name} must be a string")
    return value



async def account_page(request: Request) -> Response:
    user = await page_user_or_redirect(request)
    if isinstance(user, Response):
        return user
    keys = await run_in_threadpool(app_state(request).api_keys.list_keys, user.id)
    response = app_state(request).templates.TemplateResponse(
        request, "account.html", {"user": user, "keys": keys}
    )
    response.headers["Cache-Control"] = "no-store"
    return response


async def list_keys(request: Request) -> Response:
    user = await session_user_or_401(request)
    if isinstance(user, Response):
        return user
    keys = await run_in_threadpool(app_state(request).api_keys.list_keys, user.id)
    return JSONResponse({"keys": to_jsonable(keys)}, headers=_NO_STORE)


async def create_key(request: Request) -> Response:
    user = await session_user_or_401(request)
    if isinstance(user, Response):
        return user
    name = _string(await read_json_object(request, MAX_JSON_BYTES), "name")
    view, secret = await run_in_threadpool(app_state(request).api_keys.create_key, user.id, name)
    return JSONResponse({"key": to_jsonable(view), "secret": secret}, status_code=201, headers=_NO_STORE)


async def revoke_key(request: Request) -> Response:
    user = await session_user_or_401(request)
    if isinstance(user, Response):
        return user
    await run_in_threadpool(app_state(request).api_keys.revoke_key, user.id, request.path_params["key_id"])
    return Response(status_code=204)


async def change_password(request: Request) -> Response:
    user = await session_user_or_401(request)
    if isinstance(user, Response):
        return user
    body = await read_json_object(request, MAX_JSON_BYTES)
    current, new = _string(body, "current_password"), _string(body, "new_password")
    state = app_state(request)
    ip = client_ip(request)
    # Throttled -> 429 with Retry-After. Off the event loop: with REDIS_URL this is network I/O.
    await run_in_threadpool(state.throttle.check, ip, user.username, "login")
    try:
        await run_in_threadpool(state.auth.change_password, user.id, current, new, session_token(request))
    except InvalidCredentials:
        await run_in_threadpool(state.throttle.hit, ip, user.username, "login")
        raise
    # The other sessions' open sockets close too (4401), and the replies streaming on them stop,
    # stored "interrupted" with the reason; this session and API-key requests go on.
    token = session_token(request)
    await state.chat.live.end_sessions(user.id, REASON_PASSWORD_CHANGED,
                                       keep=hash_token(token) if token else None)
    return JSONResponse({"ended_sessions": True}, headers=_NO_STORE)


async def set_theme(request: Request) -> Response:
    user = await session_user_or_401(request)
    if isinstance(user, Response):
        return user
    theme = _string(await read_json_object(request, MAX_JSON_BYTES), "theme")
    theme = await run_in_threadpool(app_state(request).auth.set_theme, user.id, theme)
    return JSONResponse({"theme": theme}, headers=_NO_STORE)


routes = [
    Route("/account", account_page, methods=["GET"]),
    Route("/api/account/keys", list_keys, methods=["GET"]),
    Route("/api/account/keys", create_key, methods=["POST"]),
    Route("/api/account/keys/{key_id:id}", revoke_key, methods=["DELETE"]),
    Route("/api/account/password", change_password, methods=["POST"]),
    Route("/api/account/theme", set_theme, methods=["POST"]),
]


