"""web.documents_routes: upload (session or API key), limits, progress, isolation, deletion,
sharing, citation targets; and the documents' part of the app's lifespan."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Iterator

import pytest
from sqlalchemy import select, text
from starlette.testclient import TestClient

from backend.models import Document, DocumentChunk
from backend.rag import HashingEmbedder, RagSettings
from backend.settings import Settings
from web.app import create_app

from .conftest import FakeGenerator, app_state, csrf_headers, sign_up, use_session, user_id, wait_until

NOTE = "# Garden\n\nThe blue heron visits the pond every morning at seven.\n"


def upload(client: TestClient, name: str, content: bytes, **extra: Any):
    headers = {"Accept": "application/json", **csrf_headers(client), **extra.pop("headers", {})}
    return client.post("/api/documents", files={"file": (name, content)}, headers=headers, **extra)


def wait_ready(client: TestClient, document_id: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        view = client.get(f"/api/documents/{document_id}", headers=headers or {}).json()
        return view if view["status"] != "processing" else None

    return wait_until(ready, timeout=10.0, what=f"document {document_id} to be indexed")


def chunk_ids(client: TestClient, document_id: str) -> list[int]:
    with app_state(client).documents.session_factory() as db:
        return list(db.scalars(select(DocumentChunk.id).where(DocumentChunk.document_id == document_id)))


def test_upload_with_the_session_is_indexed_off_the_request_path(client: TestClient) -> None:
    sign_up(client, "alice")
    response = upload(client, "garden.md", NOTE.encode())
    assert response.status_code == 202, response.text
    created = response.json()
    assert (created["status"], created["name"], created["version"], created["kind"]) == ("processing", "garden.md", 1, "md")
    assert response.headers["location"] == f"/api/documents/{created['id']}"
    done = wait_ready(client, created["id"])
    assert (done["status"], done["progress"], done["error"]) == ("ready", 1.0, None)
    assert done["num_chunks"] == len(chunk_ids(client, created["id"])) >= 1
    assert done["size_bytes"] == len(NOTE.encode())
    listed = client.get("/api/documents").json()["documents"]
    assert [(d["id"], d["status"], d["is_own"]) for d in listed] == [(created["id"], "ready", True)]


def test_a_second_upload_of_a_name_is_a_new_version(client: TestClient) -> None:
    sign_up(client, "alice")
    first = upload(client, "garden.md", NOTE.encode()).json()
    wait_ready(client, first["id"])
    second = upload(client, "garden.md", b"# Garden\n\nThe heron moved to the river.\n").json()
    assert second["version"] == 2
    wait_ready(client, second["id"])
    listed = client.get("/api/documents").json()["documents"]
    assert [(d["name"], d["version"]) for d in listed] == [("garden.md", 2)]


class GatedEmbedder(HashingEmbedder):
    """Embeds one batch, then waits for the test before the rest: progress is observable."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.batches = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        if self.batches >= 1:
            self.gate.wait(10.0)
        self.batches += 1
        return super().embed(texts)


def test_ingestion_progress_shows_in_the_list(settings: Settings, fake: FakeGenerator) -> None:
    embedder = GatedEmbedder()
    rag = RagSettings(chunk_tokens=20, chunk_overlap=0, embed_batch=1)
    with TestClient(create_app(settings, generator=fake, embedder=embedder, rag_settings=rag), follow_redirects=False) as client:
        sign_up(client, "alice")
        body = "\n\n".join(f"Paragraph {i} tells of heron number {i} and the pond." * 2 for i in range(6))
        created = upload(client, "long.txt", body.encode()).json()

        def midway() -> dict[str, Any] | None:
            (doc,) = client.get("/api/documents").json()["documents"]
            return doc if 0.0 < doc["progress"] < 1.0 else None

        seen = wait_until(midway, what="a progress between 0 and 1")
        assert seen["status"] == "processing" and seen["num_chunks"] == 0
        assert chunk_ids(client, created["id"]) == []  # nothing half-indexed is visible
        embedder.gate.set()
        done = wait_ready(client, created["id"])
        assert done["status"] == "ready" and done["num_chunks"] >= 3


def test_an_api_key_uploads_lists_and_deletes_without_a_csrf_token(client: TestClient) -> None:
    token = sign_up(client, "alice")
    _, secret = app_state(client).api_keys.create_key(user_id(client, token), "script")
    use_session(client, None)
    bearer = {"Authorization": f"Bearer {secret}"}
    response = client.post("/api/documents", files={"file": ("garden.md", NOTE.encode())}, headers=bearer)
    assert response.status_code == 202, response.text
    document_id = response.json()["id"]
    wait_ready(client, document_id, bearer)
    assert [d["id"] for d in client.get("/api/documents", headers=bearer).json()["documents"]] == [document_id]
    (chunk_id, *_) = chunk_ids(client, document_id)
    assert "heron" in client.get(f"/api/documents/{document_id}/chunks/{chunk_id}", headers=bearer).json()["text"]
    # A wrong key is nobody; a cookie request still needs its CSRF token, Bearer or not.
    assert client.get("/api/documents", headers={"Authorization": "Bearer crk_wrong"}).status_code == 401
    wrong = client.post("/api/documents", files={"file": ("a.md", b"x")}, headers={"Authorization": "Bearer crk_wrong"})
    assert wrong.status_code == 401
    # Only the Bearer scheme skips the token: another scheme is no API client of ours.
    basic = client.post("/api/documents", files={"file": ("a.md", b"x")}, headers={"Authorization": "Basic YTpi"})
    assert (basic.status_code, basic.json()["error"]["code"]) == (403, "csrf_failed")
    use_session(client, token)
    refused = client.delete(f"/api/documents/{document_id}", headers=bearer)
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "csrf_failed")
    use_session(client, None)
    assert client.delete(f"/api/documents/{document_id}", headers=bearer).status_code == 204
    assert client.get("/api/documents", headers=bearer).json()["documents"] == []


def test_without_a_session_or_key_every_documents_route_is_401(client: TestClient) -> None:
    csrf = csrf_headers(client)
    x = "0" * 32  # a well-formed id: a malformed one matches no route (404, tests/web/test_inputs.py)
    for method, path in (("GET", "/api/documents"), ("POST", "/api/documents"), ("GET", f"/api/documents/{x}"),
                         ("DELETE", f"/api/documents/{x}"), ("GET", f"/api/documents/{x}/chunks/1")):
        response = client.request(method, path, headers=csrf)
        assert (response.status_code, response.json()["error"]["code"]) == (401, "unauthenticated"), (method, path)
    assert client.get(f"/documents/{x}/chunks/1").headers["location"] == "/login"


@pytest.fixture
def small_client(settings: Settings, fake: FakeGenerator) -> Iterator[TestClient]:
    app = create_app(settings, generator=fake, embedder=HashingEmbedder(), rag_settings=RagSettings(max_upload_bytes=4096))
    with TestClient(app, follow_redirects=False) as client:
        yield client


def test_oversized_uploads_are_413(small_client: TestClient) -> None:
    sign_up(small_client, "alice")
    # Over the cap, inside the multipart allowance: the exact size check names the limit.
    over = upload(small_client, "big.txt", b"a" * 4097)
    assert (over.status_code, over.json()["error"]["code"]) == (413, "document_too_large")
    # In readable sizes, without the file's name (the page names it once).
    assert over.json()["error"]["message"] == "the file is over the limit of 4 KB"
    assert "big.txt" not in over.json()["error"]["message"]
    # A declared length far over the cap is refused without reading the body.
    huge = upload(small_client, "huge.txt", b"a" * 200_000)
    assert (huge.status_code, huge.json()["error"]["code"]) == (413, "document_too_large")
    assert huge.json()["error"]["message"].endswith("; the limit is 4 KB")
    assert upload(small_client, "fits.txt", b"a" * 4096).status_code == 202
    with app_state(small_client).documents.session_factory() as db:
        assert [n for (n,) in db.execute(select(Document.name))] == ["fits.txt"]


def test_the_size_cap_is_enforced_while_the_body_streams(small_client: TestClient) -> None:
    """A body without Content-Length that never ends: refused once past the cap, having read
    only a bounded prefix of it."""
    token = sign_up(small_client, "alice")
    _, secret = app_state(small_client).api_keys.create_key(user_id(small_client, token), "script")
    boundary = "xyzzy"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.txt\"\r\n"
            "Content-Type: text/plain\r\n\r\n").encode()
    piece = b"a" * 1024
    received = {"chunks": 0}

    async def receive() -> dict[str, Any]:
        received["chunks"] += 1
        if received["chunks"] > 10_000:  # 10 MB: the test has failed; end the body
            return {"type": "http.request", "body": b"", "more_body": False}
        body = head if received["chunks"] == 1 else piece
        return {"type": "http.request", "body": body, "more_body": True}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/api/documents", "raw_path": b"/api/documents", "query_string": b"", "root_path": "",
        "server": ("testserver", 80), "client": ("127.0.0.1", 5000),
        "headers": [(b"host", b"testserver"), (b"authorization", f"Bearer {secret}".encode()),
                    (b"content-type", f"multipart/form-data; boundary={boundary}".encode())],
    }
    asyncio.run(small_client.app(scope, receive, send))
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 413
    # The cap (4 KiB) plus the multipart allowance (16 KiB), read 1 KiB at a time.
    assert received["chunks"] <= 4 + 16 + 2


@pytest.mark.parametrize(
    "name, data, status, code",
    [
        ("tool.exe", b"MZ binary", 415, "unsupported_document"),
        ("noextension", b"text", 415, "unsupported_document"),
        ("broken.pdf", b"%PDF-1.4 this is not a pdf", 422, "unreadable_document"),
        ("latin1.txt", "caf\u00e9".encode("latin-1"), 422, "unreadable_document"),
        ("empty.md", b"   \n", 422, "unreadable_document"),
    ],
)
def test_unsupported_and_unreadable_uploads(client: TestClient, name: str, data: bytes, status: int, code: str) -> None:
    sign_up(client, "alice")
    response = upload(client, name, data)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert client.get("/api/documents").json()["documents"] == []


def test_malformed_upload_requests_are_400(client: TestClient) -> None:
    sign_up(client, "alice")
    headers = {"Accept": "application/json", **csrf_headers(client)}
    not_multipart = client.post("/api/documents", json={"file": "x"}, headers=headers)
    no_file = client.post("/api/documents", files={"other": ("a.txt", b"x")}, headers=headers)
    bad_shared = client.post("/api/documents", files={"file": ("a.txt", b"x")}, data={"shared": "maybe"}, headers=headers)
    for response in (not_multipart, no_file, bad_shared):
        assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_input"), response.text


def test_a_document_without_text_fails_with_the_reason_in_the_list(client: TestClient) -> None:
    sign_up(client, "alice")
    created = upload(client, "empty.html", b"<html><script>var x = 1;</script></html>").json()
    failed = wait_ready(client, created["id"])
    assert failed["status"] == "failed" and failed["error"] and failed["num_chunks"] == 0
    assert chunk_ids(client, created["id"]) == []


def test_other_users_ids_are_404_everywhere(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    created = upload(client, "garden.md", NOTE.encode()).json()
    wait_ready(client, created["id"])
    (chunk_id, *_) = chunk_ids(client, created["id"])
    use_session(client, None)
    sign_up(client, "bob")
    headers = {"Accept": "application/json", **csrf_headers(client)}
    for method, path in (
        ("GET", f"/api/documents/{created['id']}"),
        ("DELETE", f"/api/documents/{created['id']}"),
        ("GET", f"/api/documents/{created['id']}/chunks/{chunk_id}"),
        ("GET", f"/documents/{created['id']}/chunks/{chunk_id}"),
    ):
        response = client.request(method, path, headers=headers)
        assert response.status_code == 404, (method, path, response.text)
        assert "heron" not in response.text
    assert client.get("/api/documents").json()["documents"] == []
    use_session(client, alice)
    assert client.get(f"/api/documents/{created['id']}").json()["status"] == "ready"  # bob deleted nothing


def test_deleting_removes_every_version_and_its_chunks(client: TestClient) -> None:
    sign_up(client, "alice")
    created = upload(client, "garden.md", NOTE.encode()).json()
    wait_ready(client, created["id"])
    (chunk_id, *_) = chunk_ids(client, created["id"])
    assert client.get(f"/api/documents/{created['id']}/chunks/{chunk_id}").status_code == 200
    assert client.delete(f"/api/documents/{created['id']}", headers=csrf_headers(client)).status_code == 204
    assert client.get("/api/documents").json()["documents"] == []
    assert client.get(f"/api/documents/{created['id']}/chunks/{chunk_id}").status_code == 404
    assert client.get(f"/api/documents/{created['id']}").status_code == 404
    assert client.get(f"/api/documents/{created['id']}/chunks/{2**64}").status_code == 404  # past SQLite's integers


def test_the_chunk_page_shows_the_passage_escaped(client: TestClient) -> None:
    sign_up(client, "alice")
    hostile = "# Notes\n\nThe heron <script>alert('x')</script> waits <b>here</b>.\n"
    created = upload(client, "notes.md", hostile.encode()).json()
    wait_ready(client, created["id"])
    (chunk_id,) = chunk_ids(client, created["id"])
    page = client.get(f"/documents/{created['id']}/chunks/{chunk_id}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "notes.md" in page.text and "Notes" in page.text
    assert "&lt;script&gt;" in page.text and "<script>alert" not in page.text
    source = client.get(f"/api/documents/{created['id']}/chunks/{chunk_id}").json()
    assert (source["chunk_id"], source["document_name"], source["version"], source["heading_path"]) == (
        chunk_id, "notes.md", 1, "Notes")


def test_only_admins_share_and_everyone_then_sees_the_document(client: TestClient) -> None:
    root = sign_up(client, "root")  # the first account is the admin
    created = upload(client, "policy.md", NOTE.encode(), data={"shared": "1"}).json()
    assert created["shared"] is True
    wait_ready(client, created["id"])
    (chunk_id, *_) = chunk_ids(client, created["id"])
    use_session(client, None)
    sign_up(client, "alice")
    (seen,) = client.get("/api/documents").json()["documents"]
    assert (seen["id"], seen["is_own"]) == (created["id"], False)
    assert client.get(f"/api/documents/{created['id']}/chunks/{chunk_id}").status_code == 200
    refused = upload(client, "mine.md", NOTE.encode(), data={"shared": "1"})
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "forbidden")
    share = client.post(f"/api/documents/{created['id']}/share", json={"shared": False}, headers=csrf_headers(client))
    assert share.status_code == 403
    use_session(client, root)
    unshare = client.post(f"/api/documents/{created['id']}/share", json={"shared": False}, headers=csrf_headers(client))
    assert unshare.status_code == 200 and unshare.json()["shared"] is False
    bad = client.post(f"/api/documents/{created['id']}/share", json={"shared": "no"}, headers=csrf_headers(client))
    assert bad.status_code == 400
    use_session(client, None)
    sign_up(client, "carol")
    assert client.get("/api/documents").json()["documents"] == []
    assert client.get(f"/api/documents/{created['id']}/chunks/{chunk_id}").status_code == 404


# -- the lifespan -------------------------------------------------------------------------------


def test_the_default_embedder_is_lazy_and_unfinished_documents_fail_at_start(
    settings: Settings, fake: FakeGenerator, database_url: str
) -> None:
    from sqlalchemy import create_engine

    engine = create_engine(database_url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id, username, username_key, password_hash, created_at, role, status) "
                          "VALUES ('u1', 'u1', 'u1', 'x', '2026-01-01', 'user', 'active')"))
        conn.execute(text("INSERT INTO documents (id, user_id, name, version, kind, size_bytes, sha256, status, "
                          "progress, num_chunks, shared, embedding_model, created_at, updated_at) VALUES "
                          "('d1', 'u1', 'a.txt', 1, 'txt', 3, '', 'processing', 0.5, 0, false, 'm', '2026-01-01', '2026-01-01')"))
    engine.dispose()
    with TestClient(create_app(settings, generator=fake), follow_redirects=False) as client:
        state = app_state(client)
        assert type(state.embedder).__name__ == "SentenceTransformerEmbedder"
        assert state.embedder._model is None  # not loaded at start
        assert state.documents.get("u1", "d1").status == "failed"
        # A chat turn without documents does not load it either.
        sign_up(client, "alice")
        with client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "send", "client_msg_id": "c-1", "conversation_id": None, "text": "hi"})
            while ws.receive_json()["type"] != "done":
                pass
        assert state.embedder._model is None
        worker = state.ingestion
    with pytest.raises(RuntimeError):  # shut down with the app
        worker.submit("u1", "b.txt", b"text")


# -- QA fixes ----------------------------------------------------------------------------------


def test_a_chunk_is_found_only_under_its_own_document(client: TestClient) -> None:
    sign_up(client, "alice")
    first = upload(client, "garden.md", NOTE.encode()).json()
    second = upload(client, "other.md", b"# Other\n\nNothing about birds.\n").json()
    wait_ready(client, first["id"])
    wait_ready(client, second["id"])
    (chunk_id, *_) = chunk_ids(client, first["id"])
    assert "heron" in client.get(f"/api/documents/{first['id']}/chunks/{chunk_id}").json()["text"]
    for path in (f"/api/documents/{second['id']}/chunks/{chunk_id}", f"/documents/{second['id']}/chunks/{chunk_id}"):
        response = client.get(path, headers={"Accept": "application/json"})
        assert response.status_code == 404 and "heron" not in response.text, path
    for too_big in (2**31, 2**63 - 1, 2**63, 10**30):  # past the INTEGER column: not found, on both databases
        response = client.get(f"/api/documents/{first['id']}/chunks/{too_big}")
        assert response.status_code == 404, (too_big, response.text[:200])


@pytest.mark.parametrize("name", ["a\x07.md", "bidi\u202etxt.md", "nul\x00.md"])
def test_file_names_with_control_or_bidi_characters_are_refused(client: TestClient, name: str) -> None:
    sign_up(client, "alice")
    # By hand: httpx would percent-encode the control characters in the file name.
    body = (b'--b\r\nContent-Disposition: form-data; name="file"; filename="' + name.encode()
            + b'"\r\nContent-Type: text/markdown\r\n\r\n' + NOTE.encode() + b"\r\n--b--\r\n")
    headers = {"Accept": "application/json", "Content-Type": "multipart/form-data; boundary=b", **csrf_headers(client)}
    response = client.post("/api/documents", content=body, headers=headers)
    assert (response.status_code, response.json()["error"]["code"]) == (415, "unsupported_document"), response.text
    assert "character" in response.json()["error"]["message"]
    assert client.get("/api/documents").json()["documents"] == []


def test_too_many_documents_processing_is_a_429(client: TestClient) -> None:
    sign_up(client, "alice")
    worker = app_state(client).ingestion
    real = worker.max_pending_per_user
    worker.max_pending_per_user = 0  # every slot taken
    try:
        response = upload(client, "garden.md", NOTE.encode())
    finally:
        worker.max_pending_per_user = real
    assert (response.status_code, response.json()["error"]["code"]) == (429, "too_many_documents_processing")
    assert "being processed" in response.json()["error"]["message"]


def test_a_citation_of_a_replaced_version_shows_its_stored_excerpt(client: TestClient) -> None:
    # New-user pass: after a new version of tyres.txt, the [1] of an earlier reply led to a 404.
    import json

    from backend.models import Message
    from backend.rag.sources import Source, citation

    alice = sign_up(client, "alice")
    first = upload(client, "garden.md", NOTE.encode()).json()
    wait_ready(client, first["id"])
    (chunk_id, *_) = chunk_ids(client, first["id"])
    source = app_state(client).documents.chunk(user_id(client, alice), first["id"], chunk_id)
    conversation = app_state(client).conversations.create_conversation(user_id(client, alice), "pond")
    with app_state(client).documents.session_factory.begin() as db:
        db.add(Message(conversation_id=conversation.id, user_id=user_id(client, alice), position=1, role="assistant",
                       content="At seven [1].", status="complete", sources=json.dumps([citation(1, source)])))
    assert isinstance(source, Source)
    second = upload(client, "garden.md", b"# Garden\n\nThe heron moved to the river.\n").json()
    wait_ready(client, second["id"])
    page = client.get(f"/documents/{first['id']}/chunks/{chunk_id}")
    assert page.status_code == 200, page.text
    assert 'id="chunk-replaced"' in page.text and "every morning at seven" in page.text
    assert 'id="chunk-version">1<' in page.text
    # another user, who has no reply citing it, still gets the 404
    sign_up(client, "bob")
    assert client.get(f"/documents/{first['id']}/chunks/{chunk_id}").status_code == 404
