"""A model step choosing among written-out calls by likelihood (backend.agent.choice), and the
runner's use of it: the chosen call runs, and the answer after a calculation states its value."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from backend.agent.budget import Budget
from backend.agent.choice import NEUTRAL_PROMPT, choose
from backend.agent.answer import last_step_only, stating_pattern
from backend.agent.runs import POLICY_PLANNED, AgentRunner
from backend.agent.tools import ToolSpec
from backend.agent.tools.calculator import spec as calculator_spec
from backend.agent.tools.passages import format_passages
from backend import tracing
from backend.generator import ChatMessage, EngineTimeline, GenerationDone, GenerationParams, TextDelta, TokenLogprob, ToolCall
from backend.rag import Source


class LikelihoodGenerator:
    """Streams a forced candidate (a one-string `choice` constraint) as one delta whose logprob is
    `after[text]` for the step's prompt or `neutral[text]` for NEUTRAL_PROMPT; any other request
    gets `answer`. Records every request."""

    model_name = "likelihood"
    context_length = 4096

    def __init__(self, after: dict[str, float], neutral: dict[str, float], answer: str = "It is 4,680 metres.",
                 write: dict[str, str] | None = None) -> None:
        self.after, self.neutral, self.answer, self.write = after, neutral, answer, write or {}
        self.requests: list[tuple[str, list[ChatMessage], GenerationParams]] = []

    def count_prompt_tokens(self, messages, tools=()) -> int:
        return 7 if list(messages) == list(NEUTRAL_PROMPT) else 50

    async def abort(self, request_id: str) -> None:
        pass

    def stream(self, request_id, messages, params):
        self.requests.append((request_id, list(messages), params))
        return self._run(list(messages), params)

    async def _run(self, messages, params):
        constraint = params.structured_output
        if constraint is not None and constraint.choice is not None:
            text = constraint.choice[0]
            table = self.neutral if messages == list(NEUTRAL_PROMPT) else self.after
            written = self.write.get(text, text)
            yield TextDelta(written, logprobs=(TokenLogprob(written, table[text], ()),))
            t = time.time_ns()
            timeline = EngineTimeline(t - 4000, t - 3000, t - 2000, t, ((t - 3000, t - 2000, 50),))
            yield GenerationDone("stop", self.count_prompt_tokens(messages), 3, timeline=timeline)
            return
        yield TextDelta(self.answer)
        yield GenerationDone("stop", 50, 5)


@pytest.fixture
def model_chooses(monkeypatch):
    """The model's PMI chooses (FIRST_PRIOR 0), as a capable model's deployment may set it."""
    monkeypatch.setattr("backend.agent.choice.FIRST_PRIOR", 0.0)


def test_by_default_the_programs_first_candidate_is_chosen_without_asking_the_model():
    """Measured (docs/BENCHMARKS.md): the 135M model's PMI overrode the first candidate 7 times in
    72 questions and was right once."""
    generator = LikelihoodGenerator(after={"1 + 2": -40.0, "2340 * 2": -47.0}, neutral={"1 + 2": -30.0, "2340 * 2": -60.0})
    choice = asyncio.run(choose(generator, "r", [ChatMessage("user", "q")], GenerationParams(), ["2340 * 2", "1 + 2"]))
    assert (choice.index, choice.text, choice.prompt_tokens, generator.requests) == (0, "2340 * 2", 0, [])


def test_a_finite_prior_lets_a_far_likelier_candidate_win(monkeypatch):
    monkeypatch.setattr("backend.agent.choice.FIRST_PRIOR", 5.0)
    generator = LikelihoodGenerator(after={"1 + 2": -40.0, "2340 * 2": -47.0, "612 * 2": -52.0},
                                    neutral={"1 + 2": -30.0, "2340 * 2": -60.0, "612 * 2": -60.0})
    messages = [ChatMessage("user", "q")]
    # PMI -10, 13, 8: the first (-10 + 5) loses to 13, and 8 + 5 ties 13 only as the first.
    assert asyncio.run(choose(generator, "r", messages, GenerationParams(), ["1 + 2", "2340 * 2", "612 * 2"])).index == 1
    assert asyncio.run(choose(generator, "s", messages, GenerationParams(), ["612 * 2", "2340 * 2"])).index == 0


@pytest.mark.usefixtures("model_chooses")
def test_choose_picks_the_highest_pmi_not_the_highest_likelihood():
    # "1 + 2" is likelier after the prompt, but likelier still anywhere: the passage's number wins.
    generator = LikelihoodGenerator(after={"1 + 2": -40.0, "2340 * 2": -47.0, "612 * 2": -52.0},
                                    neutral={"1 + 2": -30.0, "2340 * 2": -60.0, "612 * 2": -60.0})
    messages = [ChatMessage("user", "How long is it, multiplied by 2?")]
    choice = asyncio.run(choose(generator, "r", messages, GenerationParams(), ["1 + 2", "2340 * 2", "612 * 2"]))
    assert choice.text == "2340 * 2" and choice.index == 1
    assert [round(s.pmi, 1) for s in choice.scored] == [-10.0, 13.0, 8.0]
    # The step's prompt once and the neutral prompt once; every forced token.
    assert (choice.prompt_tokens, choice.completion_tokens) == (50 + 7, 6 * 3)
    # Each candidate was decoded greedily under its own one-string constraint, with logprobs.
    forced = [p for _, _, p in generator.requests]
    assert all(p.temperature == 0.0 and p.logprobs == 0 for p in forced)
    assert sorted(r for r, _, _ in generator.requests) == ["r:c0", "r:c1", "r:c2", "r:n0", "r:n1", "r:n2"]


def test_one_candidate_is_chosen_without_asking_the_model():
    generator = LikelihoodGenerator(after={}, neutral={})
    choice = asyncio.run(choose(generator, "r", [ChatMessage("user", "q")], GenerationParams(), ["only"]))
    assert (choice.text, choice.prompt_tokens, choice.completion_tokens, generator.requests) == ("only", 0, 0, [])


class FailingGenerator(LikelihoodGenerator):
    """The request whose id ends with `fail` fails at once; every other one waits until it is
    cancelled. Records each stream it closed."""

    def __init__(self, fail: str | None = ":c0") -> None:
        super().__init__({}, {})
        self.fail = fail
        self.closed: list[str] = []

    def stream(self, request_id, messages, params):
        self.requests.append((request_id, list(messages), params))
        return self._wait(request_id)

    async def _wait(self, request_id):
        from backend.generator import GenerationError
        try:
            if self.fail is not None and request_id.endswith(self.fail):
                raise GenerationError("the prompt is too long")
            await asyncio.sleep(30)
            yield TextDelta("never")
        finally:
            self.closed.append(request_id)


@pytest.mark.usefixtures("model_chooses")
def test_a_failing_candidate_cancels_the_others_and_its_error_is_raised():
    from backend.generator import GenerationError
    generator = FailingGenerator()
    with pytest.raises(GenerationError, match="too long"):
        asyncio.run(asyncio.wait_for(choose(generator, "r", [ChatMessage("user", "q")], GenerationParams(),
                                            ["a", "b", "c"]), 10))
    assert sorted(generator.closed) == ["r:c0", "r:c1", "r:c2", "r:n0", "r:n1", "r:n2"]  # every stream closed


@pytest.mark.usefixtures("model_chooses")
def test_stop_during_a_choice_closes_every_request():
    generator = FailingGenerator(fail=None)

    async def go():
        task = asyncio.create_task(choose(generator, "s", [ChatMessage("user", "q")], GenerationParams(), ["b", "c"]))
        while len(generator.requests) < 4:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert sorted(generator.closed) == ["s:c0", "s:c1", "s:n0", "s:n1"]


@pytest.mark.usefixtures("model_chooses")
def test_choose_refuses_a_candidate_the_engine_wrote_differently_and_an_empty_list():
    generator = LikelihoodGenerator(after={"a": -1.0, "c": -2.0}, neutral={"a": -1.0, "c": -2.0}, write={"a": "b"})
    with pytest.raises(ValueError, match="decoded as"):
        asyncio.run(choose(generator, "r", [ChatMessage("user", "q")], GenerationParams(), ["a", "c"]))
    with pytest.raises(ValueError):
        asyncio.run(choose(generator, "r", [ChatMessage("user", "q")], GenerationParams(), []))


@pytest.mark.parametrize("value, holds, refuses", [
    ("4680", ["It is 4680 metres.", "It is 4,680 metres.", "4680", "  4,680 in total", "4680.", "It is 4680, twice it."],
     ["It is long. It is 4680 metres.", "<tool_response>4680", "It is 468 metres.", "It is 4.680 metres.",
      "It is " + "very " * 40 + "long: 4680 metres.", "It is 46800 metres.", "It is 14680 metres.",
      "we can't4680", "It is 4680.5 metres.", "It is -4680.", "It is 4680 metres. And then more words follow."]),
    ("8.25", ["The wheel would weigh 8.25 kg."], ["The wheel would weigh 8 kg.", "It is 18.25 kg."]),
    ("2", ["The answer is 2."], ["The answer is 20.", "In 2025 things changed.", "It is 2.5."]),
    ("-58", ["It is -58 degrees.", "It is minus 58 degrees."], ["It had been open 58 years.", "It is old."]),
    ("1234567", ["1,234,567 visitors"], ["12,34,567 visitors"]),
])
def test_the_answer_after_a_calculation_states_its_value_in_its_first_sentence(value, holds, refuses):
    pattern = re.compile(stating_pattern(value))
    assert all(pattern.fullmatch(text) for text in holds)
    assert not any(pattern.fullmatch(text) for text in refuses)


def test_the_answer_reads_only_the_last_step():
    question = ChatMessage("user", "q")
    search = ChatMessage("assistant", "", tool_calls=(ToolCall("c1", "search_documents", "{}"),))
    found = ChatMessage("tool", "passage", tool_call_id="c1", name="search_documents")
    calc = ChatMessage("assistant", "", tool_calls=(ToolCall("c2", "calculator", "{}"),))
    value = ChatMessage("tool", "2340 * 2 = 4680", tool_call_id="c2", name="calculator")
    earlier = [ChatMessage("user", "hi"), ChatMessage("assistant", "hello")]
    assert last_step_only(earlier + [question, search, found, calc, value]) == earlier + [question, calc, value]
    assert last_step_only([question, calc, value]) == [question, calc, value]  # one step: all of it


BRIDGE = ("The Halvorsen Bridge\n\nThe bridge is 2,340 metres long and its main span measures 612 metres.\n\n"
          "Its two towers are 148 metres tall.")


def search_spec() -> ToolSpec:
    source = Source(chunk_id=1, document_id="d" * 32, document_name="halvorsen.txt", version=1, position=0,
                    heading_path="", page=None, text=BRIDGE, score=1.0)

    def run(context, arguments):
        from backend.agent.tools import ToolResult
        return ToolResult(content="1 passage from the user's documents.\n\n" + format_passages([source]),
                          summary="Searched your documents — 1 passage")

    return ToolSpec(name="search_documents", description="search", parameters={
        "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"],
        "additionalProperties": False}, permission="tools.search_documents", side_effect=False, run=run,
        relevant=lambda user_id, text: True, planned_arguments=lambda text: {"query": text})


CHOICE_QUESTION = "If I cross the Halvorsen Bridge 2 times, how many metres do I travel?"


def run_choice(records, turn):
    """A planned run of CHOICE_QUESTION whose model prefers "2340 * 2" by PMI (13 against 5),
    though "612 * 2" is likelier after the prompt."""
    after = {}
    neutral = {}
    for expression, a, n in (("2340 * 2", -47.0, -60.0), ("612 * 2", -45.0, -50.0)):
        text = '<tool_call>[{"name":"calculator","arguments":{"expression":"' + expression + '"}}]</tool_call>'
        after[text], neutral[text] = a, n
    generator = LikelihoodGenerator(after, neutral, answer="It is 4,680 metres.")
    tools = [search_spec(), calculator_spec(None)]
    runner = AgentRunner(generator, tools, {"search_documents", "calculator"}, records,
                         Budget(max_steps=6, max_tool_calls=3, max_tokens=10_000, max_wall_s=60),
                         policy=POLICY_PLANNED, user_text=CHOICE_QUESTION)
    result = asyncio.run(runner.run(conversation_id=turn.conversation_id, user_id=turn.user_id,
                                    message_id=turn.message_id,
                                    messages=[ChatMessage("user", CHOICE_QUESTION)], params=GenerationParams(),
                                    stop=asyncio.Event()))
    return generator, result


@pytest.mark.usefixtures("model_chooses")
def test_a_planned_run_searches_lets_the_model_choose_the_expression_and_states_the_result(records, turn):
    question = CHOICE_QUESTION
    generator, result = run_choice(records, turn)
    assert result.status == "done" and result.text == "It is 4,680 metres."
    calls = records.calls(result.run_id)
    assert [(c.tool, json.loads(c.arguments)) for c in calls] == [
        ("search_documents", {"query": question}), ("calculator", {"expression": "2340 * 2"})]
    assert json.loads(calls[1].result)["data"]["result"] == "4680"
    steps = records.steps(result.run_id)
    assert [s.kind for s in steps] == ["tool", "model", "tool", "model"]  # the choice is a model step
    # The answer's request: constrained to state 4680, prompted with the calculation only.
    _, prompt, params = generator.requests[-1]
    assert params.structured_output.regex == stating_pattern("4680")
    assert [m.name for m in prompt if m.role == "tool"] == ["calculator"]


@pytest.mark.usefixtures("model_chooses")
def test_every_request_of_a_choice_is_a_span_under_its_model_step(records, turn):
    """An admin's waterfall shows each candidate's two requests (after the step's prompt and
    after NEUTRAL_PROMPT), their scores, which was chosen, and the engine's spans of each."""
    root = tracing.start_root("chat.turn")
    with tracing.use(root):
        run_choice(records, turn)
    root.end()
    spans = tracing.store().get(tracing.trace_id_of(root)) or []
    step = next(s for s in spans if s.name == "agent.model_step" and s.attributes.get("candidates") == 2)
    candidates = [s for s in spans if s.name == "agent.candidate"]
    assert all(s.parent.span_id == step.context.span_id for s in candidates)
    seen = sorted((s.attributes["candidate"], s.attributes["prompt"], s.attributes["logprob"], s.attributes["chosen"],
                   json.loads(s.attributes["arguments"])["expression"]) for s in candidates)
    assert seen == [(0, "neutral", -60.0, True, "2340 * 2"), (0, "step", -47.0, True, "2340 * 2"),
                    (1, "neutral", -50.0, False, "612 * 2"), (1, "step", -45.0, False, "612 * 2")]
    assert {s.attributes["pmi"] for s in candidates if s.attributes["candidate"] == 0} == {13.0}
    for candidate in candidates:
        children = sorted(s.name for s in spans if s.parent is not None and s.parent.span_id == candidate.context.span_id)
        assert children == ["engine.decode", "engine.prefill", "engine.queue"]
        assert candidate.start_time < candidate.end_time
    # Writing the candidates (the passages' sentences embedded) is a span of its own, before the step.
    written = next(s for s in spans if s.name == "agent.candidates")
    assert (written.attributes["tool"], written.attributes["candidates"], written.attributes["status"]) == (
        "calculator", 2, "done")
    assert written.end_time <= step.start_time


def test_a_planned_calculation_with_nothing_to_calculate_from_is_not_written_by_the_model(records, turn):
    """The search found passages but no number the question's calculation could use (no
    candidates): the model is not asked to write the call (SmolLM2-135M invented "2*3.5"), and
    the answer says the amount was not worked out, quoting the closest passage."""
    from dataclasses import replace

    from backend.agent.answer import UNCALCULATED

    question = "how much for 2 duvets and a rug?"
    closest = "Its two towers are 148 metres tall."
    search = replace(search_spec(), answer_quote=lambda q, content: (1, closest))
    calculator = replace(calculator_spec(None), candidate_arguments=lambda text, results: [])
    generator = LikelihoodGenerator({}, {}, answer='<tool_call>[{"name":"calculator","arguments":{"expression":"2*3.5"}}]</tool_call>')
    runner = AgentRunner(generator, [search, calculator], {"search_documents", "calculator"}, records,
                         Budget(max_steps=6, max_tool_calls=3, max_tokens=10_000, max_wall_s=60),
                         policy=POLICY_PLANNED, user_text=question)
    result = asyncio.run(runner.run(conversation_id=turn.conversation_id, user_id=turn.user_id,
                                    message_id=turn.message_id, messages=[ChatMessage("user", question)],
                                    params=GenerationParams(), stop=asyncio.Event()))
    assert result.status == "done"
    assert result.text == f"{UNCALCULATED} {closest} [1]"
    assert [c.tool for c in records.calls(result.run_id)] == ["search_documents"]
    assert [s.kind for s in records.steps(result.run_id)] == ["tool", "model"]
    assert all(not params.tools for _, _, params in generator.requests)  # no step was offered a tool


def test_a_planned_calculation_without_a_search_is_still_written_by_the_model(records, turn):
    """With no search this turn (a word problem, no documents), the model writes the expression."""
    from dataclasses import replace

    question = "I had 3 apples and bought 5 more, how many now?"
    calculator = replace(calculator_spec(None), candidate_arguments=lambda text, results: [],
                         relevant=lambda user_id, text: True)
    generator = LikelihoodGenerator({}, {}, answer='<tool_call>[{"name":"calculator","arguments":{"expression":"3+5"}}]</tool_call>')
    runner = AgentRunner(generator, [calculator], {"calculator"}, records,
                         Budget(max_steps=6, max_tool_calls=3, max_tokens=10_000, max_wall_s=60),
                         policy=POLICY_PLANNED, user_text=question)
    result = asyncio.run(runner.run(conversation_id=turn.conversation_id, user_id=turn.user_id,
                                    message_id=turn.message_id, messages=[ChatMessage("user", question)],
                                    params=GenerationParams(), stop=asyncio.Event()))
    assert [(c.tool, json.loads(c.arguments)) for c in records.calls(result.run_id)] == [
        ("calculator", {"expression": "3+5"})]
