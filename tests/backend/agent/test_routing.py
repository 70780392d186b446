"""The cues of the "planned" policy (backend.agent.routing), on the person's own message."""

from __future__ import annotations

import pytest

from backend.agent.routing import asks_for_time, names_documents, needs_calculation, plan_tools
from backend.agent.tools import calculator, current_time, search_documents
from backend.agent.tools.save_note import spec as save_note_spec

ARITHMETIC = ["What is 12 * 34?", "Compute 987 + 654.", "What is 15% of 240?", "What is 2 to the power of 10?",
              "What is 1000 - 357?", "What is 144 divided by 12?", "What is (17 + 5) * 3?", "sqrt(2)",
              "How long is the bridge multiplied by 2?", "If I cross it 3 times, how far do I travel in total?",
              "What is twice the height of the tower?", "12x4"]
NOT_ARITHMETIC = ["Hello! How are you?", "Write a haiku about the sea.", "What is the capital of France?",
                  "Give me three tips for sleeping better.", "When did the bridge open in 1987?",
                  "Tell me a short joke.", "Who designed the Halvorsen Bridge?", "Summarise chapter 2."]
TIME = ["What time is it?", "What day of the week is it today?", "What's the date?", "What is the time in Tokyo?"]
NOT_TIME = ["Write a short poem about time.", "Once upon a time there was a bridge.", "Tell me a joke.",
            "What is 12 * 34?", "Please update the list."]


@pytest.mark.parametrize("text", ARITHMETIC)
def test_arithmetic_is_recognised(text):
    assert needs_calculation(text)


@pytest.mark.parametrize("text", NOT_ARITHMETIC)
def test_other_messages_need_no_calculation(text):
    assert not needs_calculation(text)


@pytest.mark.parametrize("text", TIME)
def test_questions_about_the_time(text):
    assert asks_for_time(text)


@pytest.mark.parametrize("text", NOT_TIME)
def test_other_messages_do_not_ask_for_the_time(text):
    assert not asks_for_time(text)


def test_naming_the_documents():
    assert names_documents("What do my documents say about tolls?")
    assert names_documents("According to the report, who won?")
    assert not names_documents("What is a document type definition in general terms")


class FakeRetriever:
    """Retriever.search as the cue calls it: hits only for the given user and words."""

    def __init__(self, user_id: str, words: str) -> None:
        self.user_id, self.words, self.calls = user_id, words, []

    def search(self, user_id, query, *, k=None, mode="hybrid", min_similarity=None, document_ids=None):
        self.calls.append((user_id, query, k, mode, min_similarity))
        return ["hit"] if user_id == self.user_id and self.words in query.lower() else []


def test_the_plan_finds_facts_before_it_calculates_and_has_only_offered_tools():
    retriever = FakeRetriever("ann", "bridge")
    specs = [search_documents.spec(retriever), calculator.SPEC, current_time.SPEC]
    names = [s.name for s in specs]
    text = "How long is the bridge multiplied by 2, and what time is it?"
    assert plan_tools(specs, names, "ann", text) == ["search_documents", "current_time", "calculator"]
    # The documents are searched as the person (another user's passages are not his).
    assert plan_tools(specs, names, "bob", text) == ["current_time", "calculator"]
    assert retriever.calls[-1][0] == "bob" and retriever.calls[-1][3:] == ("vector", 0.35)
    assert plan_tools(specs, ["calculator"], "ann", text) == ["calculator"]
    assert plan_tools(specs, names, "ann", "Hello!") == [] and plan_tools(specs, names, "ann", None) == []


def test_save_note_is_planned_when_offered():
    # Offered only when the person's message asks for it (backend.agent.intent; AgentRunner).
    spec = save_note_spec(notes=None)
    assert plan_tools([spec], ["save_note"], "ann", "Save a note that says hi") == ["save_note"]
    assert plan_tools([spec], [], "ann", "Save a note that says hi") == []
