"""The "planned" policy (AgentRunner, backend.agent.routing): the program picks the turn's tools
from the person's own message; the model writes one call to each, in order, offered only that
tool (greedy, required), then answers with no tools; a turn that needs none is answered at once."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import update

from backend import tracing
from backend.agent.budget import Budget
from backend.agent.models import AgentRun
from backend.agent.answer import ANSWER_PATTERN
from backend.agent.model_step import CALL_MAX_TOKENS
from backend.agent.runs import POLICY_ONE_CALL, POLICY_PLANNED
from backend.generator import ChatMessage, GenerationParams

from .scripted import ScriptedGenerator, call_text

PARAMS = GenerationParams(max_tokens=100, temperature=0.7)
SEARCH = call_text(("search_documents", {"query": "bridge length"}))
ADD = call_text(("add", {"a": 2340, "b": 2340}))


async def ask(runner, turn, stop, text: str):
    return await runner.run(conversation_id=turn.conversation_id, user_id=turn.user_id, message_id=turn.message_id,
                            messages=[ChatMessage("user", text)], params=PARAMS, stop=stop)


async def test_a_message_that_needs_no_tool_is_answered_without_any(make_runner, turn, stop, tools, records):
    generator = ScriptedGenerator([["Hello! ", "I am well."]])
    runner = make_runner(generator, policy=POLICY_PLANNED, user_text="Hello! How are you?")
    result = await ask(runner, turn, stop, "Hello! How are you?")
    assert (result.status, result.text) == ("done", "Hello! I am well.")
    assert tools.executions == [] and len(generator.calls) == 1
    params = generator.calls[0].params
    assert params.tools == () and params.structured_output is None and params.temperature == 0.7
    assert [(s.kind, s.status) for s in records.steps(result.run_id)] == [("model", "done")]


async def test_documents_then_arithmetic_each_offered_alone_then_the_answer(make_runner, turn, stop, tools):
    question = "How long are two Halvorsen Bridges? Add the length + the length."
    generator = ScriptedGenerator([[SEARCH], [ADD], ["They are 4680 metres [1]."]])
    runner = make_runner(generator, policy=POLICY_PLANNED, user_text=question)
    result = await ask(runner, turn, stop, question)
    assert (result.status, result.text) == ("done", "They are 4680 metres [1].")
    assert [name for name, _ in tools.executions] == ["search_documents", "add"]
    assert result.sources == [{"n": 1, "document": "d.txt"}]
    search, add, answer = (c.params for c in generator.calls)
    for params, name in ((search, "search_documents"), (add, "add")):
        format_ = params.structured_output.tool_calls
        assert [f.name for f in params.tools] == [name]
        assert (format_.required, format_.parallel) == (True, False)
        assert (params.temperature, params.max_tokens) == (0.0, CALL_MAX_TOKENS)
    assert answer.tools == () and answer.temperature == 0.7
    assert answer.structured_output.regex == ANSWER_PATTERN  # words, never a tag first
    # The calculation's step reads the search's result; the answer reads both.
    assert [m.role for m in generator.calls[1].messages] == ["user", "assistant", "tool"]
    assert [m.role for m in generator.calls[2].messages] == ["user", "assistant", "tool", "assistant", "tool"]


async def test_a_tool_the_user_may_not_call_is_not_planned(make_runner, turn, stop, tools):
    question = "What is 2 + 3?"
    generator = ScriptedGenerator([["5."]])
    runner = make_runner(generator, allowed=("search_documents",), policy=POLICY_PLANNED, user_text=question)
    result = await ask(runner, turn, stop, question)
    assert result.text == "5." and tools.executions == [] and generator.calls[0].params.tools == ()


async def test_a_side_effect_is_planned_only_when_the_message_asks(make_runner, turn, stop, tools):
    asked = "Save a note that says 2 + 3 is 5"
    generator = ScriptedGenerator([[ADD], [call_text(("save_note", {"text": "2 + 3 = 5"}))], ["Saved."]])
    result = await ask(make_runner(generator, policy=POLICY_PLANNED, user_text=asked), turn, stop, asked)
    assert result.status == "done"
    assert [name for name, _ in tools.executions] == ["add", "save_note"] and len(tools.notes) == 1


@pytest.mark.parametrize("plain", ["What is 2 + 3?", "Do you remember that song, 2 + 3?",
                                   "Note that I use Python 3: what is 2 + 3?"])
async def test_a_side_effect_the_message_does_not_ask_for_is_not_planned(make_runner, turn, stop, tools, plain):
    generator = ScriptedGenerator([[ADD], ["5."]])
    result = await ask(make_runner(generator, policy=POLICY_PLANNED, user_text=plain), turn, stop, plain)
    assert result.status == "done" and [name for name, _ in tools.executions] == ["add"] and tools.notes == {}


async def test_a_failing_cue_plans_nothing_for_that_tool(make_runner, turn, stop, tools):
    def broken(user_id, text):
        raise RuntimeError("database gone")

    question = "What is 2 + 3 on the bridge?"
    generator = ScriptedGenerator([[ADD], ["5."]])
    runner = make_runner(generator, policy=POLICY_PLANNED, user_text=question)
    runner.tools["search_documents"].relevant = broken
    result = await ask(runner, turn, stop, question)
    assert result.status == "done" and [name for name, _ in tools.executions] == ["add"]


async def test_calls_the_program_writes_need_no_model_step_and_a_retry_reuses_them(make_runner, turn, stop, tools,
                                                                                  records):
    question = "How long are two bridges? 2340 + 2340"
    generator = ScriptedGenerator([["4680 metres [1]."], ["4680 metres [1]."]])
    runner = make_runner(generator, policy=POLICY_PLANNED, user_text=question)
    runner.tools["search_documents"].planned_arguments = lambda text: {"query": text}
    runner.tools["add"].planned_arguments = lambda text: {"a": 2340, "b": 2340}
    result = await ask(runner, turn, stop, question)
    assert (result.status, result.text) == ("done", "4680 metres [1].")
    assert [(s.index, s.kind, s.status) for s in records.steps(result.run_id)] == [
        (0, "tool", "done"), (1, "tool", "done"), (2, "model", "done")]
    assert [(c.tool, json.loads(c.arguments)) for c in records.calls(result.run_id)] == [
        ("search_documents", {"query": question}), ("add", {"a": 2340, "b": 2340})]
    answer = generator.calls[0]
    assert len(generator.calls) == 1 and answer.params.tools == ()
    assert [m.role for m in answer.messages] == ["user", "assistant", "tool", "assistant", "tool"]
    assert (result.used["steps"], result.used["tool_calls"]) == (3, 2)
    # A retry of the same run (a reconnect): the stored results are reused, nothing runs again.
    again = await runner.run(conversation_id=turn.conversation_id, user_id=turn.user_id, message_id=turn.message_id,
                             messages=[ChatMessage("user", question)], params=PARAMS, stop=stop, run_id=result.run_id)
    assert again.status == "done" and [name for name, _ in tools.executions] == ["search_documents", "add"]
    assert len(generator.calls) == 1  # the answer's finished step is reused too


async def test_a_retry_keeps_the_stored_plan_when_the_cues_would_now_choose_otherwise(make_runner, turn, stop, tools,
                                                                                   records):
    # Review (2026-12-02): with the plan worked out again, a search cue failing on the retry
    # shifted save_note to step 1, a new idempotency key, and the note was saved twice.
    asked = "Save a note about the bridge"
    SAVE = call_text(("save_note", {"text": "the bridge"}))

    first_runner = make_runner(ScriptedGenerator([[SAVE]], crash_at=1), policy=POLICY_PLANNED, user_text=asked)
    first_runner.tools["search_documents"].planned_arguments = lambda text: {"query": text}  # a tool step only
    first = await ask(first_runner, turn, stop, asked)
    assert first.status == "error" and [name for name, _ in tools.executions] == ["search_documents", "save_note"]
    assert records.stored_plan(first.run_id).tools == ["search_documents", "save_note"]
    class Obedient(ScriptedGenerator):  # calls the one tool it is offered, else answers
        def stream(self, request_id, messages, params):
            self.replies = [[SAVE] if params.tools else ["Saved."]] * (len(self.calls) + 1)
            return super().stream(request_id, messages, params)

    retry_runner = make_runner(Obedient([]), policy=POLICY_PLANNED, user_text=asked)
    retry_runner.tools["search_documents"].planned_arguments = lambda text: {"query": text}
    retry_runner.tools["search_documents"].relevant = lambda user_id, text: False  # the cue now says no
    retry = await retry_runner.run(conversation_id=turn.conversation_id, user_id=turn.user_id,
                                   message_id=turn.message_id, messages=[ChatMessage("user", asked)], params=PARAMS,
                                   stop=stop, run_id=first.run_id)
    assert retry.status == "done" and len(tools.notes) == 1
    assert [name for name, _ in tools.executions] == ["search_documents", "save_note"]  # nothing ran again


async def test_a_call_whose_key_holds_another_tools_record_is_not_run(make_runner, turn, stop, tools, records,
                                                                     session_factory):
    question = "How long are two bridges? 2340 + 2340"

    def runner(generator, search_cue=True):
        made = make_runner(generator, policy=POLICY_PLANNED, user_text=question)
        made.tools["search_documents"].planned_arguments = lambda text: {"query": text}
        made.tools["add"].planned_arguments = lambda text: {"a": 2340, "b": 2340}
        if not search_cue:
            made.tools["search_documents"].relevant = lambda user_id, text: False
        return made

    first = await ask(runner(ScriptedGenerator([], crash_at=0)), turn, stop, question)  # dies before the answer
    assert first.status == "error" and [name for name, _ in tools.executions] == ["search_documents", "add"]
    with session_factory() as db:  # a run stored before plans were (migration 0013): no plan to reuse
        db.execute(update(AgentRun).where(AgentRun.id == first.run_id).values(plan=None))
        db.commit()
    answering = ScriptedGenerator([["4680."]])
    retry = await runner(answering, search_cue=False).run(
        conversation_id=turn.conversation_id, user_id=turn.user_id, message_id=turn.message_id,
        messages=[ChatMessage("user", question)], params=PARAMS, stop=stop, run_id=first.run_id)
    # Step 0 is now add, whose key holds the search's record: not run, its result says why.
    assert [name for name, _ in tools.executions] == ["search_documents", "add"]
    [call] = [c for c in records.calls(first.run_id) if c.step_index == 0]
    assert call.tool == "search_documents" and retry.status == "done"
    # The model reads why, not the search's stored result passed off as the sum's.
    add_result = answering.calls[0].messages[2]
    assert add_result.role == "tool" and "record is a call to 'search_documents'" in add_result.content


def test_a_plan_stored_as_a_bare_list_reads_with_nothing_left_out(records, turn, session_factory):
    # (plans were stored as a JSON list of tool names before the left-out tools were kept with them)
    from backend.agent.records import RunPlan

    run_id = records.start_run(turn.conversation_id, turn.user_id, turn.message_id)
    assert records.stored_plan(run_id) is None
    with session_factory() as db:
        db.execute(update(AgentRun).where(AgentRun.id == run_id).values(plan=json.dumps(["search_documents"])))
        db.commit()
    assert records.stored_plan(run_id) == RunPlan(["search_documents"], [])
    records.store_plan(run_id, RunPlan(["search_documents"], ["calculator"]))
    assert records.stored_plan(run_id) == RunPlan(["search_documents"], ["calculator"])


@pytest.mark.parametrize("budget, planned", [(Budget(max_tool_calls=1), ["search_documents"]),
                                             (Budget(max_steps=3), ["search_documents"]),
                                             (Budget(max_steps=4), ["search_documents", "add"])])
async def test_the_plan_leaves_room_for_the_answer(make_runner, turn, stop, tools, records, budget, planned):
    # search (the model writes its query: 2 steps), add (2 steps), then the answer (1 step).
    question = "How long are two bridges? 2340 + 2340"
    generator = ScriptedGenerator([[SEARCH], ["Done."]])
    runner = make_runner(generator, budget, policy=POLICY_PLANNED, user_text=question)
    runner.tools["add"].planned_arguments = lambda text: {"a": 2340, "b": 2340}  # 1 step
    result = await ask(runner, turn, stop, question)
    assert records.stored_plan(result.run_id).tools == planned
    assert [name for name, _ in tools.executions] == planned
    # a tool the budget had no room for is named in the run's ending (new-user pass: "Steps = 3" gave "I couldn't work
    # out that amount" and no word of the limit)
    if planned == ["search_documents", "add"]:
        assert (result.status, result.ending) == ("done", None)
    else:
        limit = "tool call limit (1)" if budget.max_tool_calls == 1 else "step limit (3)"
        assert (result.status, result.ending) == ("budget", f"the {limit} was reached before add could run")
        assert result.text == "Done."
        # a retry of the run (a reconnect) follows the stored plan, and its ending still names what was left out
        retry = make_runner(ScriptedGenerator([["Done."]]), budget, policy=POLICY_PLANNED, user_text=question)
        again = await retry.run(conversation_id=turn.conversation_id, user_id=turn.user_id,
                                message_id=turn.message_id, messages=[ChatMessage("user", question)], params=PARAMS,
                                stop=stop, run_id=result.run_id)
        assert (again.status, again.ending) == (result.status, result.ending)


def quoting_runner(make_runner, generator, question: str, policy: str = POLICY_PLANNED):
    """A runner whose search is planned with the message as its query and quotes the sentence
    "The bridge was designed by Ingrid Solberg." of passage 2 for any question."""
    runner = make_runner(generator, policy=policy, user_text=question)
    runner.tools["search_documents"].planned_arguments = lambda text: {"query": text}
    runner.tools["search_documents"].answer_quote = lambda q, content: (2, "The bridge was designed by Ingrid Solberg.")
    return runner


async def test_a_fact_asked_of_the_documents_is_answered_by_the_quoted_sentence_not_the_model(
        make_runner, turn, stop, tools, records):
    question = "Who designed the Halvorsen Bridge?"
    generator = ScriptedGenerator([["It was designed by a famous Dutch architect."]])
    streamed: list[str] = []
    runner = quoting_runner(make_runner, generator, question)
    result = await runner.run(conversation_id=turn.conversation_id, user_id=turn.user_id, message_id=turn.message_id,
                              messages=[ChatMessage("user", question)], params=PARAMS, stop=stop,
                              on_text=streamed.append)
    assert (result.status, result.text) == ("done", "The bridge was designed by Ingrid Solberg. [2]")
    assert streamed == [result.text] and generator.calls == []  # the model was not asked
    assert [(s.kind, s.status, s.text) for s in records.steps(result.run_id)][1] == ("model", "done", result.text)
    assert result.used["tokens"] == 0
    # A retry reuses the stored answer.
    again = await runner.run(conversation_id=turn.conversation_id, user_id=turn.user_id, message_id=turn.message_id,
                             messages=[ChatMessage("user", question)], params=PARAMS, stop=stop, run_id=result.run_id)
    assert again.text == result.text and generator.calls == [] and len(tools.executions) == 1


async def test_an_answer_the_program_writes_needs_no_tokens_of_the_budget(make_runner, turn, stop, tools):
    # Review: the check that a step's prompt fits the tokens left refused the program's quote, which costs none.
    question = "Who designed the Halvorsen Bridge?"
    generator = ScriptedGenerator([["It was designed by a famous Dutch architect."]], prompt_tokens=500)
    runner = quoting_runner(make_runner, generator, question)
    runner.budget = Budget(max_tokens=200)
    result = await ask(runner, turn, stop, question)
    assert (result.status, result.text) == ("done", "The bridge was designed by Ingrid Solberg. [2]")
    assert generator.calls == []


@pytest.mark.parametrize("question", ["Summarise what my documents say about the bridge.",
                                      "Why was the bridge built?", "What is the bridge document about?",
                                      "Tell me about the bridge."])
async def test_a_question_asking_more_than_a_fact_is_answered_by_the_model(make_runner, turn, stop, question):
    generator = ScriptedGenerator([["The bridge crosses the Varne [1]."]])
    result = await ask(quoting_runner(make_runner, generator, question), turn, stop, question)
    assert result.text == "The bridge crosses the Varne [1]." and len(generator.calls) == 1
    assert [m.role for m in generator.calls[0].messages] == ["user", "assistant", "tool"]


async def test_other_policies_let_the_model_answer_a_fact(make_runner, turn, stop):
    question = "Who designed the Halvorsen Bridge?"
    generator = ScriptedGenerator([[call_text(("search_documents", {"query": "bridge designer"}))], ["Solberg [1]."]])
    result = await ask(quoting_runner(make_runner, generator, question, policy=POLICY_ONE_CALL), turn, stop, question)
    assert result.text == "Solberg [1]." and len(generator.calls) == 2


async def test_the_quote_is_a_span_of_its_model_step(make_runner, turn, stop):
    question = "Who designed the Halvorsen Bridge?"
    root = tracing.start_root("chat.turn")
    with tracing.use(root):
        await ask(quoting_runner(make_runner, ScriptedGenerator([["unused"]]), question), turn, stop, question)
    root.end()
    spans = tracing.store().get(tracing.trace_id_of(root)) or []
    quote = next(s for s in spans if s.name == "agent.quote")
    step = next(s for s in spans if s.context.span_id == quote.parent.span_id)
    assert step.name == "agent.model_step" and quote.attributes["quoted"] is True


async def test_a_quote_that_fails_leaves_the_answer_to_the_model(make_runner, turn, stop, records):
    question = "Who designed the Halvorsen Bridge?"
    generator = ScriptedGenerator([["Ingrid Solberg [1]."]])
    runner = quoting_runner(make_runner, generator, question)

    def broken(question, content):
        raise RuntimeError("the embedder is down")

    runner.tools["search_documents"].answer_quote = broken
    result = await ask(runner, turn, stop, question)
    assert (result.status, result.text) == ("done", "Ingrid Solberg [1].") and len(generator.calls) == 1
