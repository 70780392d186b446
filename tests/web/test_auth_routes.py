"""web.auth_routes: sign-up, log-in, log-out through the forms, and the session cookie."""

from __future__ import annotations

from starlette.testclient import TestClient

from backend.settings import Settings
from web.app import create_app

from .conftest import PASSWORD, FakeGenerator, sign_up, use_session


def _set_cookie_header(response) -> str:
    headers = [h for h in response.headers.get_list("set-cookie") if h.startswith("crescent_session=")]
    assert len(headers) == 1, response.headers.get_list("set-cookie")
    return headers[0]


def _attributes(set_cookie: str) -> set[str]:
    return {part.strip().lower() for part in set_cookie.split(";")[1:]}


def test_sign_up_sets_an_httponly_samesite_session_cookie_and_redirects(client: TestClient) -> None:
    response = client.post("/signup", data={"username": "alice", "password": PASSWORD})
    assert response.status_code == 303
    assert response.headers["location"] == "/chat"
    attributes = _attributes(_set_cookie_header(response))
    assert "httponly" in attributes
    assert "samesite=lax" in attributes
    assert "path=/" in attributes
    assert "secure" not in attributes
    assert any(a.startswith("max-age=") for a in attributes)
    assert client.get("/chat").status_code == 200


def test_cookie_is_secure_when_configured(database_url: str) -> None:
    settings = Settings(database_url=database_url, cookie_secure=True)
    with TestClient(create_app(settings, generator=FakeGenerator()), follow_redirects=False) as client:
        response = client.post("/signup", data={"username": "alice", "password": PASSWORD})
        assert response.status_code == 303
        assert "secure" in _attributes(_set_cookie_header(response))


def test_log_in_with_the_right_password_starts_a_new_session(client: TestClient) -> None:
    first = sign_up(client, "alice")
    use_session(client, None)
    response = client.post("/login", data={"username": "alice", "password": PASSWORD})
    assert response.status_code == 303
    assert response.headers["location"] == "/chat"
    second = response.cookies.get("crescent_session")
    assert second and second != first
    assert "httponly" in _attributes(_set_cookie_header(response))


def test_log_in_failure_does_not_reveal_whether_the_account_exists(client: TestClient) -> None:
    sign_up(client, "alice")
    use_session(client, None)
    wrong_password = client.post("/login", data={"username": "alice", "password": "not the password"})
    no_account = client.post("/login", data={"username": "nobody", "password": "not the password"})
    assert wrong_password.status_code == no_account.status_code == 401
    assert "crescent_session" not in wrong_password.cookies
    assert "Invalid username or password." in wrong_password.text
    # Same page apart from the echoed username.
    assert wrong_password.text.replace("alice", "X") == no_account.text.replace("nobody", "X")


def test_log_in_with_missing_fields_is_a_400(client: TestClient) -> None:
    response = client.post("/login", data={"username": "alice"})
    assert response.status_code == 400
    assert "crescent_session" not in response.cookies


def test_sign_up_validation_failure_re_renders_with_400(client: TestClient) -> None:
    response = client.post("/signup", data={"username": "bad name with spaces!" * 10, "password": PASSWORD})
    assert response.status_code == 400
    assert "crescent_session" not in response.cookies
    assert 'name="username"' in response.text  # the form again, not an error page


def test_sign_up_with_a_taken_username_is_a_409(client: TestClient) -> None:
    sign_up(client, "alice")
    use_session(client, None)
    response = client.post("/signup", data={"username": "alice", "password": "another password 123"})
    assert response.status_code == 409
    assert "crescent_session" not in response.cookies


def test_log_out_ends_the_session_on_the_server(client: TestClient) -> None:
    token = sign_up(client, "alice")
    response = client.post("/logout")
    assert response.status_code == 303
    assert response.headers["location"] == "/login"
    cleared = _set_cookie_header(response)
    assert 'crescent_session=""' in cleared or "max-age=0" in cleared.lower()
    # Replaying the old token does not work: the session is gone server-side, not only the cookie.
    use_session(client, token)
    assert client.get("/chat").headers["location"] == "/login"
    assert client.get("/api/conversations").status_code == 401


def test_log_out_without_a_session_redirects(client: TestClient) -> None:
    assert client.post("/logout").status_code == 303


def test_login_and_signup_pages_redirect_when_logged_in(client: TestClient) -> None:
    assert client.get("/login").status_code == 200
    assert client.get("/signup").status_code == 200
    sign_up(client, "alice")
    for path in ("/login", "/signup"):
        response = client.get(path)
        assert response.status_code == 303
        assert response.headers["location"] == "/chat"


def test_unknown_session_token_is_logged_out(client: TestClient) -> None:
    use_session(client, "forged-token")
    assert client.get("/").headers["location"] == "/login"


def test_oversized_form_is_refused(client: TestClient) -> None:
    response = client.post("/login", data={"username": "a", "password": "x" * 20_000})
    assert response.status_code == 413
