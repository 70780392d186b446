"""The wall-time budget ends a run while a tool or a model step is still working (the clock is
injected and moved by the test; the run notices within its poll of the budget), and a run's
usage is the sum of its model steps' prompt and completion tokens, each separately."""

from __future__ import annotations

import asyncio
import json
from typing import AsyncIterator

from backend.agent.budget import Budget
from backend.generator import GenerationDone, GenerationEvent, TextDelta

from .conftest import FakeResult, FakeSpec
from .scripted import ScriptedGenerator, call_text
from .test_runs import go

TIME_LIMIT = "the time limit of the run (100 s) was reached"


async def wait_for_call_row(records, run_id: str, status: str):
    for _ in range(400):
        calls = records.calls(run_id)
        if calls and calls[0].status == status:
            return calls
        await asyncio.sleep(0.025)
    raise AssertionError(f"the call never became {status!r}: {[c.status for c in records.calls(run_id)]}")


async def test_a_tool_that_runs_past_the_wall_time_ends_the_run_and_a_retry_reuses_its_result(
        make_runner, turn, stop, records, tools):
    now = [0.0]
    generator = ScriptedGenerator([[call_text(("slow", {}))], ["It waited."]])
    task = asyncio.ensure_future(go(make_runner(generator, budget=Budget(max_wall_s=100), clock=lambda: now[0]),
                                    turn, stop))
    assert await asyncio.to_thread(tools.entered.wait, 10)
    now[0] = 150.0  # the tool is still blocked on its gate when the time is up
    result = await asyncio.wait_for(task, 10)
    assert not tools.gate.is_set()
    assert (result.status, result.ending) == ("budget", TIME_LIMIT)
    assert len(generator.calls) == 1  # no model call after the time ran out
    assert [(s.kind, s.status) for s in records.steps(result.run_id)] == [("model", "done"), ("tool", "stopped")]
    run = records.run(result.run_id)
    assert (run.status, run.ending) == ("budget", TIME_LIMIT)
    # The worker thread runs on; its result is recorded under the call's key...
    tools.gate.set()
    assert (await wait_for_call_row(records, result.run_id, "ok"))[0].idempotency_key == f"{result.run_id}:1:0"
    # ...so the retried run reuses it instead of running the tool again.
    retry = await go(make_runner(generator), turn, stop, run_id=result.run_id)
    assert (retry.status, retry.text) == ("done", "It waited.")
    assert tools.executions == [("slow", f"{result.run_id}:1:0")]
    assert "slow done" in generator.prompt_text(1)


class SlowPrefill(ScriptedGenerator):
    """Reply 0 writes nothing until aborted (a prefill that takes forever)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.waiting = asyncio.Event()

    async def _run(self, request_id: str, number: int, pieces: list[str]) -> AsyncIterator[GenerationEvent]:
        self.waiting.set()
        while request_id not in self.aborted:
            await self._wake.wait()
        yield GenerationDone("abort", self.prompt_tokens, 0)


async def test_a_model_step_without_a_delta_ends_at_the_wall_time(make_runner, turn, stop, records):
    now = [0.0]
    generator = SlowPrefill([["never"]], prompt_tokens=7)
    task = asyncio.ensure_future(go(make_runner(generator, budget=Budget(max_wall_s=100), clock=lambda: now[0]),
                                    turn, stop))
    await asyncio.wait_for(generator.waiting.wait(), 10)
    now[0] = 101.0
    result = await asyncio.wait_for(task, 10)
    assert (result.status, result.ending, result.text) == ("budget", TIME_LIMIT, "")
    assert generator.aborted == [generator.calls[0].request_id]
    assert [(s.kind, s.status) for s in records.steps(result.run_id)] == [("model", "stopped")]
    assert records.run(result.run_id).status == "budget"
    # The step was cut before its final event: its prompt is still counted (the generator's count).
    assert (result.used["prompt_tokens"], result.used["completion_tokens"]) == (7, 0)


async def test_the_wall_time_is_checked_before_each_call_of_a_step(make_runner, turn, stop, tools):
    now = [0.0]

    def add_and_tick(ctx, args):
        tools.executions.append(("add", ctx.idempotency_key))
        now[0] += 60.0
        return FakeResult("2", "Calculated — 2")

    specs = [s for s in tools.specs() if s.name != "add"]
    specs.append(FakeSpec("add", "adds", {"type": "object"}, "tools.basic", False, add_and_tick))
    generator = ScriptedGenerator([[call_text(("add", {}), ("add", {}), ("add", {}))], ["x"]])
    runner = make_runner(generator, budget=Budget(max_wall_s=100), clock=lambda: now[0])
    runner.tools["add"] = specs[-1]  # the same dict the runner's tool steps read
    result = await go(runner, turn, stop)
    assert (result.status, result.ending) == ("budget", TIME_LIMIT)
    assert len(tools.executions) == 2  # the third call was not started: 120 s had gone


class Counted(ScriptedGenerator):
    """Reply i ends with usage[i] = (prompt_tokens, completion_tokens)."""

    usage: list[tuple[int, int]] = []

    async def _run(self, request_id: str, number: int, pieces: list[str]) -> AsyncIterator[GenerationEvent]:
        for piece in pieces:
            yield TextDelta(piece)
        prompt, completion = self.usage[number]
        yield GenerationDone("stop", prompt, completion)


async def test_a_runs_usage_sums_prompt_and_completion_tokens_of_its_model_steps(make_runner, turn, stop, records):
    generator = Counted([[call_text(("add", {"a": 1, "b": 2}))], [call_text(("add", {"a": 3, "b": 4}))],
                         ["It is ", "10."]])
    generator.usage = [(100, 9), (140, 11), (180, 4)]
    result = await go(make_runner(generator), turn, stop)
    assert result.status == "done"
    assert (result.used["prompt_tokens"], result.used["completion_tokens"]) == (420, 24)
    assert result.used["tokens"] == 444  # the budget's measure stays the total
    stored = json.loads(records.run(result.run_id).budget_used)
    assert (stored["prompt_tokens"], stored["completion_tokens"]) == (420, 24)


async def test_a_tool_does_not_start_when_the_wall_time_ran_out_while_its_records_were_read(
        make_runner, turn, stop, tools, records):
    """The time is checked before each call; the reads of its stored record that follow take
    time too: a tool must not start once it has run out (review: it started, then the run ended)."""
    now = [0.0]
    generator = ScriptedGenerator([[call_text(("add", {"a": 1, "b": 1}))], ["x"]])
    runner = make_runner(generator, budget=Budget(max_wall_s=100), clock=lambda: now[0])
    read = records.stored_call

    def slow_read(key):
        now[0] += 200.0  # the database was slow
        return read(key)

    runner.records.stored_call = slow_read
    result = await go(runner, turn, stop)
    assert (result.status, result.ending) == ("budget", TIME_LIMIT)
    assert tools.executions == [] and records.calls(result.run_id) == []
