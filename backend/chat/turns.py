"""Stored turns: a user message and its assistant reply as rows, written as the reply grows.

Sync database functions (the service calls them through ``asyncio.to_thread``, or directly when
they must not be skipped). The assistant row is inserted with status "streaming" before the
generation starts; `flush` writes its content while it streams (guarded on the status, so a late
flush never overwrites the end); `finish` writes the end. A crash leaves the row "streaming" for
``ConversationService.mark_interrupted_on_startup``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from backend.conversations import make_title
from backend.errors import ValidationFailed
from backend.generator import ChatMessage, GenerationDone, GenerationError, GenerationParams
from backend.markdown import render_markdown
from backend.models import Conversation, Message, new_id, utcnow

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 32_000
MAX_CLIENT_MSG_ID_CHARS = 64


@dataclass
class Turn:
    """What a send stored (or found stored, for a duplicate), and what its reply needs."""

    conversation_id: str
    title: str
    user_message_id: str
    assistant_message_id: str
    duplicate: bool
    client_msg_id: str = ""
    user_text: str = ""
    new_conversation: bool = False
    stored: Message | None = None  # the assistant row, for a duplicate
    # For a new turn: the prompt, or why it could not be built; the settings it was built with.
    messages: list[ChatMessage] = field(default_factory=list)
    prompt_tokens: int = 0
    prompt_error: GenerationError | None = None
    params: GenerationParams | None = None
    sources: list[dict[str, Any]] = field(default_factory=list)  # citations in the prompt
    unwatched_s: int | None = None  # RuntimeSettings.unwatched_reply_s when it started


@dataclass
class Ending:
    """How a reply ended, as stored: finish_reason, status, error (for people), the engine's
    final event when there was one."""

    finish_reason: str
    status: str
    error: str | None = None
    done: GenerationDone | None = None


def validate(client_msg_id: object, conversation_id: object, text: object) -> None:
    """Raises ValidationFailed for a send the service cannot take."""
    if not isinstance(client_msg_id, str) or not 0 < len(client_msg_id) <= MAX_CLIENT_MSG_ID_CHARS:
        raise ValidationFailed(f"client_msg_id must be 1 to {MAX_CLIENT_MSG_ID_CHARS} characters")
    if conversation_id is not None and (not isinstance(conversation_id, str) or len(conversation_id) > 64):
        raise ValidationFailed("conversation_id must be a string or null")
    if not isinstance(text, str) or not text.strip():
        raise ValidationFailed("message text must not be empty")
    if len(text) > MAX_TEXT_CHARS:
        raise ValidationFailed(f"message text must be at most {MAX_TEXT_CHARS} characters")


def earlier_messages(db: Session, conversation_id: str, user_id: str) -> list[Message]:
    return list(db.scalars(
        select(Message).where(Message.conversation_id == conversation_id, Message.user_id == user_id)
        .order_by(Message.position)
    ))


def in_prompt(message: Message) -> bool:
    # Interrupted replies keep their partial text in the prompt; empty failed ones are skipped.
    return message.role == "user" or (message.role == "assistant" and bool(message.content.strip()))


def as_chat_message(message: Message) -> ChatMessage:
    return ChatMessage(message.role, message.content)


def stored_turn(db: Session, user_id: str, client_msg_id: str) -> Turn | None:
    """The turn `user_id` stored under `client_msg_id`, or None."""
    user_message = db.scalar(select(Message).where(
        Message.user_id == user_id, Message.client_msg_id == client_msg_id, Message.role == "user"))
    if user_message is None:
        return None
    conversation = db.get(Conversation, user_message.conversation_id)
    assistant = db.scalar(select(Message).where(Message.user_id == user_id, Message.parent_id == user_message.id))
    return Turn(
        conversation_id=user_message.conversation_id,
        title=conversation.title if conversation is not None else "",
        user_message_id=user_message.id,
        assistant_message_id=assistant.id if assistant is not None else "",
        duplicate=True,
        client_msg_id=client_msg_id,
        stored=assistant,
    )


def owned_reply(session_factory: sessionmaker[Session], user_id: str, message_id: str) -> Message | None:
    """The assistant message `message_id` if `user_id` owns it, else None."""
    with session_factory() as db:
        return db.scalar(select(Message).where(
            Message.id == message_id, Message.user_id == user_id, Message.role == "assistant"))


def insert_turn(db: Session, conversation: Conversation, earlier: list[Message], user_id: str,
                client_msg_id: str, text: str, citations: list[dict[str, Any]] | None = None) -> Turn:
    """Store the user message and the "streaming" assistant row (commits)."""
    position = earlier[-1].position + 1 if earlier else 0
    now = utcnow()
    if not conversation.title:
        conversation.title = make_title(text)
    conversation.updated_at = now
    user_message = Message(
        id=new_id(), conversation_id=conversation.id, user_id=user_id, position=position,
        role="user", content=text, html=render_markdown(text), status="complete",
        client_msg_id=client_msg_id, created_at=now, updated_at=now,
    )  # fmt: skip
    assistant = Message(
        id=new_id(), conversation_id=conversation.id, user_id=user_id, position=position + 1,
        role="assistant", content="", html="", status="streaming", parent_id=user_message.id,
        created_at=now, updated_at=now, sources=None if citations is None else json.dumps(citations),
    )  # fmt: skip
    db.add(user_message)
    db.flush()
    db.add(assistant)
    db.commit()
    return Turn(conversation.id, conversation.title, user_message.id, assistant.id, False,
                client_msg_id=client_msg_id, user_text=text)


def flush(session_factory: sessionmaker[Session], message_id: str, content: str, html: str) -> None:
    """Write a streaming reply's text so far (no-op once it has ended)."""
    with session_factory() as db:
        db.execute(update(Message).where(Message.id == message_id, Message.status == "streaming")
                   .values(content=content, html=html, updated_at=utcnow()))
        db.commit()


def finish(session_factory: sessionmaker[Session], message_id: str, conversation_id: str, content: str,
           html: str, ending: Ending) -> None:
    """Write a reply's end. A failure is logged: the row stays "streaming" and the next
    start-up marks it interrupted."""
    done = ending.done
    values: dict[str, Any] = dict(
        content=content, html=html, status=ending.status, finish_reason=ending.finish_reason,
        error=ending.error, updated_at=utcnow(),
    )  # fmt: skip
    if done is not None:
        values.update(
            prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens,
            queue_ms=done.queue_ms, ttft_ms=done.ttft_ms, decode_tokens_per_s=done.decode_tokens_per_s,
        )  # fmt: skip
    try:
        with session_factory() as db:
            db.execute(update(Message).where(Message.id == message_id).values(**values))
            db.execute(update(Conversation).where(Conversation.id == conversation_id).values(updated_at=utcnow()))
            db.commit()
    except Exception:
        log.exception("storing the end of reply %s failed", message_id)
