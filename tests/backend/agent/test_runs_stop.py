"""Stop ends a run during a model step or during a tool; a page attaching mid-run gets the
steps so far; each tool call is a span under the turn's trace."""

from __future__ import annotations

import asyncio
import threading

import pytest

from backend import tracing
from backend.agent.budget import Budget
from backend.agent.runs import POLICY_PLANNED

from .scripted import ScriptedGenerator, call_text
from .test_runs import go


async def test_stop_during_a_model_step_aborts_it_and_ends_the_run_stopped(make_runner, turn, stop, records):
    generator = ScriptedGenerator([["It ", "is ", "5."]], hold_at=(0, 1))
    task = asyncio.ensure_future(go(make_runner(generator), turn, stop))
    await generator.held.wait()
    stop.set()
    result = await asyncio.wait_for(task, 10)
    assert (result.status, result.ending) == ("stopped", "Stopped.")
    assert generator.aborted == [generator.calls[0].request_id]
    assert records.run(result.run_id).status == "stopped"
    assert [(s.kind, s.status, s.text) for s in records.steps(result.run_id)] == [("model", "stopped", "It ")]


async def test_stop_during_a_tool_ends_the_run_and_the_result_is_still_recorded(make_runner, turn, stop, records,
                                                                                tools):
    generator = ScriptedGenerator([[call_text(("slow", {}))], ["never"]])
    task = asyncio.ensure_future(go(make_runner(generator), turn, stop))
    await asyncio.to_thread(tools.entered.wait, 10)
    stop.set()
    result = await asyncio.wait_for(task, 10)
    assert result.status == "stopped"
    assert len(generator.calls) == 1  # no model call after the stop
    assert [(s.kind, s.status) for s in records.steps(result.run_id)] == [("model", "done"), ("tool", "stopped")]
    tools.gate.set()  # the tool finishes in its thread: its result is stored (no second run on a retry)
    for _ in range(200):
        calls = records.calls(result.run_id)
        if calls[0].status != "running":
            break
        await asyncio.sleep(0.05)
    assert calls[0].status == "ok"


async def test_a_page_attaching_mid_run_gets_the_steps_so_far(make_runner, turn, stop):
    generator = ScriptedGenerator([[call_text(("add", {"a": 2, "b": 3}))], ["It ", "is 5."]], hold_at=(1, 1))
    runner = make_runner(generator)
    task = asyncio.ensure_future(go(runner, turn, stop))
    await generator.held.wait()
    replay = runner.step_log.replay()
    assert [(e.index, e.kind, e.status) for e in replay] == [(0, "model", "done"), (1, "tool", "done"),
                                                             (2, "model", "running")]
    assert replay[1].calls[0].summary == "Calculated — 5"
    assert replay[1].frame()["type"] == "agent_step"
    generator.release()
    assert (await task).status == "done"


async def test_each_tool_call_is_a_span_under_the_turns_trace(make_runner, turn, stop):
    generator = ScriptedGenerator([[call_text(("add", {"a": 2, "b": 3}), ("secret", {}))], ["5"]])
    root = tracing.start_root("chat.turn")
    with tracing.use(root):
        await go(make_runner(generator), turn, stop)
    root.end()
    spans = tracing.store().get(tracing.trace_id_of(root)) or []
    calls = [s for s in spans if s.name == "agent.tool_call"]
    assert [(s.attributes["tool"], s.attributes["status"]) for s in calls] == [("add", "ok"), ("secret", "refused")]
    assert all(s.parent.span_id == root.get_span_context().span_id for s in calls)


async def test_a_cancelled_run_leaves_no_step_running(make_runner, turn, stop, records):
    """The reply's task cancelled mid-step (shutdown past its timeout): the run is stored
    stopped and its step with it, not "running" for ever (the start-up sweep only looks at runs
    still running)."""
    generator = ScriptedGenerator([["It ", "is ", "5."]], hold_at=(0, 1))
    task = asyncio.ensure_future(go(make_runner(generator), turn, stop))
    await generator.held.wait()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    run_id = generator.calls[0].request_id.split(":")[0]
    assert records.run(run_id).status == "stopped"
    assert [(s.kind, s.status) for s in records.steps(run_id)] == [("model", "stopped")]


class Blocking:
    """A sync function for a worker thread that blocks until `gate` is set (at most 10 s), then
    returns `value`; `entered` is set when it starts."""

    def __init__(self, value) -> None:
        self.value = value
        self.entered = threading.Event()
        self.gate = threading.Event()

    def __call__(self, *args):
        self.entered.set()
        self.gate.wait(10)
        return self.value


PLANNED_QUESTION = "How long are two Halvorsen Bridges? Add the length + the length."


def planned_runner(make_runner, generator, **kwargs):
    """A planned run of PLANNED_QUESTION: the search's call written by the program, then the
    calculator's chosen among candidates."""
    runner = make_runner(generator, policy=POLICY_PLANNED, user_text=PLANNED_QUESTION, **kwargs)
    runner.tools["search_documents"].planned_arguments = lambda text: {"query": text}
    return runner


@pytest.mark.parametrize("at", ["plan", "candidates", "quote"])
async def test_stop_while_the_program_works_in_a_thread_ends_the_run_at_once(make_runner, turn, stop, records, at):
    """The plan (the cues' embeddings), the calculator's candidates and a quoted answer run in
    worker threads: Stop ends the run without waiting for them, and no model step starts after."""
    generator = ScriptedGenerator([["never"]])
    runner = planned_runner(make_runner, generator)
    blocking = Blocking([{"a": 1, "b": 2}, {"a": 2, "b": 2}])
    if at == "plan":
        plan = runner._plan
        runner._plan = lambda *args: blocking() and plan(*args)
    elif at == "candidates":
        runner.tools["add"].candidate_arguments = blocking
    else:
        question = "Who designed the Halvorsen Bridge?"
        runner = make_runner(generator, policy=POLICY_PLANNED, user_text=question)
        runner.tools["search_documents"].planned_arguments = lambda text: {"query": text}
        blocking.value = (1, "The bridge was designed by Ingrid Solberg.")
        runner.tools["search_documents"].answer_quote = blocking
    task = asyncio.ensure_future(go(runner, turn, stop))
    assert await asyncio.to_thread(blocking.entered.wait, 10)
    stop.set()
    result = await asyncio.wait_for(task, 5)  # the thread is still blocked
    assert not blocking.gate.is_set()
    assert (result.status, result.ending) == ("stopped", "Stopped.")
    assert records.run(result.run_id).status == "stopped"
    assert generator.calls == []  # no model step was asked
    if at == "quote":  # the answering step was cut before it asked the engine: nothing to abort or count
        assert generator.aborted == []
        assert [(s.kind, s.status, s.tokens) for s in records.steps(result.run_id)][-1] == ("model", "stopped", 0)
    blocking.gate.set()


async def test_the_wall_time_running_out_while_candidates_are_written_ends_the_run(make_runner, turn, stop, records):
    now = [0.0]
    generator = ScriptedGenerator([["never"]])
    runner = planned_runner(make_runner, generator, budget=Budget(max_wall_s=100), clock=lambda: now[0])
    blocking = Blocking([{"a": 1, "b": 2}])
    runner.tools["add"].candidate_arguments = blocking
    task = asyncio.ensure_future(go(runner, turn, stop))
    assert await asyncio.to_thread(blocking.entered.wait, 10)
    now[0] = 150.0
    result = await asyncio.wait_for(task, 5)
    assert not blocking.gate.is_set()
    assert (result.status, result.ending) == ("budget", "the time limit of the run (100 s) was reached")
    assert generator.calls == []
    blocking.gate.set()


async def test_a_tool_writing_no_candidates_lets_the_model_write_the_call(make_runner, turn, stop, records):
    """Review: candidate_arguments returning None (it wrote none) is not a cut: the model writes
    the call and the run goes on to its answer."""
    generator = ScriptedGenerator([[call_text(("add", {"a": 2, "b": 3}))], ["It ", "is 5."]])
    runner = planned_runner(make_runner, generator)
    runner.tools["add"].candidate_arguments = lambda *args: None
    result = await asyncio.wait_for(go(runner, turn, stop), 10)
    assert result.status == "done"
    assert [c.status for c in records.calls(result.run_id)][-1] == "ok"
