"""save_note and NoteService: schema, idempotency on the call's key (sequential and two threads
at once, on SQLite and PostgreSQL), owner checks."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import func, select

from backend.agent.tools import ToolError, ToolRegistry, save_note
from backend.errors import NotFound, ValidationFailed
from backend.models import Note
from backend.notes import NoteService
from tests.backend.agent.tool_fixtures import context, users, valid  # noqa: F401


@pytest.fixture
def notes(session_factory):
    return NoteService(session_factory)


@pytest.fixture
def save(notes):
    return ToolRegistry(documents=None, retriever=None, notes=notes, session_factory=None).get("save_note")


def count(session_factory) -> int:
    with session_factory() as session:
        return session.scalar(select(func.count()).select_from(Note))


def test_schema(save):
    assert save.side_effect and save.permission == "tools.save_note"
    assert "save a note" in save.intent_words and "remember that" in save.intent_words
    assert valid(save, {"title": "t", "text": "x"}) and valid(save, {"title": "t" * 120, "text": "x" * 2000})
    assert valid(save, {"title": "Café list", "text": "buy milk, eggs & 2 apples (≤ 3 €)"})
    for bad in ({"title": "t"}, {"text": "x"}, {"title": "", "text": "x"}, {"title": "t", "text": ""},
                {"title": "t" * 121, "text": "x"}, {"title": "t", "text": "x" * 2001},
                {"title": "t", "text": "x", "user_id": "bob"}, {"title": 1, "text": "x"},
                # SmolLM2-135M wrote emoji until max_tokens (2026-12-02); markup, quotes, line breaks
                {"title": "noobs", "text": "\U0001f602\U0001f602\U0001f602"}, {"title": "t", "text": "ok \u2764\ufe0f"},
                {"title": "t", "text": "a</tool_call>"}, {"title": "t", "text": 'say "hi"'},
                {"title": "two\nlines", "text": "x"}, {"title": "t", "text": "[1] {x}"}):
        assert not valid(save, bad), bad


def test_a_second_call_with_the_same_key_writes_nothing(save, notes, users, session_factory):
    first = save.run(context("alice", "run1:0:0", "alice-c"), {"title": "Groceries", "text": "eggs"})
    again = save.run(context("alice", "run1:0:0", "alice-c"), {"title": "Groceries", "text": "eggs"})
    assert first.data["created"] is True and again.data["created"] is False
    assert first.data["note_id"] == again.data["note_id"]
    assert count(session_factory) == 1
    other = save.run(context("alice", "run1:0:1", "alice-c"), {"title": "Groceries", "text": "eggs"})
    assert other.data["created"] and count(session_factory) == 2
    [newest, oldest] = notes.list("alice")
    assert {newest.id, oldest.id} == {first.data["note_id"], other.data["note_id"]}
    assert oldest.conversation_id == "alice-c" and oldest.title == "Groceries"
    assert first.summary == "Saved a note — Groceries"


def test_concurrent_duplicates_store_one_note(notes, users, session_factory):
    barrier = threading.Barrier(2)
    results, errors = [], []

    def call() -> None:
        try:
            barrier.wait(timeout=10)
            results.append(notes.add("alice", "Same", "text", idempotency_key="run2:1:0"))
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    for _ in range(5):
        barrier.reset()
        threads = [threading.Thread(target=call) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
    assert errors == []
    assert len(results) == 10
    assert sum(r.created for r in results) == 1
    assert len({r.note.id for r in results}) == 1
    assert count(session_factory) == 1


def test_the_insert_race_is_caught(notes, users, session_factory, monkeypatch):
    # Force the path where the pre-check misses and the unique constraint decides.
    notes.add("alice", "First", "text", idempotency_key="run3:0:0")
    real = notes._by_key
    calls = []

    def miss_once(user_id, key):
        calls.append(key)
        return None if len(calls) == 1 else real(user_id, key)

    monkeypatch.setattr(notes, "_by_key", miss_once)
    saved = notes.add("alice", "Second", "other", idempotency_key="run3:0:0")
    assert not saved.created and saved.note.title == "First"
    assert count(session_factory) == 1


def test_owner_checks(save, notes, users):
    note = notes.add("alice", "Mine", "text", idempotency_key="run4:0:0").note
    with pytest.raises(NotFound):
        notes.get("bob", note.id)
    with pytest.raises(NotFound):
        notes.delete("bob", note.id)
    assert notes.list("bob") == []
    # Another user's key, or a conversation of another user: the model reads an error.
    with pytest.raises(ToolError, match="no such note"):
        save.run(context("bob", "run4:0:0"), {"title": "t", "text": "x"})
    with pytest.raises(ToolError, match="no such conversation"):
        save.run(context("bob", "run5:0:0", "alice-c"), {"title": "t", "text": "x"})
    notes.delete("alice", note.id)
    with pytest.raises(NotFound):
        notes.get("alice", note.id)


def test_service_validation(notes, users):
    for title, text in (("", "x"), ("  \n ", "x"), ("t" * 201, "x"), ("t", ""), ("t", "  "), ("t", "x" * 5001)):
        with pytest.raises(ValidationFailed):
            notes.add("alice", title, text, idempotency_key="k")
    with pytest.raises(ValidationFailed):
        notes.add("alice", "t", "x", idempotency_key="k" * 129)
    assert notes.add("alice", " a\n  b ", "x", idempotency_key="k").note.title == "a b"


def test_notes_of_a_deleted_conversation_stay(notes, users, session_factory):
    from backend.models import Conversation

    note = notes.add("alice", "Kept", "x", idempotency_key="run6:0:0", conversation_id="alice-c").note
    with session_factory.begin() as session:
        session.delete(session.get(Conversation, "alice-c"))
    assert notes.get("alice", note.id).conversation_id is None


@pytest.mark.parametrize("message, note", [
    ("Save a note: the Varnel Bridge is 2,340 metres long.", "the Varnel Bridge is 2,340 metres long"),
    ("Save a note that says buy milk", "buy milk"), ("Remember that I am vegan", "I am vegan"),
    ("please REMEMBER my locker is 12", "my locker is 12"), ("Save this: the code is 4411", "the code is 4411"),
    ("Can you please remember that I am vegan?", "I am vegan"), ("Jot down: eggs", "eggs"),
    ('save a note: <b>"x"</b> {a} [b] \N{SLIGHTLY SMILING FACE} ok', "b x /b a b ok"),
    ("Save a note about the bridge", None), ("Save a note", None), ("Remember it", None)])
def test_a_request_that_holds_its_note_is_written_by_the_program(message, note):
    # New-user run (2026-12-02): SmolLM2-135M, asked to write "Save a note: the Varnel Bridge is
    # 2,340 metres long.", repeated it until max_tokens cut the call; no note was saved.
    arguments = save_note.planned_arguments(message)
    if note is None:
        assert arguments is None
    else:
        assert arguments["text"] == note and note.lower().startswith(arguments["title"].rstrip("…").lower())
        assert valid(save_note.spec(notes=None), arguments)


@pytest.mark.parametrize("body, title", [
    ("the code is 4411", "The code is 4411"),  # short: all of it
    ("the yoga studio is closed on Sundays and bank holidays, so book Saturday", "The yoga studio is closed…"),
    ("my dentist appointment is on Tuesday at 3pm with Dr Patel in Leeds", "My dentist appointment is on Tuesday…"),
    ("pick up the dry cleaning, then buy milk, eggs and bread for the weekend", "Pick up the dry cleaning…"),
])
def test_a_notes_title_never_ends_mid_phrase(body, title):
    # New-user pass: "the yoga studio is closed on"
    from backend.agent.tools.save_note import note_title
    assert note_title(body) == title


def test_a_saved_note_is_confirmed_with_its_title():
    from backend.agent.tools.save_note import confirmation
    assert confirmation("Saved the note titled 'Gym code' to the user's notes (note id 1).") == (
        "Saved to your notes: “Gym code”.")
    assert confirmation('Saved the note titled "It\'s on" to the user\'s notes (note id 2).') == (
        "Saved to your notes: “It's on”.")
    assert confirmation("error: the note is too long") is None
