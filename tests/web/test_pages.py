"""web.pages: the root redirect, /chat, and ownership of /c/{id}."""

from __future__ import annotations

from starlette.testclient import TestClient

from .conftest import app_state, sign_up, use_session, user_id


def test_root_redirects_to_sign_up_then_to_chat_then_to_login(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 303
    assert response.headers["location"] == "/signup"  # no account yet: the first one is the admin
    sign_up(client, "alice")
    assert client.get("/").headers["location"] == "/chat"
    client.cookies.clear()
    assert client.get("/").headers["location"] == "/login"


def test_chat_requires_a_session(client: TestClient) -> None:
    for path in ("/chat", "/c/" + "0" * 32):
        response = client.get(path)
        assert response.status_code == 303
        assert response.headers["location"] == "/login"


def test_chat_page_lists_the_users_conversations(client: TestClient) -> None:
    token = sign_up(client, "alice")
    state = app_state(client)
    summary = state.conversations.create_conversation(user_id(client, token), "Pasta recipes")
    response = client.get("/chat")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-store"
    assert "Pasta recipes" in response.text
    assert f"/c/{summary.id}" in response.text


def test_own_conversation_page_renders(client: TestClient) -> None:
    token = sign_up(client, "alice")
    summary = app_state(client).conversations.create_conversation(user_id(client, token), "Mine")
    response = client.get(f"/c/{summary.id}")
    assert response.status_code == 200
    assert "Mine" in response.text


def test_another_users_conversation_is_a_404_page(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    secret = app_state(client).conversations.create_conversation(user_id(client, alice), "Alice's secret plans")
    use_session(client, None)
    sign_up(client, "bob")
    response = client.get(f"/c/{secret.id}")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "Alice's secret plans" not in response.text
    assert "secret" not in response.text
    unknown = client.get("/c/0123456789abcdef0123456789abcdef")
    assert unknown.status_code == 404
    # Indistinguishable: the same page for "exists but not yours" and "does not exist".
    assert unknown.text == response.text


def test_unknown_route_is_a_404_page(client: TestClient) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    # The product's error page (templates/error.html), not the bare fallback.
    assert 'class="error-code">404<' in response.text


def test_chat_page_carries_the_socket_protocols_limits(client: TestClient) -> None:
    from web.ws_protocol import page_limits

    sign_up(client, "alice")
    html = client.get("/chat").text
    app_tag = html[html.index('id="app"'):html.index(">", html.index('id="app"'))]
    for name, value in page_limits().items():
        assert f'data-{name}="{value}"' in app_tag, name
    assert 'data-max-text-chars="32000"' in app_tag
