"""/ws with tools on: a turn is an agent run whose steps stream as agent_step frames, then the
answer; the admin's settings decide who has tools; Stop from another tab ends the run; another
tab attaching mid-run gets the steps first (docs/INTERFACES.md 4). The built-in tools run for
real (calculator, save_note); the model is scripted."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from typing import Any, AsyncIterator, Sequence

import pytest
from sqlalchemy import select

from backend.agent.models import AgentRun, AgentToolCall
from backend.generator import ChatMessage, GenerationDone, GenerationEvent, GenerationParams, GeneratorStats, TextDelta

from .conftest import app_state, csrf_headers, sign_up, use_session, user_id, wait_until


def call_text(name: str, arguments: dict) -> str:
    return "<tool_call>" + json.dumps([{"name": name, "arguments": arguments}]) + "</tool_call>"


class ScriptedModel:
    """Reply i is replies[i] (text pieces). hold=(i, n): reply i pauses after n pieces until
    `gate` is set or it is aborted. Runs on the app's loop; the test reads the lists."""

    model_name = "scripted"
    context_length = 4096

    def __init__(self, replies: list[list[str]], hold: tuple[int, int] | None = None) -> None:
        self.replies = replies
        self.hold = hold
        self.gate = threading.Event()
        self.held = threading.Event()
        self.requests: list[tuple[str, list[ChatMessage], GenerationParams]] = []
        self.aborted: list[str] = []

    def count_prompt_tokens(self, messages: Sequence[ChatMessage], tools=()) -> int:
        return sum(3 + len(m.content.split()) for m in messages) + 2

    def count_text_tokens(self, text: str) -> int:
        return len(text.split())

    def stats(self) -> GeneratorStats:
        return GeneratorStats(running=0, waiting=0, kv_blocks_used=0, kv_blocks_total=64, kv_usage=0.0,
                              prefix_cache_queries=0, prefix_cache_hits=0, preemptions=0, prompt_tokens_total=0,
                              generation_tokens_total=0)

    def stream_prompt(self, request_id: str, prompt: str, params: GenerationParams) -> AsyncIterator[GenerationEvent]:
        return self.stream(request_id, [ChatMessage("prompt", prompt)], params)

    def stream(self, request_id: str, messages: Sequence[ChatMessage], params: GenerationParams
               ) -> AsyncIterator[GenerationEvent]:
        number = len(self.requests)
        self.requests.append((request_id, list(messages), params))
        return self._run(request_id, number, self.replies[number] if number < len(self.replies) else ["?"])

    async def _run(self, request_id: str, number: int, pieces: list[str]) -> AsyncIterator[GenerationEvent]:
        sent = 0
        for piece in pieces:
            if request_id in self.aborted:
                break
            yield TextDelta(piece)
            sent += 1
            if self.hold == (number, sent):
                self.held.set()
                while not self.gate.is_set() and request_id not in self.aborted:
                    await asyncio.sleep(0.005)
        yield GenerationDone("abort" if request_id in self.aborted else "stop", 10, sent)

    async def abort(self, request_id: str) -> None:
        self.aborted.append(request_id)


CALC = call_text("calculator", {"expression": "6 * 7"})


@pytest.fixture
def fake() -> ScriptedModel:
    return ScriptedModel([[CALC], ["The answer ", "is 42."]])


def tools_on(client, token: str, access: str = "everyone", policy: str = "one_call") -> str:
    """Tools on for a new conversation of `token`'s user. policy: the deployment's agent_policy
    (one_call by default: these tests script which tool the model calls on any message)."""
    state = app_state(client)
    state.runtime_settings.update({"agent_tools": access, "agent_policy": policy}, actor_id=None)
    conversation = state.conversations.create_conversation(user_id(client, token), "agent")
    response = client.patch(f"/api/conversations/{conversation.id}/settings", json={"use_tools": True},
                            headers=csrf_headers(client))
    assert response.status_code == 200 and response.json()["settings"]["use_tools"] is True
    return conversation.id


def send(ws, conversation_id: str, text: str = "What is 6 times 7?") -> dict[str, Any]:
    ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": conversation_id,
                  "text": text})
    ack = ws.receive_json()
    assert ack["type"] == "ack", ack
    return ack


def until_done(ws) -> list[dict[str, Any]]:
    frames = []
    while not frames or frames[-1]["type"] not in ("done", "error"):
        frames.append(ws.receive_json())
    return frames


def runs(client) -> list[AgentRun]:
    with app_state(client).conversations._sessions() as db:
        return list(db.scalars(select(AgentRun)))


def test_a_turn_with_tools_on_streams_its_steps_then_the_answer(client, fake):
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    with client.websocket_connect("/ws") as ws:
        ack = send(ws, conversation_id)
        frames = until_done(ws)
    steps = [(f["index"], f["kind"], f["status"]) for f in frames if f["type"] == "agent_step"]
    assert steps == [(0, "model", "running"), (0, "model", "done"), (1, "tool", "running"), (1, "tool", "done"),
                     (2, "model", "running"), (2, "model", "done")]
    tool = next(f for f in frames if f["type"] == "agent_step" and f["kind"] == "tool" and f["status"] == "done")
    [call] = tool["calls"]
    assert (call["tool"], call["status"], json.loads(call["arguments"])) == ("calculator", "ok", {"expression": "6 * 7"})
    assert "42" in call["summary"] and "42" in call["content"]
    assert "".join(f["text"] for f in frames if f["type"] == "delta") == "The answer is 42."
    done = frames[-1]
    assert (done["type"], done["status"], done["content"]) == ("done", "complete", "The answer is 42.")
    # The model's second call read the result as a tool message; the first offered the calculator.
    assert {t.name for t in fake.requests[0][2].tools} >= {"calculator"}
    assert fake.requests[1][1][-1].role == "tool" and "42" in fake.requests[1][1][-1].content
    [run] = runs(client)
    assert (run.status, run.message_id) == ("done", ack["assistant_message_id"])


def test_tools_the_role_may_not_use_leave_a_plain_reply(client, fake):
    sign_up(client, "admin")  # the first account is the admin
    token = sign_up(client, "bob")
    conversation_id = tools_on(client, token, access="admins")
    fake.replies = [["Just text."]]
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id)
        frames = until_done(ws)
    assert [f["type"] for f in frames if f["type"] == "agent_step"] == []
    assert fake.requests[0][2].tools == () and runs(client) == []


def test_a_side_effect_the_role_may_not_have_is_refused_and_the_model_reads_why(client, fake):
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)  # agent_side_effects stays "off"
    fake.replies = [[call_text("save_note", {"title": "t", "text": "x"})], ["I cannot save notes."]]
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "save a note")
        frames = until_done(ws)
    tool = next(f for f in frames if f["type"] == "agent_step" and f["kind"] == "tool" and f["status"] == "done")
    assert tool["calls"][0]["status"] == "refused"
    assert "refused: the tool 'save_note' is not allowed" in fake.requests[1][1][-1].content
    assert app_state(client).notes.list(user_id(client, token)) == []


def test_a_note_saved_by_a_run_is_saved_once(client, fake):
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    app_state(client).runtime_settings.update({"agent_side_effects": "everyone"}, actor_id=None)
    fake.replies = [[call_text("save_note", {"title": "milk", "text": "buy milk"})], ["Saved."]]
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "save a note")
        frames = until_done(ws)
    tool = next(f for f in frames if f["type"] == "agent_step" and f["kind"] == "tool" and f["status"] == "done")
    assert (tool["calls"][0]["status"], tool["calls"][0]["summary"]) == ("ok", "Saved a note — milk")
    assert [n.title for n in app_state(client).notes.list(user_id(client, token))] == ["milk"]


def test_stop_from_another_tab_ends_the_run_during_a_model_step(client, fake):
    fake.hold = (1, 1)
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    with client.websocket_connect("/ws") as one, client.websocket_connect("/ws") as two:
        ack = send(one, conversation_id)
        assert fake.held.wait(10)
        two.send_json({"type": "stop", "message_id": ack["assistant_message_id"]})
        done = until_done(one)[-1]
    assert (done["status"], done["finish_reason"], done["content"]) == ("complete", "abort", "The answer ")
    assert fake.aborted == [fake.requests[1][0]]
    assert wait_until(lambda: runs(client)[0].status != "running" and runs(client)[0]).status == "stopped"


def test_another_tab_attaching_mid_run_gets_the_steps_then_the_answer(client, fake):
    fake.hold = (1, 1)
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    with client.websocket_connect("/ws") as one, client.websocket_connect("/ws") as two:
        ack = send(one, conversation_id)
        assert fake.held.wait(10)
        two.send_json({"type": "attach", "message_id": ack["assistant_message_id"], "seq": 0})
        first: list[dict[str, Any]] = []
        while len(first) < 3:
            frame = two.receive_json()
            if frame["type"] not in ("turn", "conversation"):  # account events of the other tab's send
                first.append(frame)
        assert [(f["type"], f["index"], f["kind"], f["status"]) for f in first] == [
            ("agent_step", 0, "model", "done"), ("agent_step", 1, "tool", "done"), ("agent_step", 2, "model", "running")]
        assert first[1]["calls"][0]["tool"] == "calculator"
        fake.gate.set()
        frames = until_done(two)
    assert frames[-1]["content"] == "The answer is 42."
    with app_state(client).conversations._sessions() as db:
        [call] = db.scalars(select(AgentToolCall)).all()
        assert (call.tool, call.status) == ("calculator", "ok")


def test_a_tab_attaching_after_the_run_ended_gets_its_steps_then_the_done(client, fake):
    """A page that reconnects after the reply ended (or a second tab attaching to it) draws the
    run's steps as the live frames last showed them, then the stored reply."""
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    with client.websocket_connect("/ws") as ws:
        ack = send(ws, conversation_id)
        live = until_done(ws)
    last = {}
    for frame in live:
        if frame["type"] == "agent_step":
            last[frame["index"]] = frame
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "attach", "message_id": ack["assistant_message_id"], "seq": 0})
        frames = until_done(ws)
    assert [f for f in frames if f["type"] == "agent_step"] == [last[i] for i in sorted(last)]
    assert frames[-1]["type"] == "done" and frames[-1]["content"] == "The answer is 42."
    assert [f["type"] for f in frames] == ["agent_step"] * len(last) + ["done"]


def test_a_question_needing_a_document_and_a_calculation_runs_both_tools_and_cites_the_passage(client, fake):
    """The issue's whole case, with the model scripted (policy auto, several calls): a search of
    the person's own document, a calculation with the number it found, then the answer with the
    passage as its source; each step live, each tool's result in the next model call."""
    from .test_documents_routes import upload, wait_ready

    fake.replies = [[call_text("search_documents", {"query": "Halvorsen Bridge length"})],
                    [call_text("calculator", {"expression": "1234 * 2"})],
                    ["Two spans of the bridge are 2468 metres [1]."]]
    token = sign_up(client, "alice")
    document = upload(client, "bridge.txt", b"The Halvorsen Bridge is 1234 metres long and opened in 1931.").json()
    wait_ready(client, document["id"])
    conversation_id = tools_on(client, token)
    app_state(client).runtime_settings.update({"agent_policy": "auto"}, actor_id=None)
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "How long are two Halvorsen Bridges end to end?")
        frames = until_done(ws)
    tools_done = [f for f in frames if f["type"] == "agent_step" and f["kind"] == "tool" and f["status"] == "done"]
    assert [(c["tool"], c["status"]) for f in tools_done for c in f["calls"]] == [("search_documents", "ok"),
                                                                                 ("calculator", "ok")]
    assert "1234" in tools_done[0]["calls"][0]["content"] and "2468" in tools_done[1]["calls"][0]["content"]
    # Each result reached the model's next call as a tool message.
    assert "1234 metres" in fake.requests[1][1][-1].content and "2468" in fake.requests[2][1][-1].content
    done = frames[-1]
    assert done["status"] == "complete" and "2468" in done["content"]
    assert [s["document_id"] for s in done["sources"]] == [document["id"]]


def test_the_page_and_the_settings_say_whether_tools_are_on_and_allowed(client, fake):
    """The header's Tools badge shows while the conversation's turns are agent runs; the
    settings say when the admin's setting makes "Use tools" ineffective (a new user saw it
    ticked with the admin's tools off, and no hint)."""
    import re

    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    url = f"/api/conversations/{conversation_id}/settings"

    def badge_shown() -> bool:
        tag = re.search(r'<span class="tools-badge" id="tools-badge"[^>]*>', client.get(f"/c/{conversation_id}").text)
        return " hidden" not in tag.group(0)

    assert client.get(url).json()["tools_available"] is True and badge_shown()
    app_state(client).runtime_settings.update({"agent_tools": "off"}, actor_id=None)
    body = client.get(url).json()
    assert (body["settings"]["use_tools"], body["tools_available"]) == (True, False) and not badge_shown()
    app_state(client).runtime_settings.update({"agent_tools": "everyone"}, actor_id=None)
    client.patch(url, json={"use_tools": False}, headers=csrf_headers(client))
    assert not badge_shown()


def test_disabling_the_user_mid_run_stops_the_run(client, fake):
    """The server ending a reply (here: the admin disables its user; also shutdown and the
    nobody-watching rule, all through Generation.end) stops an agent run at once, as it aborts a
    plain reply's stream: no further model or tool call, the reply interrupted with the reason."""
    from backend.live import REASON_DISABLED
    from backend.models import Message

    fake.hold = (1, 1)  # the answer step waits after its first piece until released or aborted
    alice = sign_up(client, "alice")
    use_session(client, None)
    bob = sign_up(client, "bob")
    conversation_id = tools_on(client, bob)
    with client.websocket_connect("/ws") as ws:
        ack = send(ws, conversation_id)
        assert fake.held.wait(10)
        use_session(client, alice)
        response = client.post(f"/admin/api/users/{user_id(client, bob)}/status", json={"status": "disabled"},
                               headers=csrf_headers(client))
        assert response.status_code == 200, response.text
    message_id = ack["assistant_message_id"]

    def stored() -> Message | None:
        with app_state(client).conversations._sessions() as db:  # noqa: SLF001 - the stored row is the oracle
            row = db.get(Message, message_id)
            return row if row.status != "streaming" else None

    row = wait_until(stored, what="the reply stored")
    assert (row.status, row.error) == ("interrupted", REASON_DISABLED)
    assert fake.requests[1][0] in fake.aborted and len(fake.requests) == 2
    [run] = runs(client)
    assert run.status == "stopped"


def test_a_new_chat_can_start_with_tools_on_from_its_first_message(client, fake):
    """The composer's "Use tools" goes with a new chat's first message (send frame use_tools),
    so its first turn is already an agent run; on an existing conversation a bool sets the
    setting, null keeps it; anything else is a bad frame. The toggle is drawn only for a user
    whose role the admin lets use tools."""
    import re

    from backend.models import Conversation

    token = sign_up(client, "alice")
    page = client.get("/chat").text
    assert 'id="use-tools"' not in page  # the admin has not enabled tools
    # alice is the admin: the page tells her where to turn them on (new-user pass: nothing did),
    # and that setting is there on the admin page
    assert re.search(r'<a class="tools-hint" id="tools-hint" href="/admin#setting-agent_tools"', page)
    assert 'id="setting-agent_tools"' in client.get("/admin").text
    app_state(client).runtime_settings.update({"agent_tools": "everyone"}, actor_id=None)
    assert re.search(r'<input type="checkbox" id="use-tools" role="switch">', client.get("/chat").text)
    assert re.search(r'id="use-documents" role="switch" aria-describedby="documents-implied">', client.get("/chat").text)
    assert 'id="tools-hint"' not in client.get("/chat").text
    # "6 times 7" names its operation: the program writes the one candidate (6 * 7 and 7 * 6 are
    # one choice), chosen in the model's step without a request; the program states it.
    fake.replies = [["The answer ", "is 42."]]
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": None,
                      "text": "What is 6 times 7?", "use_tools": True})
        ack = ws.receive_json()
        frames = until_done(ws)
        conversation_id = ack["conversation_id"]
        steps = [f for f in frames if f["type"] == "agent_step" and f["status"] == "done"]
        assert [f["kind"] for f in steps] == ["model", "tool", "model"]
        assert [(c["tool"], json.loads(c["arguments"])["expression"] in ("6 * 7", "7 * 6"))
                for c in steps[1]["calls"]] == [("calculator", True)]
        assert frames[-1]["content"] in ("6 * 7 = 42.", "7 * 6 = 42.")

        def stored() -> bool:
            with app_state(client).conversations._sessions() as db:  # noqa: SLF001 - the stored row is the oracle
                return db.get(Conversation, conversation_id).use_tools

        assert stored() is True
        assert re.search(r'<input type="checkbox" id="use-tools" role="switch" checked>',
                         client.get(f"/c/{conversation_id}").text)
        # "Use my documents" has no effect while tools are on (they search the documents as a step): it says so
        page = client.get(f"/c/{conversation_id}").text
        assert re.search(r'<input type="checkbox" id="use-documents" role="switch" aria-describedby="documents-implied"'
                         r' class="implied" disabled>', page)
        assert re.search(r'<span class="doc-implied" id="documents-implied">\(the tools search them\)</span>', page)
        fake.replies = [["Plain."], ["Plain again."]]
        ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": conversation_id,
                      "text": "thanks", "use_tools": False})
        assert ws.receive_json()["type"] == "ack"
        frames = until_done(ws)
        assert not [f for f in frames if f["type"] == "agent_step"] and stored() is False
        ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": conversation_id,
                      "text": "again", "use_tools": None})
        assert ws.receive_json()["type"] == "ack"
        until_done(ws)
        assert stored() is False
        ws.send_json({"type": "send", "client_msg_id": "bad-tools", "conversation_id": conversation_id,
                      "text": "x", "use_tools": "yes"})
        error = ws.receive_json()
        assert (error["type"], error["code"], error["client_msg_id"]) == ("error", "bad_frame", "bad-tools")
        assert "use_tools" in error["message"]
        # a new chat starts with the latest conversation's choice (new-user pass: off in every new chat)
        assert re.search(r'<input type="checkbox" id="use-tools" role="switch">', client.get("/chat").text)
        fake.replies = [["Plain."]]
        ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": conversation_id,
                      "text": "and again", "use_tools": True})
        assert ws.receive_json()["type"] == "ack"
        until_done(ws)
        assert stored() is True
        assert re.search(r'<input type="checkbox" id="use-tools" role="switch" checked>', client.get("/chat").text)
