"""Routes of issue 12's conversation management: pin (PATCH), search, export, import, the
account archive (web/api.py, web/search_routes.py, web/export_routes.py)."""

from __future__ import annotations

import io
import json
import zipfile

from starlette.testclient import TestClient

from backend.models import Message

from .conftest import app_state, csrf_headers, sign_up, use_session, user_id


def _conversation_with_messages(client: TestClient, token: str, title: str, *texts: str) -> tuple[str, list[str]]:
    state = app_state(client)
    owner = user_id(client, token)
    conversation = state.conversations.create_conversation(owner, title)
    ids, parent = [], None
    with state.search._sessions() as db:
        for position, text in enumerate(texts):
            m = Message(conversation_id=conversation.id, user_id=owner, position=position,
                        role="user" if position % 2 == 0 else "assistant", content=text, html="",
                        status="complete", parent_id=parent)
            db.add(m)
            db.flush()
            ids.append(m.id)
            parent = m.id
        db.commit()
    return conversation.id, ids


def test_pin_and_unpin_through_patch(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    state = app_state(client)
    first = state.conversations.create_conversation(user_id(client, alice), "first")
    second = state.conversations.create_conversation(user_id(client, alice), "second")
    path = f"/api/conversations/{first.id}"
    assert client.patch(path, json={"pinned": True}, headers=csrf_headers(client)).status_code == 204
    listed = client.get("/api/conversations").json()["conversations"]
    assert [(c["id"], c["pinned"]) for c in listed] == [(first.id, True), (second.id, False)]
    assert f'data-pinned="true"' in client.get("/chat").text
    for body in ({"pinned": "yes"}, {"pinned": None}, {"pinned": True, "title": "x"}):
        response = client.patch(path, json=body, headers=csrf_headers(client))
        assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_input"), body
    assert client.patch(path, json={"pinned": False}).status_code == 403  # no CSRF token
    use_session(client, None)
    sign_up(client, "bob")
    assert client.patch(path, json={"pinned": False}, headers=csrf_headers(client)).status_code == 404
    use_session(client, alice)
    assert client.get("/api/conversations").json()["conversations"][0]["pinned"] is True


def test_search_finds_the_owners_messages_with_escaped_snippets(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    conv, ids = _conversation_with_messages(client, alice, "Zoo", "tell me about <b>capybaras</b>", "Capybaras are large")
    response = client.get("/api/search", params={"q": "capybara"})
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    [hit] = response.json()["results"]
    assert hit["conversation_id"] == conv and hit["message_id"] in ids
    assert hit["url"] == f"/c/{conv}#m-{hit['message_id']}"
    assert "<mark>" in hit["snippet_html"] and "<b>" not in hit["snippet_html"]
    assert set(hit) == {"conversation_id", "title", "title_html", "message_id", "role", "snippet_html",
                        "updated_at", "pinned", "url"}
    for q in ('"', "NEAR(", "*", "a OR", "\t"):
        assert client.get("/api/search", params={"q": q}).status_code == 200, q
    assert client.get("/api/search", params={"q": "\x00"}).status_code == 400  # tests/web/test_inputs.py
    assert client.get("/api/search").json()["results"] == []
    assert client.get("/api/search", params={"q": "x", "limit": "0"}).status_code == 400
    assert client.get("/api/search", params={"q": "x", "limit": "many"}).status_code == 400
    use_session(client, None)
    assert client.get("/api/search", params={"q": "capybara"}).status_code == 401
    sign_up(client, "bob")
    assert client.get("/api/search", params={"q": "capybara"}).json()["results"] == []


def test_export_downloads_json_and_markdown(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    conv, ids = _conversation_with_messages(client, alice, "Día uno: plans!", "hello", "hi there")
    response = client.get(f"/api/conversations/{conv}/export")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["content-disposition"] == 'attachment; filename="D-a-uno-plans.json"'
    doc = response.json()
    assert doc["scope"] == "tree" and [m["id"] for m in doc["messages"]] == ids
    markdown = client.get(f"/api/conversations/{conv}/export", params={"format": "md"})
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert markdown.headers["content-disposition"].endswith('.md"')
    assert markdown.text.startswith("# Día uno: plans!") and "hi there" in markdown.text
    branch = client.get(f"/api/conversations/{conv}/export", params={"scope": "branch"})
    assert branch.headers["content-disposition"].endswith('-branch.json"')
    for params in ({"format": "pdf"}, {"scope": "all"}):
        assert client.get(f"/api/conversations/{conv}/export", params=params).status_code == 400
    use_session(client, None)
    assert client.get(f"/api/conversations/{conv}/export").status_code == 401
    sign_up(client, "bob")
    assert client.get(f"/api/conversations/{conv}/export").status_code == 404
    assert client.get(f"/api/conversations/{conv}/export", params={"format": "md"}).status_code == 404


def test_import_makes_a_new_conversation_of_the_importer(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    conv, _ = _conversation_with_messages(client, alice, "Original", "question", "answer")
    exported = client.get(f"/api/conversations/{conv}/export").content
    use_session(client, None)
    bob = sign_up(client, "bob")
    response = client.post("/api/conversations/import", files={"file": ("c.json", exported, "application/json")},
                           headers=csrf_headers(client))
    assert response.status_code == 201, response.text
    body = response.json()
    new_id = body["conversation"]["id"]
    assert new_id != conv and body["url"] == f"/c/{new_id}" and response.headers["location"] == body["url"]
    assert [c["id"] for c in client.get("/api/conversations").json()["conversations"]] == [new_id]
    assert [m["content"] for m in client.get(f"/api/conversations/{new_id}").json()["messages"]] == \
        ["question", "answer"]
    use_session(client, alice)
    assert client.get(f"/api/conversations/{new_id}").status_code == 404
    assert user_id(client, bob) != user_id(client, alice)


def test_import_keeps_tools_and_the_run_budget_capped_at_this_deployments_maximum(client: TestClient) -> None:
    runtime = app_state(client).runtime_settings
    runtime.update({"agent_max_steps": 20, "agent_max_tokens": 50_000}, actor_id=None)
    alice = sign_up(client, "alice")
    conv, _ = _conversation_with_messages(client, alice, "Budget", "question", "answer")
    saved = client.patch(f"/api/conversations/{conv}/settings", headers=csrf_headers(client),
                         json={"use_tools": True, "agent_steps": 15, "agent_tokens": 40_000})
    assert saved.status_code == 200, saved.text
    exported = client.get(f"/api/conversations/{conv}/export").content
    runtime.update({"agent_max_steps": 10}, actor_id=None)  # the importer's admin allows less
    use_session(client, None)
    sign_up(client, "bob")
    response = client.post("/api/conversations/import", files={"file": ("c.json", exported, "application/json")},
                           headers=csrf_headers(client))
    assert response.status_code == 201, response.text
    settings = client.get(f"/api/conversations/{response.json()['conversation']['id']}/settings").json()["settings"]
    assert (settings["use_tools"], settings["agent_steps"], settings["agent_tokens"], settings["agent_tool_calls"]) \
        == (True, 10, 40_000, None)


def test_import_refuses_bad_input_with_clear_4xx(client: TestClient) -> None:
    sign_up(client, "alice")
    url = "/api/conversations/import"
    good = b'{"format": "crescent.conversation", "version": 1, "conversation": {}, "messages": []}'
    assert client.post(url, files={"file": ("c.json", good)}).status_code == 403  # no CSRF token
    cases = [
        ({"files": {"file": ("c.json", b"not json")}}, 400, "not UTF-8 JSON"),
        ({"files": {"file": ("c.json", good.replace(b'"messages": []', b'"messages": [{"id": "1", "role": "x"}]'))}},
         400, "role"),
        ({"files": {"file": ("c.json", good.replace(b'"messages": []', b'"messages": [{"id": "1", "role": "system"}]'))}},
         400, "message 1: role must be one of user, assistant, not 'system'"),
        ({"files": {"other": ("c.json", good)}}, 400, "field named 'file'"),
        ({"json": {"format": "crescent.conversation"}}, 400, "multipart"),
        ({"files": {"file": ("c.json", b" " * (8 * 1024 * 1024 + 1))}}, 413, "limit"),
    ]
    for kwargs, status, words in cases:
        response = client.post(url, headers=csrf_headers(client), **kwargs)
        assert response.status_code == status, (kwargs.keys(), response.text[:200])
        assert words in response.json()["error"]["message"]
    assert client.get("/api/conversations").json()["conversations"] == []
    declared = client.post(url, content=b"x", headers={**csrf_headers(client), "Content-Length": str(9 * 1024 * 1024),
                                                        "Content-Type": "multipart/form-data; boundary=x"})
    assert declared.status_code == 413


def test_account_archive(client: TestClient) -> None:
    alice = sign_up(client, "alice")
    _conversation_with_messages(client, alice, "Mine", "q", "a")
    response = client.get("/api/account/export")
    assert response.status_code == 200 and response.headers["content-type"] == "application/zip"
    assert response.headers["content-disposition"].startswith('attachment; filename="crescent-alice-')
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = set(archive.namelist())
        assert {"account.json", "documents.json"} <= names
        assert len([n for n in names if n.startswith("conversations/")]) == 2
        assert json.loads(archive.read("account.json"))["username"] == "alice"
    use_session(client, None)
    assert client.get("/api/account/export").status_code == 401
