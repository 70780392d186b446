"""web.account_routes: the /account page, API keys (create once-shown, list, revoke, Bearer use)
and the password change."""

from __future__ import annotations

import hashlib

from sqlalchemy import select
from starlette.testclient import TestClient

from backend.models import ApiKey
from web.session import SESSION_COOKIE

from .conftest import PASSWORD, app_state, csrf_field, csrf_headers, sign_up, use_session


def _create(client: TestClient, name: str = "laptop"):
    return client.post("/api/account/keys", json={"name": name}, headers=csrf_headers(client))


def test_account_page_needs_a_session(client: TestClient) -> None:
    assert client.get("/account").headers["location"] == "/login"
    sign_up(client, "alice")
    page = client.get("/account")
    assert page.status_code == 200 and "alice" in page.text and 'id="key-form"' in page.text
    assert page.headers["cache-control"] == "no-store"


def test_a_key_is_shown_once_stored_as_a_hash_and_listed_by_prefix(client: TestClient) -> None:
    sign_up(client, "alice")
    created = _create(client)
    assert created.status_code == 201
    secret = created.json()["secret"]
    key = created.json()["key"]
    assert secret.startswith("crk_") and key["prefix"] == secret[:12] and key["name"] == "laptop"
    listed = client.get("/api/account/keys").json()["keys"]
    assert [k["id"] for k in listed] == [key["id"]]
    assert secret not in client.get("/api/account/keys").text
    assert secret not in client.get("/account").text and key["prefix"] in client.get("/account").text
    factory = app_state(client).api_keys._sessions
    with factory() as db:
        (stored,) = db.scalars(select(ApiKey)).all()
    assert stored.key_hash == hashlib.sha256(secret.encode()).hexdigest()


def test_revoking_stops_the_key_and_other_users_cannot_revoke_it(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    created = _create(client).json()
    keys = app_state(client).api_keys
    assert keys.user_for_key(created["secret"]).username == "alice"
    use_session(client, None)
    sign_up(client, "bob")
    other = client.delete(f"/api/account/keys/{created['key']['id']}", headers=csrf_headers(client))
    assert other.status_code == 404
    assert keys.user_for_key(created["secret"]) is not None
    assert client.get("/api/account/keys").json()["keys"] == []  # bob sees none of alice's
    use_session(client, alice)
    assert client.delete(f"/api/account/keys/{created['key']['id']}", headers=csrf_headers(client)).status_code == 204
    assert keys.user_for_key(created["secret"]) is None
    (listed,) = client.get("/api/account/keys").json()["keys"]
    assert listed["revoked_at"] is not None


def test_bad_key_names_are_400(client: TestClient) -> None:
    sign_up(client, "alice")
    for body in ({"name": ""}, {"name": "x" * 65}, {"name": 5}, ["not", "an", "object"]):
        response = client.post("/api/account/keys", json=body, headers=csrf_headers(client))
        assert response.status_code == 400, body
        assert response.json()["error"]["code"] == "invalid_input"


def test_key_endpoints_need_a_session_not_a_key(client: TestClient) -> None:
    sign_up(client, "alice")
    secret = _create(client).json()["secret"]
    use_session(client, None)
    headers = {"Authorization": f"Bearer {secret}", **csrf_headers(client)}
    assert client.get("/api/account/keys", headers=headers).status_code == 401
    assert client.post("/api/account/keys", json={"name": "x"}, headers=headers).status_code == 401


def test_changing_the_password_ends_other_sessions_but_keeps_this_one(client: TestClient) -> None:
    first = sign_up(client, "alice")
    use_session(client, None)
    other = client.post("/login", data={"username": "alice", "password": PASSWORD, **csrf_field(client)})
    other_token = other.cookies[SESSION_COOKIE]
    use_session(client, first)
    body = {"current_password": PASSWORD, "new_password": "a brand new password"}
    response = client.post("/api/account/password", json=body, headers=csrf_headers(client))
    assert response.status_code == 200
    assert client.get("/chat").status_code == 200
    use_session(client, other_token)
    assert client.get("/chat").headers["location"] == "/login"
    use_session(client, None)
    old = client.post("/login", data={"username": "alice", "password": PASSWORD, **csrf_field(client)})
    assert old.status_code == 401
    new = client.post("/login", data={"username": "alice", "password": "a brand new password", **csrf_field(client)})
    assert new.status_code == 303


def test_a_wrong_current_password_is_401_and_a_weak_new_one_400(client: TestClient) -> None:
    sign_up(client, "alice")
    wrong = client.post("/api/account/password", json={"current_password": "nope nope", "new_password": "long enough pw"},
                        headers=csrf_headers(client))
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_credentials"
    weak = client.post("/api/account/password", json={"current_password": PASSWORD, "new_password": "short"},
                       headers=csrf_headers(client))
    assert weak.status_code == 400
    assert client.get("/chat").status_code == 200
