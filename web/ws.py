"""The chat WebSocket ``/ws``: the wire protocol of docs/INTERFACES.md section 4.

A socket is one page's view of its user's chat. Its frames are parsed by web/ws_protocol.py and
its answers built by web/ws_frames.py; the replies themselves live in backend.chat, not here:

- ``send`` stores a turn and starts its reply (``ChatService.send``); this socket is attached
  to it from the start and gets ``ack``, ``delta``..., ``done``;
- ``attach`` {message_id, seq} watches a reply of the user's that is streaming (or has ended):
  one catch-up ``delta`` (``reset``), then the live deltas and ``done`` (``ChatService.attach``);
- ``stop`` ends a reply of the user's, whichever page started it;
- with REDIS_URL the reply may run in another server process: attach is relayed from it and
  stop reaches it (backend/cluster/relay.py, events.py), with the same frames and seq;
- the user's account events (a message sent from another page, a conversation created,
  renamed or deleted) arrive as ``turn`` and ``conversation`` frames.

Each stream (a send or an attach) is pumped by its own asyncio task while the receive loop keeps
reading; writes go through one lock so frames never interleave. The socket closing cancels its
pumps, which detaches them from their replies: a reply goes on without its viewers (the unwatched
policy of the runtime settings decides for how long). Malformed frames get ``bad_frame`` and the
socket stays open; a domain error in one stream becomes an ``error`` frame for it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, AsyncIterator

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from backend import tracing
from backend.auth import UserInfo, hash_token
from backend.chat import Channel, TurnRequest
from backend.errors import DomainError
from backend.generator import GenerationError
from backend.live import KIND_SOCKET
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
from web.ws_frames import event_frame
from web.ws_protocol import (
    MAX_FRAME_CHARS,
    MAX_ID_CHARS,
    MAX_STREAMS_PER_SOCKET,
    AttachFrame,
    BadFrame,
    PingFrame,
    SendFrame,
    StopFrame,
    parse_frame,
)

log = logging.getLogger(__name__)

__all__ = ["ChatSocket", "MAX_FRAME_CHARS", "MAX_ID_CHARS", "MAX_STREAMS_PER_SOCKET", "parse_frame", "routes"]

# Kept for readers of the old name: a socket's streams in flight (sends and attaches together).
MAX_SENDS_IN_FLIGHT = MAX_STREAMS_PER_SOCKET
# How long a closing socket waits for its cancelled pumps to detach.
CLEANUP_TIMEOUT_S = 10.0


class _SocketGone(Exception):
    """The client went away while a frame was being written."""


class ChatSocket:
    """One accepted, authenticated chat socket: the receive loop, its stream pumps and the relay
    of its user's account events."""

    def __init__(self, websocket: WebSocket, user: UserInfo, state: AppState) -> None:
        self.websocket = websocket
        self.user = user
        self.state = state
        self._write_lock = asyncio.Lock()
        self._closed = False
        # "send:<client_msg_id>" or "attach:<message_id>" -> its pump.
        self._pumps: dict[str, asyncio.Task[None]] = {}
        self._channel: Channel | None = None  # this page's account events

    async def end(self, reason: str) -> None:
        """This socket's session or its user's access ended (backend/live.py): close it with
        4401 so the page goes to log-in. Replies are the user's, not the socket's: disabling the
        account ends them through their own live entries."""
        async with self._write_lock:
            if not self._closed:
                self._closed = True
                try:
                    await self.websocket.close(WS_CLOSE_UNAUTHORIZED)
                except (RuntimeError, OSError):
                    pass  # already closing
        await self._cancel_pumps()

    async def run(self) -> None:
        """Read frames until the client disconnects, then detach every pump."""
        token = session_token(self.websocket)
        chat = self.state.chat
        live = chat.live.add(self.user.id, KIND_SOCKET, self.end, session=hash_token(token) if token else None)
        channel = self._channel = chat.channels.subscribe(self.user.id)
        relay = asyncio.create_task(self._relay(channel), name=f"ws-events-{self.user.id}")
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
            chat.live.discard(live)
            channel.close()
            relay.cancel()
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
            await self._send(error_frame(CODE_BAD_FRAME, str(exc), client_msg_id=exc.client_msg_id,
                                         message_id=exc.message_id))
            return True
        if isinstance(frame, PingFrame):
            await self._send({"type": "pong"})
        elif isinstance(frame, StopFrame):
            await self._stop(frame)
        elif isinstance(frame, AttachFrame):
            await self._start_attach(frame)
        else:
            return await self._start_send(frame)
        return True

    async def _start_send(self, frame: SendFrame) -> bool:
        key = "send:" + frame.client_msg_id
        if key in self._pumps:
            return True  # a retry of a send still streaming here: that pump answers it
        # One trace per turn (backend/tracing.py): its pump ends the root span.
        root = tracing.start_root("chat.turn", {"action": frame.action, "user_id": self.user.id})
        try:
            with tracing.use(root):
                with tracing.span("ws.receive"):
                    # The session may have been logged out (another tab) since the upgrade.
                    if await current_user(self.websocket, fresh=True) is None:
                        root.end()
                        async with self._write_lock:  # not in the middle of a pump's frame
                            self._closed = True
                            await self.websocket.close(WS_CLOSE_UNAUTHORIZED)
                        return False
                    if not await self._room_for(client_msg_id=frame.client_msg_id):
                        root.end()
                        return True
                request = TurnRequest(frame.action, frame.client_msg_id, frame.conversation_id, frame.text,
                                      frame.message_id, frame.use_documents, frame.use_tools, frame.timezone)
                events = self.state.chat.act(self.user.id, request, origin=self._channel)
                self._spawn(key, events, root, client_msg_id=frame.client_msg_id)
        except BaseException:
            root.end()  # the pump that would have ended it never started
            raise
        return True

    async def _start_attach(self, frame: AttachFrame) -> None:
        key = "attach:" + frame.message_id
        old = self._pumps.pop(key, None)
        if old is not None:  # the page asks again: it lost track, start over from its seq
            old.cancel()
            await asyncio.wait({old}, timeout=CLEANUP_TIMEOUT_S)
        if not await self._room_for(message_id=frame.message_id):
            return
        events = self.state.chat.attach(self.user.id, frame.message_id, frame.seq)
        self._spawn(key, events, None, message_id=frame.message_id)

    async def _room_for(self, **ids: str) -> bool:
        if len(self._pumps) < MAX_STREAMS_PER_SOCKET:
            return True
        await self._send(error_frame(CODE_TOO_MANY, f"at most {MAX_STREAMS_PER_SOCKET} replies can stream "
                                     "at once on one connection", **ids))
        return False

    def _spawn(self, key: str, events: AsyncIterator[object], root: tracing.Span | None, **ids: str) -> None:
        task = asyncio.create_task(self._pump(events, root, **ids), name=f"ws-{key}")
        self._pumps[key] = task
        task.add_done_callback(lambda t, key=key: self._pumps.pop(key, None) if self._pumps.get(key) is t else None)

    async def _stop(self, frame: StopFrame) -> None:
        try:
            # False (unknown, another user's or already finished) needs no answer: the reply's
            # done frame, sent or already sent, says how it ended.
            await self.state.chat.stop(self.user.id, frame.message_id)
        except (DomainError, GenerationError) as exc:
            await self._send(error_frame(error_code(exc), error_message(exc), message_id=frame.message_id))
        except Exception as exc:
            log.exception("stop of %s failed", frame.message_id)
            await self._send(error_frame(CODE_INTERNAL, error_message(exc), message_id=frame.message_id))

    async def _pump(self, events: AsyncIterator[object], root: tracing.Span | None, **ids: str) -> None:
        try:
            async for event in events:
                await self._send(event_frame(event))
        except _SocketGone:
            pass
        except (DomainError, GenerationError) as exc:
            await self._send_if_open(error_frame(error_code(exc), error_message(exc), **ids))
        except Exception as exc:
            log.exception("stream %s failed", ids)
            await self._send_if_open(error_frame(CODE_INTERNAL, error_message(exc), **ids))
        finally:
            # Detaches from the reply (never aborts it); a no-op when it already ended.
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                try:
                    await aclose()
                except Exception:
                    log.exception("closing the stream %s failed", ids)
            if root is not None:
                root.end()

    async def _relay(self, channel: Channel) -> None:
        """The user's account events (other pages' messages, conversation changes) -> frames."""
        try:
            while True:
                event = await channel.get()
                await self._send(event_frame(event))
        except _SocketGone:
            pass

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
            _done, pending = await asyncio.wait(tasks, timeout=CLEANUP_TIMEOUT_S)
            for task in pending:
                log.warning("stream task %s did not finish in time", task.get_name())


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
