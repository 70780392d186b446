"""Export a conversation (JSON, Markdown), import our JSON, and export all of a user's data.

JSON (``FORMAT`` version 1)::

    {"format": "crescent.conversation", "version": 1, "exported_at": ISO 8601, "scope": "tree"|"branch",
     "conversation": {"id", "title", "created_at", "updated_at", "pinned", "use_documents",
                      "current_message_id", "settings": {"system_prompt", "temperature", "max_tokens", "use_tools",
                                        "agent_steps", "agent_tool_calls", "agent_tokens", "agent_wall_s"}},
     "messages": [{"id", "parent_id", "role", "content", "status", "finish_reason", "created_at"}, ...]}

Messages are in creation order, so a parent always comes before its children. "tree" holds every
message of every branch; "branch" the path from the first message to current_message_id (the
active branch). Markdown is for people: the active branch, or every message numbered with the
message it answers.

settings: the conversation's own (backend.conversation_settings.ConversationSettings; null: the
admin's default): use_tools and the run budget (agent_* in steps, calls, tokens, seconds) were
added to version 1 (a file without them imports as before: tools off, the defaults).

Import reads a file with backend.conversation_import (which says what it refuses) and stores it
as a new conversation of the importer, all or nothing; a run budget value above the importer's
admin's current maximum is stored capped at it.
"""

from __future__ import annotations

import json
import re
import zipfile
from datetime import datetime
from typing import IO, Any, Callable

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from backend.agent.access import BUDGET_FIELDS, budget_ceilings
from backend.agent.budget import BudgetLimit
from backend.conversation_import import FORMAT, FORMAT_VERSION, parse_import
from backend.conversations import (
    ConversationChanged, ConversationSummary, conversation_messages, owned_conversation, summary_of,
)
from backend.errors import NotFound, ValidationFailed
from backend.markdown import render_markdown
from backend.message_tree import Tree
from backend.models import ApiKey, Conversation, Document, Message, User, new_id, utcnow

SCOPES = ("branch", "tree")
_ROLE_LABEL = {"user": "You", "assistant": "Assistant", "system": "System"}


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def conversation_document(conversation: Conversation, messages: list[Message], scope: str) -> dict[str, Any]:
    """The JSON export of one conversation (see the module docstring). Raises ValidationFailed
    for an unknown scope."""
    if scope not in SCOPES:
        raise ValidationFailed(f"scope must be one of {', '.join(SCOPES)}")
    branch = Tree(messages).active_path(conversation.current_message_id)
    chosen = branch if scope == "branch" else messages
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "exported_at": utcnow().isoformat(),
        "scope": scope,
        "conversation": {
            "id": conversation.id,
            "title": conversation.title,
            "created_at": _iso(conversation.created_at),
            "updated_at": _iso(conversation.updated_at),
            "pinned": bool(conversation.pinned),
            "use_documents": bool(conversation.use_documents),
            "current_message_id": branch[-1].id if branch else None,
            "settings": {
                "system_prompt": conversation.system_prompt,
                "temperature": conversation.temperature,
                "max_tokens": conversation.max_tokens,
                "use_tools": bool(conversation.use_tools),
                **{name: getattr(conversation, name) for name in BUDGET_FIELDS},
            },
        },
        "messages": [
            {"id": m.id, "parent_id": m.parent_id, "role": m.role, "content": m.content, "status": m.status,
             "finish_reason": m.finish_reason, "created_at": _iso(m.created_at)}
            for m in chosen
        ],
    }


def _ending(message: Message) -> str:
    if message.finish_reason == "length":
        return "cut at the token limit"
    if message.status == "interrupted":
        return "interrupted"
    if message.finish_reason == "abort":
        return "stopped"
    if message.status == "error" or message.finish_reason == "error":
        return "failed"
    if message.status in ("streaming", "pending"):
        return "still being written"
    return ""


def conversation_markdown(conversation: Conversation, messages: list[Message], scope: str) -> str:
    """The Markdown export: a title, then each message under its author's name (for "tree",
    numbered, with the number of the message it answers when that is not the one above)."""
    if scope not in SCOPES:
        raise ValidationFailed(f"scope must be one of {', '.join(SCOPES)}")
    branch = Tree(messages).active_path(conversation.current_message_id)
    chosen = branch if scope == "branch" else messages
    number = {m.id: i for i, m in enumerate(chosen, 1)}
    what = "the active branch" if scope == "branch" else "every branch"
    lines = [f"# {conversation.title or 'New chat'}", "",
             f"_Exported from Crescent on {utcnow():%Y-%m-%d %H:%M} UTC: {what}, "
             f"{len(chosen)} message{'s' if len(chosen) != 1 else ''}._", ""]
    previous: str | None = None
    for m in chosen:
        parts = [f"**{_ROLE_LABEL.get(m.role, m.role)}**"]
        if scope == "tree":
            parts[0] = f"**{number[m.id]}. {_ROLE_LABEL.get(m.role, m.role)}**"
            if m.parent_id and m.parent_id != previous and m.parent_id in number:
                parts.append(f"answers {number[m.parent_id]}")
        parts.append(f"{m.created_at:%Y-%m-%d %H:%M} UTC")
        if _ending(m):
            parts.append(_ending(m))
        lines += ["---", "", " · ".join(parts), "", m.content.rstrip("\n"), ""]
        previous = m.id
    return "\n".join(lines)


# --- the service ---------------------------------------------------------------------------------


class ConversationTransfer:
    """Exports and imports of one user's conversations, and the archive of all his data.

    publish(user_id, ConversationChanged): told of an imported conversation ("created", then
    "pinned" if the file pins it), so the user's open pages list it; None: nobody is told.
    """

    def __init__(self, session_factory: sessionmaker[Session],
                 publish: Callable[[str, ConversationChanged], object] | None = None) -> None:
        self._sessions = session_factory
        self._publish = publish

    def export_json(self, user_id: str, conversation_id: str, scope: str = "tree") -> dict[str, Any]:
        """The conversation as our JSON document. Raises NotFound, ValidationFailed (scope)."""
        with self._sessions() as db:
            conversation = owned_conversation(db, user_id, conversation_id)
            return conversation_document(conversation, conversation_messages(db, conversation.id, user_id), scope)

    def export_markdown(self, user_id: str, conversation_id: str, scope: str = "branch") -> tuple[str, str]:
        """(title, Markdown text). Raises NotFound, ValidationFailed (scope)."""
        with self._sessions() as db:
            conversation = owned_conversation(db, user_id, conversation_id)
            messages = conversation_messages(db, conversation.id, user_id)
            return conversation.title, conversation_markdown(conversation, messages, scope)

    def import_json(self, user_id: str, data: bytes,
                    budget_limits: dict[str, BudgetLimit] | None = None) -> ConversationSummary:
        """A new conversation of `user_id` from a conversation file. Raises ImportTooLarge and
        ValidationFailed (see backend.conversation_import.parse_import); nothing is stored unless all of it is.

        budget_limits: backend.agent.access.budget_limits of the importer's admin's current
        settings (None: the widest ranges); a run budget value of the file above its maximum is
        stored as that maximum (the most it can get here; backend.conversation_import says why)."""
        parsed = parse_import(data)
        limits = budget_limits or budget_ceilings()
        budget = {name: None if value is None else min(value, limits[name].maximum)
                  for name, value in parsed.budget.items()}
        rendered = [render_markdown(m.content) for m in parsed.messages]
        ids = [new_id() for _ in parsed.messages]
        with self._sessions() as db:
            if db.get(User, user_id) is None:
                raise NotFound("no such user")
            now = utcnow()
            conversation = Conversation(
                id=new_id(), user_id=user_id, title=parsed.title, created_at=min(parsed.created_at, now),
                updated_at=now, pinned=parsed.pinned, use_documents=parsed.use_documents,
                system_prompt=parsed.system_prompt, temperature=parsed.temperature, max_tokens=parsed.max_tokens,
                use_tools=parsed.use_tools, **budget,
                current_message_id=ids[parsed.current] if parsed.current is not None else None,
            )
            db.add(conversation)
            db.flush()
            # In file order: every parent is inserted before its children (foreign key).
            for position, (m, html) in enumerate(zip(parsed.messages, rendered)):
                db.add(Message(
                    id=ids[position], conversation_id=conversation.id, user_id=user_id, position=position,
                    role=m.role, content=m.content, html=html, status=m.status, finish_reason=m.finish_reason,
                    parent_id=ids[m.parent] if m.parent is not None else None,
                    created_at=m.created_at, updated_at=m.created_at,
                ))
                db.flush()
            db.commit()
            summary = summary_of(conversation)
        if self._publish is not None:
            self._publish(user_id, ConversationChanged("created", summary.id, summary.title))
            if summary.pinned:  # "created" carries no pin: the open pages hear of it next
                self._publish(user_id, ConversationChanged("pinned", summary.id, summary.title))
        return summary

    def export_archive(self, user_id: str, out: IO[bytes]) -> None:
        """Write a zip of everything of `user_id` to `out`: account.json (no password hash, no
        session or key secrets), documents.json (metadata of his current documents), and each
        conversation as conversations/NAME.json (every branch) and NAME.md (the active branch).
        Raises NotFound for an unknown user."""
        with self._sessions() as db, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            user = db.get(User, user_id)
            if user is None:
                raise NotFound("no such user")
            keys = db.scalars(select(ApiKey).where(ApiKey.user_id == user_id).order_by(ApiKey.created_at))
            account = {
                "id": user.id, "username": user.username, "role": user.role, "status": user.status,
                "theme": user.theme, "created_at": _iso(user.created_at), "exported_at": utcnow().isoformat(),
                "api_keys": [{"name": k.name, "prefix": k.prefix, "created_at": _iso(k.created_at),
                              "last_used_at": _iso(k.last_used_at), "revoked_at": _iso(k.revoked_at)} for k in keys],
            }
            archive.writestr("account.json", _dumps(account))
            documents = db.scalars(
                select(Document).where(Document.user_id == user_id, Document.status != "superseded")
                .order_by(Document.name, Document.version)
            )
            archive.writestr("documents.json", _dumps([
                {"id": d.id, "name": d.name, "version": d.version, "kind": d.kind, "size_bytes": d.size_bytes,
                 "sha256": d.sha256, "status": d.status, "shared": d.shared, "num_chunks": d.num_chunks,
                 "created_at": _iso(d.created_at), "updated_at": _iso(d.updated_at)} for d in documents
            ]))
            conversations = db.scalars(
                select(Conversation).where(Conversation.user_id == user_id).order_by(Conversation.created_at)
            ).all()
            for conversation in conversations:
                messages = conversation_messages(db, conversation.id, user_id)
                name = f"conversations/{conversation.created_at:%Y-%m-%d}-{slug(conversation.title)}-{conversation.id[:8]}"
                archive.writestr(name + ".json", _dumps(conversation_document(conversation, messages, "tree")))
                archive.writestr(name + ".md", conversation_markdown(conversation, messages, "branch"))


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def slug(title: str, max_chars: int = 40) -> str:
    """An ASCII file-name part for a title ("Plan: día 1!" -> "Plan-d-a-1"); "conversation" if empty."""
    return re.sub(r"[^A-Za-z0-9]+", "-", title)[:max_chars].strip("-") or "conversation"
