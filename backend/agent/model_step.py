"""The model steps of agent runs (issue 15): one call of the model within a run, as
backend.agent.runs.AgentRunner's loop asks for it, next to backend.agent.calls' tool steps.

A step offered tools writes one ``<tool_call>`` block (the engine's grammar: the offered tools'
schemas; forced, it must call one and is decoded greedily), or chooses one of the calls the
program wrote out (backend.agent.choice); a step offered none is the answer, words only, and
after a calculation it states the value found (backend.agent.answer); a fact asked of the
documents may be answered by a sentence of the search's passages, quoted by the program with no
engine request (quote_facts). A finished step of a
retried run is reused from its record, so a run retried after a crash never asks the model again
for a step it has. Stop and the wall time (backend.agent.deadline.race) abort the engine request;
the step's tokens go into the run's budget (from its final event, or counted from its prompt and
text when it was cut before one) and onto its trace span ("agent.model_step"), with the engine's
spans under it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, replace
from typing import Any, Awaitable, Callable, Mapping, Sequence

from backend import tracing
from backend.agent.answer import (ANSWER_PATTERN, calculated_answer, confirmed_answer, failed_calculation_answer, refused_answer, last_step_only, quoted_answer, stated_value,
                                  stating_pattern)
from backend.agent.budget import LIMIT_TOKENS, BudgetMeter
from backend.agent.choice import choose
from backend.agent.deadline import race
from backend.agent.events import AgentStepEvent
from backend.agent.records import RunRecords
from backend.agent.tools.passages import LABEL_SEPARATOR
from backend.generator import count_text
from backend.generator import prepare as prepare_generation
from backend.generator import (ChatMessage, GenerationDone, GenerationError, GenerationParams, TextDelta,
                               TextGenerator, ToolCall, ToolFunction)
from backend.output_constraint import TOOL_CALL_BEGIN, OutputConstraint, ToolCallFormat
from backend.tool_prompt import call_block
from backend.tool_call_parser import ToolCallStream

log = logging.getLogger(__name__)

# The least max_tokens of a forced call step (one_call, planned): room for one call whose
# arguments the tools' schemas bound (calculator: 100 characters, search_documents: 200).
CALL_MAX_TOKENS = 256
# The run's ending when max_tokens cut the model's tool-call block (it cannot be read).
CUT_CALL_ENDING = "the model's tool call was cut off at the token limit"


def _failed_or_quoted(tools: Any, messages: Any) -> str | None:
    """The program's answer after a result with no value to state: a calculation's error said
    plainly (failed_calculation_answer), a saved note confirmed (confirmed_answer), a write the
    user may not make refused (refused_answer), else a search's sentence quoted (quoted_answer)."""
    return (failed_calculation_answer(tools, messages) or confirmed_answer(tools, messages)
            or refused_answer(tools, messages) or quoted_answer(tools, messages))


class ModelSteps:
    """Runs the model steps of one AgentRunner's runs.

    tools: the runner's tools by name (a call block names one of them; stated_value reads the
    calculator's results); functions(): the tools the model may be told about, all of them
    (ToolFunction); records: the runs' records; emit: gets each step's AgentStepEvent.
    quote_facts: a fact asked of the documents is answered by the search's sentence that states
    it, quoted with its citation (backend.agent.answer.quoted_answer; the "planned" policy's, for
    small models), not by the model.
    finished: run id -> the final events of the model steps it generated, in order (the runner
    takes them when the run ends).
    """

    def __init__(self, generator: TextGenerator, tools: Mapping[str, Any],
                 functions: Callable[[], tuple[ToolFunction, ...]], records: RunRecords,
                 emit: Callable[[AgentStepEvent], None], *, quote_facts: bool = False) -> None:
        self.generator = generator
        self.quote_facts = quote_facts
        self.tools = tools
        self.functions = functions
        self.records = records
        self.emit = emit
        self.finished: dict[str, list[GenerationDone]] = {}

    async def run(self, run_id: str, message_id: str, index: int, messages: list[ChatMessage],
                  params: GenerationParams, stop: asyncio.Event, meter: BudgetMeter,
                  offer: tuple[str, ...] | None,
                  on_text: Callable[[str], Awaitable[None] | None] | None, forced: bool,
                  choices: Sequence[dict[str, Any]] = ()) -> ModelOutcome:
        """Step `index` of run `run_id`: offered the tools named in `offer` (None: every one the
        runner may offer; (): none, so it answers), forced to call one when `forced`, or choosing
        among `choices` (argument dicts of the one offered tool). on_text gets the answer's text
        as it streams. Never raises for the model's failure: the outcome says it."""
        stored = await asyncio.to_thread(self.records.stored_step, run_id, index)
        answering = offer == ()  # no tools offered, none read: the answer
        prompt = messages
        parser = ToolCallStream([] if answering else list(self.tools))
        if stored is not None and stored.kind == "model" and stored.status == "done":  # a retried run
            meter.tokens += stored.tokens or 0
            released = parser.feed(stored.text)
            tail = parser.finish()
            if parser.calls is None and on_text is not None:
                await call_back(on_text, released.content + tail.content)
            return ModelOutcome("done", stored.text if parser.calls is None else "", parser.calls)
        await asyncio.to_thread(self.records.start_step, run_id, index, "model")
        self.emit(AgentStepEvent(message_id, run_id, index, "model", "running"))
        t0 = time.monotonic()
        tokens_before = meter.tokens
        functions = () if answering else tuple(f for f in self.functions() if offer is None or f.name in offer)
        step_params = replace(params, tools=functions, max_tokens=max(1, min(params.max_tokens, meter.tokens_left())))
        if answering:  # a passage's header line echoed ("… (version 1) — passage 90c1…:10") ends the answer there
            step_params = replace(step_params, stop=tuple(step_params.stop) + (LABEL_SEPARATOR,))
        quote = False  # whether the program may write the answer (a sentence of the documents, quoted)
        program_answer = quoted_answer
        if answering and index > 0 and params.structured_output is None:
            # The answer after the results is words, and after a calculation it states the value
            # the calculation found, reading that step only (backend.agent.answer).
            stated = stated_value(self.tools, messages)
            pattern = ANSWER_PATTERN if stated is None else stating_pattern(stated)
            step_params = replace(step_params, structured_output=OutputConstraint(regex=pattern,
                                                                                  param="agent answer"))
            if stated is not None:
                prompt = last_step_only(messages)
            # a fact asked of the documents: the sentence that states it; a calculation over them: its
            # value with the passage it read (in consume(), under Stop)
            quote = self.quote_facts
            program_answer = _failed_or_quoted if stated is None else calculated_answer
        if functions:
            # One call: SmolLM2-135M, let go on, chained calls until max_tokens.
            step_params = replace(step_params, structured_output=OutputConstraint(
                tool_calls=ToolCallFormat(tuple((f.name, f.parameters) for f in functions),
                                          required=forced, parallel=not forced), param="tools"))
            if forced:
                # Picked greedily (sampled, SmolLM2-135M's queries went astray), and never cut by
                # a short reply length: the block is not the reply (a 64-token reply cut a
                # 200-character query); the run's token budget still bounds it.
                room = max(1, min(max(params.max_tokens, CALL_MAX_TOKENS), meter.tokens_left()))
                step_params = replace(step_params, temperature=0.0, max_tokens=room)
        if functions or (step_params.structured_output is not None and step_params.structured_output.regex != ANSWER_PATTERN):
            # a step that may write a call (every step under the "auto" policy), or an answer bound to state a
            # value: no penalty on repeating (a call's quotes and an expression's digits are no repetition); the
            # chat's frequency penalty is for free words
            step_params = replace(step_params, frequency_penalty=0.0, presence_penalty=0.0)
        request_id = f"{run_id}:{index}"
        raw: list[str] = []
        content: list[str] = []
        state = {"status": "done"}

        def counted(prompt_tokens: int, completion_tokens: int) -> None:
            """The step's tokens: into the run's budget and onto its span."""
            meter.count_tokens(prompt_tokens, completion_tokens)
            state["counted"] = "yes"
            step_span.set_attribute("prompt_tokens", prompt_tokens)
            step_span.set_attribute("completion_tokens", completion_tokens)

        async def choose_call() -> None:
            """The step's call: the candidate the model finds likeliest (backend.agent.choice)."""
            name = functions[0].name
            texts = [call_block([ToolCall("call", name, json.dumps(a, ensure_ascii=False))]) for a in choices]
            choice = await choose(self.generator, request_id, messages, step_params, texts)
            raw.append(choice.text)
            parser.feed(choice.text)
            state["finish"] = "stop"
            done = choice.scored[choice.index].done
            if done is not None:
                self.finished.setdefault(run_id, []).append(done)
            for i, scored in enumerate(choice.scored):  # every request the choice ran, side by side
                for prompt_kind, event, logprob in (("step", scored.done, scored.logprob),
                                                    ("neutral", scored.neutral_done, scored.neutral_logprob)):
                    if event is not None:
                        tracing.record_request("agent.candidate", event.timeline, {
                            "candidate": i, "prompt": prompt_kind, "arguments": json.dumps(choices[i])[:200],
                            "logprob": round(logprob, 3), "pmi": round(scored.pmi, 3), "chosen": i == choice.index},
                            finish_reason=event.finish_reason, prompt_tokens=event.prompt_tokens,
                            completion_tokens=event.completion_tokens)
            counted(choice.prompt_tokens, choice.completion_tokens)  # every candidate's, not the chosen one's
            ranked = sorted(choice.scored, key=lambda c: -c.pmi)
            step_span.set_attribute("candidates", len(texts))
            step_span.set_attribute("pmi_margin", round(ranked[0].pmi - ranked[1].pmi, 3) if len(ranked) > 1 else 0.0)

        async def consume() -> None:
            quoted: str | None = None
            if quote:
                with tracing.span("agent.quote") as quote_span:
                    try:  # an embedding, in a worker thread: a Stop or the wall time cancels this wait
                        quoted = await asyncio.to_thread(program_answer, self.tools, messages)
                    except Exception:  # the embedder failed: the model answers
                        log.exception("quoting the answer of run %s failed", run_id)
                        quote_span.set_attribute("error", "quoting failed")
                    quote_span.set_attribute("quoted", quoted is not None)
            if quoted is not None:
                raw.append(quoted)
                content.append(quoted)
                if on_text is not None:
                    await call_back(on_text, quoted)
                state["finish"] = "stop"
                counted(0, 0)
                step_span.set_attribute("quoted", True)
                return
            # The step's prompt must fit what the run's token budget has left, with a token to write: else the run
            # ends on its budget before the model runs (new-user pass: a run of 50 tokens answered with 1,354); an
            # answer the program wrote above costs none.
            nonlocal step_params
            needed = await asyncio.to_thread(self._prompt_tokens, prompt, functions)
            if needed + 1 > meter.tokens_left():
                state["status"], state["unfit"] = "budget", "yes"
                return
            step_params = replace(step_params, max_tokens=max(1, min(step_params.max_tokens,
                                                                     meter.tokens_left() - needed)))
            if choices and len(functions) == 1 and forced:
                state["requested"] = "yes"  # from here a cut aborts the engine's requests and counts their tokens
                await choose_call()
                return
            await prepare_generation(self.generator, step_params)  # the tools' grammar, off the loop
            state["requested"] = "yes"
            stream = self.generator.stream(request_id, prompt, step_params)
            try:
                async for event in stream:
                    if isinstance(event, TextDelta):
                        raw.append(event.text)
                        released = parser.feed(event.text)
                        if released.content:
                            content.append(released.content)
                            if on_text is not None:
                                await call_back(on_text, released.content)
                        if meter.elapsed_s >= meter.budget.max_wall_s:
                            state["status"] = "budget"
                            return
                    elif isinstance(event, GenerationDone):
                        self.finished.setdefault(run_id, []).append(event)
                        # The engine's queue, prefill and decode under this step's span.
                        tracing.record_engine(event.timeline, finish_reason=event.finish_reason,
                                              prompt_tokens=event.prompt_tokens,
                                              completion_tokens=event.completion_tokens)
                        counted(event.prompt_tokens, event.completion_tokens)
                        if event.finish_reason == "error":
                            state["status"] = "error"
                        elif event.finish_reason == "abort":
                            state["status"] = "stopped"
                        state["finish"] = event.finish_reason or ""
            finally:
                await stream.aclose()  # type: ignore[attr-defined]

        failure: str | None = None  # why the step could not start (nothing was queued)
        with tracing.span("agent.model_step", index=index, tools=len(functions)) as step_span:
            try:
                status = await race(consume(), stop, meter)  # consume() runs under step_span
            except GenerationError as exc:  # PromptTooLong, GeneratorUnavailable, a bad constraint
                status, failure = "error", str(exc) or exc.code
            except Exception:
                log.exception("model step %s of run %s failed", index, run_id)
                status, failure = "error", "an internal error (logged)"  # the exception's text stays in the log
            step_span.set_attribute("status", status)
            if failure is not None:
                step_span.set_attribute("error", failure)
        if failure is not None:
            state["status"] = "error"
        elif status != "done":  # Stop, or the wall time ran out before the next delta (a slow prefill)
            if "requested" in state:  # not when cut while quoting or preparing: nothing was queued
                await self.generator.abort(request_id)
            state["status"] = status
        tail = parser.finish()
        if tail.content:
            content.append(tail.content)
            if on_text is not None and state["status"] == "done":
                await call_back(on_text, tail.content)
        text = "".join(raw)
        if "counted" not in state and "requested" in state and failure is None:  # cut before its final event
            meter.count_tokens(*await asyncio.to_thread(self._cut_step_tokens, prompt, functions, text))
        step_status = {"done": "done", "stopped": "stopped", "budget": "stopped"}.get(state["status"], "error")
        if failure is not None:  # the step's record and line say why, and so does the run's ending
            text = f"the model could not answer: {failure}"
        # The step's prompt + completion tokens: a retried run counts them again in its budget.
        await asyncio.to_thread(self.records.end_step, run_id, index, step_status, text,
                                (time.monotonic() - t0) * 1000, meter.tokens - tokens_before)
        self.emit(AgentStepEvent(message_id, run_id, index, "model", step_status, text))
        if failure is not None:
            return ModelOutcome("error", "", None, text)
        if "unfit" in state:  # its prompt did not fit the tokens left
            return ModelOutcome("budget", "", None, meter.ending(LIMIT_TOKENS))
        calls = parser.calls if state["status"] == "done" else None
        if calls is None and state["status"] == "done" and text.lstrip().startswith(TOOL_CALL_BEGIN):
            # A block that cannot be read (cut by max_tokens): no answer to show; the run fails.
            return ModelOutcome("error", "", None, CUT_CALL_ENDING)
        if (calls is None and state["status"] == "done" and state.get("finish") == "length"
                and step_params.max_tokens < params.max_tokens):
            # Cut by the tokens the run's budget had left, not by the reply's length: the budget's ending.
            return ModelOutcome("budget", "".join(content), None, meter.ending(LIMIT_TOKENS))
        return ModelOutcome(state["status"], "".join(content) if calls is None else "", calls)

    def _prompt_tokens(self, messages: Sequence[ChatMessage], functions: Sequence[ToolFunction]) -> int:
        """The step's prompt tokens as the generator counts them (0 when it cannot: the engine then
        refuses a prompt too long as it would). Sync (it tokenizes): run it in a worker thread."""
        try:
            return int(self.generator.count_prompt_tokens(messages, functions))
        except Exception:
            return 0

    def _cut_step_tokens(self, messages: Sequence[ChatMessage], functions: Sequence[ToolFunction],
                         text: str) -> tuple[int, int]:
        """(prompt, completion) tokens of a model step that ended without its final event (Stop,
        the wall time): its prompt as the generator counts it and the tokens of the text it
        wrote, as backend.generation counts a reply closed early. Sync (it tokenizes): run it in
        a worker thread."""
        try:
            prompt = self.generator.count_prompt_tokens(messages, functions)
        except Exception:
            prompt = 0
        return prompt, count_text(self.generator, text)

@dataclass
class ModelOutcome:
    status: str  # done | stopped | budget | error
    content: str
    calls: list[ToolCall] | None
    reason: str | None = None  # error: why, for the run's ending (None: "the model failed")


async def call_back(callback: Callable[[str], Awaitable[None] | None], text: str) -> None:
    value = callback(text)
    if asyncio.iscoroutine(value):
        await value


