"""web.api: the conversations JSON API (auth, ownership) and /healthz."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from .conftest import FakeGenerator, app_state, csrf_headers, sign_up, use_session, user_id


@pytest.mark.parametrize(
    "method, path",
    [("GET", "/api/conversations"), ("GET", "/api/conversations/" + "0" * 32),
     ("DELETE", "/api/conversations/" + "0" * 32)],
)
def test_api_without_a_session_is_a_401_json(client: TestClient, method: str, path: str) -> None:
    response = client.request(method, path, headers=csrf_headers(client))
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == "unauthenticated"


def test_list_get_and_delete_own_conversations(client: TestClient) -> None:
    token = sign_up(client, "alice")
    conversations = app_state(client).conversations
    uid = user_id(client, token)
    first = conversations.create_conversation(uid, "First")
    second = conversations.create_conversation(uid, "Second")

    listed = client.get("/api/conversations")
    assert listed.status_code == 200
    items = listed.json()["conversations"]
    assert [c["id"] for c in items] == [second.id, first.id]  # newest first
    assert items[0]["title"] == "Second"
    assert isinstance(items[0]["created_at"], str) and "T" in items[0]["created_at"]

    one = client.get(f"/api/conversations/{first.id}")
    assert one.status_code == 200
    assert one.json()["id"] == first.id
    assert one.json()["title"] == "First"
    assert one.json()["messages"] == []

    assert client.delete(f"/api/conversations/{first.id}", headers=csrf_headers(client)).status_code == 204
    assert client.get(f"/api/conversations/{first.id}").status_code == 404
    assert [c["id"] for c in client.get("/api/conversations").json()["conversations"]] == [second.id]


def test_another_users_conversation_is_a_404_json(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    secret = app_state(client).conversations.create_conversation(user_id(client, alice), "Secret")
    use_session(client, None)
    sign_up(client, "bob")
    assert client.get("/api/conversations").json()["conversations"] == []
    for method in ("GET", "DELETE"):
        response = client.request(method, f"/api/conversations/{secret.id}", headers=csrf_headers(client))
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    # Bob's DELETE did not delete it.
    use_session(client, alice)
    assert client.get(f"/api/conversations/{secret.id}").status_code == 200


def test_healthz_reports_the_model_and_readiness(client: TestClient, fake: FakeGenerator) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "model": fake.model_name, "ready": True}


def test_healthz_follows_a_generator_ready_flag(client: TestClient, fake: FakeGenerator) -> None:
    fake.ready = False  # type: ignore[attr-defined]
    assert client.get("/healthz").json()["ready"] is False


def test_patch_turns_documents_on_and_off_for_the_owner_only(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    conversation = app_state(client).conversations.create_conversation(user_id(client, alice), "Docs")
    path = f"/api/conversations/{conversation.id}"
    assert client.get(path).json()["use_documents"] is False
    assert client.patch(path, json={"use_documents": True}, headers=csrf_headers(client)).status_code == 204
    assert client.get(path).json()["use_documents"] is True
    for body in ({"use_documents": "yes"}, {"use_documents": 1}, {}, {"use_documents": True, "title": "x"}, [True]):
        response = client.patch(path, json=body, headers=csrf_headers(client))
        assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_input"), body
    not_json = client.patch(path, content=b"{", headers={**csrf_headers(client), "Content-Type": "application/json"})
    assert not_json.status_code == 400
    assert client.patch(path, json={"use_documents": False}).status_code == 403  # no CSRF token
    use_session(client, None)
    sign_up(client, "bob")
    assert client.patch(path, json={"use_documents": False}, headers=csrf_headers(client)).status_code == 404
    use_session(client, alice)
    assert client.get(path).json()["use_documents"] is True
