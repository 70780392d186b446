"""The `save_note` tool: adds a note to the user's notes (backend/notes.py), idempotent on the
call's ToolContext.idempotency_key, so a retried call never writes a second note."""

from __future__ import annotations

from typing import Any, Callable

from backend.agent.tools import ToolContext, ToolError, ToolResult, ToolSpec
from backend.errors import NotFound, ValidationFailed
from backend.models import NOTE_TEXT_MAX, NOTE_TITLE_MAX
from backend.notes import NoteService

PARAMETERS = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": NOTE_TITLE_MAX},
        "text": {"type": "string", "minLength": 1, "maxLength": NOTE_TEXT_MAX},
    },
    "required": ["title", "text"],
    "additionalProperties": False,
}


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
    )
