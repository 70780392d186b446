"""A conversation's branches and its own settings (docs/INTERFACES.md section 3).

``GET /api/conversations/{id}/branch`` -> ``{"current_message_id": str | null, "html": str}``: the
active branch's messages rendered as on the page (templates/_message.html), for a page that must
redraw them (another tab regenerated or edited). ``POST`` the same URL with ``{"message_id": id}``
makes the branch through that message active (its newest continuation), with the same answer;
what the page's "‹ 2/3 ›" does.

``GET /api/conversations/{id}/settings`` -> ``{"settings": {system_prompt, temperature,
max_tokens}, "defaults": {system_prompt (null unless the user is an admin), has_system_prompt,
temperature, max_tokens}, "max_max_tokens": int, "agent_limits": {agent_steps | agent_tool_calls |
agent_tokens | agent_wall_s: {default, minimum, maximum}}}`` (None in settings: the admin's default; the
conversation's system prompt comes after the admin's, which it never replaces; a run's budget
value above the admin's current maximum is refused, and one stored before he lowered it is capped). ``PATCH`` the same URL with any of those fields (null: back to
the default) -> the same answer; 400 ``invalid_input`` naming a bad field.

Without a session: 401; an unknown or another user's id (conversation or message): 404.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from backend.agent.access import budget_limits, tools_enabled
from backend.auth import UserInfo
from backend.conversation_settings import ConversationSettings
from backend.conversations import ConversationView
from backend.errors import ValidationFailed
import web.inputs  # noqa: F401  (registers the {name:id} path convertor)
from web.api import read_json_object
from web.errors import CODE_UNAUTHENTICATED, error_response
from web.pages import agent_runs_of
from web.session import current_user
from web.state import AppState, app_state

_NO_STORE = {"Cache-Control": "no-store"}


def render_branch(state: AppState, view: ConversationView, agent_runs: dict[str, Any] | None = None) -> str:
    """The active branch's messages as the chat page renders them (sanitized HTML), with the
    stored steps of their agent runs (`agent_runs`, web.pages.agent_runs_of)."""
    return state.templates.get_template("_messages.html").render(conversation=view, agent_runs=agent_runs or {})


async def _branch_answer(state: AppState, user_id: str, view: ConversationView) -> Response:
    html = render_branch(state, view, await agent_runs_of(state, user_id, view))
    return JSONResponse({"current_message_id": view.current_message_id, "html": html}, headers=_NO_STORE)


async def get_branch(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return error_response(request, 401, CODE_UNAUTHENTICATED, "Log in first.")
    state = app_state(request)
    view = await run_in_threadpool(state.conversations.get_conversation, user.id,
                                   request.path_params["conversation_id"])
    return await _branch_answer(state, user.id, view)


async def switch_branch(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return error_response(request, 401, CODE_UNAUTHENTICATED, "Log in first.")
    body = await read_json_object(request)
    if set(body) != {"message_id"} or not isinstance(body["message_id"], str):
        raise ValidationFailed('the body must be {"message_id": "<id of a message of this conversation>"}')
    state = app_state(request)
    view = await run_in_threadpool(state.conversations.switch_branch, user.id,
                                   request.path_params["conversation_id"], body["message_id"])
    return await _branch_answer(state, user.id, view)


def _settings_answer(state: AppState, settings: ConversationSettings, user: UserInfo) -> Response:
    runtime = state.runtime_settings.get()
    is_admin = user.is_admin
    return JSONResponse({
        "settings": dataclasses.asdict(settings),
        # The admin's system prompt is his to read: others learn only that there is one.
        "defaults": {"system_prompt": runtime.system_prompt if is_admin else None,
                     "has_system_prompt": runtime.system_prompt is not None,
                     "temperature": runtime.default_temperature, "max_tokens": runtime.default_max_tokens},
        "max_max_tokens": runtime.max_max_tokens,
        "agent_limits": {name: dataclasses.asdict(limit) for name, limit in budget_limits(runtime).items()},
        # Whether the admin lets this user's role use tools (else use_tools has no effect).
        "tools_available": tools_enabled(runtime, user.role),
    }, headers=_NO_STORE)


async def get_settings(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return error_response(request, 401, CODE_UNAUTHENTICATED, "Log in first.")
    state = app_state(request)
    view = await run_in_threadpool(state.conversations.get_conversation, user.id,
                                   request.path_params["conversation_id"])
    return _settings_answer(state, view.settings, user)


async def patch_settings(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return error_response(request, 401, CODE_UNAUTHENTICATED, "Log in first.")
    body: dict[str, Any] = await read_json_object(request)
    state = app_state(request)
    runtime = state.runtime_settings.get()
    settings = await run_in_threadpool(
        state.conversations.update_settings, user.id, request.path_params["conversation_id"], body,
        runtime.max_max_tokens, budget_limits(runtime))
    return _settings_answer(state, settings, user)


routes = [
    Route("/api/conversations/{conversation_id:id}/branch", get_branch, methods=["GET"]),
    Route("/api/conversations/{conversation_id:id}/branch", switch_branch, methods=["POST"]),
    Route("/api/conversations/{conversation_id:id}/settings", get_settings, methods=["GET"]),
    Route("/api/conversations/{conversation_id:id}/settings", patch_settings, methods=["PATCH"]),
]
