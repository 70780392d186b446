"""The admin's pages of agent runs (web/agent_run_routes.py): /admin/runs lists every user's runs,
newest first, 50 a page; /admin/runs/{id} shows one run's steps and calls; admins only; every
text the model or a tool wrote is escaped. The model is scripted (tests/web/test_agent_runs.py),
the calculator runs for real."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from html.parser import HTMLParser
from typing import Any

import pytest
from sqlalchemy import select

from backend.agent.models import AgentRun
from backend.models import Message, new_id, utcnow

from .conftest import app_state, sign_up, use_session, user_id
from .test_agent_runs import CALC, ScriptedModel, call_text, send, tools_on, until_done


@pytest.fixture
def fake() -> ScriptedModel:
    return ScriptedModel([[CALC], ["The answer ", "is 42."]])


class Rows(HTMLParser):
    """Each element with a data-run-id / .run-step / .run-call: its attributes and, for the
    list's rows, the text of each cell by class."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self._cell: tuple[dict[str, Any], str] | None = None

    def handle_starttag(self, tag: str, attrs_list: list[tuple[str, str | None]]) -> None:
        attrs = dict(attrs_list)
        classes = (attrs.get("class") or "").split()
        if tag == "tr" and "run-row" in classes:
            self.runs.append({"attrs": attrs, "links": []})
        elif tag == "tr" and "run-step" in classes:
            self.steps.append(attrs)
        elif tag == "li" and "run-call" in classes:
            self.calls.append({"attrs": attrs})
        if tag == "a" and self.runs and not self.steps:
            self.runs[-1]["links"].append(attrs.get("href"))
        if tag == "td" and self.runs and classes and not self.steps:
            self._cell = (self.runs[-1], classes[-1])
            self.runs[-1][classes[-1]] = ""
        elif classes and classes[0] in ("call-tool", "call-arguments", "call-summary", "call-key") and self.calls:
            self._cell = (self.calls[-1], classes[0])
            self.calls[-1][classes[0]] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "strong", "pre", "p", "code"):
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            into, key = self._cell
            into[key] += data


def parse(html: str) -> Rows:
    rows = Rows()
    rows.feed(html)
    return rows


def admin_and_alice(client) -> tuple[str, str]:
    admin = sign_up(client, "admin")  # the first account is the admin
    alice = sign_up(client, "alice")
    return admin, alice


def alice_runs_a_turn(client, alice: str, text: str = "What is 6 times 7?") -> str:
    use_session(client, alice)
    conversation_id = tools_on(client, alice)
    with client.websocket_connect("/ws") as ws:
        ack = send(ws, conversation_id, text)
        assert until_done(ws)[-1]["type"] == "done"
    return ack["assistant_message_id"]


def run_of(client, message_id: str) -> AgentRun:
    with app_state(client).conversations._sessions() as db:  # noqa: SLF001
        return db.scalar(select(AgentRun).where(AgentRun.message_id == message_id))


def test_the_admin_sees_the_runs_with_their_numbers_and_a_runs_steps(client, fake):
    admin, alice = admin_and_alice(client)
    message_id = alice_runs_a_turn(client, alice)
    run = run_of(client, message_id)
    with app_state(client).conversations._sessions() as db:  # noqa: SLF001
        trace_id = db.get(Message, message_id).trace_id
    use_session(client, admin)
    response = client.get("/admin/runs")
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    [row] = parse(response.text).runs
    assert row["attrs"]["data-run-id"] == run.id and row["attrs"]["data-status"] == "done"
    assert (row["username"].strip(), row["steps"], row["tool-calls"]) == ("alice", "3", "1")
    assert row["question"] == "What is 6 times 7?"  # the message the run answered (new-user pass)
    assert row["tokens"].split()[0] == "23"  # 10 + 1 and 10 + 2 (two model steps)
    assert f"/admin/runs/{run.id}" in row["links"]
    assert trace_id and f"/admin/traces/{trace_id}" in row["links"]  # the reply's waterfall
    detail = client.get(f"/admin/runs/{run.id}")
    assert detail.status_code == 200
    page = parse(detail.text)
    assert [(s["data-index"], s["data-kind"], s["data-status"]) for s in page.steps] == [
        ("0", "model", "done"), ("1", "tool", "done"), ("2", "model", "done")]
    [call] = page.calls
    assert (call["call-tool"], call["attrs"]["data-status"]) == ("calculator", "ok")
    assert call["call-key"] == f"{run.id}:1:0" and "42" in call["call-summary"]
    assert '"6 * 7"' in call["call-arguments"]
    assert "20 + 3 = 23" in detail.text
    assert '<dd class="question" id="run-question">What is 6 times 7?</dd>' in detail.text
    assert 'href="/admin/runs"' in client.get("/admin").text  # linked from the admin page


def test_a_non_admin_gets_403_and_a_visitor_the_login(client, fake):
    admin, alice = admin_and_alice(client)
    run = run_of(client, alice_runs_a_turn(client, alice))
    use_session(client, alice)
    for path in ("/admin/runs", f"/admin/runs/{run.id}"):
        assert client.get(path).status_code == 403
        assert "calculator" not in client.get(path).text
    use_session(client, None)
    for path in ("/admin/runs", f"/admin/runs/{run.id}"):
        response = client.get(path)
        assert (response.status_code, response.headers["location"]) == (303, "/login")


def test_an_unknown_or_malformed_run_id_is_404_and_a_bad_page_400(client, fake):
    admin, _ = admin_and_alice(client)
    use_session(client, admin)
    assert client.get(f"/admin/runs/{new_id()}").status_code == 404
    assert client.get("/admin/runs/not-an-id").status_code == 404
    assert client.get("/admin/runs/" + "A" * 32).status_code == 404
    for page in ("0", "-1", "x", "1e3", "99999999"):
        assert client.get(f"/admin/runs?page={page}").status_code == 400, page


def test_hostile_arguments_results_and_endings_are_escaped(client, fake):
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    fake.replies = [[call_text("calculator", {"expression": evil})], ["No."]]
    admin, alice = admin_and_alice(client)
    run = run_of(client, alice_runs_a_turn(client, alice, evil))
    with app_state(client).conversations._sessions() as db:  # noqa: SLF001 - an ending with markup
        db.get(AgentRun, run.id).ending = evil
        db.commit()
    use_session(client, admin)
    for path in ("/admin/runs", f"/admin/runs/{run.id}"):
        html = client.get(path).text
        assert evil not in html and "<script>alert" not in html and "<img src=x" not in html
        assert "&lt;script&gt;" in html
    [call] = parse(client.get(f"/admin/runs/{run.id}").text).calls
    assert json.loads(call["call-arguments"]) == {"expression": evil}  # shown as the text it is
    assert call["attrs"]["data-status"] in ("error", "invalid")  # the calculator refused it


def test_runs_are_listed_newest_first_fifty_a_page(client, fake):
    admin, alice = admin_and_alice(client)
    message_id = alice_runs_a_turn(client, alice)
    first = run_of(client, message_id)
    start = utcnow()
    ids = []
    with app_state(client).conversations._sessions() as db:  # noqa: SLF001 - 55 older runs
        for i in range(55):
            run = AgentRun(id=new_id(), conversation_id=first.conversation_id, user_id=first.user_id,
                           message_id=None, status="stopped", started_at=start - timedelta(minutes=i + 1))
            db.add(run)
            ids.append(run.id)
        db.get(AgentRun, first.id).started_at = start
        db.commit()
    use_session(client, admin)
    one = client.get("/admin/runs").text
    listed = [r["attrs"]["data-run-id"] for r in parse(one).runs]
    assert listed == [first.id, *ids[:49]]
    assert 'href="/admin/runs?page=2"' in one
    two = client.get("/admin/runs?page=2").text
    assert [r["attrs"]["data-run-id"] for r in parse(two).runs] == ids[49:]
    assert "page=3" not in two and 'href="/admin/runs?page=1"' in two
    assert re.search(r'id="runs-empty"', client.get("/admin/runs?page=3").text)
