"""Hostile input (issue 13): ids checked for their shape before any query, control characters
refused in every text input, and JSON nested too deep refused everywhere with a clear 4xx.

"Before any query" is checked by recording every statement the app sends to the database: none
may carry the hostile value (on PostgreSQL a NUL in a parameter is a 500).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import pytest
from sqlalchemy import event
from starlette.routing import Route
from starlette.testclient import TestClient

from web.inputs import IdConvertor, check_json_texts

from .conftest import FakeGenerator, app_state, csrf_field, csrf_headers, sign_up, use_session, user_id
from .test_ws import assert_alive, receive_until, send_frame

GOOD_ID = "0" * 32
# Each stands where an id goes in a path: NUL, dot segments (escaped, or the client would resolve
# them), too long, too short, not hex, upper case, a space.
BAD_IDS = ("%00", "ab%00cd", "%2E%2E", "..%2F..", "a" * 33, "a" * 31, "g" * 32, "A" * 32, "%20" + "a" * 29)
DEEP_JSON = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def statements(client: TestClient) -> Iterator[list[str]]:
    """The parameters of every statement run from now on, as one repr each."""
    engine = app_state(client).documents.session_factory.kw["bind"]
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        seen.append(repr(parameters))

    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)


def _id_routes(app) -> list[tuple[str, Route]]:
    """(method, route) for every route with an id in its path."""
    found = []
    for route in app.routes:
        if isinstance(route, Route) and any(isinstance(c, IdConvertor) for c in route.param_convertors.values()):
            found += [(m, route) for m in sorted(route.methods or ()) if m != "HEAD"]
    return found


def _path(route: Route, bad: str, target: str) -> str:
    """The route's path with `bad` in param `target` and well-formed values in the others."""
    path = route.path
    for name, convertor in route.param_convertors.items():
        value = bad if name == target else (GOOD_ID if isinstance(convertor, IdConvertor) else "1")
        path = re.sub(r"\{%s:[a-z]+\}" % name, value, path)
    return path


def test_every_path_param_named_like_an_id_is_an_id(client: TestClient) -> None:
    """A route added later with {thing_id:str} fails here, not in production on PostgreSQL."""
    loose = [route.path for route in client.app.routes if isinstance(route, Route)
             for name, c in route.param_convertors.items()
             if name.endswith("_id") and name != "chunk_id" and not isinstance(c, IdConvertor)]
    assert not loose
    assert len(_id_routes(client.app)) >= 17


def test_every_id_route_answers_404_to_a_malformed_id_without_a_query(
    client: TestClient, statements: list[str]
) -> None:
    token = sign_up(client, "root")  # the first account: an admin, so admin routes get as far as they can
    use_session(client, token)
    headers = csrf_headers(client)
    failures = []
    statements.clear()
    for method, route in _id_routes(client.app):
        for target, convertor in route.param_convertors.items():
            if not isinstance(convertor, IdConvertor):
                continue
            for bad in BAD_IDS:
                path = _path(route, bad, target)
                accept = "application/json" if path.startswith(("/api/", "/admin/api/")) else "text/html"
                body = {"json": {}} if method in ("POST", "PATCH") else {}
                response = client.request(method, path, headers={**headers, "Accept": accept}, **body)
                if response.status_code != 404:
                    failures.append(f"{method} {path}: {response.status_code} {response.text[:100]!r}")
                elif accept == "application/json" and response.json()["error"]["code"] != "not_found":
                    failures.append(f"{method} {path}: {response.text[:100]!r}")
    assert not failures, "\n".join(failures)
    assert not [s for s in statements if "\\x00" in s or "..%2F" in s or "g" * 32 in s]


def test_the_issues_cases(client: TestClient, statements: list[str]) -> None:
    token = sign_up(client, "root")
    use_session(client, token)
    headers = {**csrf_headers(client), "Accept": "application/json"}
    statements.clear()
    for method, path in (("GET", "/api/conversations/%00"), ("GET", "/c/%00"), ("GET", "/api/documents/%00"),
                         ("GET", "/api/documents/%00/chunks/1"), ("GET", "/documents/%00/chunks/1"),
                         ("DELETE", "/api/account/keys/%00"), ("POST", "/admin/api/users/%00/status")):
        response = client.request(method, path, headers=headers, **({"json": {"status": "active"}} if method == "POST" else {}))
        assert response.status_code == 404, (method, path, response.text)
    assert not [s for s in statements if "\\x00" in s]


def test_a_well_formed_unknown_id_is_still_404(client: TestClient) -> None:
    sign_up(client, "alice")
    assert client.get(f"/api/conversations/{GOOD_ID}").status_code == 404
    assert client.get(f"/c/{GOOD_ID}", headers={"Accept": "text/html"}).status_code == 404


# -- text fields ---------------------------------------------------------------------------------


@pytest.mark.parametrize("form", [{"username": "ro\x00ot", "password": "secret secret"},
                                  {"username": "root", "password": "pass\x00word"},
                                  {"username": "ro\x1bot", "password": "secret secret"}])
@pytest.mark.parametrize("path", ["/login", "/signup"])
def test_log_in_and_sign_up_refuse_control_characters(
    client: TestClient, statements: list[str], path: str, form: dict[str, str]
) -> None:
    field = csrf_field(client)
    statements.clear()
    response = client.post(path, data={**form, **field}, headers={"Accept": "text/html"})
    assert response.status_code == 400
    named = "username" if "\x00" in form["username"] or "\x1b" in form["username"] else "password"
    assert f"The {named} holds the control character" in response.text
    assert not [s for s in statements if "\\x00" in s or "\\x1b" in s]
    assert "\x00" not in response.text


def _conversation(client: TestClient, token: str) -> str:
    return app_state(client).conversations.create_conversation(user_id(client, token), "Mine").id


JSON_CASES = [
    ("PATCH", "/api/conversations/{c}", {"title": "a\x00b"}, "title"),
    ("PATCH", "/api/conversations/{c}/settings", {"system_prompt": "be\x07 brief"}, "system_prompt"),
    ("POST", "/api/conversations/{c}/branch", {"message_id": "\x00"}, "message_id"),
    ("POST", "/api/account/keys", {"name": "key\x00"}, "name"),
    ("POST", "/api/account/password", {"current_password": "x", "new_password": "new\x00 password"}, "new_password"),
    ("POST", "/api/account/theme", {"theme": "dark\x00"}, "theme"),
    ("POST", "/admin/api/settings", {"system_prompt": "\x00"}, "system_prompt"),
    ("POST", "/admin/api/users/{u}/status", {"status": "active\x00"}, "status"),
    ("POST", "/admin/api/users/{u}/role", {"role": "user\x00"}, "role"),
    ("POST", "/api/documents/{d}/share", {"shared": True, "note": ["ok", "\x0b"]}, "note[1]"),
    ("PATCH", "/api/conversations/{c}/settings", {"nested": {"k\x00": 1}}, "the name of 'nested.k\\x00'"),
]


@pytest.mark.parametrize("method, template, body, field", JSON_CASES)
def test_json_text_fields_refuse_control_characters(
    client: TestClient, statements: list[str], method: str, template: str, body: dict[str, Any], field: str
) -> None:
    token = sign_up(client, "root")
    use_session(client, token)
    path = template.format(c=_conversation(client, token), u=user_id(client, token), d=GOOD_ID)
    headers = {**csrf_headers(client), "Accept": "application/json"}
    statements.clear()
    response = client.request(method, path, json=body, headers=headers)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert error["message"].startswith(f"{field} holds the control character U+"), error["message"]
    assert not [s for s in statements if re.search(r"\\x0[0-9b]", s)]


def test_tab_and_line_breaks_are_text(client: TestClient) -> None:
    token = sign_up(client, "root")
    conversation = _conversation(client, token)
    response = client.patch(f"/api/conversations/{conversation}/settings",
                            json={"system_prompt": "one\ttwo\r\nthree"}, headers=csrf_headers(client))
    assert response.status_code == 200, response.text
    assert response.json()["settings"]["system_prompt"] == "one\ttwo\r\nthree"


def test_search_refuses_a_control_character_in_q(client: TestClient, statements: list[str]) -> None:
    sign_up(client, "alice")
    statements.clear()
    response = client.get("/api/search", params={"q": "wor\x00ld"})
    assert response.status_code == 400
    assert response.json()["error"] == {"code": "invalid_input", "message": "q holds the control character U+0000"}
    assert not [s for s in statements if "\\x00" in s]


def test_the_admin_settings_form_refuses_a_control_character(client: TestClient) -> None:
    sign_up(client, "root")
    store = app_state(client).runtime_settings
    before = store.get().system_prompt
    response = client.post("/admin/settings", data={"system_prompt": "hi\x00", **csrf_field(client)})
    assert response.status_code == 303
    assert store.get().system_prompt == before
    page = client.get("/admin", headers={"Accept": "text/html"}).text
    assert "system_prompt holds the control character U+0000" in page


def test_import_refuses_a_nul(client: TestClient) -> None:
    sign_up(client, "alice")
    doc = {"format": "crescent.conversation", "version": 1, "conversation": {"title": "a\x00b"},
           "messages": [{"id": "1", "parent_id": None, "role": "user", "content": "hi"}]}
    response = client.post("/api/conversations/import", files={"file": ("c.json", json.dumps(doc).encode())},
                           headers=csrf_headers(client))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"


def test_check_json_texts_walks_keys_values_and_lists() -> None:
    check_json_texts({"a": ["b", {"c": "d\te\nf\rg"}], "n": 1, "t": True, "z": None})
    with pytest.raises(Exception, match=r"^a\[1\]\.c holds the control character U\+001F$"):
        check_json_texts({"a": ["b", {"c": "\x1f"}]})


# -- JSON nested too deep --------------------------------------------------------------------------


def test_v1_refuses_deep_json_in_openais_error_shape(client: TestClient) -> None:
    token = sign_up(client, "alice")
    _, secret = app_state(client).api_keys.create_key(user_id(client, token), "tests")
    use_session(client, None)
    for body in (DEEP_JSON, '{"model": "x", "messages": ' + "[" * 200 + "]" * 200 + "}"):
        response = client.post("/v1/chat/completions", content=body,
                               headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/json"})
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["type"] == "invalid_request_error"
        assert "nested deeper than 64 levels" in error["message"]
        assert set(error) == {"message", "type", "param", "code"}


def test_a_json_api_body_nested_too_deep_is_400(client: TestClient) -> None:
    token = sign_up(client, "alice")
    conversation = _conversation(client, token)
    headers = {**csrf_headers(client), "Content-Type": "application/json"}
    # Under the 64 KiB body limit: 30,000 levels.
    response = client.patch(f"/api/conversations/{conversation}/settings",
                            content="[" * 30_000 + "]" * 30_000, headers=headers)
    assert response.status_code == 400
    assert response.json()["error"] == {"code": "invalid_input",
                                        "message": "The request body is JSON nested deeper than 64 levels"}
    doc = '{"format": "crescent.conversation", "version": 1, "x": ' + DEEP_JSON + "}"
    response = client.post("/api/conversations/import", files={"file": ("c.json", doc.encode())},
                           headers=csrf_headers(client))
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "the file is JSON nested deeper than 64 levels"


def test_a_deep_ws_frame_is_bad_frame_and_the_reply_streaming_on_the_socket_goes_on(
    client: TestClient, fake: FakeGenerator
) -> None:
    fake.hold_after = 1
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        ws.send_json(send_frame("tell me a story"))
        assert ws.receive_json()["type"] == "ack"
        assert ws.receive_json()["type"] == "delta"
        ws.send_text(DEEP_JSON)
        error = ws.receive_json()
        assert error["type"] == "error" and error["code"] == "bad_frame"
        assert "nested deeper than 64 levels" in error["message"]
        assert_alive(ws)
        fake.release()
        assert receive_until(ws)[-1]["finish_reason"] == "stop"
