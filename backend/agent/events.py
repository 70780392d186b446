"""What a page is told while an agent run goes: one :class:`AgentStepEvent` when a step starts
and one when it ends (WebSocket frame type "agent_step", docs/INTERFACES.md).

A tool step's event lists its calls: tool name, the arguments' JSON text, status
(ok | refused | invalid | error | running), the result's one-line summary ("Searched your
documents — 3 passages") and its content. Everything here is text for the page to escape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FRAME_TYPE = "agent_step"


@dataclass(frozen=True)
class CallView:
    tool: str
    arguments: str
    status: str
    summary: str = ""
    content: str = ""


@dataclass(frozen=True)
class AgentStepEvent:
    """message_id: the reply the run writes. index: the step's index in the run. kind: model |
    tool. status: running | done | stopped | error. text: a model step's text (its calls' block
    or the answer)."""

    message_id: str
    run_id: str
    index: int
    kind: str
    status: str
    text: str = ""
    calls: tuple[CallView, ...] = field(default_factory=tuple)

    def frame(self) -> dict[str, Any]:
        return {"type": FRAME_TYPE, "message_id": self.message_id, "run_id": self.run_id, "index": self.index,
                "kind": self.kind, "status": self.status, "text": self.text,
                "calls": [{"tool": c.tool, "arguments": c.arguments, "status": c.status, "summary": c.summary,
                           "content": c.content} for c in self.calls]}


class StepLog:
    """The steps' latest events, by index: what a page attaching mid-run is given first."""

    def __init__(self) -> None:
        self._latest: dict[int, AgentStepEvent] = {}

    def record(self, event: AgentStepEvent) -> None:
        self._latest[event.index] = event

    def replay(self) -> list[AgentStepEvent]:
        return [self._latest[i] for i in sorted(self._latest)]


def _text(data: dict[str, Any], name: str) -> str:
    value = data.get(name, "")
    if not isinstance(value, str):
        raise ValueError(f"agent step field {name!r} is not a string")
    return value


def step_from_frame(data: object) -> AgentStepEvent:
    """The event of a frame made by :meth:`AgentStepEvent.frame` (read back from the reply's
    relay stream, backend/cluster/relay.py). Raises ValueError when `data` is not such a frame."""
    if not isinstance(data, dict) or data.get("type") != FRAME_TYPE:
        raise ValueError("not an agent_step frame")
    index, calls = data.get("index"), data.get("calls", [])
    if isinstance(index, bool) or not isinstance(index, int) or not isinstance(calls, list):
        raise ValueError("agent_step frame: index must be an integer and calls a list")
    views = []
    for call in calls:
        if not isinstance(call, dict):
            raise ValueError("agent_step frame: a call is not an object")
        views.append(CallView(_text(call, "tool"), _text(call, "arguments"), _text(call, "status"),
                              _text(call, "summary"), _text(call, "content")))
    return AgentStepEvent(_text(data, "message_id"), _text(data, "run_id"), index, _text(data, "kind"),
                          _text(data, "status"), _text(data, "text"), tuple(views))
