"""Conversations and their messages, always read through the owner.

Every query filters by `user_id` in SQL, so another user's id behaves exactly like an id that
does not exist (NotFound), and no code path can forget the check after loading a row.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Callable, Sequence

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session, sessionmaker

from backend.agent.access import BUDGET_FIELDS
from backend.agent.budget import BudgetLimit
from backend.agent.records import interrupt_orphaned_runs
from backend.conversation_settings import ConversationSettings, validate_settings
from backend.errors import NotFound, ValidationFailed
from backend.message_tree import Tree, sibling_ids
from backend.models import Conversation, Message, utcnow

log = logging.getLogger(__name__)

TITLE_MAX = 60
FINISH_ABORT = "abort"
# Stored in `error` of a reply a previous process left streaming, shown to the person.
REASON_SERVER_RESTARTED = "the server stopped before the reply finished"


@dataclass(frozen=True)
class ConversationChanged:
    """An account event (backend.chat.channels): kind "created" | "renamed" | "deleted" |
    "pinned" | "unpinned"."""

    kind: str
    conversation_id: str
    title: str = ""


@dataclass(frozen=True)
class ConversationSummary:
    """use_documents: every turn searches the owner's documents (docs/INTERFACES.md 8).
    pinned: listed before the others (the sidebar's "Pinned" group)."""

    id: str
    title: str
    created_at: datetime
    updated_at: datetime
    use_documents: bool = False
    pinned: bool = False


def ended_by_budget(finish_reason: str | None, status: str, error: str | None) -> bool:
    """Whether a reply with these endings is an agent reply whose run its budget ended ("Stopped: the
    step limit (3) was reached": finish_reason "abort" with the ending as its error, status
    "complete"; backend/chat/agent_turn.py). A reply stopped by the person has no error. Such a reply
    is regenerated, not continued (backend.chat.turns; the page shows no Continue)."""
    return finish_reason == FINISH_ABORT and status == "complete" and bool(error)


@dataclass(frozen=True)
class MessageView:
    """A stored message. html is sanitized and safe to insert as is.

    queue_ms, ttft_ms, total_ms: milliseconds (total_ms: how long the reply took, Message.total_ms);
    decode_tokens_per_s: tokens per second (None if unknown).
    sources: an assistant reply's citations, numbered as the model saw them: dicts of
    backend.rag.sources.citation (n, chunk_id, document_id, name, version, heading_path, page,
    excerpt); empty when the turn used no documents.
    """

    id: str
    role: str
    content: str
    html: str
    status: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    queue_ms: float | None
    ttft_ms: float | None
    decode_tokens_per_s: float | None
    total_ms: float | None
    error: str | None
    created_at: datetime
    sources: list[dict[str, Any]] = field(default_factory=list)
    parent_id: str | None = None
    # The ids of this message and its siblings (the alternatives made by regenerate or edit),
    # in creation order: the page shows "‹ i/n ›" when there are several.
    siblings: tuple[str, ...] = ()
    # The trace of the turn that made (or last continued) a reply (backend/tracing.py).
    trace_id: str | None = None

    @property
    def budget_ended(self) -> bool:
        """Whether its agent run's budget ended it (ended_by_budget)."""
        return ended_by_budget(self.finish_reason, self.status, self.error)

    @property
    def sibling_index(self) -> int:
        """1-based position among its siblings (1 when it has none)."""
        return self.siblings.index(self.id) + 1 if self.id in self.siblings else 1


@dataclass(frozen=True)
class ConversationView:
    """messages: the active branch, oldest first (the path from the root to current_message_id)."""

    id: str
    title: str
    messages: list[MessageView]
    use_documents: bool = False
    current_message_id: str | None = None
    settings: ConversationSettings = ConversationSettings()
    pinned: bool = False


_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def clean_title(title: str) -> str:
    """`title` with its whitespace collapsed. Raises ValidationFailed for a control character
    (NUL included, which PostgreSQL cannot store) or a lone surrogate, which an export could not
    carry back in."""
    if _CONTROL_CHARS.search(title) or "\x7f" in title:
        raise ValidationFailed("title holds a control character")
    try:
        title.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationFailed("title holds a lone UTF-16 surrogate, which is not a character") from None
    return " ".join(title.split())


def make_title(text: str, limit: int = TITLE_MAX) -> str:
    """A conversation title: the first `limit` characters of `text`, whitespace collapsed, cut at
    a word boundary when one is near, with an ellipsis when cut."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def summary_of(conversation: Conversation) -> ConversationSummary:
    return ConversationSummary(
        id=conversation.id,
        title=conversation.title,
        created_at=conversation.created_at,
        updated_at=conversation.updated_at,
        use_documents=bool(conversation.use_documents),
        pinned=bool(conversation.pinned),
    )


def load_sources(stored: str | None) -> list[dict[str, Any]]:
    """The citations stored in `Message.sources` (JSON), [] for NULL or an unreadable value."""
    if not stored:
        return []
    try:
        value = json.loads(stored)
    except ValueError:
        log.warning("unreadable sources column: %.80r", stored)
        return []
    return [s for s in value if isinstance(s, dict)] if isinstance(value, list) else []


def view_of(message: Message, siblings: Sequence[str] = ()) -> MessageView:
    return MessageView(
        id=message.id,
        role=message.role,
        content=message.content,
        html=message.html,
        status=message.status,
        finish_reason=message.finish_reason,
        prompt_tokens=message.prompt_tokens,
        completion_tokens=message.completion_tokens,
        queue_ms=message.queue_ms,
        ttft_ms=message.ttft_ms,
        decode_tokens_per_s=message.decode_tokens_per_s,
        total_ms=message.total_ms,
        error=message.error,
        created_at=message.created_at,
        sources=load_sources(message.sources),
        parent_id=message.parent_id,
        siblings=tuple(siblings) or (message.id,),
        trace_id=message.trace_id,
    )


def settings_of(conversation: Conversation) -> ConversationSettings:
    return ConversationSettings(conversation.system_prompt, conversation.temperature, conversation.max_tokens,
                                bool(conversation.use_tools),
                                **{name: getattr(conversation, name) for name in BUDGET_FIELDS})


def conversation_messages(db: Session, conversation_id: str, user_id: str) -> list[Message]:
    """Every message of the conversation (all branches), in creation order."""
    return list(db.scalars(
        select(Message).where(Message.conversation_id == conversation_id, Message.user_id == user_id)
        .order_by(Message.position)
    ))


def branch_view(db: Session, conversation: Conversation, user_id: str) -> ConversationView:
    """The conversation with its active branch (each message with its siblings' ids)."""
    tree = Tree(conversation_messages(db, conversation.id, user_id))
    path = tree.active_path(conversation.current_message_id)
    return ConversationView(
        id=conversation.id, title=conversation.title,
        messages=[view_of(m, ids) for m, ids in zip(path, sibling_ids(tree, path))],
        use_documents=bool(conversation.use_documents),
        current_message_id=path[-1].id if path else None,
        settings=settings_of(conversation), pinned=bool(conversation.pinned),
    )


def owned_conversation(db: Session, user_id: str, conversation_id: str) -> Conversation:
    """The conversation if `user_id` owns it. Raises NotFound otherwise (or if it does not exist)."""
    conversation = db.scalar(
        select(Conversation).where(Conversation.id == conversation_id, Conversation.user_id == user_id)
    )
    if conversation is None:
        raise NotFound("conversation not found")
    return conversation


class ConversationService:
    """Read, create, rename and delete a user's conversations.

    publish(user_id, ConversationChanged): told of every creation, rename and deletion (from the
    calling thread), so the user's open pages update their lists; None: nobody is told.
    """

    def __init__(self, session_factory: sessionmaker[Session],
                 publish: Callable[[str, ConversationChanged], object] | None = None) -> None:
        self._sessions = session_factory
        self._publish = publish

    def _tell(self, user_id: str, event: ConversationChanged) -> None:
        if self._publish is not None:
            try:
                self._publish(user_id, event)
            except Exception:
                log.exception("publishing %s failed", event)

    def stored_citation(self, user_id: str, document_id: str, chunk_id: int) -> dict[str, Any] | None:
        """The citation of chunk `chunk_id` of document `document_id` as the newest of `user_id`'s
        own replies stored it (backend.rag.sources.citation: name, version, heading, excerpt), or
        None. A new version of a document removes the old one's chunks; the replies that cited
        them keep their excerpt, which the citation's page then shows (new-user pass: the link
        was a 404)."""
        with self._sessions() as db:
            rows = db.scalars(
                select(Message.sources)
                .where(Message.user_id == user_id, Message.role == "assistant",
                       Message.sources.is_not(None), Message.sources.contains(document_id))
                .order_by(Message.created_at.desc()).limit(50)
            ).all()
        for stored in rows:
            for cited in load_sources(stored):
                if cited.get("document_id") == document_id and cited.get("chunk_id") == chunk_id:
                    return cited
        return None

    def list_conversations(self, user_id: str) -> list[ConversationSummary]:
        """The user's conversations: pinned ones first, then most recently updated first."""
        with self._sessions() as db:
            rows = db.scalars(
                select(Conversation)
                .where(Conversation.user_id == user_id)
                .order_by(Conversation.pinned.desc(), Conversation.updated_at.desc(), Conversation.id)
            )
            return [summary_of(c) for c in rows]

    def get_conversation(self, user_id: str, conversation_id: str) -> ConversationView:
        """A conversation with the messages of its active branch, oldest first. Raises NotFound."""
        with self._sessions() as db:
            return branch_view(db, owned_conversation(db, user_id, conversation_id), user_id)

    def switch_branch(self, user_id: str, conversation_id: str, message_id: str) -> ConversationView:
        """Make the branch through `message_id` the active one: its newest continuation becomes
        the conversation's current message (what the page's "‹ 2/3 ›" does). Returns the
        conversation along it. Raises NotFound (conversation or message unknown, or another
        user's) and ValidationFailed (message_id not a string)."""
        if not isinstance(message_id, str) or not message_id:
            raise ValidationFailed("message_id must be a message's id")
        with self._sessions() as db:
            conversation = owned_conversation(db, user_id, conversation_id)
            tree = Tree(conversation_messages(db, conversation.id, user_id))
            leaf = tree.newest_leaf(message_id)
            if leaf is None:
                raise NotFound("message not found")
            conversation.current_message_id = leaf.id
            db.commit()
            return branch_view(db, conversation, user_id)

    def update_settings(self, user_id: str, conversation_id: str, changes: dict[str, Any],
                        max_max_tokens: int, budget_limits: dict[str, BudgetLimit] | None = None
                        ) -> ConversationSettings:
        """Set some of the conversation's own settings; a None value goes back to the default.

        changes: any of system_prompt (str, at most MAX_SYSTEM_PROMPT_CHARS characters, no control
        characters but tab and line breaks), temperature (number in [0, 2]), max_tokens (whole
        number in [1, max_max_tokens], the admin's maximum), use_tools (bool), agent_steps, agent_tool_calls,
        agent_tokens, agent_wall_s (whole numbers within `budget_limits`: backend.agent.access.budget_limits
        of the admin's current settings; None: the widest ranges). Raises ValidationFailed (nothing
        stored) naming the field, NotFound.
        """
        values = validate_settings(changes, max_max_tokens, budget_limits)
        with self._sessions() as db:
            conversation = owned_conversation(db, user_id, conversation_id)
            for name, value in values.items():
                setattr(conversation, name, value)
            db.commit()
            return settings_of(conversation)

    def latest_use_tools(self, user_id: str) -> bool:
        """The "Use tools" setting of the user's most recently used conversation (False for none): a
        new chat starts with the person's last choice (new-user pass: the toggle was off in every new
        chat, to be turned on each time)."""
        with self._sessions() as db:
            latest = db.scalar(select(Conversation.use_tools).where(Conversation.user_id == user_id)
                               .order_by(Conversation.updated_at.desc(), Conversation.id.desc()).limit(1))
            return bool(latest)

    def set_use_documents(self, user_id: str, conversation_id: str, on: bool) -> None:
        """Turn document search on or off for the conversation's next turns. Raises NotFound
        (also for another user's id) and ValidationFailed when `on` is not a bool."""
        if not isinstance(on, bool):
            raise ValidationFailed("use_documents must be true or false")
        with self._sessions() as db:
            conversation = owned_conversation(db, user_id, conversation_id)
            conversation.use_documents = on
            db.commit()

    def set_pinned(self, user_id: str, conversation_id: str, pinned: bool) -> ConversationSummary:
        """Pin or unpin the conversation (its updated_at is kept: pinning is not activity).
        Every page of the user is told ("pinned" / "unpinned"). Raises NotFound (also for
        another user's id) and ValidationFailed when `pinned` is not a bool."""
        if not isinstance(pinned, bool):
            raise ValidationFailed("pinned must be true or false")
        with self._sessions() as db:
            conversation = owned_conversation(db, user_id, conversation_id)
            conversation.pinned = pinned
            db.commit()
            summary = summary_of(conversation)
        self._tell(user_id, ConversationChanged("pinned" if pinned else "unpinned", conversation_id, summary.title))
        return summary

    def create_conversation(self, user_id: str, title: str | None = None) -> ConversationSummary:
        """A new empty conversation. Raises ValidationFailed for a title over 200 characters."""
        title = clean_title(title or "")
        if len(title) > 200:
            raise ValidationFailed("title must be at most 200 characters")
        with self._sessions() as db:
            conversation = Conversation(user_id=user_id, title=title)
            db.add(conversation)
            db.commit()
            summary = summary_of(conversation)
        self._tell(user_id, ConversationChanged("created", summary.id, summary.title))
        return summary

    def rename_conversation(self, user_id: str, conversation_id: str, title: str) -> ConversationSummary:
        """Give the conversation a new title (whitespace collapsed, 1 to 200 characters).
        Raises NotFound and ValidationFailed."""
        if not isinstance(title, str):
            raise ValidationFailed("title must be a string")
        title = clean_title(title)
        if not 0 < len(title) <= 200:
            raise ValidationFailed("title must be 1 to 200 characters")
        with self._sessions() as db:
            conversation = owned_conversation(db, user_id, conversation_id)
            conversation.title = title
            db.commit()
            summary = summary_of(conversation)
        self._tell(user_id, ConversationChanged("renamed", conversation_id, title))
        return summary

    def delete_conversation(self, user_id: str, conversation_id: str) -> None:
        """Delete a conversation and its messages. Raises NotFound."""
        with self._sessions() as db:
            owned_conversation(db, user_id, conversation_id)
            # Explicit delete of the messages: the ORM-level delete does not rely on the
            # database's ON DELETE CASCADE being enabled.
            db.execute(delete(Message).where(Message.conversation_id == conversation_id))
            db.execute(
                delete(Conversation).where(Conversation.id == conversation_id, Conversation.user_id == user_id)
            )
            db.commit()
        self._tell(user_id, ConversationChanged("deleted", conversation_id))

    def interrupt_orphaned_replies(self, running_elsewhere: Callable[[list[str]], set[str]] | None = None,
                                   settled_s: float = 0.0) -> int:
        """Mark replies left `streaming`/`pending` by a process that is gone as `interrupted`
        (finish_reason "abort"); their flushed partial content is kept. Returns the count.

        One process (no REDIS_URL): call once at start-up, before serving, with no arguments:
        every such reply is an orphan. Several processes on one database: a reply stored as
        streaming may be running on another process, so pass `running_elsewhere(ids)`, which
        returns the ids some live process still runs (backend.cluster.relay.running_replies: its
        Redis Stream, renewed by a heartbeat, still exists), and `settled_s`, the seconds a row
        must have gone unwritten before it is judged (a reply stored a moment ago may not be
        mirrored yet); call it at start-up and periodically, so that the replies of a process
        that died are ended by the survivors. `running_elsewhere` may raise (Redis down): then
        nothing is marked.
        """
        with self._sessions() as db:
            unfinished = (Message.status.in_(("streaming", "pending")),)
            if running_elsewhere is not None:
                cutoff = utcnow() - timedelta(seconds=settled_s)
                ids = list(db.scalars(select(Message.id).where(*unfinished, Message.updated_at <= cutoff)))
                if not ids:
                    return 0
                orphans = set(ids) - running_elsewhere(ids)
                if not orphans:
                    return 0
                unfinished = (*unfinished, Message.id.in_(orphans), Message.updated_at <= cutoff)
            result = db.execute(
                update(Message)
                .where(*unfinished)
                .values(status="interrupted", finish_reason=FINISH_ABORT,
                        error=REASON_SERVER_RESTARTED, updated_at=utcnow())
            )
            interrupt_orphaned_runs(db)  # their agent runs too, steps kept (backend/agent/records.py)
            db.commit()
            return result.rowcount or 0
