"""web.auth_routes: sign-up, log-in, log-out through the forms, the session cookie, sign-up modes,
pending and disabled accounts, and throttling."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from backend.settings import Settings
from backend.throttle import LoginThrottle
from web.app import create_app

from .conftest import PASSWORD, FakeGenerator, app_state, csrf_field, sign_up, use_session


def _set_cookie_header(response) -> str:
    headers = [h for h in response.headers.get_list("set-cookie") if h.startswith("crescent_session=")]
    assert len(headers) == 1, response.headers.get_list("set-cookie")
    return headers[0]


def _attributes(set_cookie: str) -> set[str]:
    return {part.strip().lower() for part in set_cookie.split(";")[1:]}


def post_form(client: TestClient, path: str, **data: str):
    return client.post(path, data={**data, **csrf_field(client)})


def log_in(client: TestClient, username: str, password: str = PASSWORD):
    return post_form(client, "/login", username=username, password=password)


def set_signup_mode(client: TestClient, mode: str) -> None:
    app_state(client).runtime_settings.update({"signup_mode": mode}, None)


def test_sign_up_sets_an_httponly_samesite_session_cookie_and_redirects(client: TestClient) -> None:
    response = post_form(client, "/signup", username="alice", password=PASSWORD)
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
    app = create_app(settings, generator=FakeGenerator())
    # Secure cookies travel only over HTTPS (the CSRF cookie too), so the client speaks https.
    with TestClient(app, base_url="https://testserver", follow_redirects=False) as client:
        response = post_form(client, "/signup", username="alice", password=PASSWORD)
        assert response.status_code == 303
        assert "secure" in _attributes(_set_cookie_header(response))
        csrf_cookie = [h for h in response.headers.get_list("set-cookie") if h.startswith("crescent_csrf=")]
        assert csrf_cookie == [] or "secure" in _attributes(csrf_cookie[0])


def test_the_first_account_is_an_active_admin_and_the_next_ones_users(client: TestClient) -> None:
    sign_up(client, "alice")
    use_session(client, None)
    sign_up(client, "bob")
    auth = app_state(client).auth
    assert (auth.find_user("alice").role, auth.find_user("alice").status) == ("admin", "active")
    assert (auth.find_user("bob").role, auth.find_user("bob").status) == ("user", "active")


def test_log_in_with_the_right_password_starts_a_new_session(client: TestClient) -> None:
    first = sign_up(client, "alice")
    use_session(client, None)
    response = log_in(client, "alice")
    assert response.status_code == 303
    assert response.headers["location"] == "/chat"
    second = response.cookies.get("crescent_session")
    assert second and second != first
    assert "httponly" in _attributes(_set_cookie_header(response))


def test_log_in_failure_does_not_reveal_whether_the_account_exists(client: TestClient) -> None:
    sign_up(client, "alice")
    use_session(client, None)
    wrong_password = log_in(client, "alice", "not the password")
    no_account = log_in(client, "nobody", "not the password")
    assert wrong_password.status_code == no_account.status_code == 401
    assert "crescent_session" not in wrong_password.cookies
    assert "Invalid username or password." in wrong_password.text
    # Same page apart from the echoed username.
    assert wrong_password.text.replace("alice", "X") == no_account.text.replace("nobody", "X")


def test_log_in_with_missing_fields_is_a_400(client: TestClient) -> None:
    response = post_form(client, "/login", username="alice")
    assert response.status_code == 400
    assert "crescent_session" not in response.cookies


def test_sign_up_validation_failure_re_renders_with_400(client: TestClient) -> None:
    response = post_form(client, "/signup", username="bad name with spaces!" * 10, password=PASSWORD)
    assert response.status_code == 400
    assert "crescent_session" not in response.cookies
    assert 'name="username"' in response.text  # the form again, not an error page


def test_sign_up_with_a_taken_username_is_a_409(client: TestClient) -> None:
    sign_up(client, "alice")
    use_session(client, None)
    response = post_form(client, "/signup", username="alice", password="another password 123")
    assert response.status_code == 409
    assert "crescent_session" not in response.cookies


def test_log_out_ends_the_session_on_the_server(client: TestClient) -> None:
    token = sign_up(client, "alice")
    response = post_form(client, "/logout")
    assert response.status_code == 303
    assert response.headers["location"] == "/login"
    cleared = _set_cookie_header(response)
    assert 'crescent_session=""' in cleared or "max-age=0" in cleared.lower()
    # Replaying the old token does not work: the session is gone server-side, not only the cookie.
    use_session(client, token)
    assert client.get("/chat").headers["location"] == "/login"
    assert client.get("/api/conversations").status_code == 401


def test_log_out_without_a_session_redirects(client: TestClient) -> None:
    assert post_form(client, "/logout").status_code == 303


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
    assert client.get("/chat").headers["location"] == "/login"


def test_oversized_form_is_refused(client: TestClient) -> None:
    response = post_form(client, "/login", username="a", password="x" * 20_000)
    assert response.status_code == 413


# --- sign-up modes, pending and disabled accounts ----------------------------------------------


def test_approval_mode_makes_a_pending_account_that_waits(client: TestClient) -> None:
    sign_up(client, "alice")  # the admin
    use_session(client, None)
    set_signup_mode(client, "approval")
    page = client.get("/signup")
    assert 'id="signup-approval"' in page.text
    response = post_form(client, "/signup", username="bob", password=PASSWORD)
    assert response.status_code == 200
    assert "crescent_session" not in response.cookies
    assert "Waiting for approval" in response.text and "bob" in response.text
    assert app_state(client).auth.find_user("bob").status == "pending"

    # Right password: the waiting page again (403), no session. Wrong password: the usual 401.
    pending = log_in(client, "bob")
    assert pending.status_code == 403 and "Waiting for approval" in pending.text
    assert "crescent_session" not in pending.cookies
    wrong = log_in(client, "bob", "wrong password!")
    assert wrong.status_code == 401 and "Waiting for approval" not in wrong.text

    admin = app_state(client).auth.find_user("alice")
    app_state(client).users.set_status(admin.id, app_state(client).auth.find_user("bob").id, "active")
    assert log_in(client, "bob").status_code == 303


def test_closed_mode_hides_the_form_and_refuses_posts(client: TestClient) -> None:
    sign_up(client, "alice")
    use_session(client, None)
    set_signup_mode(client, "closed")
    page = client.get("/signup")
    assert page.status_code == 200
    assert "Sign-up is closed" in page.text and 'id="auth-form"' not in page.text
    response = post_form(client, "/signup", username="bob", password=PASSWORD)
    assert response.status_code == 403
    assert "Sign-up is closed" in response.text
    assert app_state(client).auth.find_user("bob") is None


def test_closed_mode_still_lets_the_very_first_account_be_made(client: TestClient) -> None:
    set_signup_mode(client, "closed")
    assert 'id="auth-form"' in client.get("/signup").text
    sign_up(client, "root")
    assert app_state(client).auth.find_user("root").role == "admin"


def test_a_disabled_account_is_told_so_only_with_the_right_password(client: TestClient) -> None:
    sign_up(client, "alice")
    use_session(client, None)
    bob_token = sign_up(client, "bob")
    state = app_state(client)
    state.users.set_status(state.auth.find_user("alice").id, state.auth.find_user("bob").id, "disabled")
    use_session(client, bob_token)
    assert client.get("/chat").headers["location"] == "/login"  # session ended at once
    use_session(client, None)
    right = log_in(client, "bob")
    assert right.status_code == 403 and "disabled" in right.text
    wrong = log_in(client, "bob", "wrong password!")
    assert wrong.status_code == 401 and "disabled" not in wrong.text


# --- throttling --------------------------------------------------------------------------------


def _retry_after_shown(response) -> int:
    match = re.search(r"Try again in (\d+) seconds", response.text)
    assert match, response.text
    return int(match.group(1))


def test_failed_log_ins_are_throttled_per_account_without_revealing_it_exists(client: TestClient) -> None:
    state = app_state(client)
    state.throttle = LoginThrottle(login_per_account_ip="3/5 minutes", login_per_ip="100/5 minutes")
    sign_up(client, "alice")
    use_session(client, None)
    for name in ("alice", "nobody"):
        for _ in range(3):
            assert log_in(client, name, "wrong password!").status_code == 401
    answers = {name: log_in(client, name, "wrong password!") for name in ("alice", "nobody")}
    for response in answers.values():
        assert response.status_code == 429
        assert 1 <= int(response.headers["retry-after"]) <= 300
        assert _retry_after_shown(response) == int(response.headers["retry-after"])
    # Same page apart from the echoed name and the wait (the two windows started moments apart).
    same = [re.sub(r"\d+", "N", answers[n].text.replace(n, "X")) for n in ("alice", "nobody")]
    assert same[0] == same[1]
    # Even the right password is refused while throttled (the guesser learns nothing).
    assert log_in(client, "alice").status_code == 429
    # Another account from the same IP is not affected by alice's window.
    assert log_in(client, "carol", "wrong password!").status_code == 401


def test_failed_log_ins_are_throttled_per_ip_across_accounts(client: TestClient) -> None:
    app_state(client).throttle = LoginThrottle(login_per_account_ip="100/5 minutes", login_per_ip="4/5 minutes")
    for i in range(4):
        assert log_in(client, f"user{i}", "wrong password!").status_code == 401
    assert log_in(client, "someone-else", "wrong password!").status_code == 429


def test_a_successful_log_in_clears_the_accounts_failures(client: TestClient) -> None:
    app_state(client).throttle = LoginThrottle(login_per_account_ip="3/5 minutes", login_per_ip="100/5 minutes")
    sign_up(client, "alice")
    use_session(client, None)
    for _ in range(2):
        log_in(client, "alice", "wrong password!")
    assert log_in(client, "alice").status_code == 303
    use_session(client, None)
    for _ in range(3):
        assert log_in(client, "alice", "wrong password!").status_code == 401  # counting from zero


def test_guessing_from_elsewhere_does_not_lock_the_owner_out(client: TestClient) -> None:
    sign_up(client, "alice")  # the first account: the admin, the account worth locking out
    use_session(client, None)
    # Another address, through the same app (a TestClient without `with` shares its lifespan).
    attacker = TestClient(client.app, follow_redirects=False, client=("203.0.113.9", 4242))
    for _ in range(12):  # the default throttle: 10 failures per account and address
        response = attacker.post("/login", data={"username": "alice", "password": "wrong password!",
                                                 **csrf_field(attacker)})
        assert response.status_code in (401, 429)
    assert response.status_code == 429  # the guesser is throttled
    assert log_in(client, "alice").status_code == 303  # the owner, from his address, is not


def test_sign_ups_are_throttled_per_ip(client: TestClient) -> None:
    app_state(client).throttle = LoginThrottle(signup_per_ip="2/hour")
    sign_up(client, "alice")
    use_session(client, None)
    # A failed attempt counts too ("username taken" is what a prober collects).
    assert post_form(client, "/signup", username="alice", password=PASSWORD).status_code == 409
    response = post_form(client, "/signup", username="bob", password=PASSWORD)
    assert response.status_code == 429
    assert 3000 < int(response.headers["retry-after"]) <= 3600
    assert app_state(client).auth.find_user("bob") is None


@pytest.mark.parametrize("path", ["/login", "/signup"])
def test_forms_carry_a_csrf_field(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert re.search(r'<input type="hidden" name="csrf_token" value="[0-9a-f]{64}">', page.text)
