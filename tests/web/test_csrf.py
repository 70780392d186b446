"""web.security.CsrfMiddleware: every cookie-authenticated unsafe request carries a token."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from backend.rag import HashingEmbedder
from backend.settings import Settings
from web.app import create_app
from web.security import CSRF_COOKIE, CsrfMiddleware, csrf_token_for
from web.session import SESSION_COOKIE

from .conftest import (
    PASSWORD,
    FakeGenerator,
    app_state,
    csrf_field,
    csrf_headers,
    csrf_token,
    sign_up,
    use_session,
)


# --- the middleware alone, on a tiny app ------------------------------------------------------


async def _page(request: Request) -> PlainTextResponse:
    return PlainTextResponse(csrf_token_for(request))


async def _echo(request: Request) -> JSONResponse:
    form = await request.form()
    return JSONResponse({"note": form.get("note")})


async def _v1(request: Request) -> PlainTextResponse:
    return PlainTextResponse("api")


def _tiny_client() -> TestClient:
    routes = [Route("/page", _page), Route("/echo", _echo, methods=["POST", "DELETE"]),
              Route("/v1/thing", _v1, methods=["POST"])]
    return TestClient(Starlette(routes=routes, middleware=[Middleware(CsrfMiddleware, secret=b"k" * 32)]))


def test_an_anonymous_page_sets_the_double_submit_cookie_and_the_form_passes() -> None:
    client = _tiny_client()
    page = client.get("/page")
    assert CSRF_COOKIE in page.cookies
    token = page.text
    response = client.post("/echo", data={"note": "hi", "csrf_token": token})
    assert response.status_code == 200
    assert response.json() == {"note": "hi"}  # the body the middleware read is replayed intact


def test_a_token_without_its_cookie_or_a_cookie_without_its_token_fails() -> None:
    client = _tiny_client()
    token = client.get("/page").text
    assert client.post("/echo", data={"note": "x"}).status_code == 403
    stranger = _tiny_client()  # no cookie: the token alone is worthless
    assert stranger.post("/echo", data={"csrf_token": token}).status_code == 403


def test_the_session_token_is_bound_to_the_session_cookie() -> None:
    client = _tiny_client()
    client.cookies.set(SESSION_COOKIE, "session-a")
    token_a = client.get("/page").text
    assert client.delete("/echo", headers={"X-CSRF-Token": token_a}).status_code == 200
    client.cookies.set(SESSION_COOKIE, "session-b")
    assert client.delete("/echo", headers={"X-CSRF-Token": token_a}).status_code == 403
    assert client.delete("/echo", headers={"X-CSRF-Token": client.get("/page").text}).status_code == 200


def test_v1_is_exempt_and_safe_methods_pass() -> None:
    client = _tiny_client()
    client.cookies.set(SESSION_COOKIE, "session-a")
    assert client.post("/v1/thing").status_code == 200
    assert client.get("/page").status_code == 200


def test_different_secrets_make_different_tokens() -> None:
    def app(secret: bytes) -> TestClient:
        return TestClient(Starlette(routes=[Route("/page", _page)], middleware=[Middleware(CsrfMiddleware, secret=secret)]))

    one, two = app(b"a" * 32), app(b"b" * 32)
    for c in (one, two):
        c.cookies.set(SESSION_COOKIE, "same-session")
    assert one.get("/page").text != two.get("/page").text


# --- the real app -------------------------------------------------------------------------------


def test_pages_embed_the_token_in_the_meta_tag_and_forms(client: TestClient) -> None:
    sign_up(client, "alice")
    page = client.get("/chat").text
    meta = re.search(r'<meta name="csrf-token" content="([0-9a-f]{64})">', page)
    assert meta
    assert f'name="csrf_token" value="{meta.group(1)}"' in page  # the log-out form


@pytest.mark.parametrize(
    "method, path",
    [("POST", "/logout"), ("DELETE", "/api/conversations/x"), ("POST", "/api/account/keys"),
     ("POST", "/api/account/password"), ("DELETE", "/api/account/keys/x")],
)
def test_logged_in_unsafe_requests_without_the_token_are_refused(client: TestClient, method: str, path: str) -> None:
    sign_up(client, "alice")
    response = client.request(method, path, headers={"Accept": "application/json"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "csrf_failed"
    wrong = client.request(method, path, headers={"Accept": "application/json", "X-CSRF-Token": "0" * 64})
    assert wrong.status_code == 403
    assert client.get("/chat").status_code == 200  # still logged in: log-out did not happen


def test_a_refused_form_gets_an_html_page_with_a_reload_hint(client: TestClient) -> None:
    response = client.post("/login", data={"username": "alice", "password": PASSWORD})
    assert response.status_code == 403
    assert "text/html" in response.headers["content-type"]
    assert "Reload the page" in response.text


def test_the_anonymous_token_stops_working_after_log_in(client: TestClient) -> None:
    anonymous = csrf_token(client)
    sign_up(client, "alice")
    assert client.post("/logout", data={"csrf_token": anonymous}).status_code == 403
    assert client.post("/logout", data=csrf_field(client)).status_code == 303


def test_a_token_from_another_users_session_is_refused(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    alice_headers = csrf_headers(client)
    use_session(client, None)
    sign_up(client, "bob")
    response = client.post("/api/account/keys", json={"name": "k"}, headers=alice_headers)
    assert response.status_code == 403
    use_session(client, alice)
    assert client.post("/api/account/keys", json={"name": "k"}, headers=alice_headers).status_code == 201


# --- one server secret (backend/secret_key.py): tokens valid across processes and restarts ---


def _served(settings: Settings) -> TestClient:
    app = create_app(settings, generator=FakeGenerator(), embedder=HashingEmbedder())
    return TestClient(app, follow_redirects=False)


def _post_anon_form(client: TestClient, csrf_cookie: str, token: str, username: str):
    client.cookies.clear()
    client.cookies.set(CSRF_COOKIE, csrf_cookie)
    return client.post("/signup", data={"username": username, "password": PASSWORD, "csrf_token": token})


def test_two_apps_with_the_same_secret_accept_each_others_tokens(settings: Settings) -> None:
    shared = replace(settings, secret_key="k" * 32)
    with _served(shared) as a, _served(shared) as b, _served(replace(shared, secret_key="o" * 32)) as other:
        # The sign-up form A served is accepted by B, not by a server with another secret.
        token = csrf_token(a)
        cookie = a.cookies.get(CSRF_COOKIE)
        assert _post_anon_form(other, cookie, token, "alice").status_code == 403
        signed_up = _post_anon_form(b, cookie, token, "alice")
        assert signed_up.status_code == 303
        session = signed_up.cookies.get(SESSION_COOKIE)
        # A page of the session served by B, its form posted to A.
        use_session(b, session)
        field = csrf_field(b)
        use_session(other, session)
        assert other.post("/logout", data=field).status_code == 403
        use_session(a, session)
        assert a.post("/logout", data=field).status_code == 303
        salts = {app_state(c).chat.generations.cache_salt("u1") for c in (a, b)}
        assert len(salts) == 1 and app_state(other).chat.generations.cache_salt("u1") not in salts


def test_a_restart_keeps_tokens_and_cache_salts_valid(settings: Settings, tmp_path) -> None:
    assert settings.secret_key is None and settings.secret_dir == str(tmp_path)  # the secret file
    with _served(settings) as before:
        token = csrf_token(before)
        cookie = before.cookies.get(CSRF_COOKIE)
        salt = app_state(before).chat.generations.cache_salt("u1")
    with _served(settings) as after:
        assert _post_anon_form(after, cookie, token, "alice").status_code == 303
        assert app_state(after).chat.generations.cache_salt("u1") == salt
