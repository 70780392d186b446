"""The `save_note` tool: adds a note to the user's notes (backend/notes.py), idempotent on the
call's ToolContext.idempotency_key, so a retried call never writes a second note."""

from __future__ import annotations

import re
from typing import Any, Callable

from backend.agent.tools import ToolContext, ToolError, ToolResult, ToolSpec
from backend.errors import NotFound, ValidationFailed
from backend.models import NOTE_TEXT_MAX, NOTE_TITLE_MAX
from backend.notes import NoteService

# What the model may write (the engine's grammar follows the schema while it writes the call):
# SmolLM2-135M once wrote 512 tokens of emoji into "text" until max_tokens cut the block
# (2026-12-02). So: bounded lengths (below the notes table's NOTE_TITLE_MAX / NOTE_TEXT_MAX), one
# line of words, no quote, backslash, angle bracket, brace or square bracket (a string that could
# spell the block's end or an escape), and no emoji or pictographs (Misc Symbols and Dingbats,
# U+2600-U+27BF; U+1F000-U+1FAFF; variation selectors; the zero-width joiner).
MAX_TITLE_CHARS = 120
MAX_TEXT_CHARS = 2000
_NOT_IN_NOTES = '"\\\\<>{}\\[\\]\n\r\t\u2600-\u27bf\U0001f000-\U0001faff\ufe00-\ufe0f\u200d'
NOTE_PATTERN = f"^[^{_NOT_IN_NOTES}]+$"
# The phrases of the person's own message that ask for a note (backend.agent.intent): a request
# to write one, not a mention ("what do my notes say" and "do you remember" ask for nothing).
# Requests only (backend.agent.intent: at a clause's start). Not "note that …" (an aside: "Note that
# I'm using Python 3") nor "write down …" (a request for a list: "Write down the steps").
INTENT_WORDS = ("save a note", "save note", "save this", "save that", "save it", "take a note", "make a note",
                "add a note", "write a note", "write this down", "write that down", "note down", "note this down",
                "jot down", "remember that", "remember this", "remember my", "remember it")
assert MAX_TITLE_CHARS <= NOTE_TITLE_MAX and MAX_TEXT_CHARS <= NOTE_TEXT_MAX

PARAMETERS = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": MAX_TITLE_CHARS, "pattern": NOTE_PATTERN,
                  "description": "a few words"},
        "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS, "pattern": NOTE_PATTERN,
                 "description": "what the user asked to note, in one line"},
    },
    "required": ["title", "text"],
    "additionalProperties": False,
}


# A request whose note is the rest of the message ("Save a note: …", "Remember that …", "Save
# this: …", "Remember my …"): the program writes the call (the "planned" policy). SmolLM2-135M,
# asked to write it, repeated the note until max_tokens cut the block (2026-12-02, new-user run).
_REQUEST = re.compile(
    r"(?:(?:save|take|make|add|write|jot)\s+(?:a\s+|this\s+|that\s+)?note(?:\s+down)?|note\s+(?:this\s+)?down|"
    r"jot\s+down|write\s+(?:this|that)\s+down|save\s+(?:this|that|it)|remember(?:\s+(?:that|this|it))?)"
    r"(?:\s+(?:that\s+says|which\s+says|saying|that))?\s*[:,\-\u2014]?\s*(?P<body>.*)", re.IGNORECASE | re.DOTALL)
_NOT_A_BODY = re.compile(r"^(?:about|on|for|of|regarding)\b", re.IGNORECASE)  # the model must write those
TITLE_WORDS = 6


def planned_arguments(text: str) -> dict[str, Any] | None:
    """The note a request holds, as save_note's arguments: the text after the request's words
    ("Save a note: the code is 4411" -> text "the code is 4411"), made one line without the
    characters NOTE_PATTERN refuses, cut to MAX_TEXT_CHARS; the title its first TITLE_WORDS words.
    None when there is nothing after them or it names a topic ("Save a note about the bridge"):
    the model writes the note."""
    match = _REQUEST.search(text)
    if match is None:
        return None
    body = re.sub(f"[{_NOT_IN_NOTES}]+", " ", match.group("body"))
    body = re.sub(r"\s+", " ", body).strip().rstrip(".!?").strip()[:MAX_TEXT_CHARS].strip()
    if not body or _NOT_A_BODY.match(body):
        return None
    title = " ".join(body.split()[:TITLE_WORDS])[:MAX_TITLE_CHARS].strip()
    return {"title": title, "text": body}


def make_run(notes: NoteService) -> Callable[[ToolContext, dict[str, Any]], ToolResult]:
    def run(context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
        try:
            saved = notes.add(context.user_id, arguments["title"], arguments["text"],
                              idempotency_key=context.idempotency_key, conversation_id=context.conversation_id or None)
        except (ValidationFailed, NotFound) as exc:
            raise ToolError(exc.message) from None
        note = saved.note
        return ToolResult(
            content=f"Saved the note titled {note.title!r} to the user's notes (note id {note.id}).",
            summary=f"Saved a note — {note.title}",
            data={"note_id": note.id, "title": note.title, "created": saved.created},
        )

    return run


def spec(notes: NoteService) -> ToolSpec:
    return ToolSpec(
        name="save_note",
        description="Save a short note (a title and its text) to the user's notes, which the user "
                    "reads on the Notes page.",
        parameters=PARAMETERS,
        permission="tools.save_note",
        side_effect=True,
        run=make_run(notes),
        intent_words=INTENT_WORDS,
        relevant=lambda user_id, text: True,  # planned only when the message asks (backend.agent.intent)
        planned_arguments=planned_arguments,
    )
