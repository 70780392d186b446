"""The admin's view of agent runs (issue 15): recent runs, newest first, one page at a time, and
one run with its steps and tool calls (web/agent_run_routes.py renders them).

Sync database reads (callers in async code use ``asyncio.to_thread``). Counts come from the
stored rows (a run cut by a restart has no budget_used); tokens from the run's budget_used
(prompt and completion summed over its model steps, backend.agent.budget), else the reply's
stored usage. Times are UTC; durations in milliseconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, aliased, sessionmaker

from backend.agent.models import AgentRun, AgentStep, AgentToolCall
from backend.models import Message, User

RUNS_PER_PAGE = 50
MAX_PAGE = 10_000


@dataclass(frozen=True)
class RunRow:
    """One run in the list. tokens: prompt + completion (None: unknown); trace_id: the reply's
    trace (messages.trace_id), for the waterfall link; question: the person's message it answered
    (new-user pass: the admin saw it only inside a search's arguments)."""

    id: str
    username: str
    started_at: datetime
    status: str
    ending: str | None
    steps: int
    tool_calls: int
    prompt_tokens: int | None
    completion_tokens: int | None
    duration_ms: float | None
    trace_id: str | None
    conversation_id: str
    message_id: str | None
    question: str = ""  # the message the run answered (its reply's parent), as typed

    @property
    def tokens(self) -> int | None:
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


@dataclass(frozen=True)
class CallRow:
    """One tool call of a run. result_summary: the tool's one-line summary (or the start of
    its content); status: running | ok | refused | invalid | error."""

    step_index: int
    call_index: int
    tool: str
    arguments: str
    status: str
    result_summary: str
    result_content: str
    idempotency_key: str
    started_at: datetime
    duration_ms: float | None


@dataclass(frozen=True)
class StepRow:
    index: int
    kind: str
    status: str
    text: str
    started_at: datetime
    duration_ms: float | None
    calls: tuple[CallRow, ...]


@dataclass(frozen=True)
class RunDetail:
    run: RunRow
    used: dict[str, Any]
    steps: tuple[StepRow, ...]


def _used(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _query():
    steps = (select(func.count()).select_from(AgentStep).where(AgentStep.run_id == AgentRun.id)
             .correlate(AgentRun).scalar_subquery())
    calls = (select(func.count()).select_from(AgentToolCall).where(AgentToolCall.run_id == AgentRun.id)
             .correlate(AgentRun).scalar_subquery())
    asked = aliased(Message)
    return (select(AgentRun, User.username, Message.trace_id, Message.prompt_tokens, Message.completion_tokens,
                   steps, calls, asked.content)
            .join(User, User.id == AgentRun.user_id)
            .outerjoin(Message, Message.id == AgentRun.message_id)
            .outerjoin(asked, asked.id == Message.parent_id))


def _row(run: AgentRun, username: str, trace_id: str | None, message_prompt: int | None,
         message_completion: int | None, steps: int, calls: int, question: str | None = None) -> RunRow:
    used = _used(run.budget_used)
    prompt, completion = used.get("prompt_tokens"), used.get("completion_tokens")
    if prompt is None and completion is None:
        prompt, completion = message_prompt, message_completion
    return RunRow(run.id, username, run.started_at, run.status, run.ending, int(steps or 0), int(calls or 0),
                  prompt, completion, run.duration_ms, trace_id, run.conversation_id, run.message_id,
                  question or "")


def recent_runs(session_factory: sessionmaker[Session], page: int = 1,
                per_page: int = RUNS_PER_PAGE) -> tuple[list[RunRow], bool]:
    """Runs of every user, newest first: page `page` (1-based) of `per_page`, and whether a
    later page has more. Raises ValueError for a page outside 1..MAX_PAGE."""
    if not 1 <= page <= MAX_PAGE:
        raise ValueError(f"page must be 1 to {MAX_PAGE}")
    with session_factory() as db:
        rows = db.execute(_query().order_by(AgentRun.started_at.desc(), AgentRun.id.desc())
                          .offset((page - 1) * per_page).limit(per_page + 1)).all()
    runs = [_row(*row) for row in rows[:per_page]]
    return runs, len(rows) > per_page


def run_detail(session_factory: sessionmaker[Session], run_id: str) -> RunDetail | None:
    """One run with its steps (by index) and each step's tool calls (by call index); None for
    an unknown id."""
    with session_factory() as db:
        row = db.execute(_query().where(AgentRun.id == run_id)).first()
        if row is None:
            return None
        steps = list(db.scalars(select(AgentStep).where(AgentStep.run_id == run_id).order_by(AgentStep.index)))
        calls = list(db.scalars(select(AgentToolCall).where(AgentToolCall.run_id == run_id)
                                .order_by(AgentToolCall.step_index, AgentToolCall.call_index)))
    by_step: dict[int, list[CallRow]] = {}
    for call in calls:
        result = _used(call.result)
        content = str(result.get("content") or "")
        by_step.setdefault(call.step_index, []).append(CallRow(
            call.step_index, call.call_index, call.tool, call.arguments, call.status,
            str(result.get("summary") or "") or content[:200], content, call.idempotency_key, call.started_at,
            call.duration_ms))
    step_rows = [StepRow(s.index, s.kind, s.status, s.text or "", s.started_at, s.duration_ms,
                         tuple(by_step.pop(s.index, ()))) for s in steps]
    for index, orphans in sorted(by_step.items()):  # calls whose step row is missing: still shown
        step_rows.append(StepRow(index, "tool", "interrupted", "", orphans[0].started_at, None, tuple(orphans)))
    return RunDetail(_row(*row), _used(row[0].budget_used), tuple(step_rows))


class RunAdmin:
    """:func:`recent_runs` and :func:`run_detail` over one session factory (web/state.py)."""

    def __init__(self, session_factory: sessionmaker[Session]) -> None:
        self.session_factory = session_factory

    def recent(self, page: int = 1, per_page: int = RUNS_PER_PAGE) -> tuple[list[RunRow], bool]:
        return recent_runs(self.session_factory, page, per_page)

    def detail(self, run_id: str) -> RunDetail | None:
        return run_detail(self.session_factory, run_id)
