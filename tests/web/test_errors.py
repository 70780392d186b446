"""web.errors: the one mapping from domain errors to HTTP statuses and error frames."""

from __future__ import annotations

import pytest

from backend import errors as domain
from backend import generator as gen
from web.errors import error_code, error_frame, error_message, status_for_code


@pytest.mark.parametrize(
    "exc, status",
    [
        (domain.NotFound(), 404),
        (domain.ValidationFailed("username too short"), 400),
        (domain.InvalidCredentials(), 401),
        (domain.UsernameTaken(), 409),
        (domain.ConversationBusy(), 409),
        (gen.InvalidGenerationParams("temperature"), 400),
        (gen.PromptTooLong("too long"), 400),
        (gen.GeneratorUnavailable("loading"), 503),
    ],
)
def test_domain_errors_map_to_statuses(exc: Exception, status: int) -> None:
    assert status_for_code(error_code(exc)) == status


def test_unexpected_exceptions_never_leak_their_text() -> None:
    exc = RuntimeError("password=hunter2 at /srv/secret")
    assert error_code(exc) == "internal"
    assert status_for_code(error_code(exc)) == 500
    assert "hunter2" not in error_message(exc)


def test_domain_error_message_is_shown() -> None:
    assert error_message(domain.ValidationFailed("username too short")) == "username too short"


def test_error_frame_includes_only_known_ids() -> None:
    assert error_frame("bad_frame", "oops") == {"type": "error", "code": "bad_frame", "message": "oops"}
    assert error_frame("busy", "m", client_msg_id="c1")["client_msg_id"] == "c1"
    assert "client_msg_id" not in error_frame("busy", "m", message_id="m1")


def test_an_unhandled_error_is_a_500_page_with_headers_and_no_leak(settings, fake) -> None:
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from web.app import create_app

    async def boom(request):
        raise RuntimeError("secret internals /srv/db password=hunter2")

    app = create_app(settings, generator=fake)
    app.router.routes.append(Route("/boom", boom))
    app.router.routes.append(Route("/api/boom", boom))
    with TestClient(app, raise_server_exceptions=False) as client:
        page = client.get("/boom")
        api = client.get("/api/boom")
    assert page.status_code == api.status_code == 500
    assert "hunter2" not in page.text and "hunter2" not in api.text
    assert page.headers["content-type"].startswith("text/html")
    assert api.json()["error"]["code"] == "internal"
    for response in (page, api):
        assert response.headers["x-frame-options"] == "DENY"
        assert "script-src 'self'" in response.headers["content-security-policy"]


def test_domain_error_raised_by_a_route_maps_to_its_status(settings, fake) -> None:
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from web.app import create_app

    async def busy(request):
        raise domain.ConversationBusy()

    app = create_app(settings, generator=fake)
    app.router.routes.append(Route("/api/busy", busy))
    with TestClient(app) as client:
        response = client.get("/api/busy")
    assert response.status_code == 409
    assert response.json() == {"error": {"code": "busy", "message": domain.ConversationBusy.default_message}}
