"""Read a conversation file (backend.conversation_export's JSON) for import.

Import trusts nothing in the file but its shape: it makes a new conversation of the importer
with new ids, keeps the tree (parent references resolved inside the file) and the active branch,
and refuses with ValidationFailed (ImportTooLarge over the size limit) anything malformed: wrong
format or version, roles other than user and assistant, unknown statuses, a parent that is not
an earlier message of the file, over-long text, NUL / control characters / lone surrogates, too
many messages. The file's ids and any user id in it are only labels.

Settings: use_tools (absent: false) and the run budget (agent_steps, agent_tool_calls,
agent_tokens, agent_wall_s; absent or null: the importer's admin's default) are kept. A budget value
outside the widest range any admin may set (backend.agent.access.BUDGET_FIELDS) is refused; one
above the importer's deployment's current maximum is capped at that maximum when stored
(backend.conversation_export.ConversationTransfer.import_json): it is the most the file's choice can
get there, what a run would be given anyway (budget_of), and what the ⚙ dialog lets a user choose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from backend import safe_json
from backend.agent.access import BUDGET_FIELDS
from backend.conversation_settings import validate_settings
from backend.errors import DomainError, ValidationFailed
from backend.safe_json import JSONTooDeep
from backend.generator import FINISH_ABORT, FINISH_ERROR, FINISH_LENGTH, FINISH_STOP
from backend.models import MESSAGE_STATUSES, utcnow
from backend.runtime_setting_fields import MAX_SYSTEM_PROMPT_CHARS, MAX_TOKENS_CEILING

FORMAT = "crescent.conversation"  # the file format, as backend.conversation_export writes it
FORMAT_VERSION = 1
# The app makes only these; a "system" message would pass as instructions the importer never gave.
IMPORT_ROLES = ("user", "assistant")
FINISH_REASONS = (FINISH_STOP, FINISH_LENGTH, FINISH_ABORT, FINISH_ERROR)
MAX_IMPORT_BYTES = 8 * 1024 * 1024
MAX_IMPORT_MESSAGES = 5000
MAX_MESSAGE_CHARS = 200_000
MAX_TITLE_CHARS = 200
MAX_FILE_ID_CHARS = 64
IMPORTED_TITLE = "Imported conversation"
# Control characters other than tab, line feed and carriage return; and lone UTF-16 surrogates
# (JSON "\ud800" decodes to one, and no database can store it).
_BAD_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


class ImportTooLarge(DomainError):
    code = "import_too_large"
    default_message = f"the file is over the import limit of {MAX_IMPORT_BYTES // (1024 * 1024)} MB"


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
    use_tools: bool = False
    # BUDGET_FIELDS name -> the file's value (None: the default), within the field's widest range
    budget: dict[str, int | None] = field(default_factory=dict)
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
        doc = safe_json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except JSONTooDeep as exc:
        raise ValidationFailed(f"the file is {exc}") from None
    except ValueError:  # UnicodeDecodeError included
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
    checked = _settings(settings)
    parsed = ParsedImport(
        title=title or IMPORTED_TITLE,
        created_at=_time(meta.get("created_at"), "conversation.created_at", now),
        pinned=_flag(meta.get("pinned"), "conversation.pinned"),
        use_documents=_flag(meta.get("use_documents"), "conversation.use_documents"),
        system_prompt=_text(settings.get("system_prompt"), "settings.system_prompt", MAX_SYSTEM_PROMPT_CHARS,
                            optional=True),
        temperature=checked.get("temperature"),
        max_tokens=checked.get("max_tokens"),
        current=None,
        use_tools=_flag(settings.get("use_tools"), "settings.use_tools"),
        budget={name: checked.get(name) for name in BUDGET_FIELDS},
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


def _settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The file's temperature, max_tokens and agent budget, checked as a settings change is
    (backend.conversation_settings.validate_settings) against the widest ranges any admin may set;
    a bad one raises ValidationFailed naming "settings.<field>"."""
    known = {name: settings[name] for name in ("temperature", "max_tokens", *BUDGET_FIELDS) if name in settings}
    try:
        return validate_settings(known, MAX_TOKENS_CEILING)
    except ValidationFailed as exc:
        raise ValidationFailed(f"settings.{exc.message}") from None


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
    if role not in IMPORT_ROLES:
        raise ValidationFailed(f"{what}: role must be one of {', '.join(IMPORT_ROLES)}, not {role!r}")
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
