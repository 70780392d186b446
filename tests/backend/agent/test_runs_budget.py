"""Each budget ends a run with its own clear ending; the clock is injected."""

from __future__ import annotations

import json

from backend.agent.budget import Budget
from backend.generator import ChatMessage, GenerationParams

from .scripted import ScriptedGenerator, call_text
from .test_runs import go

ADD = call_text(("add", {"a": 1, "b": 1}))


async def test_the_steps_budget_ends_a_run_that_keeps_calling_tools(make_runner, turn, stop, records, tools):
    generator = ScriptedGenerator([[ADD]] * 10)
    result = await go(make_runner(generator, budget=Budget(max_steps=3, max_tool_calls=50)), turn, stop)
    assert result.status == "budget"
    assert result.ending == "the step limit (3) was reached"
    assert len(generator.calls) == 2 and len(tools.executions) == 1
    run = records.run(result.run_id)
    assert (run.status, run.ending) == ("budget", result.ending)
    assert json.loads(run.budget_used)["steps"] == 3


async def test_the_tool_calls_budget_stops_before_the_call_past_it(make_runner, turn, stop, records, tools):
    generator = ScriptedGenerator([[call_text(("add", {"a": 1, "b": 1}), ("add", {"a": 2, "b": 2}))], ["x"]])
    result = await go(make_runner(generator, budget=Budget(max_tool_calls=1)), turn, stop)
    assert result.status == "budget"
    assert result.ending == "the tool call limit (1) was reached"
    assert len(tools.executions) == 1 and len(generator.calls) == 1
    assert [c.call_index for c in records.calls(result.run_id)] == [0]


async def test_the_tokens_budget_ends_the_run_and_caps_each_step(make_runner, turn, stop, tools):
    generator = ScriptedGenerator([[ADD], [ADD], ["x"]], prompt_tokens=10, tokens_per_piece=20)
    result = await go(make_runner(generator, budget=Budget(max_tokens=45)), turn, stop)
    assert result.status == "budget"
    assert result.ending == "the token limit of the run (45) was reached"
    assert len(generator.calls) == 2
    assert generator.calls[1].params.max_tokens == 5  # 45 - (10 + 20) left, less the step's prompt of 10


async def test_a_step_whose_prompt_does_not_fit_the_tokens_left_is_not_run(make_runner, turn, stop, tools):
    # New-user pass: a run of 50 tokens answered with 1,354 (the prompt alone was over the budget).
    generator = ScriptedGenerator([[ADD], ["x"]], prompt_tokens=30, tokens_per_piece=20)
    result = await go(make_runner(generator, budget=Budget(max_tokens=30)), turn, stop)
    assert (result.status, result.ending) == ("budget", "the token limit of the run (30) was reached")
    assert generator.calls == [] and result.used["tokens"] == 0
    # one that fits runs with the tokens left after its prompt
    generator = ScriptedGenerator([["The answer."]], prompt_tokens=30, tokens_per_piece=1)
    result = await go(make_runner(generator, budget=Budget(max_tokens=31)), turn, stop)
    assert len(generator.calls) == 1 and generator.calls[0].params.max_tokens == 1


async def test_the_wall_time_budget_ends_the_run(make_runner, turn, stop, tools):
    now = [1000.0]
    spec_tools = tools

    class SlowClockGenerator(ScriptedGenerator):
        def stream(self, request_id, messages, params):
            now[0] += 40.0  # each model call takes 40 s of the injected clock
            return super().stream(request_id, messages, params)

    generator = SlowClockGenerator([[ADD]] * 5)
    result = await go(make_runner(generator, budget=Budget(max_wall_s=100, max_steps=50, max_tool_calls=50),
                                  clock=lambda: now[0]), turn, stop)
    assert result.status == "budget"
    assert result.ending == "the time limit of the run (100 s) was reached"
    assert len(generator.calls) == 3 and len(spec_tools.executions) == 2


async def test_the_wall_time_budget_cuts_a_model_step_while_it_streams(make_runner, turn, stop):
    now = [0.0]

    class Ticking(ScriptedGenerator):
        async def _run(self, request_id, number, pieces):
            async for event in super()._run(request_id, number, pieces):
                now[0] += 10.0
                yield event

    generator = Ticking([["a ", "b ", "c ", "d ", "e"]])
    result = await go(make_runner(generator, budget=Budget(max_wall_s=25), clock=lambda: now[0]), turn, stop)
    assert result.status == "budget" and "time limit" in result.ending
    assert result.text == "a b c "


async def test_an_answer_cut_by_the_tokens_the_budget_left_ends_on_the_budget(make_runner, turn, stop, records):
    # New-user run (2026-12-02): a conversation's token limit of 1 showed "The" as a complete answer.
    generator = ScriptedGenerator([["The ", "answer ", "is ", "five."]], prompt_tokens=10, tokens_per_piece=5,
                                  honour_max_tokens=True)
    result = await go(make_runner(generator, budget=Budget(max_tokens=22)), turn, stop)
    assert generator.calls[0].params.max_tokens == 12  # the tokens left after the prompt's 10, below the reply's 100
    assert (result.status, result.ending) == ("budget", "the token limit of the run (22) was reached")
    assert result.text == "The answer " and records.run(result.run_id).status == "budget"


async def test_an_answer_cut_by_its_own_length_is_done(make_runner, turn, stop):
    generator = ScriptedGenerator([["The ", "answer ", "is ", "five."]], prompt_tokens=10, tokens_per_piece=5,
                                  honour_max_tokens=True)
    result = await make_runner(generator, budget=Budget(max_tokens=10_000)).run(
        conversation_id=turn.conversation_id, user_id=turn.user_id, message_id=turn.message_id,
        messages=[ChatMessage("user", "What is 2 + 3?")], params=GenerationParams(max_tokens=10, temperature=0.0),
        stop=stop)
    assert (result.status, result.text) == ("done", "The answer ")
