"""Stored turns: a user message and its assistant reply as rows, written as the reply grows.

Sync database functions (the service calls them through ``asyncio.to_thread``, or directly when
they must not be skipped). The assistant row is inserted with status "streaming" before the
generation starts; `flush` writes its content while it streams (guarded on the status, so a late
flush never overwrites the end); `finish` writes the end. A crash leaves the row "streaming" for
``ConversationService.interrupt_orphaned_replies``.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from backend import tracing
from backend.conversations import conversation_messages, ended_by_budget, load_sources, make_title, owned_conversation
from backend.errors import NotFound, ValidationFailed
from backend.generator import (FINISH_ABORT, FINISH_LENGTH, ChatMessage, GenerationDone, GenerationError,
                               GenerationParams)
from backend.message_tree import Tree
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
    # those passages whole, as a search's result writes them (backend.agent.tools.passages.format_passages):
    # an agent run's calculation reads them when "Use my documents" put them in the prompt
    prompt_passages: str | None = None
    unwatched_s: int | None = None  # RuntimeSettings.unwatched_reply_s when it started
    # action: send | edit | regenerate | continue. parent_id: the message the turn's first new
    # message follows (a continue: the reply's parent). prefix: a continued reply's text so far.
    action: str = "send"
    parent_id: str | None = None
    prefix: str = ""
    prior_completion_tokens: int = 0
    use_tools: bool = False  # the conversation's ⚙ tools setting when it started (an agent run)
    timezone: str | None = None  # TurnRequest.timezone: the tools' clock is read in it
    # Its ⚙ "Tool run limits" (backend.agent.access.BUDGET_FIELDS -> value, None: the admin's default).
    agent_budget: dict[str, int | None] = field(default_factory=dict)


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


ACTIONS = ("send", "edit", "regenerate", "continue")
# Endings after which a reply can be continued: cut at the token limit, stopped, interrupted.
CONTINUABLE_FINISH = (FINISH_LENGTH, FINISH_ABORT)


@dataclass(frozen=True)
class TurnRequest:
    """What a page asks for (docs/INTERFACES.md section 4).

    action: send (a new user message after `message_id`, None: after the conversation's current
    message; conversation_id None: a new conversation) | edit (a sibling of the user message
    `message_id` with `text`, and its reply) | regenerate (a sibling of the reply `message_id`)
    | continue (the reply `message_id` resumes where it ended).
    """

    action: str
    client_msg_id: str
    conversation_id: str | None = None
    text: str = ""
    message_id: str | None = None
    use_documents: bool | None = None
    use_tools: bool | None = None  # None keeps the conversation's ⚙ "Use tools"; a bool sets it
    timezone: str | None = None  # the person's IANA time zone (known_zone), for current_time; None: UTC


@dataclass
class Plan:
    """Where a turn goes, read before anything is written.

    conversation: None for a new one. history: the prompt's messages along the branch, ending
    with the new question (send, edit), the question answered again (regenerate) or the partial
    reply (continue). parent_id: the new user message's parent (send, edit). answering: the user
    message a regenerate answers. target: the reply continued. streaming: set when that reply is
    streaming already (the request is then a watch). query: what the documents are searched for.
    """

    conversation: Conversation | None
    history: list[ChatMessage]
    query: str
    parent_id: str | None = None
    answering: Message | None = None
    target: Message | None = None
    streaming: Message | None = None
    target_sources: list[dict[str, Any]] | None = None


def validate_request(request: TurnRequest) -> None:
    """Raises ValidationFailed for a request the service cannot take."""
    if request.action not in ACTIONS:
        raise ValidationFailed(f"action must be one of {', '.join(ACTIONS)}")
    if request.action in ("send", "edit"):
        validate(request.client_msg_id, request.conversation_id, request.text)
    elif not isinstance(request.client_msg_id, str) or not 0 < len(request.client_msg_id) <= MAX_CLIENT_MSG_ID_CHARS:
        raise ValidationFailed(f"client_msg_id must be 1 to {MAX_CLIENT_MSG_ID_CHARS} characters")
    if request.action != "send" and (not isinstance(request.message_id, str) or not request.message_id):
        raise ValidationFailed(f"{request.action} needs the message_id of the message it acts on")
    if request.message_id is not None and (not isinstance(request.message_id, str) or len(request.message_id) > 64):
        raise ValidationFailed("message_id must be a message's id")
    if request.use_documents is not None and not isinstance(request.use_documents, bool):
        raise ValidationFailed("use_documents must be true, false or null")
    if request.use_tools is not None and not isinstance(request.use_tools, bool):
        raise ValidationFailed("use_tools must be true, false or null")


# The longest IANA zone name accepted ("America/Argentina/ComodRivadavia" is 32).
MAX_ZONE_CHARS = 64


def known_zone(name: str | None) -> str | None:
    """`name` when it is an IANA time zone the system's tz database knows ("Europe/Paris"), else
    None (a browser's zone is a hint: an unknown or malformed one falls back to UTC)."""
    if not isinstance(name, str) or not 0 < len(name) <= MAX_ZONE_CHARS:
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # ValueError: "../etc"; OSError: a directory
        return None
    return name


def locate(db: Session, user_id: str, request: TurnRequest) -> Plan:
    """Read the conversation and the branch a request acts on. Raises NotFound (an unknown id,
    or another user's) and ValidationFailed (an action that does not apply to that message)."""
    if request.action == "send":
        if request.conversation_id is None:
            if request.message_id is not None:
                raise ValidationFailed("a new conversation has no message to follow")
            return Plan(None, [ChatMessage("user", request.text)], request.text)
        conversation = owned_conversation(db, user_id, request.conversation_id)
        tree = Tree(conversation_messages(db, conversation.id, user_id))
        if request.message_id is not None:
            if request.message_id not in tree:
                raise NotFound("the message to follow is not in this conversation")
            parent_id: str | None = request.message_id
        else:
            leaf = tree.active_leaf(conversation.current_message_id)
            parent_id = leaf.id if leaf is not None else None
        history = history_of(tree.path_to(parent_id)) + [ChatMessage("user", request.text)]
        return Plan(conversation, history, request.text, parent_id=parent_id)
    assert request.message_id is not None
    role = "user" if request.action == "edit" else "assistant"
    target = owned_message(db, user_id, request.message_id, role)
    if target is None:
        raise NotFound(f"there is no such {'message' if role == 'user' else 'reply'}")
    conversation = owned_conversation(db, user_id, target.conversation_id)
    if request.conversation_id is not None and request.conversation_id != conversation.id:
        raise NotFound("the message is not in this conversation")
    tree = Tree(conversation_messages(db, conversation.id, user_id))
    if request.action == "edit":
        history = history_of(tree.path_to(target.parent_id)) + [ChatMessage("user", request.text)]
        return Plan(conversation, history, request.text, parent_id=target.parent_id)
    question = tree.parent_of(target)
    if question is None or question.role != "user":
        raise ValidationFailed("this reply answers no message of yours")
    if request.action == "regenerate":
        return Plan(conversation, history_of(tree.path_to(question.id)), question.content, answering=question)
    if target.status in ("streaming", "pending"):
        return Plan(conversation, [], "", target=target, streaming=target)
    if not tree.is_leaf(target.id):
        raise ValidationFailed("only the last reply of a branch can be continued")
    if not target.content.strip() or not (target.finish_reason in CONTINUABLE_FINISH or target.status == "interrupted"):
        raise ValidationFailed("only a reply cut at the token limit, stopped or interrupted can be continued")
    if ended_by_budget(target.finish_reason, target.status, target.error):
        # its text continued without tools would drop the notice and finish no step (new-user pass)
        raise ValidationFailed("a reply its agent run's budget ended cannot be continued: regenerate it (the "
                               "conversation's settings set the budget)")
    return Plan(conversation, history_of(tree.path_to(target.id)), question.content, target=target,
                target_sources=load_sources(target.sources))


def streaming_turn(reply: Message, conversation: Conversation | None, client_msg_id: str) -> Turn:
    """A continue of a reply that is streaming already: the request watches it (a retried frame)."""
    return Turn(reply.conversation_id, conversation.title if conversation is not None else "", reply.parent_id or "",
                reply.id, True, client_msg_id=client_msg_id, stored=reply, action="continue",
                parent_id=reply.parent_id)


def next_position(db: Session, conversation_id: str) -> int:
    """The position a new message of the conversation takes (creation order, unique)."""
    top = db.scalar(select(func.max(Message.position)).where(Message.conversation_id == conversation_id))
    return 0 if top is None else top + 1


def in_prompt(message: Message) -> bool:
    # Interrupted replies keep their partial text in the prompt; empty failed ones are skipped.
    return message.role == "user" or (message.role == "assistant" and bool(message.content.strip()))


def as_chat_message(message: Message) -> ChatMessage:
    return ChatMessage(message.role, message.content)


def history_of(path: list[Message]) -> list[ChatMessage]:
    """The prompt's history along a branch (root first)."""
    return [as_chat_message(m) for m in path if in_prompt(m)]


def stored_turn(db: Session, user_id: str, client_msg_id: str) -> Turn | None:
    """The turn `user_id` stored under `client_msg_id` (a send, an edit, a regenerate or a
    continue), or None."""
    made = db.scalar(select(Message).where(Message.user_id == user_id, Message.client_msg_id == client_msg_id))
    if made is None:
        return None
    if made.role == "assistant":  # a regenerate (the row made) or a continue (the row resumed)
        assistant: Message | None = made
        user_message_id = made.parent_id or ""
    else:  # a send or an edit: the reply made with it is the user message's first child
        assistant = db.scalar(select(Message).where(Message.user_id == user_id, Message.parent_id == made.id,
                                                    Message.role == "assistant").order_by(Message.position).limit(1))
        user_message_id = made.id
    conversation = db.get(Conversation, made.conversation_id)
    return Turn(
        conversation_id=made.conversation_id,
        title=conversation.title if conversation is not None else "",
        user_message_id=user_message_id,
        assistant_message_id=assistant.id if assistant is not None else "",
        duplicate=True,
        client_msg_id=client_msg_id,
        stored=assistant,
    )


def owned_reply(session_factory: sessionmaker[Session], user_id: str, message_id: str) -> Message | None:
    """The assistant message `message_id` if `user_id` owns it, else None."""
    with session_factory() as db:
        return owned_message(db, user_id, message_id, "assistant")


def owned_message(db: Session, user_id: str, message_id: str, role: str | None = None) -> Message | None:
    """The message `message_id` if `user_id` owns it (and it has `role`, if given), else None."""
    query = select(Message).where(Message.id == message_id, Message.user_id == user_id)
    if role is not None:
        query = query.where(Message.role == role)
    return db.scalar(query)


def insert_turn(db: Session, conversation: Conversation, parent_id: str | None, user_id: str,
                client_msg_id: str, text: str, citations: list[dict[str, Any]] | None = None,
                action: str = "send") -> Turn:
    """Store the user message (after `parent_id` on its branch) and the "streaming" assistant
    row answering it; the new reply becomes the conversation's current message (commits)."""
    position = next_position(db, conversation.id)
    now = utcnow()
    if not conversation.title:
        conversation.title = make_title(text)
    user_message = Message(
        id=new_id(), conversation_id=conversation.id, user_id=user_id, position=position,
        # A question is shown as the text typed (templates/_message.html), never as Markdown:
        # nothing is rendered for it.
        role="user", content=text, html="", status="complete",
        client_msg_id=client_msg_id, parent_id=parent_id, created_at=now, updated_at=now,
    )  # fmt: skip
    db.add(user_message)
    db.flush()
    turn = insert_reply(db, conversation, user_message, user_id, None, citations, position + 1, action)
    turn.client_msg_id, turn.user_text, turn.parent_id = client_msg_id, text, parent_id
    return turn


def insert_reply(db: Session, conversation: Conversation, user_message: Message, user_id: str,
                 client_msg_id: str | None, citations: list[dict[str, Any]] | None = None,
                 position: int | None = None, action: str = "regenerate") -> Turn:
    """Store a "streaming" assistant row answering `user_message` (a regenerate adds a sibling
    of the earlier replies); it becomes the conversation's current message (commits)."""
    now = utcnow()
    assistant = Message(
        id=new_id(), conversation_id=conversation.id, user_id=user_id,
        position=next_position(db, conversation.id) if position is None else position,
        role="assistant", content="", html="", status="streaming", parent_id=user_message.id,
        client_msg_id=client_msg_id, created_at=now, updated_at=now,
        sources=None if citations is None else json.dumps(citations), trace_id=tracing.current_trace_id(),
    )  # fmt: skip
    db.add(assistant)
    db.flush()
    conversation.current_message_id = assistant.id
    conversation.updated_at = now
    db.commit()
    return Turn(conversation.id, conversation.title, user_message.id, assistant.id, False,
                client_msg_id=client_msg_id or "", user_text=user_message.content, action=action,
                parent_id=user_message.id)


def reopen_reply(db: Session, conversation: Conversation, reply: Message, client_msg_id: str,
                 citations: list[dict[str, Any]] | None) -> Turn:
    """Mark a finished reply "streaming" again to continue it; its text stays (commits). The
    continue's client_msg_id goes on the reply, so a retried frame is recognised (stored_turn)."""
    now = utcnow()
    reply.status, reply.finish_reason, reply.error, reply.updated_at = "streaming", None, None, now
    reply.client_msg_id = client_msg_id
    reply.trace_id = tracing.current_trace_id()  # the latest turn's trace
    if citations is not None:
        reply.sources = json.dumps(citations)
    conversation.current_message_id = reply.id
    conversation.updated_at = now
    db.commit()
    turn = Turn(conversation.id, conversation.title, reply.parent_id or "", reply.id, False,
                client_msg_id=client_msg_id, action="continue", parent_id=reply.parent_id,
                prefix=reply.content, prior_completion_tokens=reply.completion_tokens or 0)
    return turn


def flush(session_factory: sessionmaker[Session], message_id: str, content: str, html: str) -> None:
    """Write a streaming reply's text so far (no-op once it has ended)."""
    with session_factory() as db:
        db.execute(update(Message).where(Message.id == message_id, Message.status == "streaming")
                   .values(content=content, html=html, updated_at=utcnow()))
        db.commit()


def finish(session_factory: sessionmaker[Session], message_id: str, conversation_id: str, content: str,
           html: str, ending: Ending, prior_completion_tokens: int = 0) -> None:
    """Write a reply's end (a continued reply counts the tokens of its earlier parts too; one without
    a word keeps no sources). A failure is logged: the row stays "streaming" and the next start-up
    marks it interrupted."""
    done = ending.done
    values: dict[str, Any] = dict(
        content=content, html=html, status=ending.status, finish_reason=ending.finish_reason,
        error=ending.error, updated_at=utcnow(),
    )  # fmt: skip
    if not content.strip():
        values["sources"] = None  # a reply stopped before its first word drew on no document (new-user pass)
    if done is not None:
        completion = done.completion_tokens
        if completion is not None and prior_completion_tokens:
            completion += prior_completion_tokens
        values.update(
            prompt_tokens=done.prompt_tokens, completion_tokens=completion,
            queue_ms=done.queue_ms, ttft_ms=done.ttft_ms, decode_tokens_per_s=done.decode_tokens_per_s,
            total_ms=done.e2e_ms,
        )  # fmt: skip
    try:
        with session_factory() as db:
            db.execute(update(Message).where(Message.id == message_id).values(**values))
            db.execute(update(Conversation).where(Conversation.id == conversation_id).values(updated_at=utcnow()))
            db.commit()
    except Exception:
        log.exception("storing the end of reply %s failed", message_id)
