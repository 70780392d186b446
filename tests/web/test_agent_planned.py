"""/ws with tools on under the default policy, "planned" (backend.agent.routing): the server
picks the tools a message needs; small talk gets a plain answer with no tool step, an
expression the person typed is computed without a model step before it. The calculator runs for
real; the model is scripted."""

from __future__ import annotations

import json
from dataclasses import replace

from backend.runtime_settings import RuntimeSettings

from .conftest import app_state, sign_up, user_id
from .test_agent_runs import ScriptedModel, runs, send, tools_on, until_done

import pytest


@pytest.fixture
def fake() -> ScriptedModel:
    return ScriptedModel([["Hi! ", "How can I help?"]])


def steps(frames):
    return [(f["index"], f["kind"], f["status"]) for f in frames if f["type"] == "agent_step"]


def test_planned_is_the_default():
    assert RuntimeSettings.__dataclass_fields__["agent_policy"].default == "planned"


def test_small_talk_with_tools_on_calls_no_tool(client, fake):
    conversation_id = tools_on(client, sign_up(client, "alice"), policy="planned")
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "Hello! How are you?")
        frames = until_done(ws)
    assert steps(frames) == [(0, "model", "running"), (0, "model", "done")]
    assert frames[-1]["content"] == "Hi! How can I help?"
    [request] = fake.requests
    assert request[2].tools == () and request[2].structured_output is None
    [run] = runs(client)
    assert run.status == "done"


def test_a_typed_expression_is_computed_and_its_calculation_is_the_answer(client, fake):
    fake.replies = [["The answer is ", "408."]]
    conversation_id = tools_on(client, sign_up(client, "alice"), policy="planned")
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "What is 12 * 34?")
        frames = until_done(ws)
    assert steps(frames) == [(0, "tool", "running"), (0, "tool", "done"), (1, "model", "running"),
                             (1, "model", "done")]
    tool = next(f for f in frames if f["type"] == "agent_step" and f["status"] == "done")
    [call] = tool["calls"]
    assert (call["tool"], call["status"], json.loads(call["arguments"])) == ("calculator", "ok",
                                                                           {"expression": "12 * 34"})
    assert "408" in call["content"]
    # the program states the calculation (backend.agent.answer.calculated_answer), not the model
    assert frames[-1]["content"] == "12 * 34 = 408."


def test_a_turn_opened_with_passages_in_its_prompt_stays_a_plain_reply(client):
    # opening.py puts no passages in the prompt of a turn that is an agent run (it searches as a
    # step); a turn opened while tools were off for the role, then turned on before its reply
    # started, has them: it stays a plain reply rather than search the same documents again.
    import asyncio
    from types import SimpleNamespace

    from backend.agent.events import StepLog

    agent = app_state(client).chat._agent  # noqa: SLF001 - the reply's runner factory
    settings = replace(app_state(client).runtime_settings.get(), agent_tools="everyone")

    def runner(passages=None):
        turn = SimpleNamespace(use_tools=True, action="send", user_text="Who designed the bridge?",
                               agent_budget={}, sources=[{"n": 1}] if passages else [], prompt_passages=passages,
                               messages=[])
        reply = SimpleNamespace(turn=turn, user_id=user_id(client, sign_up(client, f"reader{'p' if passages else ''}")),
                                message_id="m", publish_step=lambda event: None, steps=StepLog())
        return asyncio.run(agent.runner_for(reply, settings))

    assert "search_documents" in runner().allowed
    assert runner("[1] bridge.txt (version 1) — passage x\n> It is 2,340 metres long.") is None


def test_a_follow_up_is_asked_as_the_whole_question_it_asks(client, fake):
    # New-user pass: "and for 6?" after a calculation ran no tool, and the model wrote "That comes to
    # 260: 6 * 4 = 12, from your documents [2]." The run now reads "What is 6 * 34?".
    fake.replies = [["408."], ["204."]]
    conversation_id = tools_on(client, sign_up(client, "alice"), policy="planned")
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "What is 12 * 34?")
        until_done(ws)
        send(ws, conversation_id, "and for 6?")
        frames = until_done(ws)
    tool = next(f for f in frames if f["type"] == "agent_step" and f["status"] == "done")
    [call] = tool["calls"]
    assert (call["tool"], json.loads(call["arguments"])) == ("calculator", {"expression": "6 * 34"})
    assert frames[-1]["content"] == "6 * 34 = 204."
    # the conversation keeps the message as typed
    history = client.get(f"/api/conversations/{conversation_id}").json()["messages"]
    assert [m["content"] for m in history if m["role"] == "user"] == ["What is 12 * 34?", "and for 6?"]


@pytest.mark.parametrize("text, expression, said", [
    ("1/0", "1/0", "1/0 can't be calculated: division by zero."),
    ("what is 10/0 + 5?", "10/0 + 5", "10/0 + 5 can't be calculated: division by zero."),
    ("2**100000", "2**100000", "2**100000 can't be calculated: the result is too large (more than 4096 bits)."),
])
def test_an_expression_with_no_value_is_computed_and_its_error_said_plainly(client, fake, text, expression, said):
    # New-user pass: "1/0" ran no calculator (the model rambled), "2**100000" had the model call it with
    # "1 + 2", and "what is 10/0 + 5?" was answered "10/0 + 5 = 25. 10/0 + 5 = 15."
    fake.replies = [["10/0 + 5 = 25."]]
    conversation_id = tools_on(client, sign_up(client, "alice"), policy="planned")
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, text)
        frames = until_done(ws)
    tool = next(f for f in frames if f["type"] == "agent_step" and f["status"] == "done")
    [call] = tool["calls"]
    assert (call["tool"], call["status"], json.loads(call["arguments"])) == ("calculator", "error",
                                                                           {"expression": expression})
    assert frames[-1]["content"].startswith(said), frames[-1]["content"]


def test_an_answer_lists_the_sources_it_cites():
    # New-user pass: a tyre question quoting one passage listed a bakery's and a yoga studio's too.
    from backend.chat.agent_turn import cited_sources
    found = [{"n": 1, "name": "tyres.txt"}, {"n": 2, "name": "bakery.md"}, {"n": 3, "name": "yoga.txt"}]
    assert cited_sources(found, "Saturday: 8:30 am to 1:00 pm [1]") == [found[0]]
    assert cited_sources(found, "That comes to £279 [1].\n\n- 45: “Wheel alignment £45” [3]") == [found[0], found[2]]
    assert cited_sources(found, "See [1, 2].") == found[:2]
    assert cited_sources(found, "Here is a summary of your documents.") == found  # none cited: all it read
    assert cited_sources(found, "Nothing matched [7].") == found


def test_with_documents_and_tools_on_the_run_searches_and_quotes(client, fake):
    # New-user pass: with "Use my documents" and "Use tools" both on, the passages went into the prompt,
    # no search step ran, nothing was quoted, and the closing time was wrong 3 times out of 3.
    from .conftest import csrf_headers
    from .test_documents_routes import upload, wait_ready

    token = sign_up(client, "alice")
    text = b"Tyre shop\n\nOpening hours: Monday to Friday 8am to 6pm. Saturday: 8:30 am to 1:00 pm. Closed Sundays."
    wait_ready(client, upload(client, "tyres.txt", text).json()["id"])
    conversation_id = tools_on(client, token, policy="planned")
    app_state(client).runtime_settings.update({"sources_min_similarity": -1.0}, actor_id=None)
    assert client.patch(f"/api/conversations/{conversation_id}", json={"use_documents": True},
                        headers=csrf_headers(client)).status_code == 204
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "What time does the tyre shop in my documents close on Saturday?")
        frames = until_done(ws)
    assert steps(frames)[:2] == [(0, "tool", "running"), (0, "tool", "done")], (steps(frames), frames[-1])
    tool = next(f for f in frames if f["type"] == "agent_step" and f["status"] == "done")
    assert [c["tool"] for c in tool["calls"]] == ["search_documents"]
    assert "Saturday: 8:30 am to 1:00 pm" in frames[-1]["content"]
    assert [s["name"] for s in frames[-1]["sources"]] == ["tyres.txt"]


def test_a_saved_note_is_confirmed_by_the_program_with_a_whole_title(client, fake):
    # New-user pass: the title was cut mid-phrase ("the yoga studio is closed on") and the model's
    # answer read "The user decides to save the note...".
    fake.replies = [["The user decides to save the note."]]
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token, policy="planned")
    app_state(client).runtime_settings.update({"agent_side_effects": "everyone"}, actor_id=None)
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "Save a note: the yoga studio is closed on Sundays and bank holidays, so book Saturday")
        frames = until_done(ws)
    [note] = app_state(client).notes.list(user_id(client, token))
    assert note.title == "The yoga studio is closed…"
    assert note.text == "the yoga studio is closed on Sundays and bank holidays, so book Saturday"
    assert frames[-1]["content"] == "Saved to your notes: “The yoga studio is closed…”."


def test_a_note_asked_for_while_writes_are_off_is_refused_in_plain_words(client, fake):
    # New-user pass: with the admin's "Tools that write" off, "Save a note: ..." was offered no tool
    # and the model answered "Sending an email to the user...". The call is now planned, refused,
    # and the answer says why.
    from backend.agent.answer import WRITES_OFF

    fake.replies = [["Sending an email to the user."]]
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token, policy="planned")  # agent_side_effects stays "off"
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "Save a note: the gym code is 4321")
        frames = until_done(ws)
    assert app_state(client).notes.list(user_id(client, token)) == []
    tool = next(f for f in frames if f["type"] == "agent_step" and f["kind"] == "tool" and f["status"] == "done")
    [call] = tool["calls"]
    assert (call["tool"], call["status"]) == ("save_note", "refused")
    assert frames[-1]["content"] == WRITES_OFF.format(name="save_note")
    assert "turned off for your account" in frames[-1]["content"]
    assert all("Sending" not in (f.get("content") or "") for f in frames)


def test_the_time_is_read_in_the_browsers_zone_and_said_by_the_program(client, fake):
    # New-user pass: "What time is it now?" was answered in UTC only.
    import re
    import uuid

    fake.replies = [["It is 12 o'clock UTC."]]
    conversation_id = tools_on(client, sign_up(client, "alice"), policy="planned")
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": conversation_id,
                      "text": "What time is it now?", "timezone": "Asia/Tokyo"})
        assert ws.receive_json()["type"] == "ack"
        frames = until_done(ws)
    tool = next(f for f in frames if f["type"] == "agent_step" and f["status"] == "done")
    [call] = tool["calls"]
    assert (call["tool"], json.loads(call["arguments"])) == ("current_time", {})  # no model step wrote it
    assert "The current time in Asia/Tokyo is" in call["content"] and "+09:00" in call["content"]
    assert re.fullmatch(r"It's \d\d:\d\d on \w+day, \d{1,2} \w+ \d{4} \(Asia/Tokyo\)\.", frames[-1]["content"])


def test_a_follow_up_never_carries_a_side_effect_of_an_earlier_message(client, fake):
    # Review: "Save a note: pick up 4 tyres at 5" then "and for 6?" saved a second note; a note asked for
    # with "add a note that ..." after a price question was read as a thing added to the bill.
    fake.replies = [["Saved."], ["Six."], ["Saved."]]
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token, policy="planned")
    app_state(client).runtime_settings.update({"agent_side_effects": "everyone"}, actor_id=None)
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "Save a note: pick up 4 tyres at 5")
        until_done(ws)
        send(ws, conversation_id, "and for 6?")
        until_done(ws)
    assert [n.text for n in app_state(client).notes.list(user_id(client, token))] == ["pick up 4 tyres at 5"]
    other = tools_on(client, token, policy="planned")
    with client.websocket_connect("/ws") as ws:
        send(ws, other, "How much is 4 * 65?")
        until_done(ws)
        send(ws, other, "add a note that the locker code is 1234")
        until_done(ws)
    assert sorted(n.text for n in app_state(client).notes.list(user_id(client, token))) == [
        "pick up 4 tyres at 5", "the locker code is 1234"]



def test_an_answer_the_program_wrote_has_its_total_time_in_the_done_the_row_the_footer_and_the_metrics(client, fake):
    # An answer no model step wrote (the time, said by the program) has no queue, TTFT, tok/s or
    # tokens: its footer showed nothing (or only "Trace" for admins). It now has the run's wall
    # time, stored with the reply, shown as "total …", and observed once as the request's e2e.
    import re
    import uuid

    from sqlalchemy import select

    from backend.models import Message

    from .conftest import use_session, wait_until
    from .test_metrics_routes import samples

    admin = sign_up(client, "admin")  # the first account is the admin: alice's footer has no Trace link
    conversation_id = tools_on(client, sign_up(client, "alice"), policy="planned")
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "send", "client_msg_id": uuid.uuid4().hex, "conversation_id": conversation_id,
                      "text": "What time is it now?", "timezone": "Asia/Tokyo"})
        assert ws.receive_json()["type"] == "ack"
        done = until_done(ws)[-1]
    assert fake.requests == []  # no model step: the program wrote the answer
    assert done["status"] == "complete" and done["content"].startswith("It's ")
    timings = dict(done["timings"])
    total_ms = timings.pop("total_ms")
    assert isinstance(total_ms, float) and total_ms > 0
    assert timings == {"queue_ms": None, "ttft_ms": None, "decode_tokens_per_s": None}
    with app_state(client).conversations._sessions() as db:
        assert db.scalar(select(Message.total_ms).where(Message.id == done["message_id"])) == total_ms
    page = client.get(f"/c/{conversation_id}").text
    footer = re.search(r'<span class="timings" title="[^"]*">(.*?)</span>\s*</footer>', page, re.S)
    assert footer is not None, "no footer under the program's answer"
    assert re.fullmatch(r'<span class="timing">total \d+(?: ms|\.\d\d s)</span>', footer.group(1)), footer.group(1)
    # The run's wall time is the request's one e2e observation (its steps record none of their own).
    use_session(client, admin)
    e2e = wait_until(lambda: (v := samples(client.get("/metrics").text))[
        ("crescent_e2e_request_latency_seconds_count", ())] and v, what="the run's e2e observation")
    assert e2e[("crescent_e2e_request_latency_seconds_count", ())] == 1
    assert e2e[("crescent_e2e_request_latency_seconds_sum", ())] == pytest.approx(total_ms / 1000.0)


def test_the_next_turn_reads_earlier_answers_without_their_citations(client, fake):
    # New-user pass: with "From pricelist.md: ... [1]" in the conversation, the model answered a turn that searched
    # nothing with "From notes.txt: This is a special command ... [1]", citing a passage that was never read.
    from backend.chat.agent_turn import uncited

    assert uncited("From notes_plain.txt: Our head baker is Marta Kowalczyk. [1]") == "Our head baker is Marta Kowalczyk."
    assert uncited("That comes to £9: 2 * 4.50 = 9, from your documents [1].") == (
        "That comes to £9: 2 * 4.50 = 9, from your documents.")
    # code and text that only look like a citation stay (review)
    for kept in ("a[1], a[0] = a[0], a[1]", "git add .", "From Monday to Friday: we open at 9.", "He said [sic] it."):
        assert uncited(kept) == kept
    fake.replies = [["From pricelist.md: Sourdough loaf: £4.50 each [1]"], ["Hi!"]]
    conversation_id = tools_on(client, sign_up(client, "alice"), policy="planned")
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "Hello there")
        assert until_done(ws)[-1]["content"] == "From pricelist.md: Sourdough loaf: £4.50 each [1]"
        send(ws, conversation_id, "Thanks, and how are you?")
        until_done(ws)
    earlier = [m.content for m in fake.requests[-1][1] if m.role == "assistant"]
    assert earlier == ["Sourdough loaf: £4.50 each"]
