"""Waiting under an agent run's Stop and wall-time budget (issue 15): backend.agent.model_step waits
on a model step's stream through :func:`race`; backend.agent.runs on its plan and candidates and
backend.agent.calls on a tool, each a worker thread, through :func:`in_worker`."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from backend.agent.budget import BudgetMeter

STOPPED_ENDING = "Stopped."
WALL_POLL_S = 0.25  # how often a wait re-reads the wall-time budget (seconds)


async def race(work: Awaitable[Any], stop: asyncio.Event, meter: BudgetMeter | None = None) -> str:
    """Await `work` unless `stop` is set or (with `meter`) the run's wall time runs out first:
    "done", "stopped" or "budget". The work is then cancelled, except a shielded worker-thread
    task, which runs on to its end. The deadline is the meter's remaining time, re-read at
    least every WALL_POLL_S seconds (so an injected clock that jumps is noticed too)."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(stop.wait())
    try:
        while True:
            timeout = None if meter is None else min(meter.remaining_s(), WALL_POLL_S)
            if timeout is not None and timeout <= 0:
                break
            done, _ = await asyncio.wait({task, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if done:
                break
    except asyncio.CancelledError:
        task.cancel()
        waiter.cancel()
        raise
    if task.done() and not task.cancelled():
        waiter.cancel()
        task.result()
        return "done"
    ended = "stopped" if waiter.done() else "budget"
    waiter.cancel()
    task.cancel()
    return ended


async def in_worker(fn: Callable[..., Any], *args: Any, stop: asyncio.Event,
                    meter: BudgetMeter | None = None) -> tuple[str, Any]:
    """(status, value): fn(*args) run in a worker thread, raced against `stop` and the run's wall
    time as :func:`race` does; value is fn's return for "done", else None ("stopped", "budget":
    the thread runs on to its end, its value dropped: Python cannot stop a thread, so what fn
    holds stays held until it returns, e.g. the embedder's lock, and a later run's embedding
    waits on it). fn's exception is raised."""
    task = asyncio.ensure_future(asyncio.to_thread(fn, *args))
    ended = await race(asyncio.shield(task), stop, meter)
    if ended != "done":
        task.add_done_callback(_drop_result)
        return ended, None
    return ended, task.result()


def _drop_result(task: "asyncio.Future[Any]") -> None:
    """Reads the abandoned thread's outcome, so that its exception is not logged as never retrieved."""
    if not task.cancelled():
        task.exception()
