"""The JSON API: the user's conversations, and the health check.

``GET /api/conversations`` -> ``{"conversations": [{id, title, created_at, updated_at}, ...]}``
(newest first); ``GET /api/conversations/{id}`` -> ``{id, title, messages: [...]}`` (the fields of
:class:`backend.conversations.MessageView`, ``sources`` included) and ``use_documents``;
``DELETE /api/conversations/{id}`` -> 204; ``PATCH /api/conversations/{id}`` with the JSON
object ``{"use_documents": bool}``, ``{"title": str}`` or ``{"pinned": bool}`` -> 204 (400
``invalid_input`` for anything else).
Times are ISO 8601 strings. Without a session: 401 ``{"error": {"code": "unauthenticated"}}``;
an unknown or another user's id: 404 ``{"error": {"code": "not_found"}}``.
``GET /healthz`` -> ``{"status": "ok", "model": str, "ready": bool}``.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from backend import safe_json
from backend.errors import ValidationFailed
from backend.safe_json import JSONTooDeep
from web.errors import CODE_UNAUTHENTICATED, error_response
from web.inputs import check_json_texts
from web.session import current_user
from web.state import app_state


def to_jsonable(value: Any) -> Any:
    """Dataclasses, datetimes, enums, lists and dicts -> plain JSON values (recursively)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


MAX_JSON_BODY_BYTES = 64 * 1024


async def read_json_object(request: Request, max_bytes: int = MAX_JSON_BODY_BYTES) -> dict[str, Any]:
    """The JSON object in a request body (an empty body reads as ``{}``).

    Raises:
        ValidationFailed: the body is over `max_bytes`, not UTF-8 JSON, nested too deep, not an
            object, or a string in it holds a control character (web/inputs.py).
    """
    body = await request.body()
    if len(body) > max_bytes:
        raise ValidationFailed("The request body is too large")
    try:
        value = safe_json.loads(body or b"{}")
    except JSONTooDeep as exc:
        raise ValidationFailed(f"The request body is {exc}") from None
    except ValueError:  # UnicodeDecodeError included
        raise ValidationFailed("The request body is not JSON") from None
    if not isinstance(value, dict):
        raise ValidationFailed("The request body must be a JSON object")
    check_json_texts(value)
    return value


def _unauthenticated(request: Request) -> Response:
    return error_response(request, 401, CODE_UNAUTHENTICATED, "Log in first.")


async def list_conversations(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return _unauthenticated(request)
    items = await run_in_threadpool(app_state(request).conversations.list_conversations, user.id)
    return JSONResponse({"conversations": to_jsonable(items)}, headers={"Cache-Control": "no-store"})


async def get_conversation(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return _unauthenticated(request)
    view = await run_in_threadpool(
        app_state(request).conversations.get_conversation, user.id, request.path_params["conversation_id"]
    )
    return JSONResponse(to_jsonable(view), headers={"Cache-Control": "no-store"})


async def delete_conversation(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return _unauthenticated(request)
    state = app_state(request)
    conversation_id = request.path_params["conversation_id"]
    await run_in_threadpool(state.conversations.delete_conversation, user.id, conversation_id)
    await state.chat.end_conversation(user.id, conversation_id)  # a reply streaming in it stops
    return Response(status_code=204)


async def patch_conversation(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return _unauthenticated(request)
    body = await read_json_object(request)
    conversations = app_state(request).conversations
    conversation_id = request.path_params["conversation_id"]
    if set(body) == {"title"}:
        await run_in_threadpool(conversations.rename_conversation, user.id, conversation_id, body["title"])
        return Response(status_code=204)
    if set(body) == {"pinned"}:
        await run_in_threadpool(conversations.set_pinned, user.id, conversation_id, body["pinned"])
        return Response(status_code=204)
    if set(body) != {"use_documents"} or not isinstance(body["use_documents"], bool):
        raise ValidationFailed('the body must be {"use_documents": true | false}, {"title": "..."} '
                               'or {"pinned": true | false}')
    await run_in_threadpool(conversations.set_use_documents, user.id, conversation_id, body["use_documents"])
    return Response(status_code=204)


async def healthz(request: Request) -> Response:
    state = app_state(request)
    ready = state.ready and bool(getattr(state.generator, "ready", True))
    return JSONResponse(
        {"status": "ok", "model": state.generator.model_name, "ready": ready},
        headers={"Cache-Control": "no-store"},
    )


routes = [
    Route("/api/conversations", list_conversations, methods=["GET"]),
    Route("/api/conversations/{conversation_id:id}", get_conversation, methods=["GET"]),
    Route("/api/conversations/{conversation_id:id}", delete_conversation, methods=["DELETE"]),
    Route("/api/conversations/{conversation_id:id}", patch_conversation, methods=["PATCH"]),
    Route("/healthz", healthz, methods=["GET"]),
]
