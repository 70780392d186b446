"""A chat reply run as an agent (issue 15): the turn's conversation has tools on (its ⚙
setting) and the admin lets this user's role use tools (RuntimeSettings.agent_tools).

:class:`AgentTurns` runs the reply with backend.agent.runs.AgentRunner instead of one
generation: the final answer's text streams into the LiveReply as deltas, each step is
published to its viewers (``agent_step`` frames; pages attaching later get the steps first),
the tools' citations become the reply's sources, and a budget's ending becomes the reply's
notice (finish_reason "abort", status "complete", error = the ending: "Stopped: <ending>" under
the reply, live and after a reload); the reply's text stays the model's words only, so the
ending never enters a later turn's prompt. The reply's usage is the sum over its model steps
of prompt and of completion tokens, in the done frame, the stored message and (through the
reply's admitted generation, once) the usage records that the daily token limit sums. Stop from any page sets the run's stop event (ChatService._stop_here);
the reply's admitted generation holds the user's lease and queue ticket for the whole run.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from functools import partial
import json
import re
import time
from typing import Any, Callable, Sequence

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from backend.agent.access import allowed_names, budget_of, tools_enabled
from backend.agent.calls import default_context
from backend.agent.events import AgentStepEvent
from backend.agent.follow_up import follow_up_question
from backend.agent.intent import asked_names
from backend.agent.records import RunRecords
from backend.agent.model_step import CALL_MAX_TOKENS
from backend.agent.runs import POLICY_AUTO, AgentRunner, RunResult
from backend.agent.step_views import run_views
from backend.chat import turns
from backend.chat.replies import REASON_SERVER_ABORTED, LiveReply
from backend.chat.turns import Ending
from backend import tracing
from backend.chat.planning import TurnPlanner
from backend.generator import (FINISH_ABORT, FINISH_ERROR, FINISH_LENGTH, FINISH_STOP, GenerationDone, GenerationError, TextGenerator,
                               count_text)
from backend.models import Message, User
from backend.runtime_settings import RuntimeSettings

REASON_RUN_FAILED = "the agent run failed"


class AgentTurns:
    """Agent replies for ChatService.

    tools: the deployment's tools (a ToolRegistry's specs(), or a list of ToolSpec).
    clock: monotonic seconds for the runs' wall-time budget and the flushes.
    """

    def __init__(self, session_factory: sessionmaker[Session], generator: TextGenerator,
                 tools: Callable[[], Sequence[Any]] | Sequence[Any], flush_interval_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._sessions = session_factory
        self._generator = generator
        self._tools = tools
        self._flush_interval_s = flush_interval_s
        self._clock = clock
        self.records = RunRecords(session_factory)
        self._planner = TurnPlanner(generator, None, False)  # counts tokens only: fit_with_tools

    def specs(self) -> list[Any]:
        return list(self._tools() if callable(self._tools) else self._tools)

    def _role(self, user_id: str) -> str:
        with self._sessions() as db:
            return db.scalar(select(User.role).where(User.id == user_id)) or "user"

    async def runner_for(self, reply: LiveReply, settings: RuntimeSettings) -> AgentRunner | None:
        """The runner of this reply, or None when it is a plain reply (tools off for the
        conversation, the deployment or the user's role)."""
        if not reply.turn.use_tools or reply.turn.action == "continue":
            return None
        if getattr(reply.turn, "prompt_passages", None):
            # opened as a plain reply, its prompt holding "Use my documents"' passages (tools were off
            # for the role when it opened, backend/chat/opening.py, and the admin has since turned them
            # on): it stays one, rather than search the same documents again as a step
            return None
        role = await asyncio.to_thread(self._role, reply.user_id)
        if not tools_enabled(settings, role):
            return None
        specs = self.specs()
        allowed = allowed_names(specs, settings, role)
        # "and for 6?" after "How much for 4 budget 16 inch tyres fitted?": the tools read the whole
        # question it asks (backend.agent.follow_up); the model's prompt keeps the conversation as typed
        earlier = [m.content for m in getattr(reply.turn, "messages", [])[:-1] if m.role == "user"]
        asked = follow_up_question(reply.turn.user_text, earlier) or reply.turn.user_text
        if asked_names(specs, reply.turn.user_text) or asked_names(specs, asked):
            # a side effect is asked for, or would be by the words of an earlier message ("Save a note: ..."
            # then "and for 6?"): the run reads the message as typed (review: a second note was saved)
            asked = reply.turn.user_text
        zone = getattr(reply.turn, "timezone", None)  # the browser's: "what time is it?" is answered in it
        return AgentRunner(self._generator, specs, allowed, self.records,
                           budget_of(settings, reply.turn.agent_budget),  # the conversation's, capped
                           clock=self._clock, publish=reply.publish_step, step_log=reply.steps,
                           make_context=partial(default_context, zone=zone,
                                                request=getattr(reply.turn, "user_message_id", "") or ""),
                           policy=settings.agent_policy, user_text=asked)

    async def run(self, reply: LiveReply, runner: AgentRunner) -> Ending:
        """Run the reply; returns its ending (the service stores it and tells the viewers)."""
        turn = reply.turn
        assert turn.params is not None
        reply.stop_event = asyncio.Event()
        generation = reply.generation
        if generation is not None:  # access ended, shutdown, nobody watching: the run stops too
            generation.run_outside(turn.conversation_id, reply.stop_event.set)
        # The turn's prompt was planned without the tools (backend/chat/opening.py): fitted
        # again counting them, older turns dropped as for a plain reply; a message too long
        # even alone ends the reply with the reason, before any run is recorded.
        reserve = turn.params.max_tokens
        if runner.policy != POLICY_AUTO:
            reserve = max(reserve, CALL_MAX_TOKENS)  # a forced call step's least room (backend.agent.model_step)
        # The step after a tool reads the question again (backend.tool_prompt restates it before
        # the results): a message that fits once but not twice would fail there, after its tools ran.
        if runner.user_text and runner.user_text != turn.user_text and turn.messages and turn.messages[-1].role == "user":
            # a follow-up ("and for 6?") is asked of the run as the whole question it asks (runner_for),
            # fitted to the window as such
            turn.messages = turn.messages[:-1] + [replace(turn.messages[-1], content=runner.user_text)]
        # the earlier answers without their citations: the model copied "From notes.txt: ... [1]" into an answer of
        # a turn that searched nothing (new-user pass), a citation of no passage
        turn.messages = [replace(m, content=uncited(m.content)) if m.role == "assistant" and i < len(turn.messages) - 1
                         else m for i, m in enumerate(turn.messages)]
        restated = await asyncio.to_thread(count_text, self._generator, runner.user_text or turn.user_text)
        reserve += restated
        with tracing.span("agent.prompt_fit", planned_messages=len(turn.messages)) as span:
            try:
                fitted = await asyncio.to_thread(self._planner.fit_with_tools, turn.messages, runner.functions(),
                                                 reserve, restated)
            except GenerationError as exc:
                span.set_attribute("error", str(exc))
                done = GenerationDone(FINISH_ERROR, error=str(exc) or exc.code, error_code=exc.code)
                if generation is not None:
                    generation.account_outside(done)
                return Ending(FINISH_ERROR, "error", str(exc) or REASON_RUN_FAILED, done)
            span.set_attribute("kept_messages", len(fitted))
        turn.messages = fitted
        last_flush = [self._clock()]

        async def on_text(text: str) -> None:
            delta = reply.feed(text)
            if self._clock() - last_flush[0] >= self._flush_interval_s:
                last_flush[0] = self._clock()
                await asyncio.to_thread(turns.flush, self._sessions, reply.message_id, reply.text,
                                        reply.markdown.html)
            reply.publish(delta)

        started = time.monotonic()  # the reply's total time (not self._clock: tests pass a fake one)
        try:
            result = await runner.run(conversation_id=turn.conversation_id, user_id=reply.user_id,
                                      message_id=reply.message_id, messages=turn.messages, params=turn.params,
                                      stop=reply.stop_event, on_text=on_text)
        except asyncio.CancelledError:  # cancelled outright (shutdown past its wait): the steps that ended count
            if generation is not None and runner.meter is not None:
                cut = RunResult("", "stopped", "", used=runner.meter.used())
                generation.account_outside(AgentTurns.usage(cut, FINISH_ABORT, _ms_since(started)))
            raise
        e2e_ms = _ms_since(started)
        if result.sources:
            # (a reply that confirms a write, "Saved to your notes: ...", cites nothing it searched: second new-user
            # pass, the note's reply listed the passages its search found)
            wrote = await asyncio.to_thread(self._ended_on_a_write, result.run_id)
            turn.sources = cited_sources(result.sources, result.text, all_when_none=not wrote)
            await asyncio.to_thread(self._store_sources, reply.message_id, turn.sources)
        ending = _ending(result, generation.ended_reason if generation is not None else None, e2e_ms)
        if generation is not None:
            generation.account_outside(ending.done)  # type: ignore[arg-type]
        return ending

    @staticmethod
    def usage(result: RunResult, finish_reason: str, e2e_ms: float | None = None) -> GenerationDone:
        """The run's final event for the reply: prompt and completion tokens each summed over
        its model steps (BudgetMeter.used()); timings as a plain reply's footer shows them:
        queue_ms and ttft_ms of the run's first model step (how long the engine kept the person
        waiting before it started, and its prompt's prefill: the tool steps' time is in the
        trace, not here), decode_tokens_per_s of its last model step (the answer when it is
        done). None where no step generated (all reused from the records, or none started).
        e2e_ms: the run's wall time in milliseconds (AgentRunner.run, call to return), the
        reply's total time (Message.total_ms) and, through account_outside, the request's one
        e2e observation in the metrics (the model steps record none of their own); None when
        not measured."""
        used = result.used
        steps = result.model_steps
        first = steps[0] if steps else GenerationDone(finish_reason)
        last = steps[-1] if steps else GenerationDone(finish_reason)
        return GenerationDone(finish_reason, int(used.get("prompt_tokens", 0)), int(used.get("completion_tokens", 0)),
                              queue_ms=first.queue_ms, ttft_ms=first.ttft_ms,
                              decode_tokens_per_s=last.decode_tokens_per_s, e2e_ms=e2e_ms)

    def stored_steps(self, user_id: str, message_id: str) -> list[AgentStepEvent]:
        """The steps of `user_id`'s reply `message_id` as its run last published them (none for
        a plain reply or another user's). Blocking: call from a worker thread."""
        view = run_views(self._sessions, user_id, [message_id]).get(message_id)
        return list(view.steps) if view is not None else []

    def _ended_on_a_write(self, run_id: str) -> bool:
        """Whether the run's last tool call was of a tool with a side effect (save_note)."""
        calls = self.records.calls(run_id)
        spec = {s.name: s for s in self.specs()}.get(calls[-1].tool) if calls else None
        return bool(spec is not None and spec.side_effect)

    def _store_sources(self, message_id: str, sources: list[Any]) -> None:
        with self._sessions() as db:
            db.execute(update(Message).where(Message.id == message_id).values(sources=json.dumps(sources)))
            db.commit()


# A citation marker of an answer: "[2]", "[1, 3]".
_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


# The program's quote of a passage: "From pricelist.md: " before the sentence (a document's name, with its
# extension: not "From Monday to Friday: we open at 9.", review).
_QUOTED_FROM = re.compile(r"^From [^\n:]{1,120}\.[A-Za-z0-9]{1,5}: ")
# A citation marker after a space, ending its clause: "... Kowalczyk. [1]", "from your documents [1]." (not
# "a[1], a[0] = a[0], a[1]", review).
_CITED = re.compile(r"[ \t]+\[\d+(?:\s*,\s*\d+)*\](?=[\s.,;:!?]|$)")


def uncited(answer: str) -> str:
    """An earlier answer as the next prompt holds it: without its citation markers ("[2]") and the
    "From <document>: " a quote opens with (the sources it cited are not in that prompt)."""
    return _CITED.sub("", _QUOTED_FROM.sub("", answer)).strip()


def cited_sources(sources: Sequence[Any], answer: str, all_when_none: bool = True) -> list[Any]:
    """The sources an agent run's `answer` cites by number ("[2]", "[1, 3]"), in order; when it
    cites none of them, all of them (the passages it read), or none when not `all_when_none` (an
    answer confirming a write). A search returns several passages,
    often of other businesses' documents; listing them all under an answer quoting one was noise
    (new-user pass: a tyre question listed a bakery's prices and a yoga studio's)."""
    cited = {int(n) for m in _CITATION.finditer(answer) for n in m.group(1).split(",")}
    kept = [s for s in sources if isinstance(s, dict) and s.get("n") in cited]
    return kept or (list(sources) if all_when_none else [])


def _ms_since(started: float) -> float:
    """Milliseconds from `started` (time.monotonic() seconds) to now."""
    return (time.monotonic() - started) * 1000.0


def _ending(result: RunResult, ended_reason: str | None, e2e_ms: float | None = None) -> Ending:
    """The reply's Ending for a run's result. ended_reason: why the server ended the reply's
    generation (then the reply is "interrupted"), else None. e2e_ms: the run's wall time in
    milliseconds (AgentTurns.usage)."""
    if result.status == "done":
        # the answer cut at max_tokens is "length", as a plain reply's: "Cut at the token limit", Continue
        answer = result.model_steps[-1] if result.model_steps else None
        finish = FINISH_LENGTH if answer is not None and answer.finish_reason == FINISH_LENGTH else FINISH_STOP
        return Ending(finish, "complete", None, AgentTurns.usage(result, finish, e2e_ms))
    done = AgentTurns.usage(result, FINISH_ERROR if result.status not in ("budget", "stopped") else FINISH_ABORT,
                            e2e_ms)
    if result.status == "budget":  # the notice under the partial answer, never its text
        return Ending(FINISH_ABORT, "complete", result.ending, done)
    if result.status == "stopped":
        if ended_reason is not None:
            return Ending(FINISH_ABORT, "interrupted", ended_reason or REASON_SERVER_ABORTED, done)
        return Ending(FINISH_ABORT, "complete", None, done)
    return Ending(FINISH_ERROR, "error", result.ending or REASON_RUN_FAILED, done)
