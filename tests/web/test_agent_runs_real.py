"""Agent runs with the real model (SmolLM2-135M, slow): a calculator question gets a run with a
calculator call and the right number in the answer. The first step must call a tool
(require_first_call, tool_choice "required"): with "auto" the 135M model answers in text."""

from __future__ import annotations

import asyncio

import pytest

from backend.agent.records import RunRecords
from backend.agent.runs import AgentRunner
from backend.agent.budget import Budget
from backend.agent.tools import calculator
from backend.db import create_db_engine, make_session_factory
from backend.generator import ChatMessage, GenerationParams
from backend.models import Conversation, Message, User, new_id, utcnow

pytestmark = pytest.mark.slow


# Observed 2026-12-02, tool_choice "required" (both runs): for "12 * 34" the model opened the
# expression string and never closed it ('"expression":"12 * 34}}]</tool_call>  # 12 * 34 = 328.000...':
# inside a JSON string those are legal characters, so the grammar let them through) until
# max_tokens cut the block; the run then ends "error" (an unreadable block). For "1234 * 5678" it
# called calculator("1234.5678").

@pytest.fixture
def turn(database_url):
    engine = create_db_engine(database_url)
    sessions = make_session_factory(engine)
    with sessions() as db:
        user = User(id=new_id(), username="ann", username_key="ann", password_hash="x")
        conversation = Conversation(id=new_id(), user_id=user.id)
        now = utcnow()
        reply = Message(id=new_id(), conversation_id=conversation.id, user_id=user.id, position=0,
                        role="assistant", status="streaming", created_at=now, updated_at=now)
        db.add(user)
        db.flush()
        db.add(conversation)
        db.flush()
        db.add(reply)
        db.commit()
        ids = (user.id, conversation.id, reply.id)
    yield sessions, ids
    engine.dispose()


@pytest.mark.xfail(reason="SmolLM2-135M does not yet produce a valid calculator call (see above)", strict=False)
def test_the_real_model_answers_a_calculation_with_the_calculator(real_generator, turn):
    sessions, (user_id, conversation_id, message_id) = turn
    records = RunRecords(sessions)
    runner = AgentRunner(real_generator, [calculator.SPEC], {"calculator"}, records,
                         Budget(max_steps=4, max_tool_calls=2, max_tokens=6000, max_wall_s=600),
                         policy="one_call")
    question = [ChatMessage("user", "Use the calculator to compute 12 * 34.")]
    result = asyncio.run(runner.run(conversation_id=conversation_id, user_id=user_id, message_id=message_id,
                                    messages=question, params=GenerationParams(max_tokens=200, temperature=0.0),
                                    stop=asyncio.Event()))
    calls = records.calls(result.run_id)
    print("run:", result, [(s.kind, s.text) for s in records.steps(result.run_id)], [(c.tool, c.arguments, c.status) for c in calls])
    assert calls and calls[0].tool == "calculator" and calls[0].status == "ok"
    assert "408" in calls[0].result
    assert result.status == "done"
    assert "408" in result.text.replace(",", "").replace(" ", "")
