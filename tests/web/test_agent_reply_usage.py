"""An agent reply's accounting and its budget notice over /ws (issue 15):

- usage: the sum over its model steps of prompt and of completion tokens, in the done frame,
  the stored message and one usage record (source "chat"), which the daily token limit sums;
- a budget ending is the reply's notice ("Stopped: <why>", live in the done frame and in the
  page after a reload), never its text, so the next turn's prompt does not contain it.

The model is scripted (tests/web/test_agent_runs.py: every step reports 10 prompt tokens and
one completion token per piece); the built-in calculator runs for real."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from backend.models import Message, UsageRecord

from .conftest import app_state, sign_up, user_id, wait_until
from .test_agent_runs import CALC, ScriptedModel, send, tools_on, until_done

STEP_LIMIT = "the step limit (3) was reached"


@pytest.fixture
def fake() -> ScriptedModel:
    return ScriptedModel([[CALC], ["The answer ", "is 42."]])


def usage_rows(client, uid: str) -> list[UsageRecord]:
    with app_state(client).conversations._sessions() as db:  # noqa: SLF001 - the test reads the rows
        return list(db.scalars(select(UsageRecord).where(UsageRecord.user_id == uid)))


def stored(client, message_id: str) -> Message:
    with app_state(client).conversations._sessions() as db:  # noqa: SLF001
        return db.get(Message, message_id)


def badge(page: str, message_id: str) -> str:
    article = page[page.index(f'data-message-id="{message_id}"'):]
    match = re.search(r'<span class="badge"[^>]*>([^<]*)</span>', article)
    assert match, "no badge under the reply"
    return match.group(1)


def test_an_agent_replys_usage_is_the_sum_of_its_model_steps_recorded_once(client, fake):
    token = sign_up(client, "alice")
    uid = user_id(client, token)
    conversation_id = tools_on(client, token)
    with client.websocket_connect("/ws") as ws:
        ack = send(ws, conversation_id)
        done = until_done(ws)[-1]
    # Step 0 (the calculator call): 10 prompt + 1 completion; step 2 (the answer): 10 + 2.
    assert done["usage"] == {"prompt_tokens": 20, "completion_tokens": 3}
    row = stored(client, ack["assistant_message_id"])
    assert (row.prompt_tokens, row.completion_tokens) == (20, 3)
    rows = wait_until(lambda: usage_rows(client, uid), what="the usage record")
    assert [(r.source, r.prompt_tokens, r.completion_tokens) for r in rows] == [("chat", 20, 3)]
    assert app_state(client).limiter.tokens_today(uid) == 23


def test_an_agent_replys_tokens_count_toward_the_daily_limit(client, fake):
    token = sign_up(client, "alice")
    uid = user_id(client, token)
    conversation_id = tools_on(client, token)
    app_state(client).runtime_settings.update({"tokens_per_day": 23}, actor_id=None)
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id)
        until_done(ws)
        wait_until(lambda: usage_rows(client, uid), what="the usage record")
        ws.send_json({"type": "send", "client_msg_id": "second", "conversation_id": conversation_id,
                      "text": "and again?"})
        refused = ws.receive_json()
    assert (refused["type"], refused["code"]) == ("error", "rate_limited")


def step_limited(client, fake) -> str:
    """A conversation with tools on, whose next run the step limit ends: policy auto, so the model
    step after the tool may call again; the 3 steps end it there. Returns the conversation's id."""
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    app_state(client).runtime_settings.update({"agent_max_steps": 3, "agent_policy": "auto"}, actor_id=None)
    fake.replies = [[CALC], [CALC], ["Plain answer."]]
    return conversation_id


def test_a_budget_ending_is_the_replys_notice_not_its_text(client, fake):
    conversation_id = step_limited(client, fake)
    with client.websocket_connect("/ws") as ws:
        ack = send(ws, conversation_id)
        frames = until_done(ws)
        done = frames[-1]
        # Live: the done frame carries the ending as the reply's notice; the text is the model's.
        assert (done["status"], done["finish_reason"], done["error"]) == ("complete", "abort", STEP_LIMIT)
        assert STEP_LIMIT not in done["content"] and STEP_LIMIT not in done["html"]
        # ... and says the page offers no Continue for it (conversations.ended_by_budget)
        assert done["budget_ended"] is True
        row = stored(client, ack["assistant_message_id"])
        assert (row.status, row.finish_reason, row.error) == ("complete", "abort", STEP_LIMIT)
        assert STEP_LIMIT not in row.content
        # After a reload: the page shows it under the reply, as chat.js's endingLabel does live.
        page = client.get(f"/c/{conversation_id}").text
        assert badge(page, ack["assistant_message_id"]) == f"Stopped: {STEP_LIMIT}"
        # The next turn's prompt holds the earlier reply's words only.
        app_state(client).runtime_settings.update({"agent_max_steps": 8}, actor_id=None)
        send(ws, conversation_id, "Thanks. Anything else?")
        until_done(ws)
    prompt = "\n".join(m.content for m in fake.requests[-1][1])
    assert "Thanks. Anything else?" in prompt
    assert "step limit" not in prompt and "Stopped" not in prompt


def test_a_reply_its_budget_ended_is_regenerated_not_continued(client, fake):
    # Second new-user pass: Continue on a reply the step limit ended ran the model without tools and dropped the
    # notice. The page offers no Continue for it, and the server refuses one, changing nothing.
    conversation_id = step_limited(client, fake)
    with client.websocket_connect("/ws") as ws:
        ack = send(ws, conversation_id)
        until_done(ws)
        reply_id = ack["assistant_message_id"]
        assert stored(client, reply_id).error == STEP_LIMIT
        # (a run its wall time or token limit ends while the answer streams keeps its words so far)
        with app_state(client).conversations._sessions() as db:  # noqa: SLF001 - the test writes the row
            db.get(Message, reply_id).content = "The answer so far"
            db.commit()
        page = client.get(f"/c/{conversation_id}").text
        article = page[page.index(f'data-message-id="{reply_id}"'):]
        assert 'data-budget-ended="true"' in article[:article.index(">")]
        requests = len(fake.requests)
        ws.send_json({"type": "continue", "client_msg_id": "again", "message_id": reply_id})
        refused = ws.receive_json()
    assert (refused["type"], refused["code"]) == ("error", "invalid_input"), refused
    assert "regenerate" in refused["message"]
    row = stored(client, reply_id)
    assert (row.status, row.finish_reason, row.error) == ("complete", "abort", STEP_LIMIT)
    assert len(fake.requests) == requests


def test_a_run_cancelled_outright_still_records_the_tokens_of_its_finished_steps(client, fake):
    # Shutdown cancels a reply that outlives its wait: the model steps that ended are usage.
    fake.hold = (1, 1)  # the answer step pauses after its first piece
    token = sign_up(client, "alice")
    uid = user_id(client, token)
    conversation_id = tools_on(client, token)
    with client.websocket_connect("/ws") as ws:
        ack = send(ws, conversation_id)
        assert fake.held.wait(5)
        reply = app_state(client).chat.live_reply(ack["assistant_message_id"])
        reply.task.get_loop().call_soon_threadsafe(reply.task.cancel)
        rows = wait_until(lambda: usage_rows(client, uid), what="the usage record")
    # Step 0 (the call): 10 prompt + 1 completion; the answer step was cut before its final event.
    assert [(r.source, r.prompt_tokens, r.completion_tokens) for r in rows] == [("chat", 10, 1)]
