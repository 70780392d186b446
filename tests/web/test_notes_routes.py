"""The /notes page, GET /api/notes and deleting a note (form with CSRF, and the JSON DELETE):
owner-checked, escaped."""

from __future__ import annotations

from starlette.testclient import TestClient

from .conftest import app_state, csrf_field, csrf_headers, sign_up, use_session, user_id


def _add(client: TestClient, token: str, title: str, text: str, key: str) -> str:
    return app_state(client).notes.add(user_id(client, token), title, text, idempotency_key=key).note.id


def test_the_page_lists_the_users_notes_escaped_newest_first(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    first = _add(client, alice, "Older", "plain", "k1")
    second = _add(client, alice, "<script>alert(1)</script>", "line one\n<b>bold</b>", "k2")
    page = client.get("/notes", headers={"Accept": "text/html"})
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    html = page.text
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>bold</b>" not in html and "line one<br>&lt;b&gt;bold&lt;/b&gt;" in html
    assert html.index(f"note-{second}") < html.index(f"note-{first}")
    assert f'action="/notes/{first}/delete"' in html and 'name="csrf_token"' in html
    assert 'href="/notes" id="nav-notes"' in html
    # The chat page links it too.
    assert 'href="/notes" id="nav-notes"' in client.get("/chat").text


def test_the_page_needs_a_login(client: TestClient) -> None:
    response = client.get("/notes")
    assert response.status_code == 303 and response.headers["location"] == "/login"
    assert client.get("/api/notes").status_code == 401


def test_api_lists_only_the_users_notes(client: TestClient) -> None:
    bob = sign_up(client, "bob")
    _add(client, bob, "Bob's", "secret of bob", "b1")
    alice = sign_up(client, "alice")
    note = _add(client, alice, "Alice's", "hello", "a1")
    use_session(client, alice)
    body = client.get("/api/notes").json()
    assert [(n["id"], n["title"], n["text"]) for n in body["notes"]] == [(note, "Alice's", "hello")]
    assert "secret of bob" not in client.get("/notes").text


def test_delete_with_the_form_and_the_api(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    one, two = _add(client, alice, "One", "1", "k1"), _add(client, alice, "Two", "2", "k2")
    response = client.post(f"/notes/{one}/delete", data=csrf_field(client))
    assert response.status_code == 303 and response.headers["location"] == "/notes"
    assert client.delete(f"/api/notes/{two}", headers=csrf_headers(client)).status_code == 204
    assert client.get("/api/notes").json() == {"notes": []}
    assert client.delete(f"/api/notes/{two}", headers=csrf_headers(client)).status_code == 404


def test_another_users_note_is_not_found(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    note = _add(client, alice, "Alice's", "private", "k1")
    bob = sign_up(client, "bob")
    use_session(client, bob)
    assert client.post(f"/notes/{note}/delete", data=csrf_field(client), headers={"Accept": "text/html"}).status_code == 404
    assert client.delete(f"/api/notes/{note}", headers=csrf_headers(client)).status_code == 404
    use_session(client, alice)
    assert [n["id"] for n in client.get("/api/notes").json()["notes"]] == [note]


def test_delete_needs_the_csrf_token(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    note = _add(client, alice, "Kept", "x", "k1")
    assert client.post(f"/notes/{note}/delete", data={}).status_code == 403
    assert client.post(f"/notes/{note}/delete", data={"csrf_token": "forged"}).status_code == 403
    assert client.delete(f"/api/notes/{note}").status_code == 403
    assert [n["id"] for n in client.get("/api/notes").json()["notes"]] == [note]
