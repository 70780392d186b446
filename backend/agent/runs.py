"""An agent run: one chat turn as a loop of model calls and tool calls (issue 15).

:meth:`AgentRunner.run` calls the model with the allowed tools (tool_choice auto: text or one
``<tool_call>`` block, enforced by the engine's grammar), validates each call (a known tool,
allowed for this user by the deployment and role settings, arguments valid by `jsonschema`),
executes it in a worker thread or refuses it (the refusal is the call's result, so the model
reads why), adds the results as ``tool`` messages (backend.tool_prompt writes them as quoted,
delimited data), and calls the model again, until a plain-text answer, the budget
(backend.agent.budget), Stop (the `stop` event) or an error ends it.

Nothing a tool returns is ever read as control: the allowed tools, the budget and the settings
are fixed when the run starts; results only become prompt text.

A model step is backend.agent.model_step's, a tool step backend.agent.calls'; this module is the
loop, the plan of the "planned" policy and the run's ending.

Every run, step and call is stored (backend.agent.records). Idempotency: the key of a call is
"{run_id}:{step_index}:{call_index}"; a retried run (same run_id) reuses a finished model step's
text and a finished call's result, and a call cut between executing and recording runs again
with the same key, which a side-effecting tool honours. Each model step has a trace span
("agent.model_step": index, prompt_tokens, completion_tokens, status) with the engine's spans
under it (backend.tracing.record_engine; a step choosing among candidates has an
"agent.candidate" span per scored request instead), and each tool call one ("agent.tool_call"),
under the turn's trace. A model step that cannot start (PromptTooLong, GeneratorUnavailable, any
GenerationError) ends "error" with the reason in its record, and the run "error" with it as its
ending.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Collection, Sequence

from backend import tracing
from backend.agent.budget import LIMIT_STEPS, LIMIT_TOOL_CALLS, LIMIT_WALL_TIME, BudgetMeter, Budget
from backend.agent.calls import ToolSpecLike, ToolSteps, default_context
from backend.agent.deadline import STOPPED_ENDING, in_worker
from backend.agent.events import AgentStepEvent, StepLog
from backend.agent.intent import asked_names
from backend.agent.model_step import ModelSteps
from backend.agent.records import RunPlan, RunRecords
from backend.agent.routing import plan_tools
from backend.generator import ChatMessage, GenerationDone, GenerationParams, TextGenerator, ToolCall, ToolFunction

log = logging.getLogger(__name__)

POLICY_AUTO = "auto"
POLICY_ONE_CALL = "one_call"
POLICY_PLANNED = "planned"
POLICIES = (POLICY_PLANNED, POLICY_ONE_CALL, POLICY_AUTO)


@dataclass
class RunResult:
    """How a run ended. status: done | stopped | budget | error; text: the final answer (done)
    or what was written before the end; ending: the ending shown to the person (None: done);
    sources: citations the tools returned, in order."""

    run_id: str
    status: str
    text: str
    ending: str | None = None
    sources: list[Any] = field(default_factory=list)
    used: dict[str, float] = field(default_factory=dict)  # BudgetMeter.used()
    # The final events of the model steps this run generated, in order (retried steps reused
    # from the records have none): backend/chat/agent_turn.py takes the reply's timings from them.
    model_steps: list[GenerationDone] = field(default_factory=list)


class AgentRunner:
    """Runs agent turns for one deployment's tools.

    tools: every known tool (ToolSpec); allowed: the names this user may call (deployment +
    role settings, fixed for the run). clock: monotonic seconds for the wall-time budget.
    make_context(user_id, conversation_id, run_id, idempotency_key): the ToolContext.
    publish: gets every AgentStepEvent (the live reply's viewers); step_log keeps them for
    pages that attach later. policy: POLICY_AUTO (every model step may call tools or answer),
    POLICY_ONE_CALL (the first model step calls exactly one tool, picked greedily, and the
    next one answers with no tools offered) or POLICY_PLANNED (the program picks the turn's
    tools from the person's message, backend.agent.routing; the model writes one call to each,
    in order, greedily and offered only that tool, then the answer with no tools; a call whose
    arguments the program writes from the message, ToolSpec.planned_arguments, is a tool step
    with no model step before it; a turn that needs no tool is answered at once). The last two
    are for small models, which with "auto" answer in text and, offered tools again, repeat the
    results (docs/BENCHMARKS.md, "Agent runs with the real model"). user_text: the person's own
    latest message as typed (Turn.user_text, never the prompt's text with documents or tool
    results): a side-effecting tool is offered and executed
    only when it asks for it (backend.agent.intent); None asks for none.
    """

    def __init__(self, generator: TextGenerator, tools: Sequence[ToolSpecLike], allowed: Collection[str],
                 records: RunRecords, budget: Budget, *, clock: Callable[[], float] = time.monotonic,
                 make_context: Callable[[str, str, str, str], Any] = default_context,
                 publish: Callable[[AgentStepEvent], None] | None = None, step_log: StepLog | None = None,
                 policy: str = "auto", user_text: str | None = None) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown agent policy {policy!r} (one of {', '.join(POLICIES)})")
        self.generator = generator
        self.tools = {t.name: t for t in tools}  # the tool steps run this same dict
        self.allowed = frozenset(n for n in allowed if n in self.tools)
        # The side-effecting tools the person's own message asks for, fixed for the run.
        self.asked = asked_names(self.tools.values(), user_text)
        self.records = records
        self.budget = budget
        self.clock = clock
        self.make_context = make_context
        self._publish = publish
        self.step_log = step_log or StepLog()
        self.policy = policy
        self.user_text = user_text
        self.meter: BudgetMeter | None = None  # the latest run's (its usage, also when it is cancelled)
        self._tool_steps = ToolSteps(self.tools, self.allowed, self._intended, records, make_context, self._emit)
        self._model = ModelSteps(generator, self.tools, self.functions, records, self._emit,
                                 quote_facts=policy == POLICY_PLANNED)

    def functions(self) -> tuple[ToolFunction, ...]:
        """The tools the model is told about: the allowed ones, a side-effecting one only when the
        person's message asks for it."""
        return tuple(ToolFunction(t.name, t.description, json.dumps(t.parameters))
                     for name, t in self.tools.items() if name in self.allowed and self._intended(t))

    def _intended(self, spec: ToolSpecLike) -> bool:
        return not spec.side_effect or spec.name in self.asked

    def _emit(self, event: AgentStepEvent) -> None:
        self.step_log.record(event)
        if self._publish is not None:
            self._publish(event)

    async def run(self, *, conversation_id: str, user_id: str, message_id: str, messages: Sequence[ChatMessage],
                  params: GenerationParams, stop: asyncio.Event, run_id: str | None = None,
                  on_text: Callable[[str], Awaitable[None] | None] | None = None) -> RunResult:
        """Run the turn answering `messages`. on_text gets the final answer's text as it streams.
        Never raises for a tool's or the model's failure: the run ends "error" (stored)."""
        run_id = await asyncio.to_thread(self.records.start_run, conversation_id, user_id, message_id, run_id)
        meter = self.meter = BudgetMeter(self.budget, self.clock)
        started = time.monotonic()
        result = RunResult(run_id, "error", "", "the run failed")
        try:
            plan: RunPlan | None = RunPlan([], [])
            if self.policy == POLICY_PLANNED:
                with tracing.span("agent.plan") as span:
                    ended, plan = await in_worker(self._plan, run_id, user_id, stop=stop, meter=meter)
                    span.set_attribute("tools", ",".join(plan.tools if plan else ()))
                if plan is None:  # Stop or the wall time while the cues were read (an embedding)
                    result = self._cut(run_id, ended, meter, [])
            if plan is not None:
                result = await self._loop(run_id, conversation_id, user_id, message_id, list(messages), params,
                                          stop, meter, on_text, list(plan.tools), self._left_out_ending(plan))
        except asyncio.CancelledError:
            result = RunResult(run_id, "stopped", "", STOPPED_ENDING)
            await asyncio.shield(asyncio.to_thread(self._end, run_id, result, meter, started))
            raise
        except Exception:
            log.exception("agent run %s failed", run_id)
            result = RunResult(run_id, "error", "", "the run failed")
        await asyncio.to_thread(self._end, run_id, result, meter, started)
        result.used = meter.used()
        result.model_steps = self._model.finished.pop(run_id, [])
        return result

    def _end(self, run_id: str, result: RunResult, meter: BudgetMeter, started: float) -> None:
        self.records.end_run(run_id, result.status, result.ending, meter.used(), (time.monotonic() - started) * 1000)

    async def _loop(self, run_id: str, conversation_id: str, user_id: str, message_id: str,
                    messages: list[ChatMessage], params: GenerationParams, stop: asyncio.Event,
                    meter: BudgetMeter, on_text: Callable[[str], Awaitable[None] | None] | None,
                    plan: list[str], left_out: str | None) -> RunResult:
        """The steps of the run; `plan` (popped as its tools run) is the planned policy's tools,
        `left_out` the ending of a plan whose budget had no room for some of its tools."""
        index = 0
        sources: list[Any] = []
        first_new = len(messages)  # this run's tool results are appended after the turn's messages
        while True:
            if stop.is_set():
                return RunResult(run_id, "stopped", "", STOPPED_ENDING, sources)
            limit = meter.spent()
            if limit is not None:
                return RunResult(run_id, "budget", "", meter.ending(limit), sources)
            calls = self._written_call(run_id, index, plan)  # the program wrote this planned call
            choices: list[dict[str, Any]] | None = []
            if calls is None:
                ended, choices = await self._candidates(plan, messages[first_new:], stop, meter)
                if ended != "done":  # Stop or the wall time while they were written (an embedding)
                    return self._cut(run_id, ended, meter, sources)
                if not choices and self._searched_without_candidates(plan, messages[first_new:]):
                    plan.pop(0)  # nothing in the documents to calculate from: the answer says so
                    continue
            if calls is None:  # the model answers, writes the calls, or chooses one of `choices`
                meter.steps += 1
                offer, forced = self._step_tools(index == 0, plan)
                model = await self._model.run(run_id, message_id, index, messages, params, stop, meter, offer,
                                               on_text, forced, choices)
                if model.status != "done":
                    ending = (STOPPED_ENDING if model.status == "stopped"
                              else (model.reason or meter.ending(LIMIT_WALL_TIME)) if model.status == "budget"
                              else model.reason or "the model failed")
                    return RunResult(run_id, model.status, model.content, ending, sources)  # error: a bad block
                if model.calls is None:
                    if left_out is not None:  # answered without the tools the budget had no room for
                        return RunResult(run_id, "budget", model.content, left_out, sources)
                    return RunResult(run_id, "done", model.content, None, sources)
                calls = model.calls
                index += 1
                limit = meter.spent()
                if limit is not None:
                    return RunResult(run_id, "budget", "", meter.ending(limit), sources)
            if plan:
                plan.pop(0)
            messages.append(ChatMessage("assistant", "", tool_calls=tuple(calls)))
            meter.steps += 1
            status, ended = await self._tool_steps.run(run_id, conversation_id, user_id, message_id, index, calls,
                                                       messages, stop, meter, sources)
            if ended is not None:
                return RunResult(run_id, status, "", ended, sources)
            index += 1

    def _plan(self, run_id: str, user_id: str) -> RunPlan:
        """The "planned" policy's tools for this run: the stored plan of a retried run (so its
        calls keep their step indexes, hence their idempotency keys, and its ending names the same
        left-out tools), else the cues' choice (backend.agent.routing.plan_tools) cut to what the
        budget leaves room for (each tool one call and one step, two when the model writes its
        arguments, and one step for the answer), then stored. Blocking: run it in a worker thread
        (one cut by Stop runs on and stores the plan all the same, which a retry of the run would
        follow)."""
        stored = self.records.stored_plan(run_id)
        if stored is not None:
            return RunPlan([name for name in stored.tools if name in self.tools], stored.left_out)
        # a write asked for ("Save a note: ...") that the user's role may not make is planned all the
        # same: its call is refused (ToolSteps.check), and the answer says so (answer.refused_answer)
        offered = [f.name for f in self.functions()] + sorted(self.asked - self.allowed)
        chosen = plan_tools(self.tools.values(), offered, user_id, self.user_text)
        tools: list[str] = []
        steps = 1  # the answer
        for name in chosen[:self.budget.max_tool_calls]:
            fill = getattr(self.tools[name], "planned_arguments", None)
            cost = 1 if fill is not None and self.user_text and fill(self.user_text) is not None else 2
            if steps + cost > self.budget.max_steps:
                break
            tools.append(name)
            steps += cost
        plan = RunPlan(tools, chosen[len(tools):])
        self.records.store_plan(run_id, plan)
        return plan

    def _left_out_ending(self, plan: RunPlan) -> str | None:
        """The ending of a run whose budget had no room for some of the tools the cues chose: the
        answer is given without them, and the ending says so; None when nothing was left out."""
        if not plan.left_out:
            return None
        limit = LIMIT_TOOL_CALLS if len(plan.tools) >= self.budget.max_tool_calls else LIMIT_STEPS
        return f"{BudgetMeter(self.budget).ending(limit)} before {', '.join(plan.left_out)} could run"

    @staticmethod
    def _cut(run_id: str, ended: str, meter: BudgetMeter, sources: list[Any]) -> RunResult:
        """The run's result when Stop ("stopped") or the wall time ("budget") cut a wait."""
        if ended == "stopped":
            return RunResult(run_id, "stopped", "", STOPPED_ENDING, sources)
        return RunResult(run_id, "budget", "", meter.ending(LIMIT_WALL_TIME), sources)

    async def _candidates(self, plan: list[str], new: Sequence[ChatMessage], stop: asyncio.Event,
                          meter: BudgetMeter) -> tuple[str, list[dict[str, Any]] | None]:
        """("done", the arguments the next planned call may take), written out by its tool from
        the person's message and this run's results so far (ToolSpec.candidate_arguments: the
        expressions over a number a search found), for the model to choose among; [] when the
        tool writes none or cannot (it failed: logged). ("stopped" or "budget", None) when Stop
        or the wall time came first (the worker thread runs on, its arguments dropped)."""
        fill = getattr(self.tools[plan[0]], "candidate_arguments", None) if plan and self.user_text else None
        if fill is None:
            return "done", []
        results = [m.content for m in new if m.role == "tool"]
        with tracing.span("agent.candidates", tool=plan[0]) as span:  # the sentences' embedding, in the waterfall
            try:
                ended, written = await in_worker(fill, self.user_text, results, stop=stop, meter=meter)
            except Exception:
                log.exception("writing the candidate arguments of %s failed", plan[0])
                span.set_attribute("error", "writing the candidates failed")
                return "done", []
            span.set_attribute("status", ended)
            span.set_attribute("candidates", len(written or ()))
        if ended != "done":
            return ended, None
        return ended, list(written or ())  # a tool that wrote None wrote none

    def _searched_without_candidates(self, plan: list[str], new: Sequence[ChatMessage]) -> bool:
        """Whether the next planned tool writes candidate arguments from the documents
        (ToolSpec.candidate_arguments: the calculator) and this run searched them (a result of a
        tool declaring ToolSpec.answer_quote) but found no number to calculate with: the planned
        call is then dropped and the answer quotes the closest passage, saying the amount was not
        worked out (backend.agent.answer.UNCALCULATED). Left to write the call, SmolLM2-135M
        invented the numbers: "how much for 2 duvets and a rug?" over a price list that prices
        neither became "2*3.5" (new-user run, 2026-12-04)."""
        if self.policy != POLICY_PLANNED or not plan:
            return False
        if getattr(self.tools[plan[0]], "candidate_arguments", None) is None:
            return False
        return any(m.role == "tool" and getattr(self.tools.get(m.name), "answer_quote", None) is not None
                   for m in new)

    def _written_call(self, run_id: str, index: int, plan: list[str]) -> list[ToolCall] | None:
        """[The next planned call] when its tool can write its arguments from the person's message
        (ToolSpec.planned_arguments: the search's query, a typed expression), else None (the
        model writes them, or chooses among the candidates, a model step either way, so a retried
        run keeps its step indexes). Its id is derived from the run and step, the same on a retry."""
        if not plan or not self.user_text:
            return None
        fill = getattr(self.tools[plan[0]], "planned_arguments", None)
        arguments = fill(self.user_text) if fill is not None else None
        if arguments is None and plan[0] not in self.allowed:
            arguments = {}  # a write the user may not make (_plan): refused before its arguments are read
        if arguments is None:
            return None
        digest = hashlib.sha256(f"{run_id}:{index}".encode()).hexdigest()[:24]
        return [ToolCall(f"call_{digest}", plan[0], json.dumps(arguments, ensure_ascii=False))]

    def _step_tools(self, first: bool, plan: list[str]) -> tuple[tuple[str, ...] | None, bool]:
        """(the tool names a model step is offered: None every allowed one, () none, so it
        answers; whether it must call one) by the policy: auto (None, False); one_call: the
        first step (None, True), later ((), False); planned: the next planned tool ((name,),
        True), then ((), False)."""
        if self.policy == POLICY_ONE_CALL:
            return (None, True) if first else ((), False)
        if self.policy == POLICY_PLANNED:
            return ((plan[0],), True) if plan else ((), False)
        return None, False
