"""How a run offers tools to the model (AgentRunner's policy, RuntimeSettings.agent_policy):
"one_call" forces exactly one call first (picked greedily) and then asks for the answer with no
tools; "auto" offers the tools at every step ("planned": test_runs_planned.py)."""

from __future__ import annotations

import pytest

from backend.agent.budget import Budget
from backend.agent.answer import ANSWER_PATTERN
from backend.agent.model_step import CALL_MAX_TOKENS
from backend.agent.tools.passages import LABEL_SEPARATOR
from backend.agent.runs import POLICIES, POLICY_AUTO, POLICY_ONE_CALL, POLICY_PLANNED, AgentRunner
from backend.generator import GenerationParams
from backend.runtime_setting_fields import AGENT_POLICIES
from backend.runtime_settings import RuntimeSettings

from .scripted import ScriptedGenerator, call_text
from .test_runs import QUESTION, go

ADD = call_text(("add", {"a": 2, "b": 3}))


async def test_one_call_forces_one_call_then_answers_without_tools(make_runner, turn, stop, tools):
    generator = ScriptedGenerator([[ADD], ["It is ", "5."]])
    result = await make_runner(generator, policy=POLICY_ONE_CALL).run(
        conversation_id=turn.conversation_id, user_id=turn.user_id, message_id=turn.message_id,
        messages=QUESTION, params=GenerationParams(max_tokens=100, temperature=0.7, frequency_penalty=0.3), stop=stop)
    assert (result.status, result.text) == ("done", "It is 5.")
    first, answer = generator.calls[0].params, generator.calls[1].params
    # the chat's frequency penalty is for free words: none on the call (its quotes and digits are no repetition)
    assert (first.frequency_penalty, answer.frequency_penalty) == (0.0, 0.3)
    format_ = first.structured_output.tool_calls
    assert (format_.required, format_.parallel) == (True, False)
    assert {f.name for f in first.tools} >= {"add", "search_documents"}
    assert answer.tools == () and answer.structured_output.regex == ANSWER_PATTERN  # words, never a tag first
    # a passage's header echoed ("notes.txt (version 1) — passage 90c1…:10") ends the answer, the call never
    assert LABEL_SEPARATOR in answer.stop and LABEL_SEPARATOR not in first.stop
    # The call is picked greedily, with room for its block; the answer samples as the
    # conversation asks, at its length.
    assert (first.temperature, answer.temperature) == (0.0, 0.7)
    assert (first.max_tokens, answer.max_tokens) == (CALL_MAX_TOKENS, 100)


async def test_the_call_steps_room_stays_within_the_runs_token_budget(make_runner, turn, stop):
    generator = ScriptedGenerator([[ADD], ["5."]], prompt_tokens=10)
    await make_runner(generator, Budget(max_tokens=100), policy=POLICY_ONE_CALL).run(
        conversation_id=turn.conversation_id, user_id=turn.user_id, message_id=turn.message_id,
        messages=QUESTION, params=GenerationParams(max_tokens=20), stop=stop)
    assert generator.calls[0].params.max_tokens == 90  # the budget less the step's prompt of 10
    # The answer step still reads the call and its result.
    assert [m.role for m in generator.calls[1].messages][-2:] == ["assistant", "tool"]


async def test_a_call_written_in_the_answer_step_is_not_run(make_runner, turn, stop, tools):
    generator = ScriptedGenerator([[ADD], [ADD], ["never asked"]])
    result = await go(make_runner(generator, policy=POLICY_ONE_CALL), turn, stop)
    assert [e[0] for e in tools.executions] == ["add"]  # once: the answer step offered no tools
    assert result.status == "error" and len(generator.calls) == 2


async def test_auto_offers_the_tools_at_every_step(make_runner, turn, stop):
    generator = ScriptedGenerator([[ADD], ["It is 5."]])
    result = await go(make_runner(generator, policy=POLICY_AUTO), turn, stop)
    assert result.status == "done"
    for call in generator.calls:
        format_ = call.params.structured_output.tool_calls
        assert (format_.required, format_.parallel) == (False, True) and call.params.tools


def test_an_unknown_policy_is_refused(make_runner):
    with pytest.raises(ValueError, match="policy"):
        make_runner(ScriptedGenerator([]), policy="always")


def test_the_settings_choices_are_the_runners_policies_and_planned_is_the_default():
    assert set(AGENT_POLICIES) == set(POLICIES)
    assert RuntimeSettings.__dataclass_fields__["agent_policy"].default == POLICY_PLANNED
