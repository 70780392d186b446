"""The user's documents over HTTP (docs/INTERFACES.md 8): list, upload, read, delete, share,
and the chunk a citation links to (JSON, and an HTML page), addressed by document id and chunk
id: chunk ids may be reused after a delete, document ids (uuids) never are.

Who: the session cookie (with the CSRF token on unsafe requests) or an API key in
``Authorization: Bearer`` (such requests carry no cookie and need no CSRF token, see
web.security). Every id is checked against its owner by the backend: another user's document or
chunk is a 404, like one that does not exist.

Upload: ``POST /api/documents``, multipart/form-data with the file in field ``file`` (and
``shared=1`` for an admin sharing it with everyone). The size cap is enforced while the body is
read: a declared Content-Length over the cap is refused before reading anything, and a body that
grows past the cap is refused at that point, not after it was all read. The upload answers 202
with the document in status ``processing``; ingestion runs on the worker's thread and its
progress and final status show in ``GET /api/documents``.
"""

from __future__ import annotations

from pathlib import PureWindowsPath
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from backend.auth import UserInfo
from backend.errors import NotFound, ValidationFailed
from backend.models import MAX_CHUNK_ID
from backend.rag import DocumentTooLarge, Source
from backend.rag.extract import readable_size
import web.inputs  # noqa: F401  (registers the {name:id} path convertor)
from web.api import read_json_object, to_jsonable
from web.body_limits import MULTIPART_OVERHEAD_BYTES, BodyTooLarge, limited_request
from web.errors import CODE_UNAUTHENTICATED, error_response
from web.session import current_user, page_user_or_redirect, user_for_bearer
from web.state import AppState, app_state

NO_STORE = {"Cache-Control": "no-store"}
_TRUE = frozenset({"1", "true", "on", "yes"})
_FALSE = frozenset({"0", "false", "off", "no", ""})


async def api_user(request: Request) -> UserInfo | None:
    """The caller: the session's user, else the owner of a Bearer API key, else None."""
    user = await current_user(request)
    if user is None:
        user = await user_for_bearer(request)
    return user


def _unauthenticated(request: Request) -> Response:
    return error_response(request, 401, CODE_UNAUTHENTICATED, "Log in first, or send an API key as a Bearer token.")


def _services(request: Request) -> AppState:
    state = app_state(request)
    if state.documents is None or state.ingestion is None:
        raise RuntimeError("this app was built without documents")
    return state


async def list_documents(request: Request) -> Response:
    user = await api_user(request)
    if user is None:
        return _unauthenticated(request)
    items = await run_in_threadpool(_services(request).documents.list_documents, user.id)  # type: ignore[union-attr]
    return JSONResponse({"documents": to_jsonable(items)}, headers=NO_STORE)


async def get_document(request: Request) -> Response:
    user = await api_user(request)
    if user is None:
        return _unauthenticated(request)
    view = await run_in_threadpool(
        _services(request).documents.get, user.id, request.path_params["document_id"]  # type: ignore[union-attr]
    )
    return JSONResponse(to_jsonable(view), headers=NO_STORE)


async def delete_document(request: Request) -> Response:
    user = await api_user(request)
    if user is None:
        return _unauthenticated(request)
    await run_in_threadpool(
        _services(request).documents.delete, user.id, request.path_params["document_id"]  # type: ignore[union-attr]
    )
    return Response(status_code=204)


async def share_document(request: Request) -> Response:
    user = await api_user(request)
    if user is None:
        return _unauthenticated(request)
    body = await read_json_object(request)
    shared = body.get("shared")
    if not isinstance(shared, bool):
        raise ValidationFailed("'shared' must be true or false")
    view = await run_in_threadpool(
        _services(request).documents.set_shared, user.id, request.path_params["document_id"], shared  # type: ignore[union-attr]
    )
    return JSONResponse(to_jsonable(view), headers=NO_STORE)


async def upload_document(request: Request) -> Response:
    user = await api_user(request)
    if user is None:
        return _unauthenticated(request)
    state = _services(request)
    max_bytes = state.documents.settings.max_upload_bytes  # type: ignore[union-attr]
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "multipart/form-data":
        raise ValidationFailed("send the document as multipart/form-data, in a field named 'file'")
    body_limit = max_bytes + MULTIPART_OVERHEAD_BYTES
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > body_limit:
        raise DocumentTooLarge(f"the upload is {readable_size(int(declared))}; the limit is {readable_size(max_bytes)}")
    limited = limited_request(request, body_limit)
    try:
        form = await limited.form(max_files=1, max_fields=8)
    except BodyTooLarge:
        raise DocumentTooLarge(f"the upload is over the limit of {readable_size(max_bytes)}") from None
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise ValidationFailed("the form needs the document in a file field named 'file'")
        shared = _shared_field(form.get("shared"))
        data = await upload.read()
        filename = _base_name(upload.filename or "")
    finally:
        await form.close()
    view, _future = await run_in_threadpool(
        lambda: state.ingestion.submit(user.id, filename, data, shared=shared)  # type: ignore[union-attr]
    )
    return JSONResponse(
        to_jsonable(view), status_code=202, headers={**NO_STORE, "Location": f"/api/documents/{view.id}"}
    )


async def chunk_json(request: Request) -> Response:
    user = await api_user(request)
    if user is None:
        return _unauthenticated(request)
    source = await run_in_threadpool(
        _services(request).documents.chunk, user.id, request.path_params["document_id"], _chunk_id(request)  # type: ignore[union-attr]
    )
    return JSONResponse(to_jsonable(source), headers=NO_STORE)


async def chunk_page(request: Request) -> Response:
    """The page a citation links to. Logged out: to /login; not visible: the 404 page. A chunk of a
    version since replaced or deleted shows the excerpt the user's own reply stored with the
    citation (ConversationService.stored_citation), said to be so."""
    user = await page_user_or_redirect(request)
    if isinstance(user, Response):
        return user
    state = _services(request)
    document_id, chunk_id = request.path_params["document_id"], _chunk_id(request)
    replaced = False
    try:
        source = await run_in_threadpool(state.documents.chunk, user.id, document_id, chunk_id)  # type: ignore[union-attr]
    except NotFound:
        # a version since replaced (or deleted): the excerpt the user's own reply stored with its citation
        cited = await run_in_threadpool(state.conversations.stored_citation, user.id, document_id, chunk_id)
        if cited is None:
            raise
        source = Source(chunk_id, document_id, str(cited.get("name") or ""), cited.get("version") or 0, -1,
                        str(cited.get("heading_path") or ""), cited.get("page"), str(cited.get("excerpt") or ""), 0.0)
        replaced = True
    response = state.templates.TemplateResponse(request, "chunk.html", {"user": user, "source": source,
                                                                        "replaced": replaced})
    response.headers["Cache-Control"] = "no-store"
    return response


def _chunk_id(request: Request) -> int:
    """The path's chunk id; one past what the database can hold is simply not found."""
    chunk_id = request.path_params["chunk_id"]
    if chunk_id > MAX_CHUNK_ID:
        raise NotFound("no such source")
    return chunk_id


def _shared_field(value: Any) -> bool | None:
    """The optional `shared` form field: None when absent (keep the name's sharing)."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in _TRUE:
        return True
    if isinstance(value, str) and value.strip().lower() in _FALSE:
        return False
    raise ValidationFailed("'shared' must be 1 or 0")


def _base_name(filename: str) -> str:
    """The last component of a browser-sent file name (some send C:\\fakepath\\name)."""
    return PureWindowsPath(filename).name if "\\" in filename else filename


routes = [
    Route("/api/documents", list_documents, methods=["GET"]),
    Route("/api/documents", upload_document, methods=["POST"]),
    Route("/api/documents/{document_id:id}", get_document, methods=["GET"]),
    Route("/api/documents/{document_id:id}", delete_document, methods=["DELETE"]),
    Route("/api/documents/{document_id:id}/share", share_document, methods=["POST"]),
    Route("/api/documents/{document_id:id}/chunks/{chunk_id:int}", chunk_json, methods=["GET"]),
    Route("/documents/{document_id:id}/chunks/{chunk_id:int}", chunk_page, methods=["GET"]),
]
