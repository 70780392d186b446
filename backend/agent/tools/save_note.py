"""The `save_note` tool: adds a note to the user's notes (backend/notes.py), idempotent on the
call's ToolContext.idempotency_key, so a retried call never writes a second note."""

from __future__ import annotations

import hashlib
import json
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
    characters NOTE_PATTERN refuses, cut to MAX_TEXT_CHARS; its title (note_title).
    None when there is nothing after them or it names a topic ("Save a note about the bridge"):
    the model writes the note."""
    match = _REQUEST.search(text)
    if match is None:
        return None
    body = re.sub(f"[{_NOT_IN_NOTES}]+", " ", match.group("body"))
    body = re.sub(r"\s+", " ", body).strip().rstrip(".!?").strip()[:MAX_TEXT_CHARS].strip()
    if not body or _NOT_A_BODY.match(body):
        return None
    return {"title": note_title(body), "text": body}


# Words a title does not end on ("the yoga studio is closed on").
_DANGLING = re.compile(r"\s+(?:and|or|but|the|a|an|of|on|in|at|to|for|with|by|from|is|are|was|my|our|your|that)$",
                       re.IGNORECASE)


def note_title(body: str) -> str:
    """A note's title from its text: all of it up to TITLE_WORDS + 2 words; else its first
    clause when that has at least 3 words, or its first TITLE_WORDS words, not ending on a word
    that needs the next, with "…" where cut; a capital first. New-user pass: a title cut at six
    words read "the yoga studio is closed on"."""
    words = body.split()
    if len(words) <= TITLE_WORDS + 2:
        title, cut = body, False
    else:
        clause = re.split(r"[,;:]\s|\s(?:because|so|but|and then)\s", body, maxsplit=1)[0].split()
        title = " ".join(clause if 3 <= len(clause) <= TITLE_WORDS + 2 else words[:TITLE_WORDS])
        while _DANGLING.search(title):
            title = _DANGLING.sub("", title)
        cut = True
    title = title[:MAX_TITLE_CHARS - 1].strip().rstrip(",;:")
    return (title[:1].upper() + title[1:] + ("…" if cut else ""))[:MAX_TITLE_CHARS]


# What a saved note's result says (make_run): its title as Python's repr wrote it.
_SAVED = re.compile(r"^(?P<already>Already saved|Saved) the note titled (['\"])(?P<title>.*)\2 to the user's notes")


def confirmation(content: str) -> str | None:
    """The answer after a note is saved: "Saved to your notes: “Gym code”." (the new-user pass read
    "The user decides to save the note…" from SmolLM2-135M), or "Already in your notes: “Gym
    code”." when it was saved for the same message before; None for another result."""
    m = _SAVED.match(content)
    if m is None:
        return None
    return f"{'Already in' if m.group('already') != 'Saved' else 'Saved to'} your notes: “{m.group('title')}”."


def effect_key(context: ToolContext, arguments: dict[str, Any]) -> str:
    """The note's idempotency key: the person's message the run answers and the note asked
    ("{request_id}:{sha256 of title and text, 24 hex}"), so a regenerated reply asking the same note
    of the same message finds it saved; the call's own key (run, step, call index) when the run
    answers no stored message."""
    if not context.request_id:
        return context.idempotency_key
    digest = hashlib.sha256(json.dumps([arguments.get("title"), arguments.get("text")]).encode()).hexdigest()[:24]
    return f"{context.request_id}:{digest}"


def make_run(notes: NoteService) -> Callable[[ToolContext, dict[str, Any]], ToolResult]:
    def run(context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
        try:
            saved = notes.add(context.user_id, arguments["title"], arguments["text"],
                              idempotency_key=effect_key(context, arguments), conversation_id=context.conversation_id or None)
        except (ValidationFailed, NotFound) as exc:
            raise ToolError(exc.message) from None
        note = saved.note
        if not saved.created:  # (asked again of the same message: a regenerated reply)
            return ToolResult(
                content=f"Already saved the note titled {note.title!r} to the user's notes (note id {note.id}).",
                summary=f"Already saved — {note.title}",
                data={"note_id": note.id, "title": note.title, "created": False},
            )
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
        confirmation=confirmation,
    )
