"""Live replies: a reply streaming in this process, and the viewers attached to it.

A chat reply belongs to its conversation, not to a socket. It runs in its own task (the service's
runner) and keeps, while it streams, every delta's text and its Markdown rendering, so that any
page of its owner can attach from a sequence number: :meth:`LiveReply.attach` gives a
:class:`Viewer` that first yields one catch-up `Delta` (``reset=True``: the text after that
number, the whole rendering so far), then the live deltas, then the final `Done` or
`ChatFailed`. Attaching is synchronous on the event loop, as is every publication, so no delta
falls between the catch-up and the live ones, and none comes twice.

A viewer leaving never aborts the reply by itself. When the last one leaves, the unwatched policy
(RuntimeSettings.unwatched_reply_s, read when the reply started) applies: -1 lets the reply run
to its end, 0 ends it at once, N > 0 ends it after N seconds with nobody attached.

With several processes (``REDIS_URL``) a page may watch the reply from another process through
the relay: before ending a reply unwatched here, the mirror is asked whether such a viewer is
there (:meth:`Mirror.watched`); if so the reply goes on and the question is asked again every
REWATCH_S seconds while nobody attaches here.

With several processes (``REDIS_URL``) a reply also has a mirror (backend/cluster/relay.py):
every published delta, agent step event and the final event are handed to it too, so that
pages served by other processes can attach to the reply with the same sequence numbers.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable, Protocol

from backend.agent.events import AgentStepEvent, StepLog
from backend.chat.events import ChatEvent, ChatFailed, Delta, Done
from backend.chat.turns import Ending, Turn
from backend.errors import ValidationFailed
from backend.generation import Generation
from backend.generator import (ERROR_QUEUE_TIMEOUT, FINISH_ABORT, FINISH_ERROR, FINISH_LENGTH, FINISH_STOP,
                               GenerationDone)
from backend.markdown_stream import IncrementalMarkdown, RenderMark

log = logging.getLogger(__name__)

# Why a reply ended early, stored in `error` so the page can tell the person ("Interrupted: ...").
# A reply its owner stopped is final as he wanted it: status "complete", finish_reason "abort".
REASON_CONNECTION_CLOSED = "the connection closed before the reply finished"  # nobody watched it
REASON_SERVER_ABORTED = "the server stopped the reply before it finished"
REASON_QUEUE_TIMEOUT = "the server is busy: the reply waited in the queue past its deadline; try again"
# A reply watched only from other processes: how often the running process asks again (s).
REWATCH_S = 5.0
_STATUS_BY_FINISH = {FINISH_STOP: "complete", FINISH_LENGTH: "complete", FINISH_ABORT: "interrupted",
                     FINISH_ERROR: "error"}


def reason_unwatched(seconds: int) -> str:
    return f"nobody was watching the reply for {seconds} s" if seconds else REASON_CONNECTION_CLOSED


def ending_of(generation: Generation, event: GenerationDone) -> Ending:
    """How a reply whose generation gave its final `event` is stored."""
    if event.finish_reason == FINISH_ERROR and event.error_code == ERROR_QUEUE_TIMEOUT:
        return Ending(FINISH_ERROR, "error", f"{REASON_QUEUE_TIMEOUT} ({event.error})", event)
    if event.finish_reason == FINISH_ABORT:
        if generation.stopped and generation.ended_reason is None:
            return Ending(FINISH_ABORT, "complete", None, event)
        return Ending(FINISH_ABORT, "interrupted", generation.ended_reason or event.error or REASON_SERVER_ABORTED, event)
    return Ending(event.finish_reason, _STATUS_BY_FINISH.get(event.finish_reason, "error"), event.error, event)


class Mirror(Protocol):
    """Where a reply's published events also go (backend.cluster.relay.ReplyMirror); both calls
    are synchronous, on the event loop, and must not raise."""

    def publish(self, delta: Delta) -> None: ...

    def publish_step(self, event: AgentStepEvent) -> None: ...

    def end(self, final: Done | ChatFailed) -> None: ...

    async def watched(self) -> bool:
        """Whether a page served by another process watches the reply now (never raises)."""
        ...


class Viewer:
    """One attachment to a reply: an async iterator of its events, ending after the final one.
    close() detaches (idempotent); it never aborts the reply by itself."""

    def __init__(self, reply: LiveReply) -> None:
        self.reply = reply
        self.queue: asyncio.Queue[ChatEvent] = asyncio.Queue()
        self._ended = False

    def __aiter__(self) -> Viewer:
        return self

    async def __anext__(self) -> ChatEvent:
        if self._ended:
            raise StopAsyncIteration
        event = await self.queue.get()
        if isinstance(event, (Done, ChatFailed)):
            self._ended = True
            self.close()
        return event

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        self._ended = True
        self.reply.detach(self)


class LiveReply:
    """A reply streaming here: its turn, its generation (None when the prompt could not be
    built), its text by delta, its rendering, its viewers, and its final event once ended.

    end_reply(reason) is how the unwatched policy ends it (the service's end coroutine).
    mirror: also gets every published delta and the final event (None: nobody else).
    """

    def __init__(self, user_id: str, turn: Turn, generation: Generation | None,
                 end_reply: Callable[[str], Awaitable[object]], mirror: Mirror | None = None) -> None:
        self.user_id = user_id
        self.turn = turn
        self.generation = generation
        self.message_id = turn.assistant_message_id
        self.conversation_id = turn.conversation_id
        self.parts: list[str] = []  # parts[i] is the text of delta i + 1 (fed, maybe not yet published)
        self.markdown = IncrementalMarkdown()
        self.final: Done | ChatFailed | None = None
        self.task: asyncio.Task[None] | None = None
        self._viewers: list[Viewer] = []
        self._end_reply = end_reply
        self._mirror = mirror
        self._timer: asyncio.TimerHandle | None = None
        self._ending: asyncio.Future[object] | None = None
        self._checking: asyncio.Future[None] | None = None  # asking the mirror whether it is watched
        self._published = 0  # fed deltas are published after their flush: seq counts these
        self._snapshot: RenderMark = self.markdown.mark()  # the rendering as of the last published delta
        # An agent run's (backend/chat/agent_turn.py): its steps so far, and its Stop.
        self.steps = StepLog()
        self.stop_event: asyncio.Event | None = None

    @property
    def seq(self) -> int:
        """The number of the last delta its viewers were given."""
        return self._published

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def viewers(self) -> int:
        return len(self._viewers)

    def attach(self, after_seq: int = 0) -> Viewer:
        """A viewer that has seen deltas 1..after_seq. Raises ValidationFailed when after_seq is
        negative or past the reply's last delta."""
        if not isinstance(after_seq, int) or isinstance(after_seq, bool) or not 0 <= after_seq <= self.seq:
            raise ValidationFailed(f"seq must be in [0, {self.seq}] for this reply")
        viewer = Viewer(self)
        if self.final is not None:
            viewer.queue.put_nowait(self.final)
            return viewer
        for step in self.steps.replay():  # an agent run's steps so far, each as its latest event
            viewer.queue.put_nowait(step)
        if after_seq < self.seq:
            committed, tail = self.markdown.rendering_at(self._snapshot)
            viewer.queue.put_nowait(Delta(self.message_id, self.seq, "".join(self.parts[after_seq:self.seq]),
                                          committed, tail, reset=True))
        self._viewers.append(viewer)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return viewer

    def detach(self, viewer: Viewer) -> None:
        if viewer not in self._viewers:
            return
        self._viewers.remove(viewer)
        if not self._viewers and self.final is None:
            self._unwatched()

    def feed(self, text: str) -> Delta:
        """Append one delta of text and render it; nobody sees it until publish(delta)."""
        self.parts.append(text)
        update = self.markdown.feed(text)
        return Delta(self.message_id, len(self.parts), text, update.committed_html, update.tail_html,
                     code_html=update.code_html)

    def publish(self, delta: Delta) -> None:
        """Every viewer gets `delta` (the last one fed); attachers from now on catch up to it."""
        self._published = delta.seq
        self._snapshot = self.markdown.mark()  # O(1): read only when someone attaches
        self._publish(delta)
        if self._mirror is not None:
            self._mirror.publish(delta)

    def add(self, text: str) -> Delta:
        """feed() then publish()."""
        delta = self.feed(text)
        self.publish(delta)
        return delta

    def publish_step(self, event: AgentStepEvent) -> None:
        """An agent step started or ended: every viewer gets it; attachers get the latest event
        of each step first; the mirror relays it, in order with the deltas."""
        self.steps.record(event)
        self._publish(event)  # type: ignore[arg-type]
        if self._mirror is not None:
            self._mirror.publish_step(event)

    def end(self, final: Done | ChatFailed) -> None:
        """The reply ended: every viewer gets `final`, later attachers too."""
        self.final = final
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._publish(final)
        self._viewers.clear()
        if self._mirror is not None:
            self._mirror.end(final)

    def _publish(self, event: ChatEvent) -> None:
        for viewer in self._viewers:
            viewer.queue.put_nowait(event)

    def _unwatched(self) -> None:
        seconds = self.turn.unwatched_s
        if seconds is None or seconds < 0 or self._ending is not None:
            return
        if seconds == 0:
            self._expired(0)
        else:
            self._timer = asyncio.get_running_loop().call_later(seconds, self._expired, seconds)

    def _expired(self, seconds: int) -> None:
        self._timer = None
        if self._viewers or self.final is not None or self._ending is not None:
            return
        if self._mirror is None:
            self._end(reason_unwatched(seconds))
        else:
            self._checking = asyncio.ensure_future(self._end_unless_watched(seconds))

    async def _end_unless_watched(self, seconds: int) -> None:
        """Nobody watches here: end the reply unless a page on another process watches it (then
        ask again in REWATCH_S)."""
        assert self._mirror is not None
        watched = await self._mirror.watched()
        if self._viewers or self.final is not None or self._ending is not None or self._timer is not None:
            return  # someone attached here meanwhile (or it ended)
        if watched:
            self._timer = asyncio.get_running_loop().call_later(REWATCH_S, self._expired, seconds)
        else:
            self._end(reason_unwatched(seconds))

    def _end(self, reason: str) -> None:
        log.info("ending reply %s: %s", self.message_id, reason)
        self._ending = asyncio.ensure_future(self._end_reply(reason))
