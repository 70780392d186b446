"""HTML pages: the root redirect, the chat page (new conversation) and one conversation.

A visitor without a session is sent to ``/login``; another user's conversation id, like an
unknown one, is a 404 page (the error mapping in :mod:`web.errors` renders it).
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from backend.agent.access import tools_enabled
from backend.auth import UserInfo
from backend.conversations import ConversationView
import web.inputs  # noqa: F401  (registers the {name:id} path convertor)
from web.session import current_user
from web.state import AppState, app_state
from web.ws_protocol import page_limits


async def root(request: Request) -> Response:
    if await current_user(request) is not None:
        return RedirectResponse("/chat", status_code=303)
    # A fresh install has no account yet: the first visitor signs up (and becomes the admin).
    has_users = await run_in_threadpool(app_state(request).auth.has_users)
    return RedirectResponse("/login" if has_users else "/signup", status_code=303)


async def agent_runs_of(state: AppState, user_id: str, conversation: ConversationView | None) -> dict[str, Any]:
    """The stored agent runs of the branch's replies, by message id (templates/_message.html
    shows their steps), read in one query; {} without messages."""
    if conversation is None or state.step_views is None or not conversation.messages:
        return {}
    ids = [m.id for m in conversation.messages if m.role == "assistant"]
    return await run_in_threadpool(state.step_views.of_messages, user_id, ids) if ids else {}


async def _chat_page(request: Request, user: UserInfo, conversation: ConversationView | None) -> Response:
    state = app_state(request)
    conversations = await run_in_threadpool(state.conversations.list_conversations, user.id)
    tools_available = tools_enabled(state.runtime_settings.get(), user.role)
    response = state.templates.TemplateResponse(
        request,
        "chat.html",
        {"user": user, "conversations": conversations, "conversation": conversation,
         "agent_runs": await agent_runs_of(state, user.id, conversation),
         # The composer's "Use tools" toggle (only when the admin lets this user's role use
         # tools) and the header's "Tools" badge: this conversation's turns are agent runs.
         "tools_available": tools_available,
         # (a new chat's follows the person's latest conversation's: his last choice)
         "tools_on": tools_available and (conversation.settings.use_tools if conversation is not None else
                                          await run_in_threadpool(state.conversations.latest_use_tools, user.id)),
         "ws_limits": page_limits()},  # the protocol's limits, defined once (web/ws_protocol.py)
    )
    # The page lists private conversations: keep it out of shared caches and the back-forward
    # cache after log-out.
    response.headers["Cache-Control"] = "no-store"
    return response


async def chat(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return RedirectResponse("/login", status_code=303)
    return await _chat_page(request, user, None)


async def conversation(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return RedirectResponse("/login", status_code=303)
    conversation_id = request.path_params["conversation_id"]
    # NotFound (unknown id, or another user's) propagates to web.errors -> 404 page.
    view = await run_in_threadpool(
        app_state(request).conversations.get_conversation, user.id, conversation_id
    )
    return await _chat_page(request, user, view)


routes = [
    Route("/", root, methods=["GET"]),
    Route("/chat", chat, methods=["GET"]),
    Route("/c/{conversation_id:id}", conversation, methods=["GET"]),
]
