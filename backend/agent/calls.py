"""The tool steps of an agent run (issue 15): each call validated (a known tool, allowed for this
user, asked for when it has a side effect, arguments valid by `jsonschema`), executed in a worker
thread or refused (the refusal is the call's result, so the model reads why), recorded under its
idempotency key "{run_id}:{step_index}:{call_index}", and reused from the records on a retry: a
finished call's stored result is returned instead of running the tool again, and a call cut
between executing and recording runs again with the same key, which a side-effecting tool honours.
A key that holds another tool's record is never run (a retried run whose steps differ).

backend.agent.runs.AgentRunner owns the loop, backend.agent.model_step the model steps; :class:`ToolSteps` runs one
tool step for it. Results go back as `tool` messages (backend.tool_prompt quotes them as data)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence

import jsonschema

from backend import tracing
from backend.agent.budget import LIMIT_TOOL_CALLS, LIMIT_WALL_TIME, BudgetMeter
from backend.agent.deadline import STOPPED_ENDING, in_worker
from backend.agent.events import AgentStepEvent, CallView
from backend.agent.records import RunRecords
from backend.errors import DomainError
from backend.generator import ChatMessage, ToolCall

# How the result of a call to a tool the user's role may not use begins (ToolSteps.check): the
# answer after it says so (backend.agent.answer.refused_answer).
NOT_ALLOWED = "refused: the tool"

log = logging.getLogger(__name__)

TOOL_FAILED = "the tool failed"


class ToolSpecLike(Protocol):
    """backend.agent.tools.ToolSpec as the loop uses it."""

    name: str
    description: str
    parameters: dict[str, Any]
    permission: str
    side_effect: bool
    run: Callable[[Any, dict[str, Any]], Any]
    intent_words: tuple[str, ...]


@dataclass
class Outcome:
    """What one call came to. status: ok | refused | invalid | error (stored) | stopped | budget (the
    wait ended first: not stored); content: what the model reads; summary: the page's line."""

    status: str
    content: str
    summary: str = ""
    sources: tuple[Any, ...] = ()
    data: dict[str, Any] | None = None

    def stored(self) -> dict[str, Any]:
        return {"content": self.content, "summary": self.summary, "sources": list(self.sources), "data": self.data}


def default_context(user_id: str, conversation_id: str, run_id: str, key: str, zone: str | None = None,
                    request: str = "") -> Any:
    """A tool call's ToolContext: now in UTC, `zone` the person's time zone (None: UTC), `request`
    the id of the person's message the run answers."""
    from datetime import datetime, timezone

    from backend.agent.tools import ToolContext  # the tools' own module (issue 15)

    return ToolContext(user_id=user_id, conversation_id=conversation_id, run_id=run_id, idempotency_key=key,
                       now=datetime.now(timezone.utc), timezone=zone or "UTC", request_id=request)


class ToolSteps:
    """Runs tool steps for one AgentRunner. tools: every known tool by name; allowed: the names
    this user may call; intended(spec): whether the person's message asks for a side-effecting
    tool (backend.agent.intent); make_context(user_id, conversation_id, run_id, key): the
    ToolContext; emit: gets each step's AgentStepEvent."""

    def __init__(self, tools: Mapping[str, ToolSpecLike], allowed: frozenset[str],
                 intended: Callable[[ToolSpecLike], bool], records: RunRecords,
                 make_context: Callable[[str, str, str, str], Any], emit: Callable[[AgentStepEvent], None]) -> None:
        self.tools = tools
        self.allowed = allowed
        self.intended = intended
        self.records = records
        self.make_context = make_context
        self._emit = emit

    async def run(self, run_id: str, conversation_id: str, user_id: str, message_id: str, index: int,
                         calls: list[ToolCall], messages: list[ChatMessage], stop: asyncio.Event,
                         meter: BudgetMeter, sources: list[Any]) -> tuple[str, str | None]:
        await asyncio.to_thread(self.records.start_step, run_id, index, "tool")
        t0 = time.monotonic()
        views: list[CallView] = [CallView(c.name, c.arguments, "running") for c in calls]
        self._emit(AgentStepEvent(message_id, run_id, index, "tool", "running", calls=tuple(views)))
        ended: tuple[str, str | None] = ("done", None)
        cut = False  # the wall time ran out during or before a call of this step
        for call_index, call in enumerate(calls):
            if meter.calls_left() == 0:
                ended = ("budget", meter.ending(LIMIT_TOOL_CALLS))
                views = views[:call_index]
                break
            if meter.remaining_s() <= 0:
                ended, cut = ("budget", meter.ending(LIMIT_WALL_TIME)), True
                views = views[:call_index]
                break
            meter.tool_calls += 1
            key = f"{run_id}:{index}:{call_index}"
            with tracing.span("agent.tool_call", tool=call.name, idempotency_key=key) as span:
                outcome = await self.call(run_id, conversation_id, user_id, index, call_index, key, call, stop,
                                                meter)
                span.set_attribute("status", outcome.status)
            views[call_index] = CallView(call.name, call.arguments, outcome.status, outcome.summary, outcome.content)
            if outcome.status == "stopped":
                ended = ("stopped", STOPPED_ENDING)
                break
            if outcome.status == "budget":  # the wall time ran out while the tool ran (it runs on)
                ended, cut = ("budget", meter.ending(LIMIT_WALL_TIME)), True
                views[call_index] = CallView(call.name, call.arguments, "stopped", "stopped: out of time")
                break
            merge_sources(sources, outcome.sources)
            messages.append(ChatMessage("tool", outcome.content, tool_call_id=call.id, name=call.name))
        status = "stopped" if ended[0] == "stopped" or cut else "done"
        summary = "\n".join(v.summary or f"{v.tool}: {v.status}" for v in views)
        await asyncio.to_thread(self.records.end_step, run_id, index, status, summary, (time.monotonic() - t0) * 1000)
        self._emit(AgentStepEvent(message_id, run_id, index, "tool", status, summary, tuple(views)))
        if ended[1] is None and stop.is_set():
            return "stopped", STOPPED_ENDING
        return ended

    def check(self, call: ToolCall) -> tuple[Outcome | None, dict[str, Any]]:
        """A refusal or an invalid-arguments outcome, or (None, the arguments)."""
        spec = self.tools.get(call.name)
        if spec is None:
            return Outcome("invalid", f"error: there is no tool named {call.name!r}"), {}
        if call.name not in self.allowed:
            return Outcome("refused", f"{NOT_ALLOWED} {call.name!r} is not allowed for this user here; "
                                       "answer without it"), {}
        if not self.intended(spec):
            return Outcome("refused", f"refused: the tool {call.name!r} changes the user's data and the user's "
                                       "message did not ask for that; answer without it"), {}
        try:
            arguments = json.loads(call.arguments)
        except ValueError:
            return Outcome("invalid", f"error: the arguments of {call.name!r} are not JSON"), {}
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(spec.parameters).iter_errors(arguments))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "arguments"
            return Outcome("invalid", f"error: invalid arguments for {call.name!r} at {where}: {error.message}"), {}
        return None, arguments

    async def call(self, run_id: str, conversation_id: str, user_id: str, index: int, call_index: int,
                         key: str, call: ToolCall, stop: asyncio.Event, meter: BudgetMeter | None = None) -> Outcome:
        """Run one call (or reuse its stored result). Ends early with status "stopped" (Stop) or
        "budget" (the wall time ran out, with `meter`); the worker thread then runs on and still
        records its result under `key`, so a retried step reuses it."""
        stored = await asyncio.to_thread(self.records.stored_call, key)
        if stored is not None and stored.tool and stored.tool != call.name:
            # A retried run whose step differs from its record: never run a call under another's key.
            return Outcome("error", f"error: this step's record is a call to {stored.tool!r}, not {call.name!r}",
                            f"{call.name} not run")
        if stored is not None and stored.status != "running" and stored.result is not None:
            r = stored.result
            return Outcome(stored.status, r.get("content", ""), r.get("summary", ""), tuple(r.get("sources") or ()),
                            r.get("data"))
        # Stop, or the wall time spent during the reads above: the tool must not start at all.
        if stop.is_set():
            return Outcome("stopped", "", "stopped")
        if meter is not None and meter.remaining_s() <= 0:
            return Outcome("budget", "", "budget")
        refusal, arguments = self.check(call)
        await asyncio.to_thread(self.records.begin_call, run_id, index, call_index, key, call.name, call.arguments)
        if refusal is not None:
            await asyncio.to_thread(self.records.end_call, key, refusal.status, refusal.stored(), 0.0)
            return refusal
        spec = self.tools[call.name]
        context = self.make_context(user_id, conversation_id, run_id, key)

        def execute() -> Outcome:
            t0 = time.monotonic()
            try:
                value = spec.run(context, arguments)
                cited = tuple(citation_of(i + 1, source) for i, source in enumerate(value.sources or ()))
                outcome = Outcome("ok", value.content, value.summary, cited, value.data)
            except DomainError as exc:  # ToolError: safe to show and to give the model
                outcome = Outcome("error", f"error: {exc.message}", f"{call.name} failed")
            except Exception:
                log.exception("tool %s failed (call %s)", call.name, key)
                outcome = Outcome("error", f"error: {TOOL_FAILED}", f"{call.name} failed")
            # Recorded in the worker thread itself: a Stop while the tool runs still stores its result.
            self.records.end_call(key, outcome.status, outcome.stored(), (time.monotonic() - t0) * 1000)
            return outcome

        ended, outcome = await in_worker(execute, stop=stop, meter=meter)
        if ended != "done":
            return Outcome(ended, "", ended)
        return outcome


def citation_of(number: int, source: Any) -> Any:
    """A tool's source as a stored citation (backend.rag.sources.citation), numbered as the
    tool numbered it in its result; a dict passes as it is."""
    if isinstance(source, dict):
        return source
    from backend.rag.sources import citation

    return citation(number, source)


def merge_sources(sources: list[Any], new: Sequence[Any]) -> None:
    """Add a call's citations; a number cited again (a later search) replaces the earlier one,
    so the answer's [n] means the passage the model read last under that number."""
    for item in new:
        number = item.get("n") if isinstance(item, dict) else None
        for i, old in enumerate(sources):
            if number is not None and isinstance(old, dict) and old.get("n") == number:
                sources[i] = item
                break
        else:
            sources.append(item)
