"""The admin page and its JSON API: runtime settings, the users table, the live engine panel.

Pages (HTML):
- ``GET /admin``: anonymous -> 303 to /login; a non-admin -> 403 page; an admin -> the page.
- ``POST /admin/settings``: the settings form (fields ``csrf_token`` + one per setting);
  all-or-nothing. Always 303 to ``/admin#settings`` (post/redirect/get, so a reload never posts
  again), which then shows "Saved", or the values as typed with each bad value's message next to
  its field (carried over the redirect by web/flash.py).

JSON (``/admin/api/...``; anonymous -> 401, non-admin -> 403, both ``{"error": {code, message}}``;
the admin role is checked on every call, and a disabled admin has no session at all):
- ``GET /admin/api/settings`` -> ``{"settings": {name: value}, "fields": [field...]}``
- ``POST /admin/api/settings`` body ``{name: value, ...}`` -> the same; 400
  ``{"error": {"code": "invalid_input", "message", "fields": {name: message}}}`` on a bad value
  (nothing is stored then).
- ``GET /admin/api/users`` -> ``{"users": [UserRow...]}``
- ``POST /admin/api/users/{id}/status`` body ``{"status": "active" | "disabled"}`` -> users
- ``POST /admin/api/users/{id}/role`` body ``{"role": "admin" | "user"}`` -> users
  (404 unknown id; 400 when the change would leave no active admin). Disabling ends the
  user's live work at once (backend/live.py): his chat replies and /v1 generations are aborted
  in the engine and his WebSockets close with 4401.
- ``GET /admin/api/engine[?window_s=900]`` -> :meth:`backend.metrics.Metrics.timeseries` (this
  process's history) plus ``"model"``, ``"instance"`` (this process's name) and ``"instances"``:
  every live server process (:class:`backend.cluster.instances.InstanceSnapshot` fields plus
  ``"this"``), sorted by name -- read from Redis with REDIS_URL, else only this process;
  ``"instances_error"`` says why the list holds only this process when Redis did not answer.

Every change goes through the services at once: nothing needs a restart.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from backend.auth import UserInfo
from backend.cluster import RedisUnavailable
from backend.cluster.instances import InstanceSnapshot, instance_label, snapshot_of
from backend.errors import DomainError, ValidationFailed
from backend.live import REASON_DISABLED
from web import trace_routes
from web.api import read_json_object, to_jsonable
from web.errors import CODE_UNAUTHENTICATED, error_code, error_message, status_for_code
from web.inputs import check_texts  # also registers the {name:id} path convertor
from web.session import admin_or_error, current_user, session_token
from web.state import AppState, app_state

CODE_FORBIDDEN = "forbidden"
NO_STORE = {"Cache-Control": "no-store"}


@dataclass(frozen=True)
class FieldView:
    """One settings-form field, as admin.html renders it (from a runtime_setting_fields.FieldSpec).

    kind: "int" | "float" | "text" | "choice"; value: the current or just-submitted value;
    error: the message shown next to the field after a refused save.
    """

    name: str
    label: str
    kind: str
    value: Any
    help: str
    range_text: str
    group: str
    minimum: float | None = None
    maximum: float | None = None
    step: str = "any"
    choices: tuple[str, ...] = ()
    max_length: int | None = None
    error: str | None = None


def _json_error(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status, headers=NO_STORE)


async def _api_admin(request: Request) -> UserInfo | Response:
    user = await current_user(request)
    if user is None:
        return _json_error(401, CODE_UNAUTHENTICATED, "Log in first.")
    if not user.is_admin:
        return _json_error(403, CODE_FORBIDDEN, "Administrators only.")
    return user


def _domain_error_json(exc: DomainError) -> JSONResponse:
    code = error_code(exc)
    fields = _field_errors(exc) if isinstance(exc, ValidationFailed) else {}
    extra = {"fields": fields} if fields else {}
    return _json_error(status_for_code(code), code, error_message(exc), **extra)


# -- settings --------------------------------------------------------------------------------


def _field_views(request: Request, errors: Mapping[str, str] | None = None,
                 submitted: Mapping[str, str] | None = None) -> list[FieldView]:
    """The store's fields with their current (or just submitted) values and errors."""
    store = app_state(request).runtime_settings
    current = store.get()
    errors = errors or {}
    views = []
    for spec in store.fields():
        if submitted is not None and spec.name in submitted:
            value: Any = submitted[spec.name]
        else:
            value = getattr(current, spec.name)
        views.append(FieldView(
            name=spec.name, label=spec.label, kind=spec.kind, value=value, help=spec.help,
            range_text=spec.range_text(), group=spec.group, minimum=spec.minimum, maximum=spec.maximum,
            step="1" if spec.kind == "int" else "any", choices=tuple(spec.choices),
            max_length=spec.max_length, error=errors.get(spec.name),
        ))
    return views


def _settings_json(request: Request) -> dict[str, Any]:
    store = app_state(request).runtime_settings
    return {
        "settings": to_jsonable(store.get()),
        "fields": [{**to_jsonable(spec), "range": spec.range_text()} for spec in store.fields()],
    }


def _field_errors(exc: ValidationFailed) -> dict[str, str]:
    """field -> message of a refused settings update (SettingsInvalid carries them)."""
    return dict(getattr(exc, "errors", None) or {})


async def _render_page(request: Request, user: UserInfo, *, status_code: int = 200, saved: bool = False,
                       fields: list[FieldView] | None = None, form_error: str | None = None) -> Response:
    state = app_state(request)
    users = await run_in_threadpool(state.users.list_users)
    if fields is None:
        fields = await run_in_threadpool(_field_views, request)
    response = state.templates.TemplateResponse(
        request,
        "admin.html",
        {
            "user": user, "fields": fields, "users": users, "saved": saved, "form_error": form_error,
            "model_name": state.generator.model_name, "instance_name": state.settings.instance_name,
        },
        status_code=status_code,
    )
    response.headers.update(NO_STORE)
    return response


@dataclass(frozen=True)
class SettingsOutcome:
    """What the settings form's redirect carries to the page: saved, or the refused values."""

    saved: bool
    errors: Mapping[str, str] | None = None
    submitted: Mapping[str, str] | None = None
    form_error: str | None = None


async def admin_page(request: Request) -> Response:
    user = await admin_or_error(request)
    if isinstance(user, Response):
        return user
    outcome = app_state(request).flash.pop(session_token(request))
    if not isinstance(outcome, SettingsOutcome):
        return await _render_page(request, user)
    if outcome.saved:
        return await _render_page(request, user, saved=True)
    fields = await run_in_threadpool(_field_views, request, outcome.errors, outcome.submitted)
    return await _render_page(request, user, fields=fields, form_error=outcome.form_error)


async def settings_form(request: Request) -> Response:
    user = await admin_or_error(request)
    if isinstance(user, Response):
        return user
    store = app_state(request).runtime_settings
    form = await request.form()
    known = {spec.name for spec in store.fields()}
    # The store parses the form's strings itself ("12", "0.7", "" for no system prompt).
    submitted = {name: value for name, value in form.items() if name in known and isinstance(value, str)}
    try:
        check_texts(submitted.items())
        await run_in_threadpool(store.update, submitted, user.id)
        outcome = SettingsOutcome(saved=True)
    except ValidationFailed as exc:
        errors = _field_errors(exc)
        outcome = SettingsOutcome(saved=False, errors=errors, submitted=submitted,
                                  form_error=None if errors else exc.message)
    token = session_token(request)
    if token:  # admin_or_error let a session through, so there is one
        app_state(request).flash.put(token, outcome)
    return RedirectResponse("/admin#settings", status_code=303)


async def api_settings(request: Request) -> Response:
    user = await _api_admin(request)
    if isinstance(user, Response):
        return user
    if request.method == "POST":
        try:
            changes = await read_json_object(request)
            await run_in_threadpool(app_state(request).runtime_settings.update, changes, user.id)
        except DomainError as exc:
            return _domain_error_json(exc)
    return JSONResponse(await run_in_threadpool(_settings_json, request), headers=NO_STORE)


# -- users -----------------------------------------------------------------------------------


async def _users_json(request: Request) -> JSONResponse:
    users = await run_in_threadpool(app_state(request).users.list_users)
    return JSONResponse({"users": to_jsonable(users)}, headers=NO_STORE)


async def api_users(request: Request) -> Response:
    user = await _api_admin(request)
    if isinstance(user, Response):
        return user
    return await _users_json(request)


async def api_user_status(request: Request) -> Response:
    return await _user_change(request, "status")


async def api_user_role(request: Request) -> Response:
    return await _user_change(request, "role")


async def _user_change(request: Request, what: str) -> Response:
    actor = await _api_admin(request)
    if isinstance(actor, Response):
        return actor
    service = app_state(request).users
    target = request.path_params["user_id"]
    try:
        body = await read_json_object(request)
        value = body.get(what)
        if not isinstance(value, str):
            raise ValidationFailed(f'the body needs a "{what}" string')
        change = service.set_status if what == "status" else service.set_role
        await run_in_threadpool(change, actor.id, target, value)
    except DomainError as exc:
        return _domain_error_json(exc)
    if what == "status" and value != "active":
        # The sessions are gone from the database; what is already running goes now too.
        await app_state(request).chat.live.end_user(target, REASON_DISABLED)
    return await _users_json(request)


# -- engine panel ----------------------------------------------------------------------------


async def api_engine(request: Request) -> Response:
    user = await _api_admin(request)
    if isinstance(user, Response):
        return user
    state = app_state(request)
    try:
        window_s = float(request.query_params.get("window_s", "900"))
        series = state.metrics.timeseries(window_s=window_s)
    except ValueError:
        return _json_error(400, "invalid_input", "window_s must be a positive number of seconds")
    series["model"] = state.generator.model_name
    series.update(await _instances(state))
    return JSONResponse(series, headers=NO_STORE)


async def _instances(state: AppState) -> dict[str, Any]:
    """``{"instance": this process's name, "instances": [snapshot...], "instances_error": str |
    None}``: every live process (backend/cluster/instances.py) with REDIS_URL, else this one;
    this one is always listed, with its own latest numbers, even when Redis does not answer."""
    name = instance_label(state.settings.instance_name, state.settings.port)
    own = snapshot_of(name, state.generator.model_name, state.metrics.latest(), time.time())
    error = None
    others: list[InstanceSnapshot] = []
    if state.instances is not None:
        try:
            others = [s for s in await state.instances.live() if s.instance != name]
        except RedisUnavailable as exc:
            error = exc.message
    listed = sorted([own, *others], key=lambda s: s.instance)
    return {"instance": name, "instances_error": error,
            "instances": [{**s.to_json(), "this": s.instance == name} for s in listed]}


routes = [
    Route("/admin", admin_page, methods=["GET"]),
    Route("/admin/settings", settings_form, methods=["POST"]),
    Route("/admin/api/settings", api_settings, methods=["GET", "POST"]),
    Route("/admin/api/users", api_users, methods=["GET"]),
    Route("/admin/api/users/{user_id:id}/status", api_user_status, methods=["POST"]),
    Route("/admin/api/users/{user_id:id}/role", api_user_role, methods=["POST"]),
    Route("/admin/api/engine", api_engine, methods=["GET"]),
    *trace_routes.routes,  # GET /admin/traces/{trace_id}: a trace's waterfall
]
