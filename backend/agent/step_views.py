"""A finished (or interrupted) reply's agent steps as the page shows them, built from the records.

The live page draws each step from its ``agent_step`` frame (backend.agent.events.AgentStepEvent,
static/agent_steps.js). After a reload, or in a tab opened once the reply ended, the steps come
from the stored run instead (backend.agent.records.runs_of_messages): :func:`step_events` turns
one stored run into the same AgentStepEvents the run published last for each step, so the
stored and the live views have one shape (templates/_message.html draws them, escaped).

A run cut by a restart (records.interrupt_orphaned_runs) keeps its steps; its view says so
(:attr:`RunView.interrupted`, with the stored ending).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from sqlalchemy.orm import Session, sessionmaker

from backend.agent.events import AgentStepEvent, CallView
from backend.agent.models import AgentStep, AgentToolCall
from backend.agent.records import MessageRun, runs_of_messages


@dataclass(frozen=True)
class RunView:
    """A reply's run for the page. status: the run's (running | done | stopped | budget |
    interrupted | error); ending: why it ended, for people (None: the answer ended it);
    steps: each step's latest event, by index."""

    run_id: str
    status: str
    ending: str | None
    steps: tuple[AgentStepEvent, ...]

    @property
    def interrupted(self) -> bool:
        return self.status == "interrupted"

    @property
    def tool_steps(self) -> tuple[tuple[AgentStepEvent, str], ...]:
        """The steps the page shows, collapsed, each with its summary line (:func:`step_line`).
        A model step's text is the answer (the reply shows it) or a call block (the tool step
        after it shows the calls), so only tool steps are listed."""
        return tuple((step, step_line(step)) for step in self.steps if step.kind == "tool")


# The words after a call's summary for its status: the same as static/agent_steps.js LABELS.
CALL_LABELS = {"ok": "", "refused": "refused", "invalid": "invalid arguments", "error": "failed",
               "running": "running…"}
# The line of a tool step that ran no call (the run's tool call or time limit came first; the
# reply's notice says which): static/agent_steps.js NO_CALL. Before: "Tools", opening on nothing.
NO_CALL_LINE = "No tool was run"


def step_line(step: AgentStepEvent) -> str:
    """A tool step's one line, as static/agent_steps.js writes it: each call's summary, or
    without one its tool's name with its status's label ("calculator (refused)"), joined by
    " · "; a call cut by a restart says "interrupted"; a step without calls, NO_CALL_LINE."""
    lines = []
    for call in step.calls:
        if step.status == "interrupted" and call.status in ("running", "error") and call.summary in ("", "interrupted"):
            lines.append(f"{call.tool} (interrupted)")
            continue
        if call.summary:  # it says what happened ("calculator failed")
            lines.append(call.summary)
            continue
        label = CALL_LABELS.get(call.status, call.status)
        lines.append(f"{call.tool} ({label})" if label else call.tool)
    return " · ".join(lines) or NO_CALL_LINE


def _result(call: AgentToolCall) -> dict[str, Any]:
    try:
        value = json.loads(call.result) if call.result else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def call_view(call: AgentToolCall) -> CallView:
    """One stored call as the live tool step lists it (summary and content from its result)."""
    result = _result(call)
    summary, content = result.get("summary"), result.get("content")
    return CallView(call.tool, call.arguments, call.status, summary if isinstance(summary, str) else "",
                    content if isinstance(content, str) else "")


def step_events(message_id: str, run_id: str, steps: Sequence[AgentStep],
                calls: Sequence[AgentToolCall]) -> list[AgentStepEvent]:
    """The stored steps of run `run_id` (writing reply `message_id`) as the events the run last
    published for them, by index: a model step with its text, a tool step with its calls in
    order and the summaries' text (as the run stores it)."""
    by_step: dict[int, list[AgentToolCall]] = {}
    for call in sorted(calls, key=lambda c: (c.step_index, c.call_index)):
        by_step.setdefault(call.step_index, []).append(call)
    events = []
    for step in sorted(steps, key=lambda s: s.index):
        views = tuple(call_view(c) for c in by_step.get(step.index, ())) if step.kind == "tool" else ()
        events.append(AgentStepEvent(message_id, run_id, step.index, step.kind, step.status, step.text or "", views))
    return events


def run_view(stored: MessageRun) -> RunView:
    run = stored.run
    return RunView(run.id, run.status, run.ending,
                   tuple(step_events(run.message_id or "", run.id, stored.steps, stored.calls)))


class StepViews:
    """The stored runs of a page's replies, through `session_factory` (web routes hold one)."""

    def __init__(self, session_factory: sessionmaker[Session]) -> None:
        self._sessions = session_factory

    def of_messages(self, user_id: str, message_ids: Sequence[str]) -> dict[str, RunView]:
        """The runs of `user_id`'s replies among `message_ids` (another user's ids give
        nothing), by message id, read in one query (backend.agent.records.runs_of_messages).
        Blocking: call from a worker thread."""
        return run_views(self._sessions, user_id, message_ids)


def run_views(session_factory: sessionmaker[Session], user_id: str, message_ids: Sequence[str]) -> dict[str, RunView]:
    """StepViews.of_messages with an explicit session factory."""
    with session_factory() as db:
        return {message_id: run_view(run) for message_id, run in runs_of_messages(db, user_id, message_ids).items()}
