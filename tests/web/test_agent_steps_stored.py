"""A finished agent reply's steps after a reload (issue 15): the chat page and the branch route
draw them from the stored run (backend/agent/step_views.py, templates/_message.html), in the
shape of the live agent_step frames, collapsed, escaped, for the reply's owner only; a run cut
by a restart shows its steps and "interrupted"; one query serves every reply of a page.
The built-in tools run for real; the model is scripted (tests/web/test_agent_runs.py)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

import pytest
from sqlalchemy import event, update

from backend.agent.models import AgentRun, AgentStep, AgentToolCall
from backend.agent.records import REASON_RUN_INTERRUPTED, interrupt_orphaned_runs

from .conftest import app_state, sign_up, use_session, user_id
from .test_agent_runs import CALC, ScriptedModel, call_text, send, tools_on, until_done


@pytest.fixture
def fake() -> ScriptedModel:
    return ScriptedModel([[CALC], ["The answer ", "is 42."]])


class Steps(HTMLParser):
    """The .agent-steps of each message on a page: message id -> [{attrs, summary, calls, ...}]."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, dict[str, Any]] = {}
        self._message: str | None = None
        self._step: dict[str, Any] | None = None
        self._text: list[str] | None = None
        self._into: tuple[dict[str, Any], str] | None = None

    def handle_starttag(self, tag: str, attrs_list: list[tuple[str, str | None]]) -> None:
        attrs = dict(attrs_list)
        classes = (attrs.get("class") or "").split()
        if tag == "article" and "message" in classes:
            self._message = attrs["data-message-id"]
        elif "agent-steps" in classes:
            self.found[self._message] = {"run_status": attrs.get("data-run-status"), "steps": [], "ending": None}
        elif tag == "details" and "agent-step" in classes:
            self._step = {"attrs": attrs, "summary": "", "calls": []}
            self.found[self._message]["steps"].append(self._step)
        elif tag == "summary" and self._step is not None:
            self._start(self._step, "summary")
        elif "agent-call" in classes and self._step is not None:
            self._step["calls"].append({"status": attrs.get("data-status")})
        elif self._step is not None and self._step["calls"] and classes and classes[0] in (
                "agent-call-tool", "agent-call-arguments", "agent-call-result"):
            self._start(self._step["calls"][-1], classes[0])
        elif "agent-run-ending" in classes:
            self._start(self.found[self._message], "ending")

    def _start(self, into: dict[str, Any], key: str) -> None:
        self._text, self._into = [], (into, key)

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._text is not None and tag in ("summary", "div", "pre", "p"):
            into, key = self._into
            into[key] = "".join(self._text)
            self._text = self._into = None
        if tag == "details":
            self._step = None


def steps_on(html: str) -> dict[str, dict[str, Any]]:
    parser = Steps()
    parser.feed(html)
    return parser.found


def finished_run(client, token: str, text: str = "What is 6 times 7?") -> tuple[str, str, list[dict[str, Any]]]:
    """(conversation id, reply id, the live frames) of one agent turn run to its end."""
    conversation_id = tools_on(client, token)
    with client.websocket_connect("/ws") as ws:
        ack = send(ws, conversation_id, text)
        frames = until_done(ws)
    assert frames[-1]["type"] == "done", frames[-1]
    return conversation_id, ack["assistant_message_id"], frames


def latest_by_index(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    latest: dict[int, dict[str, Any]] = {}
    for frame in frames:
        if frame["type"] == "agent_step":
            latest[frame["index"]] = frame
    return [latest[i] for i in sorted(latest)]


def test_after_a_reload_the_page_shows_the_finished_runs_steps_collapsed_above_the_answer(client, fake):
    token = sign_up(client, "alice")
    conversation_id, message_id, frames = finished_run(client, token)
    page = client.get(f"/c/{conversation_id}")
    assert page.status_code == 200
    found = steps_on(page.text)
    assert list(found) == [message_id]  # the question has none
    [step] = found[message_id]["steps"]
    assert (step["attrs"]["data-index"], step["attrs"]["data-status"]) == ("1", "done")
    assert "open" not in step["attrs"]  # collapsed
    assert step["summary"] == "Calculated 6 * 7 = 42"
    [call] = step["calls"]
    assert (call["status"], call["agent-call-tool"], json.loads(call["agent-call-arguments"])) == (
        "ok", "calculator", {"expression": "6 * 7"})
    assert "42" in call["agent-call-result"]
    assert found[message_id]["ending"] is None and found[message_id]["run_status"] == "done"
    # Above the answer, inside the reply's body.
    body = page.text[page.text.index(f'id="msg-{message_id}"'):]
    steps_at, answer_at = body.index('class="agent-steps"'), body.index('class="md-committed"')
    assert steps_at < answer_at and "The answer is 42." in body[answer_at:body.index("</article>")]
    # The branch route (a page redrawing the conversation) gives the same.
    branch = client.get(f"/api/conversations/{conversation_id}/branch").json()["html"]
    assert steps_on(branch) == found


def test_the_stored_steps_are_the_live_frames_last_state(client, fake):
    token = sign_up(client, "alice")
    _, message_id, frames = finished_run(client, token)
    views = app_state(client).step_views.of_messages(user_id(client, token), [message_id])
    assert [e.frame() for e in views[message_id].steps] == latest_by_index(frames)


def test_a_run_without_tool_steps_and_a_plain_reply_show_no_steps(client, fake):
    token = sign_up(client, "alice")
    fake.replies = [["Just text."]]
    conversation_id, message_id, _ = finished_run(client, token)
    assert steps_on(client.get(f"/c/{conversation_id}").text) == {}


def test_the_stored_text_is_escaped(client, fake):
    token = sign_up(client, "alice")
    evil = "<img src=x onerror=alert(1)>"
    fake.replies = [[call_text("calculator", {"expression": evil})], ["No."]]
    conversation_id, message_id, _ = finished_run(client, token)
    page = client.get(f"/c/{conversation_id}").text
    assert evil not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    [step] = steps_on(page)[message_id]["steps"]
    assert json.loads(step["calls"][0]["agent-call-arguments"]) == {"expression": evil}  # the text, as data
    assert step["calls"][0]["status"] in ("error", "invalid")  # refused, by the schema or the grammar


def test_only_the_replys_owner_gets_its_steps(client, fake):
    alice = sign_up(client, "alice")
    conversation_id, message_id, _ = finished_run(client, alice)
    use_session(client, None)
    bob = sign_up(client, "bob")
    assert app_state(client).step_views.of_messages(user_id(client, bob), [message_id]) == {}
    assert client.get(f"/c/{conversation_id}").status_code == 404
    assert client.get(f"/api/conversations/{conversation_id}/branch").status_code == 404


def test_a_run_cut_by_a_restart_shows_its_steps_and_interrupted(client, fake):
    token = sign_up(client, "alice")
    conversation_id, message_id, _ = finished_run(client, token)
    sessions = app_state(client).conversations._sessions  # noqa: SLF001 - the rows stand for a crash
    with sessions() as db:  # as the run stood while its calculator ran when the process died
        db.execute(update(AgentRun).values(status="running", ending=None))
        db.execute(update(AgentStep).where(AgentStep.index == 1).values(status="running", text=""))
        db.execute(update(AgentToolCall).values(status="running", result=None))
        db.execute(AgentStep.__table__.delete().where(AgentStep.index == 2))
        assert interrupt_orphaned_runs(db) == 1  # the start-up sweep
        db.commit()
    found = steps_on(client.get(f"/c/{conversation_id}").text)[message_id]
    assert found["run_status"] == "interrupted"
    assert found["ending"] == f"Interrupted: {REASON_RUN_INTERRUPTED}"
    [step] = found["steps"]
    assert (step["attrs"]["data-status"], step["summary"]) == ("interrupted", "calculator (interrupted)")


def test_one_query_reads_the_runs_of_every_reply_on_the_page(client, fake):
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    fake.replies = [[CALC], ["42."]] * 3
    ids = []
    with client.websocket_connect("/ws") as ws:
        for _ in range(3):
            ids.append(send(ws, conversation_id)["assistant_message_id"])
            assert until_done(ws)[-1]["type"] == "done"
    state, alice = app_state(client), user_id(client, token)
    engine = state.conversations._sessions.kw["bind"]  # noqa: SLF001 - counting its statements
    statements: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        views = state.step_views.of_messages(alice, ids)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert [m for m in ids if len(views[m].tool_steps) == 1] == ids
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 1, statements


def test_the_stored_line_uses_the_labels_of_the_live_one() -> None:
    """static/agent_steps.js writes the live line; step_views.step_line the stored one: the same
    words for each call status (the browser test compares the two lines for an ok call)."""
    import re
    from pathlib import Path

    from backend.agent.step_views import CALL_LABELS

    script = (Path(__file__).resolve().parents[2] / "static" / "agent_steps.js").read_text(encoding="utf-8")
    body = re.search(r"const LABELS = \{([^}]*)\}", script).group(1)
    labels = dict(re.findall(r'(\w+): "([^"]*)"', body))
    assert labels == CALL_LABELS


def test_an_interrupted_reply_of_an_interrupted_run_says_so_once(client, fake):
    """A restart cuts both the run and its reply: the reply's own notice says it; the steps'
    box does not add a second "Interrupted" line (a new user saw both)."""
    from backend.models import Message

    token = sign_up(client, "alice")
    conversation_id, message_id, _ = finished_run(client, token)
    with app_state(client).conversations._sessions() as db:  # noqa: SLF001 - the rows stand for a crash
        db.execute(update(AgentRun).values(status="running", ending=None))
        db.execute(update(Message).where(Message.id == message_id).values(  # the reply sweep, then the runs'
            status="interrupted", error="the server stopped before the reply finished"))
        assert interrupt_orphaned_runs(db) == 1
        db.commit()
    page = client.get(f"/c/{conversation_id}").text
    found = steps_on(page)[message_id]
    assert found["run_status"] == "interrupted" and found["ending"] is None and len(found["steps"]) == 1
    assert page.count("Interrupted: ") == 1


def test_a_call_with_a_summary_is_not_labelled_twice() -> None:
    from backend.agent.events import AgentStepEvent, CallView
    from backend.agent.step_views import step_line

    step = AgentStepEvent("m", "r", 1, "tool", "done", calls=(
        CallView("calculator", "{}", "error", "calculator failed"), CallView("save_note", "{}", "refused"),
        CallView("search_documents", "{}", "ok", "Searched your documents — 2 passages")))
    assert step_line(step) == "calculator failed · save_note (refused) · Searched your documents — 2 passages"


def test_a_step_that_ran_no_call_says_so_live_and_stored() -> None:
    """The tool call limit reached before a step's first call leaves a tool step without calls:
    its line said "Tools" and opened on nothing (a new user, 2026-12-02). Stored and live (the
    constant in static/agent_steps.js) it says that no tool was run."""
    import re
    from pathlib import Path

    from backend.agent.events import AgentStepEvent
    from backend.agent.step_views import NO_CALL_LINE, step_line

    assert step_line(AgentStepEvent("m", "r", 2, "tool", "done", "", ())) == NO_CALL_LINE == "No tool was run"
    script = (Path(__file__).resolve().parents[2] / "static" / "agent_steps.js").read_text(encoding="utf-8")
    assert re.search(r'const NO_CALL = "([^"]*)"', script).group(1) == NO_CALL_LINE
    assert '|| NO_CALL;' in script
