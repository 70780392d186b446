"""Agent runs with the real model (SmolLM2-135M, slow), in the chat's own loop: the runner
AgentTurns.runner_for makes for a conversation with "Use tools" on (the deployment's tools,
the admin's default policy "planned"), over the real embedder's document search.

A calculator question gets a calculator call and the right number in the answer; a question
about the user's document gets a search_documents call, the passage among the run's sources and
its fact in the answer; small talk gets no tool; a question about the time gets current_time; a
question needing the document and arithmetic gets the search, then the calculator with the
expression the model chose among those the program wrote out from the passage (it wrote a wrong
one itself for 5 of 5 such questions, docs/BENCHMARKS.md), then an answer stating the result. Under "one_call" (the default before "planned"), "Hello" got the time and
3 of 5 document questions the wrong tool. Before the argument patterns, the "one_call" policy and the restated
question after the results (2026-12-02), the model left the calculator's expression string open
until max_tokens ('"expression":"12 * 34}}]</tool_call> # 12 * 34 = 328...'), answered in text
without a call with tool_choice auto, and repeated the <tool_response> block as its answer.
docs/BENCHMARKS.md "Agent runs with the real model" has the measurement behind the recipe."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from types import SimpleNamespace

import pytest

from backend.agent.events import StepLog
from backend.agent.tools.registry import ToolRegistry
from backend.chat.agent_turn import AgentTurns
from backend.db import create_db_engine, make_session_factory
from backend.generator import ChatMessage, GenerationParams
from backend.models import Conversation, Message, User, new_id, utcnow
from backend.notes import NoteService
from backend.rag import DocumentService, RagSettings, Retriever
from backend.runtime_settings import RuntimeSettings
from backend.settings import Settings

pytestmark = pytest.mark.slow

DOCUMENT = """The Halvorsen Bridge

The Halvorsen Bridge crosses the Varne river at the town of Eskholm. Construction began in 1981 and the bridge opened to traffic on 14 May 1987.

The bridge is 2,340 metres long and its main span measures 612 metres. It carries four lanes of road traffic and a cycle path.

The bridge was designed by the engineer Ingrid Solberg. Its two towers are 148 metres tall and are painted dark green.

About 31,000 vehicles cross the bridge every day. The toll was removed in 2004.
"""
# The reply length of the web tests' settings: the call step gets its own room (model_step.CALL_MAX_TOKENS);
# before, the model's long search query was cut at 64 tokens and the run failed.
PARAMS = GenerationParams(max_tokens=64, temperature=0.0)


@pytest.fixture(scope="module")
def embedder():
    from backend.rag import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


@pytest.fixture
def chat(database_url, real_generator, embedder):
    """(run(question) -> (RunResult, records), the document's id) for a user with one document."""
    engine = create_db_engine(database_url)
    sessions = make_session_factory(engine)
    with sessions() as db:
        user = User(id=new_id(), username="ann", username_key="ann", password_hash="x", role="user")
        db.add(user)
        db.commit()
        user_id = user.id
    rag = RagSettings()
    documents = DocumentService(sessions, embedder, rag)
    view = documents.upload(user_id, "halvorsen.txt", DOCUMENT.encode())
    documents.ingest(view.id, DOCUMENT.encode())
    registry = ToolRegistry(documents=documents, retriever=Retriever(sessions, embedder, rag),
                            notes=NoteService(sessions), session_factory=sessions)
    turns = AgentTurns(sessions, real_generator, registry.specs, flush_interval_s=1.0)
    # The deployment lets users have tools; every other agent setting is the default.
    settings = replace(RuntimeSettings.from_settings(Settings(database_url=database_url)), agent_tools="everyone")

    def run(question: str, earlier: tuple[str, ...] = (), **changes):  # changes: runtime settings for this run
        with sessions() as db:
            conversation = Conversation(id=new_id(), user_id=user_id, use_tools=True)
            db.add(conversation)
            db.flush()
            now = utcnow()
            reply = Message(id=new_id(), conversation_id=conversation.id, user_id=user_id, position=1,
                            role="assistant", status="streaming", created_at=now, updated_at=now)
            db.add(reply)
            db.commit()
            ids = (conversation.id, reply.id)
        asked = [ChatMessage("user", text) for text in earlier] + [ChatMessage("user", question)]
        live = SimpleNamespace(turn=SimpleNamespace(use_tools=True, action="send", user_text=question, agent_budget={},
                                                    messages=asked),
                               user_id=user_id,
                               message_id=ids[1], publish_step=lambda event: None, steps=StepLog())

        async def go():
            runner = await turns.runner_for(live, replace(settings, **changes))
            assert runner is not None and runner.policy == changes.get("agent_policy", "planned")
            # as AgentTurns.run does: a follow-up is asked as the whole question it asks (runner.user_text)
            return await runner.run(conversation_id=ids[0], user_id=user_id, message_id=ids[1],
                                    messages=[ChatMessage("user", runner.user_text)], params=PARAMS, stop=asyncio.Event())

        result = asyncio.run(go())
        calls = turns.records.calls(result.run_id)
        print("run:", result, [(s.kind, s.text) for s in turns.records.steps(result.run_id)],
              [(c.tool, c.arguments, c.status) for c in calls])
        return result, calls

    yield run, view.id
    engine.dispose()


def test_the_real_model_answers_a_calculation_with_the_calculator(chat):
    run, _ = chat
    result, calls = run("What is 12 * 34?")
    assert [(c.tool, c.status) for c in calls] == [("calculator", "ok")]
    assert json.loads(calls[0].result)["data"]["result"] == "408"
    assert result.status == "done"
    assert "408" in result.text.replace(",", "") and "tool_response" not in result.text


def test_the_real_model_answers_from_the_users_document_with_search_documents(chat):
    run, document_id = chat
    result, calls = run("Who designed the Halvorsen Bridge?")
    assert [(c.tool, c.status) for c in calls] == [("search_documents", "ok")]
    passages = json.loads(calls[0].result)["data"]["passages"]
    assert passages and passages[0]["document_id"] == document_id
    assert "Ingrid Solberg" in json.loads(calls[0].result)["content"]
    assert result.status == "done"
    assert [s["document_id"] for s in result.sources] == [document_id]  # the passage, cited
    assert "Solberg" in result.text and "tool_response" not in result.text
    # The fact is quoted from the passage with its citation (the model alone named a "famous
    # bridge in the Netherlands" for such questions).
    assert result.text == "The bridge was designed by the engineer Ingrid Solberg. [1]"


@pytest.mark.parametrize("question, sentence", [
    ("How many vehicles cross the Halvorsen Bridge every day?", "About 31,000 vehicles cross the bridge every day."),
    ("When did the Halvorsen Bridge open?",
     "Construction began in 1981 and the bridge opened to traffic on 14 May 1987."),
    ("How tall are the towers of the Halvorsen Bridge?", "Its two towers are 148 metres tall and are painted dark green.")])
def test_a_fact_of_the_document_is_answered_by_the_sentence_stating_it(chat, question, sentence):
    run, _ = chat
    result, calls = run(question)
    assert [(c.tool, c.status) for c in calls] == [("search_documents", "ok")]
    assert (result.status, result.text) == ("done", f"{sentence} [1]")
    assert result.model_steps == []  # the engine was not asked: the search's sentence is the answer


def test_a_summary_of_the_document_is_the_models_own_answer(chat):
    run, _ = chat
    result, calls = run("Summarise what my documents say about the Halvorsen Bridge.")
    assert [(c.tool, c.status) for c in calls] == [("search_documents", "ok")]
    assert result.status == "done" and result.text.strip()
    assert len(result.model_steps) == 1  # the answer was generated, not a quoted sentence


def test_with_notes_allowed_an_arithmetic_question_is_not_offered_save_note(chat):
    # 2026-12-02, before the intent rule: one_call's forced call wrote save_note
    # {"title": "noobs", "text": "noobs"} for this question.
    run, _ = chat
    result, calls = run("What is 99 * 99?", agent_side_effects="everyone")
    assert [c.tool for c in calls] == ["calculator"] and result.status == "done"


def test_the_real_model_saves_the_note_the_person_asks_for(chat):
    run, _ = chat
    result, calls = run("Save a note that says buy milk", agent_side_effects="everyone")
    assert [(c.tool, c.status) for c in calls] == [("save_note", "ok")], result
    assert result.status == "done"


def test_small_talk_with_tools_on_calls_no_tool(chat):
    run, _ = chat
    result, calls = run("Hello! How are you?")
    assert calls == [] and result.status == "done" and result.text.strip()
    # Under one_call every turn calls a tool (this one got current_time, 2026-12-02).
    result, calls = run("Hello! How are you?", agent_policy="one_call")
    assert len(calls) == 1


def test_a_question_about_the_time_gets_current_time(chat):
    run, _ = chat
    result, calls = run("What time is it?")
    assert [(c.tool, c.status) for c in calls] == [("current_time", "ok")] and result.status == "done"


def test_a_question_needing_the_document_and_arithmetic_searches_then_calculates(chat):
    run, document_id = chat
    result, calls = run("How long is the Halvorsen Bridge in metres, multiplied by 2?")
    assert [c.tool for c in calls] == ["search_documents", "calculator"]
    assert json.loads(calls[0].arguments) == {"query": "How long is the Halvorsen Bridge in metres, multiplied by 2?"}
    assert "2,340 metres" in json.loads(calls[0].result)["content"]
    assert result.status == "done" and [s["document_id"] for s in result.sources] == [document_id]
    calculation = json.loads(calls[1].result)["data"]
    assert (calculation["expression"], calculation["result"]) == ("2340 * 2", "4680")
    assert "4680" in result.text.replace(",", "")


def test_the_model_chooses_the_passages_number_for_a_calculation(chat):
    # Two candidates, 2340 * 3 and 612 * 3 (the sentence holds the length and the main span):
    # the model's step chooses; before, it wrote "1.23400000000000001" or "1987 * 2340".
    run, _ = chat
    result, calls = run("If I cross the Halvorsen Bridge 3 times, how many metres do I travel in total?")
    assert [c.tool for c in calls] == ["search_documents", "calculator"]
    assert json.loads(calls[1].arguments) == {"expression": "2340 * 3"}
    assert result.status == "done" and "7020" in result.text.replace(",", "")


def test_a_follow_up_is_answered_as_the_whole_question_it_asks(chat):
    # New-user pass: "and for 6?" ran no tool and the model wrote "That comes to 260: 6 * 4 = 12 ... [2]".
    run, _ = chat
    result, calls = run("and 5 times?", earlier=("If I cross the Halvorsen Bridge 3 times, how many metres do I travel in total?",))
    assert [c.tool for c in calls] == ["search_documents", "calculator"]
    assert json.loads(calls[1].arguments) == {"expression": "2340 * 5"}
    assert result.status == "done" and "11700" in result.text.replace(",", "")
