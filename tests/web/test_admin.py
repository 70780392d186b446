"""web.admin_routes: the admin page, its settings form and JSON API, the users actions and the
engine panel's data; who may reach each; every change effective on the next request."""

from __future__ import annotations

import html
import re
import uuid
from typing import Any

import pytest
from starlette.testclient import TestClient

from .conftest import (
    PASSWORD,
    FakeGenerator,
    app_state,
    csrf_field,
    csrf_headers,
    sign_up,
    use_session,
    user_id,
)

JSON_API = [
    ("GET", "/admin/api/settings"),
    ("POST", "/admin/api/settings"),
    ("GET", "/admin/api/users"),
    ("POST", "/admin/api/users/{id}/status"),
    ("POST", "/admin/api/users/{id}/role"),
    ("GET", "/admin/api/engine"),
]


@pytest.fixture
def people(client: TestClient) -> dict[str, str]:
    """alice (the first account: admin) and bob (a user): their session tokens."""
    return {"alice": sign_up(client, "alice"), "bob": sign_up(client, "bob")}


def as_user(client: TestClient, token: str | None) -> TestClient:
    use_session(client, token)
    return client


def chat_once(client: TestClient, text: str = "hello there") -> dict[str, Any]:
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": None, "text": text})
        while True:
            frame = ws.receive_json()
            if frame["type"] in ("done", "error"):
                return frame


def field_error(page: str, name: str) -> str | None:
    match = re.search(rf'<p class="field-error" id="error-{name}">(.*?)</p>', page, re.S)
    return html.unescape(match.group(1)).strip() if match else None


def post_settings_form(client: TestClient, **values: str):
    """Post the settings form; it always redirects (303) to the page, which shows the outcome
    once. Returns that page."""
    response = client.post("/admin/settings", data={**values, **csrf_field(client)})
    assert response.status_code == 303, response.text
    assert response.headers["location"] == "/admin#settings"
    page = client.get("/admin")
    assert page.status_code == 200
    return page


def api_post(client: TestClient, path: str, body: dict[str, Any]):
    return client.post(path, json=body, headers=csrf_headers(client))


def row_state(client: TestClient, username: str) -> tuple[str, str]:
    users = client.get("/admin/api/users").json()["users"]
    row = next(u for u in users if u["username"] == username)
    return row["status"], row["role"]


# -- access ------------------------------------------------------------------------------------


def test_page_redirects_anonymous_to_login_and_refuses_users(client: TestClient, people) -> None:
    response = as_user(client, None).get("/admin")
    assert response.status_code == 303 and response.headers["location"] == "/login"
    response = as_user(client, people["bob"]).get("/admin", headers={"Accept": "text/html"})
    assert response.status_code == 403
    assert "settings-form" not in response.text and "users-table" not in response.text


@pytest.mark.parametrize("method,path", JSON_API)
def test_json_api_is_401_anonymous_and_403_for_users(client: TestClient, people, method: str, path: str) -> None:
    path = path.replace("{id}", user_id(client, people["alice"]))
    for token, status, code in ((None, 401, "unauthenticated"), (people["bob"], 403, "forbidden")):
        as_user(client, token)
        response = client.request(method, path, json={}, headers=csrf_headers(client) if method == "POST" else {})
        assert response.status_code == status, (token, response.text)
        assert response.json()["error"]["code"] == code


def test_api_changes_need_the_csrf_token(client: TestClient, people) -> None:
    as_user(client, people["alice"])
    response = client.post("/admin/api/settings", json={"default_max_tokens": 7})
    assert response.status_code == 403
    response = client.post("/admin/settings", data={"default_max_tokens": "7"})
    assert response.status_code == 403
    assert app_state(client).runtime_settings.get().default_max_tokens != 7


def test_a_disabled_admin_gets_nothing(client: TestClient, people) -> None:
    alice, bob = people["alice"], people["bob"]
    state = app_state(client)
    state.users.set_role(user_id(client, alice), user_id(client, bob), "admin")
    state.users.set_status(user_id(client, bob), user_id(client, alice), "disabled")
    as_user(client, alice)
    assert client.get("/admin").status_code == 303
    assert client.get("/admin/api/users").status_code == 401
    assert client.get("/admin/api/engine").status_code == 401


# -- the page and the settings form ------------------------------------------------------------


def test_page_lists_every_setting_and_every_user(client: TestClient, people) -> None:
    page = as_user(client, people["alice"]).get("/admin")
    assert page.status_code == 200
    assert page.headers["cache-control"] == "no-store"
    for spec in app_state(client).runtime_settings.fields():
        assert f'name="{spec.name}"' in page.text, spec.name
    for name in ("alice", "bob"):
        assert f'data-username="{name}"' in page.text
    assert '<script src="/static/admin.js"' in page.text
    assert "<script>" not in page.text  # CSP: no inline script


def test_saved_settings_apply_to_the_next_chat(client: TestClient, fake: FakeGenerator, people) -> None:
    as_user(client, people["alice"])
    response = post_settings_form(client, system_prompt="You are a pirate. Say arr.", default_max_tokens="3",
                                  default_temperature="0.25")
    assert 'id="settings-saved"' in response.text
    assert 'id="settings-saved"' not in client.get("/admin").text  # shown once: a reload is quiet
    assert "You are a pirate. Say arr." in response.text  # the form shows the stored values

    as_user(client, people["bob"])
    done = chat_once(client)
    _, messages, params = fake.requests[-1]
    assert messages[0].role == "system" and messages[0].content == "You are a pirate. Say arr."
    assert params.max_tokens == 3 and params.temperature == 0.25
    assert done["finish_reason"] == "length" and done["usage"]["completion_tokens"] == 3

    # An empty system prompt goes back to the chat template's own (no system message sent).
    as_user(client, people["alice"])
    assert 'id="settings-saved"' in post_settings_form(client, system_prompt="").text
    as_user(client, people["bob"])
    chat_once(client)
    assert all(m.role != "system" for m in fake.requests[-1][1])


def test_bad_values_are_shown_next_to_their_fields_and_nothing_is_saved(client: TestClient, people) -> None:
    as_user(client, people["alice"])
    store = app_state(client).runtime_settings
    before = store.get()
    response = post_settings_form(client, default_max_tokens="12", default_temperature="7",
                                  requests_per_minute="lots", signup_mode="maybe")
    assert 'id="settings-error"' in response.text
    assert "Default temperature must be" in (field_error(response.text, "default_temperature") or "")
    assert "2" in field_error(response.text, "default_temperature")  # the allowed range is named
    # Each message names the field by its label, as the form shows it.
    assert field_error(response.text, "requests_per_minute") == "Requests per minute must be a whole number, got 'lots'"
    assert "Sign-up must be" in (field_error(response.text, "signup_mode") or "")
    assert field_error(response.text, "default_max_tokens") is None
    assert 'id="settings-saved"' not in response.text
    assert 'value="lots"' in response.text  # what was typed stays in the form
    assert store.get() == before  # all or nothing: the valid 12 was not stored either
    reloaded = client.get("/admin").text  # the refused values were shown once
    assert 'value="lots"' not in reloaded and 'id="settings-error"' not in reloaded


def test_default_above_maximum_is_refused_on_the_default_field(client: TestClient, people) -> None:
    as_user(client, people["alice"])
    response = post_settings_form(client, default_max_tokens="100", max_max_tokens="50")
    assert "Maximum max tokens" in field_error(response.text, "default_max_tokens")


# -- JSON settings -------------------------------------------------------------------------------


def test_json_settings_round_trip_and_errors_name_the_field(client: TestClient, people) -> None:
    as_user(client, people["alice"])
    body = client.get("/admin/api/settings").json()
    assert {f["name"] for f in body["fields"]} == set(body["settings"])
    response = api_post(client, "/admin/api/settings", {"requests_per_minute": 5, "signup_mode": "approval"})
    assert response.status_code == 200
    assert response.json()["settings"]["requests_per_minute"] == 5
    assert app_state(client).runtime_settings.get().signup_mode == "approval"

    response = api_post(client, "/admin/api/settings", {"default_top_p": 0, "requests_per_minute": 9})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_input" and set(error["fields"]) == {"default_top_p"}
    assert app_state(client).runtime_settings.get().requests_per_minute == 5

    for bad in (b"not json", b"[1, 2]"):
        response = client.post("/admin/api/settings", content=bad,
                               headers={**csrf_headers(client), "Content-Type": "application/json"})
        assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_input"


# -- users -----------------------------------------------------------------------------------------


def test_approve_a_pending_account(client: TestClient, people) -> None:
    app_state(client).runtime_settings.update({"signup_mode": "approval"}, actor_id=None)
    as_user(client, None)
    client.post("/signup", data={"username": "carol", "password": PASSWORD, **csrf_field(client)})
    as_user(client, people["alice"])
    assert row_state(client, "carol") == ("pending", "user")
    page = client.get("/admin").text
    carol_row = re.search(r'<tr data-user-id="[^"]+" data-username="carol".*?</tr>', page, re.S).group(0)
    assert 'data-action="status" data-value="active"' in carol_row and ">Approve<" in carol_row

    carol_id = next(u["id"] for u in client.get("/admin/api/users").json()["users"] if u["username"] == "carol")
    response = api_post(client, f"/admin/api/users/{carol_id}/status", {"status": "active"})
    assert response.status_code == 200
    assert next(u for u in response.json()["users"] if u["id"] == carol_id)["status"] == "active"
    as_user(client, None)
    login = client.post("/login", data={"username": "carol", "password": PASSWORD, **csrf_field(client)})
    assert login.status_code == 303 and login.headers["location"] == "/chat"


def test_disable_ends_sessions_at_once_and_enable_lets_back_in(client: TestClient, people) -> None:
    bob_id = user_id(client, people["bob"])
    as_user(client, people["alice"])
    assert api_post(client, f"/admin/api/users/{bob_id}/status", {"status": "disabled"}).status_code == 200
    assert row_state(client, "bob") == ("disabled", "user")
    assert as_user(client, people["bob"]).get("/api/conversations").status_code == 401

    as_user(client, people["alice"])
    assert api_post(client, f"/admin/api/users/{bob_id}/status", {"status": "active"}).status_code == 200
    as_user(client, None)
    login = client.post("/login", data={"username": "bob", "password": PASSWORD, **csrf_field(client)})
    assert login.status_code == 303


def test_make_admin_and_back(client: TestClient, people) -> None:
    bob_id = user_id(client, people["bob"])
    as_user(client, people["alice"])
    assert api_post(client, f"/admin/api/users/{bob_id}/role", {"role": "admin"}).status_code == 200
    assert as_user(client, people["bob"]).get("/admin").status_code == 200
    as_user(client, people["alice"])
    assert api_post(client, f"/admin/api/users/{bob_id}/role", {"role": "user"}).status_code == 200
    assert as_user(client, people["bob"]).get("/admin/api/users").status_code == 403


def test_refused_user_changes_say_why(client: TestClient, people) -> None:
    alice_id, bob_id = user_id(client, people["alice"]), user_id(client, people["bob"])
    as_user(client, people["alice"])
    for path, body, status in (
        (f"/admin/api/users/{alice_id}/status", {"status": "disabled"}, 400),  # oneself
        (f"/admin/api/users/{alice_id}/role", {"role": "user"}, 400),
        (f"/admin/api/users/{bob_id}/status", {"status": "pending"}, 400),  # not settable
        (f"/admin/api/users/{bob_id}/role", {"role": "root"}, 400),
        (f"/admin/api/users/{bob_id}/role", {}, 400),
        ("/admin/api/users/no-such-user/status", {"status": "disabled"}, 404),
    ):
        response = api_post(client, path, body)
        assert response.status_code == status, (path, body, response.text)
        assert response.json()["error"]["message"]
    assert row_state(client, "alice") == ("active", "admin")
    assert row_state(client, "bob") == ("active", "user")


# -- engine panel --------------------------------------------------------------------------------


def test_engine_series_come_from_the_generator_stats(client: TestClient, people) -> None:
    as_user(client, people["alice"])
    # The lifespan's sampler takes its first point at start-up; take another one now.
    app_state(client).metrics.sample()
    body = client.get("/admin/api/engine").json()
    assert body["model"] == "fake-model"
    assert len(body["t"]) >= 1 and body["t"] == sorted(body["t"])
    # FakeGenerator.stats(): running 1, waiting 2, KV 0.3.
    assert body["running"][-1] == 1 and body["waiting"][-1] == 2
    assert body["kv_usage"][-1] == pytest.approx(0.3)
    for column in ("tokens_per_s", "ttft_p50_ms", "ttft_p99_ms"):
        assert len(body[column]) == len(body["t"])


def test_engine_ttft_percentiles_follow_finished_chats(client: TestClient, people) -> None:
    as_user(client, people["alice"])
    chat_once(client)
    app_state(client).metrics.sample()
    body = client.get("/admin/api/engine").json()
    assert body["ttft_p50_ms"][-1] == body["ttft_p99_ms"][-1] == 2.5  # FakeGenerator's ttft


@pytest.mark.parametrize("window", ["abc", "0", "-5", "nan"])
def test_engine_window_must_be_positive(client: TestClient, people, window: str) -> None:
    as_user(client, people["alice"])
    response = client.get(f"/admin/api/engine?window_s={window}")
    assert response.status_code == 400
