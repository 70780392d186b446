"""The chat WebSocket's client frames and limits (docs/INTERFACES.md section 4).

The limits are defined here once: the server enforces them, and the chat page receives them
(:func:`page_limits`, rendered as ``data-*`` attributes on ``#app``) so static/chat.js checks
the same numbers before sending.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from backend import safe_json
from backend.chat import MAX_TEXT_CHARS
from backend.safe_json import JSONTooDeep
from backend.chat.turns import ACTIONS as TURN_ACTIONS  # the frame types that start a turn
from backend.chat.turns import known_zone

MAX_ID_CHARS = 64
# A JSON-escaped text of MAX_TEXT_CHARS can take 12 characters per character (an astral
# character escaped as a surrogate pair, two \uXXXX) plus the other fields; anything longer
# cannot be a valid frame, so it is refused before parsing.
MAX_FRAME_CHARS = 12 * MAX_TEXT_CHARS + 4096
# Replies one socket streams at once (its sends and its attaches); more is a client bug or abuse.
MAX_STREAMS_PER_SOCKET = 8
# The page pings this often (proxies close idle sockets) and reconnects with a backoff between
# these bounds, doubling, with jitter.
PING_INTERVAL_MS = 25_000
RECONNECT_MIN_MS = 500
RECONNECT_MAX_MS = 15_000
# Ids are opaque tokens the client makes (crypto.randomUUID) or the server gave out (hex).
_ID_PATTERN = re.compile(r"[A-Za-z0-9_.:-]+")
# C0 controls other than tab, line feed and carriage return have no place in a chat message,
# and PostgreSQL cannot store NUL in text.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
MAX_SEQ = 10**9


def page_limits() -> dict[str, int]:
    """The limits the chat page needs, by the name of their data attribute on ``#app``."""
    return {
        "max-text-chars": MAX_TEXT_CHARS,
        "max-streams": MAX_STREAMS_PER_SOCKET,
        "ping-interval-ms": PING_INTERVAL_MS,
        "reconnect-min-ms": RECONNECT_MIN_MS,
        "reconnect-max-ms": RECONNECT_MAX_MS,
    }


@dataclass(frozen=True)
class SendFrame:
    """A turn: send (a new message), edit (a user message), regenerate or continue (a reply).

    use_documents, use_tools: None keeps the conversation's setting; a bool sets it
    (docs/INTERFACES.md 8; use_tools: its ⚙ "Use tools", an agent run per turn).
    message_id: send: the message it follows (None: the conversation's current message); edit:
    the user message edited; regenerate, continue: the reply. text: send and edit only.
    """

    client_msg_id: str
    conversation_id: str | None
    text: str
    use_documents: bool | None = None
    action: str = "send"
    message_id: str | None = None
    use_tools: bool | None = None
    timezone: str | None = None  # the browser's IANA zone; an unknown one is dropped


@dataclass(frozen=True)
class StopFrame:
    message_id: str


@dataclass(frozen=True)
class AttachFrame:
    """Watch a reply having seen its deltas 1..seq (0: none)."""

    message_id: str
    seq: int


@dataclass(frozen=True)
class PingFrame:
    pass


ClientFrame = SendFrame | StopFrame | AttachFrame | PingFrame


class BadFrame(ValueError):
    """A client frame that does not follow the protocol; the ids when they could be read."""

    def __init__(self, message: str, client_msg_id: str | None = None, message_id: str | None = None) -> None:
        super().__init__(message)
        self.client_msg_id = client_msg_id
        self.message_id = message_id


def _id_field(obj: dict[str, Any], name: str, *, nullable: bool = False) -> str | None:
    value = obj.get(name)
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value:
        raise BadFrame(f"'{name}' must be a non-empty string")
    if len(value) > MAX_ID_CHARS:
        raise BadFrame(f"'{name}' is longer than {MAX_ID_CHARS} characters")
    if not _ID_PATTERN.fullmatch(value):
        raise BadFrame(f"'{name}' may hold only ASCII letters, digits and _ . : -")
    return value


def _text_field(obj: dict[str, Any]) -> str:
    text = obj.get("text")
    if not isinstance(text, str):
        raise BadFrame("'text' must be a string")
    if len(text) > MAX_TEXT_CHARS:
        raise BadFrame(f"'text' is longer than {MAX_TEXT_CHARS} characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BadFrame("'text' holds a lone UTF-16 surrogate, which is not a character") from None
    if _CONTROL_CHARS.search(text):
        raise BadFrame("'text' holds a control character (only tab and line breaks are allowed)")
    return text


def _seq_field(obj: dict[str, Any], message_id: str) -> int:
    seq = obj.get("seq", 0)
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= MAX_SEQ:
        raise BadFrame(f"'seq' must be a whole number in [0, {MAX_SEQ}]", message_id=message_id)
    return seq


def parse_frame(raw: str) -> ClientFrame:
    """One client text frame -> a typed frame.

    Raises:
        BadFrame: not JSON, not an object, unknown ``type``, or a field missing, of the wrong
            type or too long (text > 32,000 characters, ids > 64 characters, seq not a count);
            edit, regenerate and continue need ``message_id``.
    """
    if len(raw) > MAX_FRAME_CHARS:
        raise BadFrame(f"frame longer than {MAX_FRAME_CHARS} characters")
    try:
        obj = safe_json.loads(raw)
    except JSONTooDeep as exc:
        raise BadFrame(f"frame is {exc}") from None
    except ValueError:
        raise BadFrame("frame is not valid JSON") from None
    if not isinstance(obj, dict):
        raise BadFrame("frame must be a JSON object")
    kind = obj.get("type")
    if kind == "ping":
        return PingFrame()
    if kind == "stop":
        return StopFrame(message_id=_id_field(obj, "message_id"))  # type: ignore[arg-type]
    if kind == "attach":
        message_id = _id_field(obj, "message_id")
        assert message_id is not None
        return AttachFrame(message_id, _seq_field(obj, message_id))
    if kind in TURN_ACTIONS:
        client_msg_id = _id_field(obj, "client_msg_id")
        try:
            conversation_id = _id_field(obj, "conversation_id", nullable=True)
            message_id = _id_field(obj, "message_id", nullable=kind == "send")
            text = _text_field(obj) if kind in ("send", "edit") else ""
            use_documents = obj.get("use_documents")
            if use_documents is not None and not isinstance(use_documents, bool):
                raise BadFrame("'use_documents' must be true, false or null")
            use_tools = obj.get("use_tools")
            if use_tools is not None and not isinstance(use_tools, bool):
                raise BadFrame("'use_tools' must be true, false or null")
            timezone = obj.get("timezone")
            if timezone is not None and not isinstance(timezone, str):
                raise BadFrame("'timezone' must be a string or null")
            timezone = known_zone(timezone)
        except BadFrame as exc:
            raise BadFrame(str(exc), client_msg_id) from None
        return SendFrame(client_msg_id, conversation_id, text, use_documents, kind, message_id,  # type: ignore[arg-type]
                         use_tools, timezone)
    raise BadFrame(f"unknown frame type {kind!r}" if isinstance(kind, str) else "frame has no 'type'")
