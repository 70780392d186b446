"""A user's notes (issue 15): written by the agent's `save_note` tool, listed and deleted on the
/notes page and GET /api/notes. Every call is owner-checked: another user's note is NotFound.

Writes are idempotent on a key (the tool call's "{run_id}:{step}:{call}"): `notes.idempotency_key`
is UNIQUE, and an insert that loses the race (IntegrityError, SQLite and PostgreSQL alike)
returns the note the winner stored, so a retried or duplicated call writes one note.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from backend.errors import NotFound, ValidationFailed
from backend.models import IDEMPOTENCY_KEY_MAX, NOTE_TEXT_MAX, NOTE_TITLE_MAX, Conversation, Note, new_id, utcnow

LIST_LIMIT = 500


@dataclass(frozen=True)
class NoteView:
    id: str
    title: str
    text: str
    created_at: datetime
    conversation_id: str | None


@dataclass(frozen=True)
class SavedNote:
    """The note add() returns; created False: the key had already stored it (nothing written)."""

    note: NoteView
    created: bool


def _view(note: Note) -> NoteView:
    return NoteView(note.id, note.title, note.text, note.created_at, note.conversation_id)


def validate_note(title: str, text: str) -> tuple[str, str]:
    """(title, text) with the title's whitespace collapsed to single spaces.

    Raises:
        ValidationFailed: title empty or over NOTE_TITLE_MAX characters, text empty (or only
            whitespace) or over NOTE_TEXT_MAX characters.
    """
    title = " ".join(title.split())
    if not title or len(title) > NOTE_TITLE_MAX:
        raise ValidationFailed(f"a note's title must be 1 to {NOTE_TITLE_MAX} characters")
    if not text.strip() or len(text) > NOTE_TEXT_MAX:
        raise ValidationFailed(f"a note's text must be 1 to {NOTE_TEXT_MAX} characters")
    return title, text


class NoteService:
    """Notes in the database. Thread-safe (a session per call).

    Args:
        session_factory: SQLAlchemy sessionmaker.
    """

    def __init__(self, session_factory: sessionmaker[Session]) -> None:
        self.session_factory = session_factory

    def list(self, user_id: str, limit: int = LIST_LIMIT) -> list[NoteView]:
        """The user's notes, newest first (at most `limit`)."""
        with self.session_factory() as session:
            rows = session.scalars(
                select(Note).where(Note.user_id == user_id).order_by(Note.created_at.desc(), Note.id).limit(limit)
            )
            return [_view(n) for n in rows]

    def get(self, user_id: str, note_id: str) -> NoteView:
        """Raises NotFound: no such note of this user."""
        with self.session_factory() as session:
            note = session.get(Note, note_id)
            if note is None or note.user_id != user_id:
                raise NotFound("no such note")
            return _view(note)

    def add(
        self, user_id: str, title: str, text: str, *, idempotency_key: str, conversation_id: str | None = None
    ) -> SavedNote:
        """Store a note, once per idempotency_key: a second call with the same key (even
        concurrently) writes nothing and returns the stored note with created False.

        Raises:
            ValidationFailed: bad title or text (validate_note), or a key over
                IDEMPOTENCY_KEY_MAX characters.
            NotFound: conversation_id is not one of the user's conversations, or the key was
                used by another user's note.
        """
        title, text = validate_note(title, text)
        if not idempotency_key or len(idempotency_key) > IDEMPOTENCY_KEY_MAX:
            raise ValidationFailed(f"an idempotency key must be 1 to {IDEMPOTENCY_KEY_MAX} characters")
        stored = self._by_key(user_id, idempotency_key)
        if stored is not None:
            return SavedNote(stored, False)
        try:
            with self.session_factory.begin() as session:
                if conversation_id is not None:
                    owner = session.scalar(select(Conversation.user_id).where(Conversation.id == conversation_id))
                    if owner != user_id:
                        raise NotFound("no such conversation")
                note = Note(id=new_id(), user_id=user_id, title=title, text=text, created_at=utcnow(),
                            idempotency_key=idempotency_key, conversation_id=conversation_id)
                session.add(note)
                session.flush()
                view = _view(note)
        except IntegrityError:
            # Another call with this key committed first (or the conversation was deleted
            # meanwhile: then there is no stored note and the error stands).
            stored = self._by_key(user_id, idempotency_key)
            if stored is None:
                raise NotFound("no such conversation") from None
            return SavedNote(stored, False)
        return SavedNote(view, True)

    def _by_key(self, user_id: str, idempotency_key: str) -> NoteView | None:
        with self.session_factory() as session:
            note = session.scalar(select(Note).where(Note.idempotency_key == idempotency_key))
            if note is None:
                return None
            if note.user_id != user_id:
                raise NotFound("no such note")
            return _view(note)

    def delete(self, user_id: str, note_id: str) -> None:
        """Raises NotFound: no such note of this user."""
        with self.session_factory.begin() as session:
            deleted = session.execute(delete(Note).where(Note.id == note_id, Note.user_id == user_id)).rowcount
        if not deleted:
            raise NotFound("no such note")
