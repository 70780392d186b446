"""Stop ends a run during a model step or during a tool; a page attaching mid-run gets the
steps so far; each tool call is a span under the turn's trace."""

from __future__ import annotations

import asyncio

from backend import tracing

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
