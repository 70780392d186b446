"""The /notes page and its JSON endpoints: the notes the agent's `save_note` tool saved.

- ``GET /notes``: the page (logged-in users; others are sent to /login), newest first; each
  note has a Delete form (POST, CSRF field).
- ``POST /notes/{note_id}/delete`` (form, ``csrf_token`` field) -> 303 to /notes; another
  user's or an unknown id: 404.
- ``GET /api/notes`` -> ``{"notes": [{id, title, text, created_at, conversation_id}]}``
  (newest first, at most backend.notes.LIST_LIMIT).
- ``DELETE /api/notes/{note_id}`` (X-CSRF-Token header) -> 204; another user's or unknown: 404.

A note's title and text are data (the model wrote them from what a user typed or a document
said): the template escapes them, the JSON carries them as strings.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

import web.inputs  # noqa: F401  (registers the {name:id} path convertor)
from backend.auth import UserInfo
from backend.notes import NoteService
from web.api import to_jsonable
from web.session import page_user_or_redirect, session_user_or_401
from web.state import app_state

_NO_STORE = {"Cache-Control": "no-store"}


def _notes(request: Request) -> NoteService:
    notes = app_state(request).notes
    if notes is None:  # apps built without it (never by create_app)
        raise RuntimeError("the app has no NoteService")
    return notes



async def notes_page(request: Request) -> Response:
    user = await page_user_or_redirect(request)
    if isinstance(user, Response):
        return user
    notes = await run_in_threadpool(_notes(request).list, user.id)
    response = app_state(request).templates.TemplateResponse(request, "notes.html", {"user": user, "notes": notes})
    response.headers["Cache-Control"] = "no-store"
    return response


async def delete_note_form(request: Request) -> Response:
    """NotFound (404 page) for another user's note; the CSRF middleware has checked the token."""
    user = await page_user_or_redirect(request)
    if isinstance(user, Response):
        return user
    await run_in_threadpool(_notes(request).delete, user.id, request.path_params["note_id"])
    return RedirectResponse("/notes", status_code=303)


async def list_notes(request: Request) -> Response:
    user = await session_user_or_401(request)
    if isinstance(user, Response):
        return user
    notes = await run_in_threadpool(_notes(request).list, user.id)
    return JSONResponse({"notes": to_jsonable(notes)}, headers=_NO_STORE)


async def delete_note(request: Request) -> Response:
    user = await session_user_or_401(request)
    if isinstance(user, Response):
        return user
    await run_in_threadpool(_notes(request).delete, user.id, request.path_params["note_id"])
    return Response(status_code=204)


routes = [
    Route("/notes", notes_page, methods=["GET"]),
    Route("/notes/{note_id:id}/delete", delete_note_form, methods=["POST"]),
    Route("/api/notes", list_notes, methods=["GET"]),
    Route("/api/notes/{note_id:id}", delete_note, methods=["DELETE"]),
]
