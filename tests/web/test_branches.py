"""Regenerate, edit, continue and branch switching over /ws and the branch API, against the
FakeGenerator: the stored tree, the prompt along the active branch, idempotency and refusals."""

from __future__ import annotations

import uuid
from typing import Any

from starlette.testclient import TestClient

from backend.settings import Settings
from web.app import create_app

from .conftest import FakeGenerator, csrf_headers, sign_up
from .test_ws import receive_until, send_frame

REPLY = "Hello, **world**!"


def action_frame(action: str, message_id: str, text: str | None = None, client_msg_id: str | None = None) -> dict[str, Any]:
    frame = {"type": action, "client_msg_id": client_msg_id or uuid.uuid4().hex, "message_id": message_id}
    if text is not None:
        frame["text"] = text
    return frame


def prompt_of(fake: FakeGenerator, index: int = -1) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in fake.requests[index][1] if m.role != "system"]


def branch(client: TestClient, conversation_id: str) -> list[dict[str, Any]]:
    return client.get(f"/api/conversations/{conversation_id}").json()["messages"]


def turn(ws, frame: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    ws.send_json(frame)
    frames = receive_until(ws, ("done", "error"))
    return frames[0], frames[-1]


def test_regenerate_adds_a_sibling_reply_from_the_same_question(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        first, _ = turn(ws, send_frame("q1"))
        fake.tokens = ["Another", " answer"]
        ack, done = turn(ws, action_frame("regenerate", first["assistant_message_id"]))
    assert ack["action"] == "regenerate" and ack["user_message_id"] == first["user_message_id"]
    assert ack["assistant_message_id"] != first["assistant_message_id"]
    assert done["status"] == "complete" and done["content"] == "Another answer"
    assert prompt_of(fake) == [("user", "q1")]  # the earlier reply is not in the prompt
    messages = branch(client, first["conversation_id"])
    assert [(m["role"], m["content"]) for m in messages] == [("user", "q1"), ("assistant", "Another answer")]
    assert messages[1]["siblings"] == [first["assistant_message_id"], ack["assistant_message_id"]]
    assert messages[1]["parent_id"] == first["user_message_id"]


def test_edit_adds_a_sibling_question_and_the_prompt_follows_the_new_branch(
        client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        a, _ = turn(ws, send_frame("q1"))
        b, _ = turn(ws, send_frame("q2", a["conversation_id"]))
        edited, done = turn(ws, action_frame("edit", b["user_message_id"], "q2 edited"))
        assert done["status"] == "complete"
        assert prompt_of(fake) == [("user", "q1"), ("assistant", REPLY), ("user", "q2 edited")]
        assert edited["parent_id"] == a["assistant_message_id"]
        # A send now follows the edited branch.
        turn(ws, send_frame("q3", a["conversation_id"]))
    assert prompt_of(fake) == [("user", "q1"), ("assistant", REPLY), ("user", "q2 edited"),
                               ("assistant", REPLY), ("user", "q3")]
    messages = branch(client, a["conversation_id"])
    assert [m["content"] for m in messages] == ["q1", REPLY, "q2 edited", REPLY, "q3", REPLY]
    assert messages[2]["siblings"] == [b["user_message_id"], edited["user_message_id"]]


def test_switching_branch_shows_that_branch_and_the_next_send_continues_it(
        client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        a, _ = turn(ws, send_frame("q1"))
        b, _ = turn(ws, send_frame("old q2", a["conversation_id"]))
        turn(ws, action_frame("edit", b["user_message_id"], "new q2"))
        conversation_id = a["conversation_id"]
        response = client.post(f"/api/conversations/{conversation_id}/branch",
                               json={"message_id": b["user_message_id"]}, headers=csrf_headers(client))
        assert response.status_code == 200, response.text
        assert response.json()["current_message_id"] == b["assistant_message_id"]
        html = response.json()["html"]
        assert "old q2" in html and "new q2" not in html and 'data-siblings="' in html
        assert [m["content"] for m in branch(client, conversation_id)] == ["q1", REPLY, "old q2", REPLY]
        turn(ws, send_frame("q3", conversation_id))
    assert prompt_of(fake) == [("user", "q1"), ("assistant", REPLY), ("user", "old q2"), ("assistant", REPLY),
                               ("user", "q3")]


def test_a_send_after_an_earlier_message_forks_there(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        a, _ = turn(ws, send_frame("q1"))
        turn(ws, send_frame("q2", a["conversation_id"]))
        frame = {**send_frame("q2 bis", a["conversation_id"]), "message_id": a["assistant_message_id"]}
        ack, _ = turn(ws, frame)
    assert ack["parent_id"] == a["assistant_message_id"]
    assert prompt_of(fake) == [("user", "q1"), ("assistant", REPLY), ("user", "q2 bis")]


def test_continue_resumes_the_same_reply_with_the_chat_template_left_open(settings: Settings, fake: FakeGenerator) -> None:
    short = Settings(database_url=settings.database_url, max_tokens=2, temperature=0.0)
    with TestClient(create_app(short, generator=fake), follow_redirects=False) as client:
        sign_up(client, "alice")
        with client.websocket_connect("/ws") as ws:
            first, done = turn(ws, send_frame("q1"))
            assert done["finish_reason"] == "length" and done["content"] == "Hello, "
            fake.tokens = ["more", " text", " unused"]
            ack, done = turn(ws, action_frame("continue", first["assistant_message_id"]))
        assert ack["action"] == "continue" and ack["assistant_message_id"] == first["assistant_message_id"]
        request = fake.requests[-1]
        assert request[2].continue_final_message is True
        assert prompt_of(fake) == [("user", "q1"), ("assistant", "Hello, ")]
        assert done["content"] == "Hello, more text" and done["finish_reason"] == "length"
        messages = branch(client, first["conversation_id"])
    assert len(messages) == 2
    assert messages[1]["id"] == first["assistant_message_id"]
    assert messages[1]["content"] == "Hello, more text" and messages[1]["completion_tokens"] == 4
    assert "more text" in messages[1]["html"]


def test_continue_of_a_finished_or_earlier_reply_is_refused(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        a, done = turn(ws, send_frame("q1"))
        assert done["finish_reason"] == "stop"
        _, error = turn(ws, action_frame("continue", a["assistant_message_id"]))
        assert error["type"] == "error" and error["code"] == "invalid_input"
        requests = len(fake.requests)
        # An edit needs a user message, a regenerate a reply: the wrong kind is unknown.
        _, error = turn(ws, action_frame("edit", a["assistant_message_id"], "x"))
        assert error["code"] == "not_found"
        _, error = turn(ws, action_frame("regenerate", a["user_message_id"]))
        assert error["code"] == "not_found"
        _, error = turn(ws, {"type": "regenerate", "client_msg_id": "c1"})
        assert error["code"] == "bad_frame"
    assert len(fake.requests) == requests


def test_another_users_messages_cannot_be_acted_on(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        a, _ = turn(ws, send_frame("secret"))
    client.cookies.clear()
    sign_up(client, "bob")
    with client.websocket_connect("/ws") as ws:
        for frame in (action_frame("regenerate", a["assistant_message_id"]),
                      action_frame("edit", a["user_message_id"], "mine now"),
                      action_frame("continue", a["assistant_message_id"])):
            _, error = turn(ws, frame)
            assert error["code"] == "not_found", error
    response = client.post(f"/api/conversations/{a['conversation_id']}/branch",
                           json={"message_id": a["user_message_id"]}, headers=csrf_headers(client))
    assert response.status_code == 404
    assert len(fake.requests) == 1


def test_a_retried_regenerate_is_generated_once(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        a, _ = turn(ws, send_frame("q1"))
        frame = action_frame("regenerate", a["assistant_message_id"])
        first, _ = turn(ws, frame)
        again, done = turn(ws, frame)
    assert again["duplicate"] is True and again["assistant_message_id"] == first["assistant_message_id"]
    assert done["type"] == "done"
    assert len(fake.requests) == 2
    assert len(branch(client, a["conversation_id"])[1]["siblings"]) == 2


def test_switching_to_an_unknown_message_is_404_and_a_bad_body_400(client: TestClient) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        a, _ = turn(ws, send_frame("q1"))
    url = f"/api/conversations/{a['conversation_id']}/branch"
    assert client.post(url, json={"message_id": "f" * 32}, headers=csrf_headers(client)).status_code == 404
    assert client.post(url, json={"id": "x"}, headers=csrf_headers(client)).status_code == 400
    assert client.post(url, json={"message_id": a["user_message_id"]}).status_code == 403  # no CSRF token
    got = client.get(url)
    assert got.status_code == 200 and got.json()["current_message_id"] == a["assistant_message_id"]


NO_BUDGET = {"agent_steps": None, "agent_tool_calls": None, "agent_tokens": None, "agent_wall_s": None}


def test_per_conversation_settings_reach_the_prompt_and_the_sampler(client: TestClient, fake: FakeGenerator) -> None:
    sign_up(client, "alice")
    with client.websocket_connect("/ws") as ws:
        a, _ = turn(ws, send_frame("q1"))
        url = f"/api/conversations/{a['conversation_id']}/settings"
        defaults = client.get(url).json()
        assert defaults["settings"] == {"system_prompt": None, "temperature": None, "max_tokens": None,
                                       "use_tools": False, **NO_BUDGET}
        limit = defaults["max_max_tokens"]
        response = client.patch(url, json={"system_prompt": "Answer in French.", "temperature": 0.25, "max_tokens": 3},
                                headers=csrf_headers(client))
        assert response.status_code == 200, response.text
        assert response.json()["settings"] == {"system_prompt": "Answer in French.", "temperature": 0.25,
                                               "max_tokens": 3, "use_tools": False, **NO_BUDGET}
        turn(ws, send_frame("q2", a["conversation_id"]))
        _, messages, params = fake.requests[-1]
        assert messages[0].role == "system" and messages[0].content == "Answer in French."
        assert params.temperature == 0.25 and params.max_tokens == 3
        for bad in ({"max_tokens": limit + 1}, {"temperature": 2.5}, {"temperature": "hot"}, {"top_k": 3},
                    {"system_prompt": "a\x00b"}, {"max_tokens": True}, {"use_tools": "yes"}):
            refused = client.patch(url, json=bad, headers=csrf_headers(client))
            assert refused.status_code == 400, bad
            assert refused.json()["error"]["code"] == "invalid_input"
        back = client.patch(url, json={"system_prompt": None, "temperature": None, "max_tokens": None},
                            headers=csrf_headers(client))
        assert back.json()["settings"] == {"system_prompt": None, "temperature": None, "max_tokens": None,
                                           "use_tools": False, **NO_BUDGET}
        turn(ws, send_frame("q3", a["conversation_id"]))
        assert fake.requests[-1][2].max_tokens == defaults["defaults"]["max_tokens"]
    client.cookies.clear()
    sign_up(client, "bob")
    assert client.get(url).status_code == 404
    assert client.patch(url, json={"temperature": 1.0}, headers=csrf_headers(client)).status_code == 404


def test_a_retried_continue_is_generated_once(settings: Settings, fake: FakeGenerator) -> None:
    short = Settings(database_url=settings.database_url, max_tokens=2, temperature=0.0)
    with TestClient(create_app(short, generator=fake), follow_redirects=False) as client:
        sign_up(client, "alice")
        with client.websocket_connect("/ws") as ws:
            first, _ = turn(ws, send_frame("q1"))
            fake.tokens = ["more", " text"]
            frame = action_frame("continue", first["assistant_message_id"])
            _, done = turn(ws, frame)
            again, repeated = turn(ws, frame)  # the ack was lost: the page sends the frame again
        assert again["duplicate"] is True and again["action"] == "continue"
        assert repeated["type"] == "done" and repeated["content"] == "Hello, more text"
        assert len(fake.requests) == 2
        assert branch(client, first["conversation_id"])[1]["content"] == "Hello, more text"


def test_a_continue_that_cannot_fit_leaves_the_reply_continuable(settings: Settings, fake: FakeGenerator) -> None:
    short = Settings(database_url=settings.database_url, max_tokens=2, temperature=0.0)
    with TestClient(create_app(short, generator=fake), follow_redirects=False) as client:
        sign_up(client, "alice")
        with client.websocket_connect("/ws") as ws:
            first, _ = turn(ws, send_frame("q1"))
            url = f"/api/conversations/{first['conversation_id']}/settings"
            limit = client.get(url).json()["max_max_tokens"]
            # Replies as long as the whole window: no prompt fits.
            client.patch(url, json={"max_tokens": limit}, headers=csrf_headers(client))
            _, error = turn(ws, action_frame("continue", first["assistant_message_id"]))
            assert error["type"] == "error" and error["code"] == "prompt_too_long", error
            stored = branch(client, first["conversation_id"])[1]
            assert (stored["status"], stored["finish_reason"], stored["content"]) == ("complete", "length", "Hello, ")
            client.patch(url, json={"max_tokens": 2}, headers=csrf_headers(client))
            _, done = turn(ws, action_frame("continue", first["assistant_message_id"]))
        assert done["type"] == "done" and done["content"] == "Hello, Hello, "


def test_the_conversations_system_prompt_comes_after_the_admins(settings: Settings, fake: FakeGenerator) -> None:
    ruled = Settings(database_url=settings.database_url, system_prompt="Admin rule.")
    with TestClient(create_app(ruled, generator=fake), follow_redirects=False) as client:
        sign_up(client, "root")  # the first account: the admin
        client.cookies.clear()
        sign_up(client, "alice")
        with client.websocket_connect("/ws") as ws:
            a, _ = turn(ws, send_frame("q1"))
            url = f"/api/conversations/{a['conversation_id']}/settings"
            defaults = client.get(url).json()["defaults"]
            assert defaults["system_prompt"] is None and defaults["has_system_prompt"] is True  # not hers to read
            client.patch(url, json={"system_prompt": "Be brief."}, headers=csrf_headers(client))
            turn(ws, send_frame("q2", a["conversation_id"]))
            assert fake.requests[-1][1][0].content == "Admin rule.\n\nBe brief."
            client.patch(url, json={"system_prompt": "   "}, headers=csrf_headers(client))  # blank: none of its own
            assert client.get(url).json()["settings"]["system_prompt"] is None
            turn(ws, send_frame("q3", a["conversation_id"]))
            assert fake.requests[-1][1][0].content == "Admin rule."
