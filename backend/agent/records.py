"""Storing agent runs: sync database functions over backend.agent.models (callers in async
code use ``asyncio.to_thread``).

A tool call's row is written "running" *before* the tool executes and updated with its result
after; a retried step looks the idempotency key up first (:func:`stored_call`): a finished row's
result is reused, and a "running" row (a crash cut the call between executing and recording)
runs the tool again with the same key, which a side-effecting tool honours (save_note writes
one note per key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from sqlalchemy import and_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from backend.agent.models import AgentRun, AgentStep, AgentToolCall
from backend.models import Message, new_id, utcnow

REASON_RUN_INTERRUPTED = "the server restarted before the run finished"


@dataclass(frozen=True)
class RunPlan:
    """A planned run's tools, in order, and the tools the cues chose that its budget left no room
    for (its ending names them)."""
    tools: list[str]
    left_out: list[str]


@dataclass(frozen=True)
class StoredCall:
    status: str
    result: dict[str, Any] | None
    tool: str = ""


class RunRecords:
    """The rows of runs, steps and tool calls, through `session_factory`."""

    def __init__(self, session_factory: sessionmaker[Session]) -> None:
        self.session_factory = session_factory

    def start_run(self, conversation_id: str, user_id: str, message_id: str | None, run_id: str | None = None) -> str:
        """Insert a "running" run (or find `run_id`, a retried run) and return its id."""
        with self.session_factory() as db:
            if run_id is not None and db.get(AgentRun, run_id) is not None:
                db.execute(update(AgentRun).where(AgentRun.id == run_id).values(status="running", ended_at=None))
                db.commit()
                return run_id
            run = AgentRun(id=run_id or new_id(), conversation_id=conversation_id, user_id=user_id,
                           message_id=message_id, status="running")
            db.add(run)
            db.commit()
            return run.id

    def stored_plan(self, run_id: str) -> RunPlan | None:
        """`run_id`'s stored plan (AgentRun.plan), or None when none is. (A plan stored as a bare
        list of tool names, before left-out tools were kept, has none left out.)"""
        with self.session_factory() as db:
            text = db.scalar(select(AgentRun.plan).where(AgentRun.id == run_id))
        if text is None:
            return None
        stored = json.loads(text)
        if isinstance(stored, list):
            return RunPlan(list(stored), [])
        return RunPlan(list(stored.get("tools", [])), list(stored.get("left_out", [])))

    def store_plan(self, run_id: str, plan: RunPlan) -> None:
        """Keep `plan` as the run's plan (JSON: {"tools": [...], "left_out": [...]})."""
        text = json.dumps({"tools": plan.tools, "left_out": plan.left_out})
        with self.session_factory() as db:
            db.execute(update(AgentRun).where(AgentRun.id == run_id).values(plan=text))
            db.commit()

    def end_run(self, run_id: str, status: str, ending: str | None, used: dict[str, Any], duration_ms: float) -> None:
        """Store how the run ended; a step still "running" (the run was cancelled or failed in
        the middle of it) ends with it, in the same transaction: "error" for a run that failed,
        else "stopped". (A call still running keeps its status: its worker thread records its
        result when the tool returns.)"""
        with self.session_factory() as db:
            db.execute(update(AgentRun).where(AgentRun.id == run_id).values(
                status=status, ending=ending, budget_used=json.dumps(used), ended_at=utcnow(),
                duration_ms=duration_ms))
            db.execute(update(AgentStep).where(AgentStep.run_id == run_id, AgentStep.status == "running")
                       .values(status="error" if status == "error" else "stopped"))
            db.commit()

    def stored_step(self, run_id: str, index: int) -> AgentStep | None:
        with self.session_factory() as db:
            return db.scalar(select(AgentStep).where(AgentStep.run_id == run_id, AgentStep.index == index))

    def start_step(self, run_id: str, index: int, kind: str) -> None:
        with self.session_factory() as db:
            step = db.scalar(select(AgentStep).where(AgentStep.run_id == run_id, AgentStep.index == index))
            if step is None:
                db.add(AgentStep(run_id=run_id, index=index, kind=kind, status="running"))
            else:
                step.status, step.started_at = "running", utcnow()
            db.commit()

    def end_step(self, run_id: str, index: int, status: str, text: str, duration_ms: float,
                 tokens: int | None = None) -> None:
        with self.session_factory() as db:
            db.execute(update(AgentStep).where(AgentStep.run_id == run_id, AgentStep.index == index).values(
                status=status, text=text, duration_ms=duration_ms, tokens=tokens))
            db.commit()

    def stored_call(self, key: str) -> StoredCall | None:
        """The call recorded under idempotency key `key`, or None."""
        with self.session_factory() as db:
            row = db.scalar(select(AgentToolCall).where(AgentToolCall.idempotency_key == key))
            if row is None:
                return None
            return StoredCall(row.status, json.loads(row.result) if row.result else None, row.tool)

    def begin_call(self, run_id: str, step_index: int, call_index: int, key: str, tool: str, arguments: str) -> None:
        """Write the call's row "running" before executing it (a row already there stays)."""
        try:
            with self.session_factory() as db:
                db.add(AgentToolCall(run_id=run_id, step_index=step_index, call_index=call_index,
                                     idempotency_key=key, tool=tool[:64], arguments=arguments, status="running"))
                db.commit()
        except IntegrityError:
            pass  # a retried call: its row is there

    def end_call(self, key: str, status: str, result: dict[str, Any], duration_ms: float) -> None:
        with self.session_factory() as db:
            db.execute(update(AgentToolCall).where(AgentToolCall.idempotency_key == key).values(
                status=status, result=json.dumps(result), duration_ms=duration_ms))
            db.commit()

    def steps(self, run_id: str) -> list[AgentStep]:
        with self.session_factory() as db:
            return list(db.scalars(select(AgentStep).where(AgentStep.run_id == run_id).order_by(AgentStep.index)))

    def calls(self, run_id: str) -> list[AgentToolCall]:
        with self.session_factory() as db:
            return list(db.scalars(select(AgentToolCall).where(AgentToolCall.run_id == run_id)
                                   .order_by(AgentToolCall.step_index, AgentToolCall.call_index)))

    def run(self, run_id: str) -> AgentRun | None:
        with self.session_factory() as db:
            return db.get(AgentRun, run_id)


def interrupt_orphaned_runs(db: Session) -> int:
    """Mark runs still "running" whose reply is no longer streaming (the start-up sweep has just
    marked it interrupted: the process running it is gone) as interrupted, and their running
    steps too; the steps stay, for the page. Runs whose reply streams (another live process)
    are left alone. Returns the runs marked; does not commit."""
    live = select(Message.id).where(Message.status.in_(("streaming", "pending")))
    ids = list(db.scalars(select(AgentRun.id).where(AgentRun.status == "running",
                                                    AgentRun.message_id.not_in(live))))
    if not ids:
        return 0
    db.execute(update(AgentRun).where(AgentRun.id.in_(ids)).values(
        status="interrupted", ending=REASON_RUN_INTERRUPTED, ended_at=utcnow()))
    db.execute(update(AgentStep).where(AgentStep.run_id.in_(ids), AgentStep.status == "running")
               .values(status="interrupted"))
    db.execute(update(AgentToolCall).where(AgentToolCall.run_id.in_(ids), AgentToolCall.status == "running")
               .values(status="error", result=json.dumps({"content": REASON_RUN_INTERRUPTED, "summary": "interrupted",
                                                          "sources": [], "data": None})))
    return len(ids)


@dataclass(frozen=True)
class MessageRun:
    """One reply's run as stored: the run row, its steps by index, its calls in order."""

    run: AgentRun
    steps: tuple[AgentStep, ...]
    calls: tuple[AgentToolCall, ...]


def runs_of_messages(db: Session, user_id: str, message_ids: Sequence[str]) -> dict[str, MessageRun]:
    """The runs that wrote `user_id`'s replies among `message_ids`, with their steps and calls,
    by message id, in ONE query (runs outer-joined with steps and their calls) however many
    messages there are. Another user's message ids give nothing (filtered in SQL by the run's
    user). A reply with several runs (a retried turn keeps its run id, so rarely) gives the
    latest started."""
    ids = list(dict.fromkeys(message_ids))
    if not ids:
        return {}
    rows = db.execute(
        select(AgentRun, AgentStep, AgentToolCall)
        .outerjoin(AgentStep, AgentStep.run_id == AgentRun.id)
        .outerjoin(AgentToolCall, and_(AgentToolCall.run_id == AgentRun.id,
                                       AgentToolCall.step_index == AgentStep.index))
        .where(AgentRun.user_id == user_id, AgentRun.message_id.in_(ids))
        .order_by(AgentRun.started_at, AgentRun.id, AgentStep.index, AgentToolCall.call_index)).all()
    runs: dict[str, tuple[AgentRun, dict[int, AgentStep], dict[int, AgentToolCall]]] = {}
    for run, step, call in rows:
        _, steps, calls = runs.setdefault(run.id, (run, {}, {}))
        if step is not None:
            steps.setdefault(step.id, step)
        if call is not None:
            calls.setdefault(call.id, call)
    found: dict[str, MessageRun] = {}
    for run, steps, calls in runs.values():  # in start order: a later run of a message wins
        if run.message_id is not None:
            found[run.message_id] = MessageRun(run, tuple(steps.values()), tuple(calls.values()))
    return found
