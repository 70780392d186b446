"""The chat WebSocket ``/ws``: the wire protocol of docs/INTERFACES.md section 4.

One socket carries any number of sends, for one or several conversations. Each send's event
stream (:meth:`backend.chat.ChatService.send`) runs in its own asyncio task that pumps frames to
the socket, while the receive loop keeps reading, so a ``stop`` frame is read while a reply
streams. Writes go through one lock, so frames of concurrent sends never interleave mid-message.

Failure handling, per frame:
- a malformed frame (not JSON, not an object, unknown type, a field missing, of the wrong type
  or too long) gets ``{"type": "error", "code": "bad_frame"}``; the socket stays open;
- a domain or generation error in one send becomes an ``error`` frame for that send
  (``client_msg_id`` set); other sends and the socket go on;
- the socket closing cancels every pump task; the cancellation closes the ChatService iterator,
  which aborts the generation in the engine and stores the partial reply (finish_reason
  ``abort``).

Plain asyncio tasks, not an anyio task group, on purpose: a task group's level-triggered
cancellation would also cancel the backend's clean-up (storing the partial reply); a cancelled
asyncio task gets one CancelledError and may then finish its clean-up.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import dataclass
from typing import Any, AsyncIterator

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from backend.auth import UserInfo, hash_token
from backend.chat import MAX_TEXT_CHARS, Ack, ChatFailed, Delta, Done
from backend.errors import DomainError
from backend.generator import GenerationError
from backend.live import KIND_SOCKET
from web.api import to_jsonable
from web.errors import (
    CODE_BAD_FRAME,
    CODE_INTERNAL,
    CODE_TOO_MANY,
    WS_CLOSE_UNAUTHORIZED,
    error_code,
    error_frame,
    error_message,
)
from web.session import current_user, session_token
from web.state import AppState, app_state

log = logging.getLogger(__name__)

MAX_ID_CHARS = 64
# A JSON-escaped text of MAX_TEXT_CHARS can take 12 characters per character (an astral
# character escaped as a surrogate pair, two \uXXXX) plus the other fields; anything longer
# cannot be a valid frame, so it is refused before parsing.
MAX_FRAME_CHARS = 12 * MAX_TEXT_CHARS + 4096
# Ids are opaque tokens the client makes (crypto.randomUUID) or the server gave out (hex).
_ID_PATTERN = re.compile(r"[A-Za-z0-9_.:-]+")
# C0 controls other than tab, line feed and carriage return have no place in a chat message,
# and PostgreSQL cannot store NUL in text.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
# Replies generating at once for one socket; more is a client bug or abuse, not a conversation.
MAX_SENDS_IN_FLIGHT = 8
# How long a closing socket waits for its cancelled sends to store their partial replies.
CLEANUP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class SendFrame:
    """use_documents: None keeps the conversation's setting; a bool sets it (docs/INTERFACES.md 8)."""

    client_msg_id: str
    conversation_id: str | None
    text: str
    use_documents: bool | None = None


@dataclass(frozen=True)
class StopFrame:
    message_id: str


@dataclass(frozen=True)
class PingFrame:
    pass


ClientFrame = SendFrame | StopFrame | PingFrame


class BadFrame(ValueError):
    """A client frame that does not follow the protocol. `client_msg_id` when it could be read."""

    def __init__(self, message: str, client_msg_id: str | None = None) -> None:
        super().__init__(message)
        self.client_msg_id = client_msg_id


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


def parse_frame(raw: str) -> ClientFrame:
    """One client text frame -> a typed frame.

    Raises:
        BadFrame: not JSON, not an object, unknown ``type``, or a field missing, of the wrong
            type or too long (text > 32,000 characters, ids > 64 characters).
    """
    if len(raw) > MAX_FRAME_CHARS:
        raise BadFrame(f"frame longer than {MAX_FRAME_CHARS} characters")
    try:
        obj = json.loads(raw)
    except ValueError:
        raise BadFrame("frame is not valid JSON") from None
    if not isinstance(obj, dict):
        raise BadFrame("frame must be a JSON object")
    kind = obj.get("type")
    if kind == "ping":
        return PingFrame()
    if kind == "stop":
        return StopFrame(message_id=_id_field(obj, "message_id"))  # type: ignore[arg-type]
    if kind == "send":
        client_msg_id = _id_field(obj, "client_msg_id")
        try:
            conversation_id = _id_field(obj, "conversation_id", nullable=True)
            text = _text_field(obj)
            use_documents = obj.get("use_documents")
            if use_documents is not None and not isinstance(use_documents, bool):
                raise BadFrame("'use_documents' must be true, false or null")
        except BadFrame as exc:
            raise BadFrame(str(exc), client_msg_id) from None
        return SendFrame(client_msg_id, conversation_id, text, use_documents)  # type: ignore[arg-type]
    raise BadFrame(f"unknown frame type {kind!r}" if isinstance(kind, str) else "frame has no 'type'")


def event_frame(event: object) -> dict[str, Any]:
    """A ChatService event -> the server frame of the protocol (``ack``, ``delta``, ``done``,
    or ``error`` for :class:`backend.chat.ChatFailed`, with ``retry_after_s`` (whole seconds) when
    the send was refused by a limit (``rate_limited``) or a full queue (``overloaded``))."""
    if isinstance(event, ChatFailed):
        frame = error_frame(
            event.code, event.message, client_msg_id=event.client_msg_id, message_id=event.message_id
        )
        if event.retry_after_s is not None:
            frame["retry_after_s"] = event.retry_after_s  # rate_limited / overloaded: the wait
        return frame
    for cls, kind in ((Ack, "ack"), (Delta, "delta"), (Done, "done")):
        if isinstance(event, cls):
            return {"type": kind, **to_jsonable(event)}
    raise TypeError(f"unexpected chat event {type(event).__name__}")


class _SocketGone(Exception):
    """The client went away while a frame was being written."""


class ChatSocket:
    """One accepted, authenticated chat socket: the receive loop and its send pumps."""

    def __init__(self, websocket: WebSocket, user: UserInfo, state: AppState) -> None:
        self.websocket = websocket
        self.user = user
        self.state = state
        self._write_lock = asyncio.Lock()
        self._closed = False
        self._pumps: dict[str, asyncio.Task[None]] = {}  # by client_msg_id
        self._replies: dict[str, str] = {}  # client_msg_id -> assistant message id, while streaming

    async def end(self, reason: str) -> None:
        """The user's access or this socket's session ended (backend/live.py): stop this
        socket's replies (stored "interrupted" with `reason`) and close it with 4401."""
        for message_id in list(self._replies.values()):
            await self.state.chat.end_reply(message_id, reason)
        async with self._write_lock:
            if not self._closed:
                self._closed = True
                try:
                    await self.websocket.close(WS_CLOSE_UNAUTHORIZED)
                except (RuntimeError, OSError):
                    pass  # already closing
        await self._cancel_pumps()

    async def run(self) -> None:
        """Read frames until the client disconnects, then cancel and await the pumps."""
        token = session_token(self.websocket)
        live = self.state.chat.live.add(self.user.id, KIND_SOCKET, self.end,
                                        session=hash_token(token) if token else None)
        try:
            while True:
                message = await self.websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                if not await self._handle(message.get("text")):
                    break
        except (WebSocketDisconnect, _SocketGone):
            pass
        finally:
            self.state.chat.live.discard(live)
            self._closed = True
            await self._cancel_pumps()

    async def _handle(self, raw: str | None) -> bool:
        """Handle one frame; False when the socket must close."""
        if raw is None:
            await self._send(error_frame(CODE_BAD_FRAME, "binary frames are not supported"))
            return True
        try:
            frame = parse_frame(raw)
        except BadFrame as exc:
            await self._send(error_frame(CODE_BAD_FRAME, str(exc), client_msg_id=exc.client_msg_id))
            return True
        if isinstance(frame, PingFrame):
            await self._send({"type": "pong"})
        elif isinstance(frame, StopFrame):
            await self._stop(frame)
        else:
            return await self._start_send(frame)
        return True

    async def _start_send(self, frame: SendFrame) -> bool:
        if frame.client_msg_id in self._pumps:
            return True  # a retry of a send still streaming here: that pump answers it
        # The session may have been logged out (another tab) since the upgrade.
        if await current_user(self.websocket, fresh=True) is None:
            async with self._write_lock:  # not in the middle of a pump's frame
                self._closed = True
                await self.websocket.close(WS_CLOSE_UNAUTHORIZED)
            return False
        if len(self._pumps) >= MAX_SENDS_IN_FLIGHT:
            await self._send(
                error_frame(
                    CODE_TOO_MANY,
                    f"at most {MAX_SENDS_IN_FLIGHT} replies can stream at once",
                    client_msg_id=frame.client_msg_id,
                )
            )
            return True
        task = asyncio.create_task(self._pump(frame), name=f"ws-send-{frame.client_msg_id}")
        self._pumps[frame.client_msg_id] = task
        task.add_done_callback(lambda _t, key=frame.client_msg_id: self._pumps.pop(key, None))
        return True

    async def _stop(self, frame: StopFrame) -> None:
        try:
            # False (unknown or already finished message) needs no answer: the reply's done
            # frame, sent or already sent, says how it ended.
            await self.state.chat.stop(self.user.id, frame.message_id)
        except (DomainError, GenerationError) as exc:
            await self._send(error_frame(error_code(exc), error_message(exc), message_id=frame.message_id))
        except Exception as exc:
            log.exception("stop of %s failed", frame.message_id)
            await self._send(error_frame(CODE_INTERNAL, error_message(exc), message_id=frame.message_id))

    async def _pump(self, frame: SendFrame) -> None:
        events: AsyncIterator[object] | None = None
        try:
            events = self.state.chat.send(
                self.user.id, frame.client_msg_id, frame.conversation_id, frame.text, use_documents=frame.use_documents
            )
            async for event in events:
                if isinstance(event, Ack) and not event.duplicate:
                    self._replies[frame.client_msg_id] = event.assistant_message_id
                await self._send(event_frame(event))
        except _SocketGone:
            pass
        except (DomainError, GenerationError) as exc:
            await self._send_if_open(
                error_frame(error_code(exc), error_message(exc), client_msg_id=frame.client_msg_id)
            )
        except Exception as exc:
            log.exception("send %s failed", frame.client_msg_id)
            await self._send_if_open(
                error_frame(CODE_INTERNAL, error_message(exc), client_msg_id=frame.client_msg_id)
            )
        finally:
            self._replies.pop(frame.client_msg_id, None)
            # Closing the iterator early is what aborts the generation and stores the partial
            # reply (a no-op when it already ran to its end or the cancellation went through it).
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                try:
                    await aclose()
                except Exception:
                    log.exception("closing the event stream of send %s failed", frame.client_msg_id)

    async def _send(self, frame: dict[str, Any]) -> None:
        """Write one frame; raises _SocketGone when the client is gone."""
        data = json.dumps(frame, ensure_ascii=False, separators=(",", ":"))
        async with self._write_lock:
            if self._closed:
                raise _SocketGone
            try:
                await self.websocket.send_text(data)
            except (WebSocketDisconnect, RuntimeError, OSError) as exc:
                # RuntimeError: Starlette's "send after close"; OSError: the server's
                # ClientDisconnected.
                self._closed = True
                raise _SocketGone from exc

    async def _send_if_open(self, frame: dict[str, Any]) -> None:
        try:
            await self._send(frame)
        except _SocketGone:
            pass

    async def _cancel_pumps(self) -> None:
        tasks = list(self._pumps.values())
        for task in tasks:
            task.cancel()
        if tasks:
            # asyncio.wait, unlike gather, does not cancel the tasks again if this wait itself is
            # cancelled (server shutdown), so the partial replies still get stored.
            _done, pending = await asyncio.wait(tasks, timeout=CLEANUP_TIMEOUT_S)
            for task in pending:
                log.warning("send task %s did not finish its clean-up in time", task.get_name())


async def chat_socket(websocket: WebSocket) -> None:
    """``/ws``. The origin was checked by :class:`web.security.OriginCheckMiddleware`.

    Without a valid session the socket is accepted and closed at once with 4401, so that the
    page's script can read the code (a refused handshake shows only as 1006) and go to log-in.
    """
    user = await current_user(websocket)
    await websocket.accept()
    if user is None:
        await websocket.close(WS_CLOSE_UNAUTHORIZED)
        return
    await ChatSocket(websocket, user, app_state(websocket)).run()


routes = [WebSocketRoute("/ws", chat_socket)]
