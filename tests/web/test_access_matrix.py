"""The role and ownership matrix (issue 5): every route of the app as anonymous, user (the owner
of the ids in the path), other user, disabled user and admin; nobody reaches what is not his.

The route list is read from the app itself: a route added later without a row here fails
`test_every_route_has_a_row`. Requests carry a valid CSRF token for their cookies, so what is
tested is authorization, not CSRF (tests/web/test_csrf.py covers that).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from backend.models import DocumentChunk

from .conftest import app_state, csrf_headers, sign_up, use_session

PERSONAS = ("anon", "user", "other", "disabled", "admin")
ANY_ADMIN_OK = {200, 204, 303}


@dataclass(frozen=True)
class Row:
    body: Any  # JSON body (dict), form data (("form", dict)), a file (("file", (name, bytes))) or None
    expect: dict[str, set[int]]


def _all(*statuses: int) -> dict[str, set[int]]:
    return {p: set(statuses) for p in PERSONAS}


def _by(anon, user, other, disabled, admin) -> dict[str, set[int]]:
    def s(v):
        return {v} if isinstance(v, int) else set(v)
    return {"anon": s(anon), "user": s(user), "other": s(other), "disabled": s(disabled), "admin": s(admin)}


LOGGED_IN_PAGE = _by(303, 200, 200, 303, 200)
LOGGED_IN_JSON = _by(401, 200, 200, 401, 200)
OWNED_PAGE = _by(303, 200, 404, 303, 404)  # admins do not read other people's conversations
OWNED_JSON = _by(401, 200, 404, 401, 404)
ADMIN_PAGE = _by(303, 403, 403, 303, 200)
ADMIN_JSON = _by(401, 403, 403, 401, 200)
V1 = _all(401)  # a cookie never authenticates /v1: Bearer only
IMPORT_FILE = (b'{"format": "crescent.conversation", "version": 1, "conversation": {"title": "Imported"}, '
               b'"messages": [{"id": "1", "parent_id": null, "role": "user", "content": "hi"}]}')

MATRIX: dict[tuple[str, str], Row] = {
    ("GET", "/"): Row(None, _all(303)),
    ("GET", "/chat"): Row(None, LOGGED_IN_PAGE),
    ("GET", "/c/{conversation_id:id}"): Row(None, OWNED_PAGE),
    ("GET", "/login"): Row(None, _by(200, 303, 303, 200, 303)),
    ("POST", "/login"): Row(("form", {}), _all(400)),
    ("GET", "/signup"): Row(None, _by(200, 303, 303, 200, 303)),
    ("POST", "/signup"): Row(("form", {}), _all(400)),
    ("POST", "/logout"): Row(("form", {}), _all(303)),
    ("GET", "/account"): Row(None, LOGGED_IN_PAGE),
    ("GET", "/api/account/keys"): Row(None, LOGGED_IN_JSON),
    ("POST", "/api/account/keys"): Row({"name": "matrix"}, _by(401, 201, 201, 401, 201)),
    ("DELETE", "/api/account/keys/{key_id:id}"): Row(None, _by(401, 204, 404, 401, 404)),
    ("POST", "/api/account/password"): Row({}, _by(401, 400, 400, 401, 400)),
    ("POST", "/api/account/theme"): Row({"theme": "dark"}, _by(401, 200, 200, 401, 200)),
    ("GET", "/admin"): Row(None, ADMIN_PAGE),
    ("POST", "/admin/settings"): Row(("form", {}), _by({303, 401}, 403, 403, {303, 401}, 303)),
    ("GET", "/admin/api/settings"): Row(None, ADMIN_JSON),
    ("POST", "/admin/api/settings"): Row({}, _by(401, 403, 403, 401, {200, 400})),
    ("GET", "/admin/api/users"): Row(None, ADMIN_JSON),
    ("POST", "/admin/api/users/{user_id:id}/status"): Row({"status": "active"}, _by(401, 403, 403, 401, {200, 204})),
    ("POST", "/admin/api/users/{user_id:id}/role"): Row({"role": "user"}, _by(401, 403, 403, 401, {200, 204})),
    ("GET", "/admin/api/engine"): Row(None, ADMIN_JSON),
    # A well-formed id no store keeps: the admin gets 404 (tests/web/test_tracing.py opens real ones).
    ("GET", "/admin/traces/{trace_id:id}"): Row(None, _by(303, 403, 403, 303, 404)),
    ("GET", "/admin/runs"): Row(None, ADMIN_PAGE),
    # A well-formed id of no run: the admin gets 404 (tests/web/test_agent_run_routes.py opens real ones).
    ("GET", "/admin/runs/{run_id:id}"): Row(None, _by(303, 403, 403, 303, 404)),
    ("GET", "/metrics"): Row(None, _by(401, 403, 403, 401, 200)),
    ("GET", "/api/conversations"): Row(None, LOGGED_IN_JSON),
    ("GET", "/api/conversations/{conversation_id:id}"): Row(None, OWNED_JSON),
    ("DELETE", "/api/conversations/{conversation_id:id}"): Row(None, _by(401, 204, 404, 401, 404)),
    ("GET", "/healthz"): Row(None, _all(200)),
    ("PATCH", "/api/conversations/{conversation_id:id}"): Row({"use_documents": True}, _by(401, 204, 404, 401, 404)),
    # Search, export and import (issue 12): the importer owns the new conversation.
    ("GET", "/api/search"): Row(None, LOGGED_IN_JSON),
    ("GET", "/api/conversations/{conversation_id:id}/export"): Row(None, OWNED_JSON),
    ("GET", "/api/conversations/{conversation_id:id}/branch"): Row(None, OWNED_JSON),
    # The owner's own conversation has no such message: 404 for him too (tests/web/test_branches.py
    # switches real branches); what matters here is that nobody else gets further.
    ("POST", "/api/conversations/{conversation_id:id}/branch"): Row({"message_id": "0" * 32},
                                                                      _by(401, 404, 404, 401, 404)),
    ("GET", "/api/conversations/{conversation_id:id}/settings"): Row(None, OWNED_JSON),
    ("PATCH", "/api/conversations/{conversation_id:id}/settings"): Row({"temperature": 0.5},
                                                                        _by(401, 200, 404, 401, 404)),
    ("POST", "/api/conversations/import"): Row(("file", ("c.json", IMPORT_FILE)), _by(401, 201, 201, 401, 201)),
    ("GET", "/api/account/export"): Row(None, LOGGED_IN_JSON),
    # Documents (issue 6): admins do not read other people's documents either.
    ("GET", "/api/documents"): Row(None, LOGGED_IN_JSON),
    ("POST", "/api/documents"): Row(("file", ("matrix.txt", b"matrix text")), _by(401, 202, 202, 401, 202)),
    ("GET", "/api/documents/{document_id:id}"): Row(None, OWNED_JSON),
    ("DELETE", "/api/documents/{document_id:id}"): Row(None, _by(401, 204, 404, 401, 404)),
    # Sharing needs an admin, and his own document: the owner is no admin, the admin no owner.
    ("POST", "/api/documents/{document_id:id}/share"): Row({"shared": True}, _by(401, 403, 403, 401, 404)),
    ("GET", "/api/documents/{document_id:id}/chunks/{chunk_id:int}"): Row(None, OWNED_JSON),
    ("GET", "/documents/{document_id:id}/chunks/{chunk_id:int}"): Row(None, OWNED_PAGE),
    # Notes (issue 15): the save_note tool's notes; admins do not read other people's either.
    ("GET", "/notes"): Row(None, LOGGED_IN_PAGE),
    ("POST", "/notes/{note_id:id}/delete"): Row(("form", {}), _by(303, 303, 404, 303, 404)),
    ("GET", "/api/notes"): Row(None, LOGGED_IN_JSON),
    ("DELETE", "/api/notes/{note_id:id}"): Row(None, _by(401, 204, 404, 401, 404)),
    ("GET", "/v1/models"): Row(None, V1),
    ("GET", "/v1/models/{model:path}"): Row(None, V1),
    ("POST", "/v1/chat/completions"): Row({"model": "x", "messages": []}, V1),
    ("POST", "/v1/completions"): Row({"model": "x", "prompt": "hi"}, V1),
    ("GET", "/v1/{rest:path}"): Row(None, _all(401, 404)),
    ("POST", "/v1/{rest:path}"): Row({}, _all(401, 404)),
    ("PUT", "/v1/{rest:path}"): Row({}, _all(401, 404)),
    ("PATCH", "/v1/{rest:path}"): Row({}, _all(401, 404)),
    ("DELETE", "/v1/{rest:path}"): Row(None, _all(401, 404)),
}
# Checked by their own tests below.
SPECIAL = {("WEBSOCKET", "/ws"), ("GET", "/static")}


def _app_routes(app) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for route in app.routes:
        if isinstance(route, Route):
            found |= {(m, route.path) for m in (route.methods or ()) if m != "HEAD"}
        elif isinstance(route, WebSocketRoute):
            found.add(("WEBSOCKET", route.path))
        elif isinstance(route, Mount):
            found.add(("GET", route.path))
        else:
            found.add(("UNKNOWN", getattr(route, "path", repr(route))))
    return found


@pytest.fixture
def world(client: TestClient) -> dict[str, Any]:
    tokens = {"anon": None}
    for persona, name in (("admin", "root"), ("user", "alice"), ("other", "bob"), ("disabled", "dave")):
        use_session(client, None)
        tokens[persona] = sign_up(client, name)
    state = app_state(client)
    ids = {p: state.auth.user_for_session(t).id for p, t in tokens.items() if t}
    _, dave_key = state.api_keys.create_key(ids["disabled"], "dave")
    _, alice_key = state.api_keys.create_key(ids["user"], "alice")
    state.users.set_status(ids["admin"], ids["disabled"], "disabled")
    return {"client": client, "tokens": tokens, "ids": ids, "state": state,
            "keys": {"user": alice_key, "disabled": dave_key}}


def test_every_route_has_a_row(client: TestClient) -> None:
    missing = _app_routes(client.app) - set(MATRIX) - SPECIAL
    assert not missing, f"routes without a row in the access matrix: {sorted(missing)}"
    stale = set(MATRIX) - _app_routes(client.app)
    assert not stale, f"matrix rows for routes that no longer exist: {sorted(stale)}"


def _fill(path: str, world: dict[str, Any]) -> str:
    state, ids = world["state"], world["ids"]
    if "{conversation_id:id}" in path:
        conversation = state.conversations.create_conversation(ids["user"], "Alice's")
        path = path.replace("{conversation_id:id}", conversation.id)
    if "{document_id:id}" in path or "{chunk_id:int}" in path:
        world["documents"] = world.get("documents", 0) + 1
        data = f"Alice's private note number {world['documents']}.".encode()
        view = state.documents.upload(ids["user"], f"note{world['documents']}.txt", data)
        view = state.documents.ingest(view.id, data)
        with state.documents.session_factory() as db:
            chunk_id = db.scalar(select(DocumentChunk.id).where(DocumentChunk.document_id == view.id))
        path = path.replace("{document_id:id}", view.id).replace("{chunk_id:int}", str(chunk_id))
    if "{note_id:id}" in path:
        world["notes"] = world.get("notes", 0) + 1
        note = state.notes.add(ids["user"], "Alice's note", "private", idempotency_key=f"matrix:{world['notes']}").note
        path = path.replace("{note_id:id}", note.id)
    if "{key_id:id}" in path:
        view, _ = state.api_keys.create_key(ids["user"], "target")
        path = path.replace("{key_id:id}", view.id)
    return (path.replace("{user_id:id}", ids["user"]).replace("{model:path}", "fake-model")
            .replace("{rest:path}", "no-such-endpoint").replace("{trace_id:id}", "ab" * 16).replace("{run_id:id}", "cd" * 16))


def test_access(world: dict[str, Any]) -> None:
    """One test over all rows (the personas' sign-ups cost argon2 hashes; doing them once keeps
    this affordable); every failing cell is listed."""
    client: TestClient = world["client"]
    failures = []
    # Log-out ends the personas' sessions: its row goes last, so no row after it runs logged out.
    for (method, template), row in sorted(MATRIX.items(), key=lambda item: (item[0] == ("POST", "/logout"), item[0])):
        # The owner goes last; each attempt gets a fresh object of the owner's (deletes succeed
        # only for him, so the others' attempts always meet an existing object).
        for persona in ("anon", "disabled", "other", "admin", "user"):
            path = _fill(template, world)
            use_session(client, world["tokens"][persona])
            json_path = path.startswith(("/api/", "/admin/api/", "/v1/"))
            headers = {"Accept": "application/json" if json_path else "text/html", **csrf_headers(client)}
            kwargs: dict[str, Any] = {"headers": headers}
            if isinstance(row.body, tuple) and row.body[0] == "file":
                kwargs["files"] = {"file": row.body[1]}
            elif isinstance(row.body, tuple):
                kwargs["data"] = row.body[1]
            elif row.body is not None:
                kwargs["json"] = row.body
            response = client.request(method, path, **kwargs)
            if response.status_code not in row.expect[persona]:
                failures.append(f"{method} {template} as {persona}: {response.status_code} not in "
                                f"{sorted(row.expect[persona])}: {response.text[:120]!r}")
    assert not failures, "\n".join(failures)


def test_other_users_never_see_the_owners_data_in_listings(world: dict[str, Any]) -> None:
    client, state, ids = world["client"], world["state"], world["ids"]
    conversation = state.conversations.create_conversation(ids["user"], "Private title")
    for persona in ("other", "admin"):
        use_session(client, world["tokens"][persona])
        assert conversation.id not in client.get("/api/conversations").text
        assert "Private title" not in client.get("/chat").text
        assert world["keys"]["user"][:12] not in client.get("/api/account/keys").text


def test_bearer_keys_work_only_for_active_users_and_only_on_the_api(world: dict[str, Any]) -> None:
    client = world["client"]
    use_session(client, None)
    ok = client.get("/v1/models", headers={"Authorization": f"Bearer {world['keys']['user']}"})
    assert ok.status_code == 200
    disabled = client.get("/v1/models", headers={"Authorization": f"Bearer {world['keys']['disabled']}"})
    assert disabled.status_code == 401
    # A key is not a session: pages, /api and /admin ignore it.
    headers = {"Authorization": f"Bearer {world['keys']['user']}", "Accept": "application/json"}
    assert client.get("/api/conversations", headers=headers).status_code == 401
    assert client.get("/admin/api/users", headers=headers).status_code == 401


def test_websocket_needs_an_active_session(world: dict[str, Any]) -> None:
    client = world["client"]
    for persona, allowed in (("anon", False), ("disabled", False), ("user", True), ("admin", True)):
        use_session(client, world["tokens"][persona])
        if allowed:
            with client.websocket_connect("/ws") as ws:
                ws.send_json({"type": "ping"})
                assert ws.receive_json() == {"type": "pong"}
        else:
            with pytest.raises(WebSocketDisconnect) as closed:
                with client.websocket_connect("/ws") as ws:
                    ws.receive_json()
            assert closed.value.code == 4401, persona


def test_static_files_are_public(client: TestClient) -> None:
    assert client.get("/static/style.css").status_code == 200
