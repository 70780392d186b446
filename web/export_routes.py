"""Downloads and the import of a conversation, and the archive of all of a user's data.

- ``GET /api/conversations/{id}/export?format=json|md&scope=tree|branch``: an attachment
  (``Content-Disposition``); JSON defaults to the whole tree, Markdown to the active branch.
- ``POST /api/conversations/import``: multipart/form-data, the file in field ``file`` (CSRF
  header as every unsafe request) -> 201 ``{"conversation": {id, title, ...}, "url": "/c/{id}"}``;
  400 ``invalid_input`` naming what is wrong with the file, 413 ``import_too_large``.
- ``GET /api/account/export``: a zip of every conversation (JSON and Markdown), the user's
  documents' metadata and his account without secrets.

Session only: 401 without one; another user's conversation id is a 404 (docs/INTERFACES.md 9).
"""

from __future__ import annotations

import json
import tempfile
from typing import Iterator

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from backend.agent.access import budget_limits
from backend.conversation_export import slug
from backend.conversation_import import MAX_IMPORT_BYTES, ImportTooLarge
from backend.errors import ValidationFailed
from backend.models import utcnow
import web.inputs  # noqa: F401  (registers the {name:id} path convertor)
from web.api import to_jsonable
from web.body_limits import MULTIPART_OVERHEAD_BYTES, BodyTooLarge, limited_request
from web.errors import CODE_UNAUTHENTICATED, error_response
from web.session import current_user
from web.state import app_state

NO_STORE = {"Cache-Control": "no-store"}
FORMATS = {"json": ("application/json", "json"), "md": ("text/markdown; charset=utf-8", "md")}
DEFAULT_SCOPE = {"json": "tree", "md": "branch"}
ARCHIVE_CHUNK_BYTES = 64 * 1024
# Archives up to this size are built in memory, bigger ones spill to a temporary file.
ARCHIVE_MEMORY_BYTES = 8 * 1024 * 1024


def attachment(filename: str) -> dict[str, str]:
    """Headers of a download named `filename` (ASCII: slug() made it)."""
    return {**NO_STORE, "Content-Disposition": f'attachment; filename="{filename}"'}


def _unauthenticated(request: Request) -> Response:
    return error_response(request, 401, CODE_UNAUTHENTICATED, "Log in first.")


async def export_conversation(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return _unauthenticated(request)
    fmt = request.query_params.get("format", "json")
    if fmt not in FORMATS:
        raise ValidationFailed("format must be json or md")
    scope = request.query_params.get("scope", DEFAULT_SCOPE[fmt])
    transfer = app_state(request).transfer
    conversation_id = request.path_params["conversation_id"]
    media_type, extension = FORMATS[fmt]
    if fmt == "json":
        doc = await run_in_threadpool(transfer.export_json, user.id, conversation_id, scope)
        title = doc["conversation"]["title"]
        response: Response = Response(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", media_type=media_type)
    else:
        title, text = await run_in_threadpool(transfer.export_markdown, user.id, conversation_id, scope)
        response = Response(text, media_type=media_type)
    suffix = "" if scope == DEFAULT_SCOPE[fmt] else f"-{scope}"
    response.headers.update(attachment(f"{slug(title)}{suffix}.{extension}"))
    return response


async def import_conversation(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return _unauthenticated(request)
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "multipart/form-data":
        raise ValidationFailed("send the file as multipart/form-data, in a field named 'file'")
    body_limit = MAX_IMPORT_BYTES + MULTIPART_OVERHEAD_BYTES
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > body_limit:
        raise ImportTooLarge()
    limited = limited_request(request, body_limit)
    try:
        form = await limited.form(max_files=1, max_fields=4)
    except BodyTooLarge:
        raise ImportTooLarge() from None
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise ValidationFailed("the form needs the conversation file in a file field named 'file'")
        data = await upload.read()
    finally:
        await form.close()
    state = app_state(request)
    # A run budget value above this deployment's current maximum is stored at the maximum.
    limits = budget_limits(state.runtime_settings.get())
    summary = await run_in_threadpool(state.transfer.import_json, user.id, data, limits)
    url = f"/c/{summary.id}"
    return JSONResponse({"conversation": to_jsonable(summary), "url": url}, status_code=201,
                        headers={**NO_STORE, "Location": url})


async def export_account(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return _unauthenticated(request)
    spool = tempfile.SpooledTemporaryFile(max_size=ARCHIVE_MEMORY_BYTES)
    try:
        await run_in_threadpool(app_state(request).transfer.export_archive, user.id, spool)
    except BaseException:
        spool.close()
        raise
    spool.seek(0)

    def chunks() -> Iterator[bytes]:  # iterated in the thread pool by Starlette
        try:
            while chunk := spool.read(ARCHIVE_CHUNK_BYTES):
                yield chunk
        finally:
            spool.close()

    filename = f"crescent-{slug(user.username)}-{utcnow():%Y-%m-%d}.zip"
    return StreamingResponse(chunks(), media_type="application/zip", headers=attachment(filename))


routes = [
    Route("/api/conversations/import", import_conversation, methods=["POST"]),
    Route("/api/conversations/{conversation_id:id}/export", export_conversation, methods=["GET"]),
    Route("/api/account/export", export_account, methods=["GET"]),
]
