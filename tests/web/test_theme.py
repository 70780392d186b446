"""The theme remembered per user: POST /api/account/theme, and <html data-theme> on every page."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from .conftest import csrf_headers, sign_up, use_session

_HTML_THEME = re.compile(r'<html lang="en" data-theme="([a-z]+)">')


def page_theme(client: TestClient, path: str) -> str:
    match = _HTML_THEME.search(client.get(path).text)
    assert match, f"no data-theme on {path}"
    return match.group(1)


def set_theme(client: TestClient, theme: object):
    return client.post("/api/account/theme", json={"theme": theme}, headers=csrf_headers(client))


def test_a_new_user_follows_the_system_and_a_choice_reaches_every_page(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    use_session(client, alice)
    assert page_theme(client, "/chat") == "system"
    response = set_theme(client, "dark")
    assert response.status_code == 200 and response.json() == {"theme": "dark"}
    for path in ("/chat", "/account", "/no-such-page"):
        assert page_theme(client, path) == "dark", path
    assert '<meta name="color-scheme" content="dark">' in client.get("/chat").text
    assert 'data-theme-toggle' in client.get("/chat").text
    assert '<option value="dark" selected>' in client.get("/account").text
    # Another user keeps his own.
    use_session(client, sign_up(client, "bob"))
    assert page_theme(client, "/chat") == "system"
    use_session(client, None)
    assert page_theme(client, "/login") == "system"


def test_a_bad_value_is_a_typed_400_and_changes_nothing(client: TestClient) -> None:
    use_session(client, sign_up(client, "alice"))
    assert set_theme(client, "light").status_code == 200
    for bad in ("purple", "", 3, None):
        response = set_theme(client, bad)
        assert response.status_code == 400, bad
        assert response.json()["error"]["code"] == "invalid_input"
    assert page_theme(client, "/chat") == "light"


def test_setting_the_theme_needs_a_session_and_the_csrf_token(client: TestClient) -> None:
    assert set_theme(client, "dark").status_code == 401
    use_session(client, sign_up(client, "alice"))
    response = client.post("/api/account/theme", json={"theme": "dark"})
    assert response.status_code == 403
    assert page_theme(client, "/chat") == "system"
