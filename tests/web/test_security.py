"""web.security: the CSP and hardening headers on every response, and the same-origin check."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from backend.settings import Settings
from web.app import create_app
from web.security import CONTENT_SECURITY_POLICY, is_same_origin, normalize_origin

from .conftest import FakeGenerator, csrf_field, sign_up

EXPECTED_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)


def _assert_security_headers(response) -> None:
    assert response.headers["content-security-policy"] == EXPECTED_CSP
    assert "unsafe-inline" not in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"
    assert response.headers["x-frame-options"] == "DENY"


def test_csp_matches_the_contract() -> None:
    assert CONTENT_SECURITY_POLICY == EXPECTED_CSP


@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", "/login"),
        ("GET", "/signup"),
        ("GET", "/"),
        ("GET", "/healthz"),
        ("GET", "/api/conversations"),  # 401
        ("GET", "/no/such/page"),  # 404
        ("POST", "/login"),  # 400 re-render
        ("PUT", "/login"),  # 403 csrf_failed (the middleware answers before routing)
        ("GET", "/account"),  # 303 to /login
        ("POST", "/api/account/keys"),  # 403 csrf_failed, JSON
    ],
)
def test_every_response_has_the_security_headers(client: TestClient, method: str, path: str) -> None:
    response = client.request(method, path)
    _assert_security_headers(response)


def test_logged_in_pages_have_the_security_headers(client: TestClient) -> None:
    sign_up(client, "alice")
    for path in ("/chat", "/account", "/c/unknown"):
        _assert_security_headers(client.get(path))


def test_cross_origin_post_is_refused_before_the_route_runs(client: TestClient) -> None:
    response = client.post(
        "/signup",
        data={"username": "mallory", "password": "long enough password"},
        headers={"Origin": "http://evil.example"},
    )
    assert response.status_code == 403
    assert "crescent_session" not in response.cookies
    _assert_security_headers(response)
    # The account was not created: the same name can still sign up from our own origin.
    ok = client.post("/signup", data={"username": "mallory", "password": "long enough password", **csrf_field(client)})
    assert ok.status_code == 303


def test_cross_origin_logout_is_refused(client: TestClient) -> None:
    sign_up(client, "alice")
    assert client.post("/logout", headers={"Origin": "http://evil.example"}).status_code == 403
    assert client.get("/chat").status_code == 200  # still logged in


def test_cross_origin_api_delete_is_refused_with_json(client: TestClient) -> None:
    sign_up(client, "alice")
    response = client.delete("/api/conversations/abc", headers={"Origin": "https://evil.example"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden_origin"


@pytest.mark.parametrize("origin", ["http://testserver", "HTTP://TestServer:80", None])
def test_same_origin_or_no_origin_post_passes(client: TestClient, origin: str | None) -> None:
    headers = {"Origin": origin} if origin else {}
    data = {"username": "bob", "password": "long enough password", **csrf_field(client)}
    response = client.post("/signup", data=data, headers=headers)
    assert response.status_code == 303


@pytest.mark.parametrize(
    "origin", ["null", "https://testserver", "http://testserver:8080", "http://testserver.evil.example", "garbage"]
)
def test_origins_that_differ_in_scheme_host_or_port_are_refused(client: TestClient, origin: str) -> None:
    response = client.post("/login", data={"username": "bob", "password": "x"}, headers={"Origin": origin})
    assert response.status_code == 403


def test_allowed_origins_setting_admits_an_extra_origin(database_url: str) -> None:
    settings = Settings(database_url=database_url, allowed_origins=("https://chat.example.com",))
    with TestClient(create_app(settings, generator=FakeGenerator()), follow_redirects=False) as client:
        ok = client.post(
            "/signup",
            data={"username": "carol", "password": "long enough password", **csrf_field(client)},
            headers={"Origin": "https://chat.example.com"},
        )
        assert ok.status_code == 303
        refused = client.post("/logout", headers={"Origin": "https://other.example.com"})
        assert refused.status_code == 403


def test_normalize_origin() -> None:
    assert normalize_origin("HTTPS://Example.COM") == ("https", "example.com", 443)
    assert normalize_origin("http://example.com:8000") == ("http", "example.com", 8000)
    assert normalize_origin("null") is None
    assert normalize_origin("ftp://example.com") is None
    assert normalize_origin("http://example.com:99999") is None


def test_is_same_origin_maps_websocket_schemes() -> None:
    scope = {"type": "websocket", "scheme": "wss", "headers": [(b"host", b"chat.example.com"), (b"origin", b"https://chat.example.com")]}
    assert is_same_origin(scope)
    scope["headers"][1] = (b"origin", b"http://chat.example.com")
    assert not is_same_origin(scope)
