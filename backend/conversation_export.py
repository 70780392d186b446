"""Export a conversation (JSON, Markdown), import our JSON, and export all of a user's data.

JSON (``FORMAT`` version 1)::

    {"format": "crescent.conversation", "version": 1, "exported_at": ISO 8601, "scope": "tree"|"branch",
     "conversation": {"id", "title", "created_at", "updated_at", "pinned", "use_documents",
                      "current_message_id", "settings": {"system_prompt", "temperature", "max_tokens"}},
     "messages": [{"id", "parent_id", "role", "content", "status", "finish_reason", "created_at"}, ...]}

Messages are in creation order, so a parent always comes before its children. "tree" holds every
message of every branch; "branch" the path from the first message to current_message_id (the
active branch). Markdown is for people: the active branch, or every message numbered with the
message it answers.

Import trusts nothing in the file but its shape: it makes a new conversation of the importer
with new ids, keeps the tree (parent references resolved inside the file) and the active branch,
and refuses with ValidationFailed (ImportTooLarge over the size limit) anything malformed: wrong
format or version, unknown roles or statuses, a parent that is not an earlier message of the
file, over-long text, NUL / control characters / lone surrogates, too many messages. The file's
ids and any user id in it are only labels.
"""

from __future__ import annotations

import json
import math
import re
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import IO, Any, Callable

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from backend.conversations import ConversationChanged, ConversationSummary, owned_conversation, summary_of
from backend.errors import DomainError, NotFound, ValidationFailed
from backend.markdown import render_markdown
from backend.models import (
    MESSAGE_STATUSES, ROLES, ApiKey, Conversation, Document, Message, User, new_id, utcnow,
)

FORMAT = "crescent.conversation"
FORMAT_VERSION = 1
SCOPES = ("branch", "tree")
FINISH_REASONS = ("stop", "length", "abort", "error")
MAX_IMPORT_BYTES = 8 * 1024 * 1024
MAX_IMPORT_MESSAGES = 5000
MAX_MESSAGE_CHARS = 200_000
MAX_TITLE_CHARS = 200
MAX_FILE_ID_CHARS = 64
MAX_SYSTEM_PROMPT_CHARS = 8000  # as a conversation's own settings (backend.conversations)
MAX_TOKENS_CEILING = 1_000_000  # the admin's maximum applies when a reply is generated
IMPORTED_TITLE = "Imported conversation"
# Control characters other than tab, line feed and carriage return; and lone UTF-16 surrogates
# (JSON "\ud800" decodes to one, and no database can store it).
_BAD_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_ROLE_LABEL = {"user": "You", "assistant": "Assistant", "system": "System"}


class ImportTooLarge(DomainError):
    code = "import_too_large"
    default_message = f"the file is over the import limit of {MAX_IMPORT_BYTES // (1024 * 1024)} MB"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def active_branch(messages: list[Message], current_message_id: str | None) -> list[Message]:
    """The path from the root to `current_message_id` (or, when that is not a message of the
    list, to the newest message), oldest first. `messages` in creation order."""
    if not messages:
        return []
    by_id = {m.id: m for m in messages}
    node: Message | None = by_id.get(current_message_id or "") or messages[-1]
    path: list[Message] = []
    seen: set[str] = set()
    while node is not None and node.id not in seen:  # a cycle cannot be stored, but never loop
        seen.add(node.id)
        path.append(node)
        node = by_id.get(node.parent_id) if node.parent_id else None
    return path[::-1]


def _load(db: Session, user_id: str, conversation_id: str) -> tuple[Conversation, list[Message]]:
    conversation = owned_conversation(db, user_id, conversation_id)
    messages = list(db.scalars(
        select(Message).where(Message.conversation_id == conversation.id, Message.user_id == user_id)
        .order_by(Message.position)
    ))
    return conversation, messages


def conversation_document(conversation: Conversation, messages: list[Message], scope: str) -> dict[str, Any]:
    """The JSON export of one conversation (see the module docstring). Raises ValidationFailed
    for an unknown scope."""
    if scope not in SCOPES:
        raise ValidationFailed(f"scope must be one of {', '.join(SCOPES)}")
    branch = active_branch(messages, conversation.current_message_id)
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
    branch = active_branch(messages, conversation.current_message_id)
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


# --- import --------------------------------------------------------------------------------------


@dataclass
class ImportedMessage:
    file_id: str
    parent: int | None  # index of the parent in the file's message list
    role: str
    content: str
    status: str
    finish_reason: str | None
    created_at: datetime


@dataclass
class ParsedImport:
    """A checked conversation file, ready to store (no id of it is trusted)."""

    title: str
    created_at: datetime
    pinned: bool
    use_documents: bool
    system_prompt: str | None
    temperature: float | None
    max_tokens: int | None
    current: int | None  # index of the active branch's leaf
    messages: list[ImportedMessage] = field(default_factory=list)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _text(value: object, what: str, max_chars: int, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValidationFailed(f"{what} must be a string")
    if len(value) > max_chars:
        raise ValidationFailed(f"{what} is longer than {max_chars} characters")
    if _BAD_CHARS.search(value):
        raise ValidationFailed(f"{what} holds a NUL, control or unpaired surrogate character")
    return value


def _time(value: object, what: str, default: datetime) -> datetime:
    if value is None:
        return default
    if not isinstance(value, str) or len(value) > 64:
        raise ValidationFailed(f"{what} must be an ISO 8601 date-time string")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValidationFailed(f"{what} must be an ISO 8601 date-time string") from None
    return parsed.replace(tzinfo=timezone.utc) if parsed.tzinfo is None else parsed.astimezone(timezone.utc)


def _flag(value: object, what: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ValidationFailed(f"{what} must be true or false")
    return value


def _object(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationFailed(f"{what} must be an object")
    return value


def parse_import(data: bytes) -> ParsedImport:
    """Check a conversation file (UTF-8 JSON in our format). Raises ImportTooLarge over
    MAX_IMPORT_BYTES and ValidationFailed, naming the first problem, for anything else wrong."""
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportTooLarge()
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValidationFailed("the file is not UTF-8 JSON") from None
    doc = _object(doc, "the file")
    if doc.get("format") != FORMAT:
        raise ValidationFailed(f'this is not a Crescent conversation file ("format" must be "{FORMAT}")')
    if doc.get("version") != FORMAT_VERSION or isinstance(doc.get("version"), bool):
        raise ValidationFailed(f"unsupported version {doc.get('version')!r}; this server reads version {FORMAT_VERSION}")
    meta = _object(doc.get("conversation"), '"conversation"')
    settings = _object(meta.get("settings", {}) or {}, '"conversation.settings"')
    now = utcnow()
    title = " ".join((_text(meta.get("title", ""), "the title", 10 * MAX_TITLE_CHARS) or "").split())
    if len(title) > MAX_TITLE_CHARS:
        raise ValidationFailed(f"the title is longer than {MAX_TITLE_CHARS} characters")
    temperature = settings.get("temperature")
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))
                                    or not math.isfinite(temperature) or not 0 <= temperature <= 2):
        raise ValidationFailed("settings.temperature must be a number in [0, 2] or null")
    max_tokens = settings.get("max_tokens")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)
                                   or not 1 <= max_tokens <= MAX_TOKENS_CEILING):
        raise ValidationFailed(f"settings.max_tokens must be a whole number in [1, {MAX_TOKENS_CEILING}] or null")
    parsed = ParsedImport(
        title=title or IMPORTED_TITLE,
        created_at=_time(meta.get("created_at"), "conversation.created_at", now),
        pinned=_flag(meta.get("pinned"), "conversation.pinned"),
        use_documents=_flag(meta.get("use_documents"), "conversation.use_documents"),
        system_prompt=_text(settings.get("system_prompt"), "settings.system_prompt", MAX_SYSTEM_PROMPT_CHARS,
                            optional=True),
        temperature=None if temperature is None else float(temperature),
        max_tokens=max_tokens,
        current=None,
    )
    items = doc.get("messages")
    if not isinstance(items, list):
        raise ValidationFailed('"messages" must be a list')
    if len(items) > MAX_IMPORT_MESSAGES:
        raise ValidationFailed(f"the file has {len(items)} messages; the limit is {MAX_IMPORT_MESSAGES}")
    index: dict[str, int] = {}
    for i, item in enumerate(items):
        parsed.messages.append(_message(item, i, index, now))
        index[parsed.messages[-1].file_id] = i
    current = meta.get("current_message_id")
    if current is not None:
        if not isinstance(current, str) or current not in index:
            raise ValidationFailed("conversation.current_message_id must name a message of the file")
        parsed.current = index[current]
    elif parsed.messages:
        parsed.current = len(parsed.messages) - 1
    return parsed


def _message(item: object, i: int, index: dict[str, int], now: datetime) -> ImportedMessage:
    what = f"message {i + 1}"
    item = _object(item, what)
    file_id = _text(item.get("id"), f"{what}: id", MAX_FILE_ID_CHARS)
    if not file_id:
        raise ValidationFailed(f"{what}: id must not be empty")
    if file_id in index:
        raise ValidationFailed(f"{what}: id {file_id!r} is used twice")
    parent_id = item.get("parent_id")
    if parent_id is not None and (not isinstance(parent_id, str) or parent_id not in index):
        raise ValidationFailed(f"{what}: parent_id must be null or the id of an earlier message of the file")
    role = item.get("role")
    if role not in ROLES:
        raise ValidationFailed(f"{what}: role must be one of {', '.join(ROLES)}")
    content = _text(item.get("content"), f"{what}: content", MAX_MESSAGE_CHARS) or ""
    status = item.get("status", "complete")
    if status not in MESSAGE_STATUSES:
        raise ValidationFailed(f"{what}: status must be one of {', '.join(MESSAGE_STATUSES)}")
    finish_reason = item.get("finish_reason")
    if finish_reason is not None and finish_reason not in FINISH_REASONS:
        raise ValidationFailed(f"{what}: finish_reason must be null or one of {', '.join(FINISH_REASONS)}")
    if status in ("streaming", "pending"):
        # No reply of this server is writing it: it ended when the file was made.
        status, finish_reason = "interrupted", finish_reason or "abort"
    return ImportedMessage(
        file_id=file_id, parent=index[parent_id] if parent_id is not None else None, role=role,
        content=content, status=status, finish_reason=finish_reason,
        created_at=_time(item.get("created_at"), f"{what}: created_at", now),
    )


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
            return conversation_document(*_load(db, user_id, conversation_id), scope)

    def export_markdown(self, user_id: str, conversation_id: str, scope: str = "branch") -> tuple[str, str]:
        """(title, Markdown text). Raises NotFound, ValidationFailed (scope)."""
        with self._sessions() as db:
            conversation, messages = _load(db, user_id, conversation_id)
            return conversation.title, conversation_markdown(conversation, messages, scope)

    def title(self, user_id: str, conversation_id: str) -> str:
        with self._sessions() as db:
            return owned_conversation(db, user_id, conversation_id).title

    def import_json(self, user_id: str, data: bytes) -> ConversationSummary:
        """A new conversation of `user_id` from a conversation file. Raises ImportTooLarge and
        ValidationFailed (see parse_import); nothing is stored unless all of it is."""
        parsed = parse_import(data)
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
            conversation_ids = db.scalars(
                select(Conversation.id).where(Conversation.user_id == user_id).order_by(Conversation.created_at)
            ).all()
            for conversation_id in conversation_ids:
                conversation, messages = _load(db, user_id, conversation_id)
                name = f"conversations/{conversation.created_at:%Y-%m-%d}-{slug(conversation.title)}-{conversation.id[:8]}"
                archive.writestr(name + ".json", _dumps(conversation_document(conversation, messages, "tree")))
                archive.writestr(name + ".md", conversation_markdown(conversation, messages, "branch"))


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def slug(title: str, max_chars: int = 40) -> str:
    """An ASCII file-name part for a title ("Plan: día 1!" -> "Plan-d-a-1"); "conversation" if empty."""
    return re.sub(r"[^A-Za-z0-9]+", "-", title)[:max_chars].strip("-") or "conversation"
