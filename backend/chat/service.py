"""The chat service: take a user's message, run its reply, let any of his pages watch it.

One `send` is one turn: the user message and a "streaming" assistant row are stored, the reply
starts as a :class:`~backend.chat.replies.LiveReply` in its own task, and the sender is attached
to it from the start. Events, in order: `Ack`, `Delta`..., then `Done` or `ChatFailed` (a
ChatFailed may also come first, before anything was stored). Idempotent on (user_id,
client_msg_id): a retried id yields `Ack(duplicate=True)`, then the reply, live (attached from its
start) or as stored.

The reply belongs to its conversation: closing the sender's iterator (a socket gone) detaches a
viewer and nothing more; :meth:`ChatService.attach` attaches any other page of the owner. Stop
(:meth:`stop`, from any page of the owner), the account's end (the generation's live-registry
entry), :meth:`end_conversation` (deleted), :meth:`shutdown` and the unwatched policy end it.

Gates: a new turn passes the per-user limits and the admission queue (one
:class:`backend.generation.Generation`, source "chat") *before anything is stored*, so a refused
send leaves no trace and can be retried with the same client_msg_id; it ends with one
`ChatFailed(code="rate_limited" | "overloaded", retry_after_s=N)`. The generation holds its
lease while the reply runs, watched or not, and settles once when it ends.

Storing a turn and "one reply per conversation" are backend/chat/opening.py's (TurnOpener).

Persistence (backend/chat/turns.py): content is flushed at least every `flush_interval_s` while
deltas arrive; the end is written synchronously in the runner's `finally`.

The system prompt, sampling defaults and the unwatched policy are read from the runtime settings
at the start of every turn.

Several processes (``redis``, backend/cluster/live_work.py): Stop and a deletion reach a reply
running in another process through the live-work events; a reply running here is mirrored to
Redis and one running elsewhere is watched through the relay (attach, a retried send).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Protocol, Sequence

from sqlalchemy.orm import Session, sessionmaker

from backend import tracing
from backend.chat import turns
from backend.chat.agent_turn import AgentTurns
from backend.chat.channels import UserChannels
from backend.chat.events import (ChatEvent, ChatFailed, ConversationChanged, TurnStarted, ack_of, done_of,
                                 UNFINISHED_STATUSES, stored_outcome)
from backend.chat.opening import TurnOpener
from backend.chat.planning import DocumentSearch, TurnPlanner
from backend.chat.replies import REASON_QUEUE_TIMEOUT, REASON_SERVER_ABORTED, LiveReply, ending_of
from backend.chat.turns import Ending, Turn, TurnRequest
from backend.cluster.redis_link import RedisLink
from backend.errors import DomainError, ValidationFailed
from backend.generation import Generation, GenerationMetrics, Generations
from backend.generator import (FINISH_ABORT, FINISH_ERROR, GenerationDone, GenerationError, GenerationParams,
                               TextGenerator)
from backend.live import REASON_CONVERSATION_DELETED
from backend.admission import AdmissionController
from backend.limits import Overloaded, RateLimited, UsageLimiter
from backend.models import Message
from backend.runtime_settings import RuntimeSettings
from backend.settings import Settings

if TYPE_CHECKING:
    from backend.cluster.live_work import ClusterLive

log = logging.getLogger(__name__)

__all__ = ["REASON_QUEUE_TIMEOUT", "REASON_SERVER_ABORTED", "ChatService", "FixedSettings"]

FLUSH_INTERVAL_S = 0.5
SHUTDOWN_TIMEOUT_S = 10.0

# Why a reply ended early, stored in `error` (more in backend/chat/replies.py).
REASON_SHUTDOWN = "the server shut down before the reply finished"
REASON_DELETED = REASON_CONVERSATION_DELETED


class SettingsSource(Protocol):
    """Where a turn reads the runtime settings (a RuntimeSettingsStore)."""

    def get(self) -> RuntimeSettings: ...


class FixedSettings:
    """A SettingsSource that never changes (tests, or a server without the store)."""

    def __init__(self, settings: RuntimeSettings) -> None:
        self.settings = settings

    def get(self) -> RuntimeSettings:
        return self.settings


class ChatService:
    """Runs chat turns against a TextGenerator.

    Args:
        session_factory: SQLAlchemy sessionmaker (sync; calls run in a worker thread).
        generator: the model. settings: the environment's defaults, used only when
            `runtime_settings` is None. flush_interval_s: most seconds between two writes of a
            streaming reply. clock: monotonic seconds (tests pass a fake).
        cache_salt_key, limiter, admission, metrics: for the Generations made here when
            `generations` is None (chat and /v1 share one in the app).
        runtime_settings: read at the start of every turn. retriever: searches the user's
            documents (None: no turn does); its failures are logged and the turn goes on.
        channels: where account events go (TurnStarted, ConversationChanged).
        redis: shared with the other server processes (None: this process alone); call
            :meth:`start` on the event loop then.
        agent_tools: the deployment's tools (ToolRegistry.specs, or a list of ToolSpec): a
            turn of a conversation with tools on is then an agent run (backend/chat/agent_turn.py);
            None: every turn is a plain reply.
    """

    def __init__(
        self, session_factory: sessionmaker[Session], generator: TextGenerator, settings: Settings,
        flush_interval_s: float = FLUSH_INTERVAL_S, clock: Callable[[], float] = time.monotonic,
        cache_salt_key: bytes | None = None, *, runtime_settings: SettingsSource | None = None,
        limiter: UsageLimiter | None = None, admission: AdmissionController | None = None,
        metrics: GenerationMetrics | None = None, retriever: DocumentSearch | None = None,
        generations: Generations | None = None, channels: UserChannels | None = None,
        redis: RedisLink | None = None, agent_tools: Callable[[], Sequence[Any]] | Sequence[Any] | None = None,
    ) -> None:
        self._sessions = session_factory
        self._generator = generator
        self._planner = TurnPlanner(generator, retriever, sources_from_settings=runtime_settings is not None)
        self._runtime: SettingsSource = runtime_settings or FixedSettings(
            RuntimeSettings.from_settings(settings, generator.context_length))
        self.generations = generations or Generations(
            generator, session_factory, limiter=limiter, admission=admission, metrics=metrics,
            cache_salt_key=cache_salt_key)
        self._metrics = self.generations.metrics
        self.live = self.generations.live
        self.channels = channels or UserChannels()
        self._flush_interval_s = flush_interval_s
        self._clock = clock
        self._replies: dict[str, LiveReply] = {}
        self._opener = TurnOpener(session_factory, self._planner, self.generations, self.params)
        self._agent = (AgentTurns(session_factory, generator, agent_tools, flush_interval_s, clock)
                       if agent_tools is not None else None)
        self.cluster: ClusterLive | None = None
        if redis is not None:
            from backend.cluster.live_work import ClusterLive  # it imports backend.chat

            self.cluster = ClusterLive(redis, self.live, session_factory, channels=self.channels,
                                       recheck_interval_s=settings.live_recheck_s)
            self.cluster.serve_chat(self._stop_here, self._end_conversation_here)

    def start(self) -> None:
        """Join the other processes (with `redis`): subscribe and start the re-check."""
        if self.cluster is not None:
            self.cluster.start()

    # --- public ------------------------------------------------------------------------------

    def params(self, user_id: str, settings: RuntimeSettings | None = None) -> GenerationParams:
        """Sampling parameters from the runtime settings (read now unless given), with
        `user_id`'s prefix-cache salt."""
        s = settings or self._runtime.get()
        return GenerationParams(max_tokens=s.default_max_tokens, temperature=s.default_temperature,
                                top_p=s.default_top_p, frequency_penalty=s.default_frequency_penalty,
                                cache_salt=self.cache_salt(user_id))

    def cache_salt(self, user_id: str) -> str:
        return self.generations.cache_salt(user_id)

    def live_reply(self, message_id: str) -> LiveReply | None:
        return self._replies.get(message_id)

    def streaming(self, user_id: str, conversation_id: str | None = None) -> list[LiveReply]:
        """`user_id`'s replies streaming here (in `conversation_id`, if given)."""
        return [r for r in self._replies.values() if r.user_id == user_id
                and (conversation_id is None or r.conversation_id == conversation_id)]

    async def stop(self, user_id: str, assistant_message_id: str) -> bool:
        """Abort the reply if `user_id` owns it (from any of his pages), here or, when it is
        stored as streaming, in the process running it. Returns whether an abort was sent (or
        published); the reply then ends "complete" / "abort"."""
        if assistant_message_id not in self._replies and self.cluster is not None:
            return await self.cluster.stop_elsewhere(user_id, assistant_message_id)
        return await self._stop_here(user_id, assistant_message_id)

    async def _stop_here(self, user_id: str, assistant_message_id: str) -> bool:
        reply = self._replies.get(assistant_message_id)
        if reply is None or reply.user_id != user_id or reply.generation is None:
            return False
        await reply.generation.stop()
        if reply.stop_event is not None:  # an agent run: it stops between or inside its steps
            reply.stop_event.set()
        return True

    async def end_reply(self, assistant_message_id: str, reason: str) -> bool:
        """Abort the reply if it streams here; it is stored "interrupted" with `reason`."""
        reply = self._replies.get(assistant_message_id)
        if reply is None or reply.generation is None:
            return False
        await reply.generation.end(reason)
        if reply.stop_event is not None:
            reply.stop_event.set()
        return True

    async def end_conversation(self, user_id: str, conversation_id: str, reason: str = REASON_DELETED) -> int:
        """End `user_id`'s replies streaming in `conversation_id` (it was deleted), here and in
        the other processes. Returns how many ended here."""
        if self.cluster is not None:
            await self.cluster.end_conversation_elsewhere(user_id, conversation_id, reason)
        return await self._end_conversation_here(user_id, conversation_id, reason)

    async def _end_conversation_here(self, user_id: str, conversation_id: str, reason: str) -> int:
        replies = self.streaming(user_id, conversation_id)
        for reply in replies:
            await self.end_reply(reply.message_id, reason)
        return len(replies)

    async def join(self, timeout_s: float = SHUTDOWN_TIMEOUT_S) -> bool:
        """Wait until every reply streaming now has ended and been stored. Returns whether all did."""
        tasks = [r.task for r in list(self._replies.values()) if r.task is not None]
        if not tasks:
            return True
        _done, pending = await asyncio.wait(tasks, timeout=timeout_s)
        return not pending

    async def shutdown(self, reason: str = REASON_SHUTDOWN, timeout_s: float = SHUTDOWN_TIMEOUT_S) -> None:
        """End every live reply with `reason`, wait (up to timeout_s) until each is stored, then
        leave the other processes."""
        replies = list(self._replies.values())
        for reply in replies:
            if reply.generation is not None:
                await reply.generation.end(reason)
        tasks = [r.task for r in replies if r.task is not None]
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=timeout_s)
            for task in pending:
                task.cancel()
        if self.cluster is not None:
            await self.cluster.aclose()

    async def send(self, user_id: str, client_msg_id: str, conversation_id: str | None, text: str,
                   use_documents: bool | None = None, origin: object = None) -> AsyncIterator[ChatEvent]:
        """One chat turn: a new user message after the conversation's current message, and its
        reply; see the module docstring and :meth:`act`."""
        request = TurnRequest("send", client_msg_id, conversation_id, text, None, use_documents)
        async for event in self.act(user_id, request, origin):
            yield event

    async def act(self, user_id: str, request: TurnRequest, origin: object = None) -> AsyncIterator[ChatEvent]:
        """One turn of any action (send, edit, regenerate, continue); events as for a send.
        Never raises DomainError or GenerationError: they become ChatFailed.

        use_documents (send, edit): None keeps the conversation's setting (False for a new
        one); a bool sets it for this turn and the next ones. When on, the user's documents are
        searched for the question and the sources that fit the prompt budget are quoted in the
        prompt's last user turn, stored with the reply and sent in Done.sources. origin: the
        sender's channel (backend.chat.channels), which is not told of its own turn."""
        client_msg_id = request.client_msg_id
        try:
            turns.validate_request(request)
        except ValidationFailed as exc:
            yield ChatFailed(exc.code, exc.message, client_msg_id if isinstance(client_msg_id, str) else None, None)
            return
        settings = self._runtime.get()
        begin = asyncio.ensure_future(asyncio.to_thread(self._opener.begin, user_id, request, settings))
        try:
            turn, generation = await asyncio.shield(begin)
        except asyncio.CancelledError:
            begin.add_done_callback(functools.partial(self._close_abandoned, user_id, origin))
            raise
        except (RateLimited, Overloaded) as exc:
            yield ChatFailed(exc.code, exc.message, client_msg_id, None, exc.retry_after_s)
            return
        except DomainError as exc:
            yield ChatFailed(exc.code, exc.message, client_msg_id, None)
            return
        except GenerationError as exc:  # a continue whose prompt cannot be built: nothing changed
            yield ChatFailed(exc.code, str(exc) or exc.code, client_msg_id, None)
            return
        if turn.duplicate:
            turn.action = request.action  # a retry answers as the request it repeats
            yield ack_of(turn)
            reply = self._replies.get(turn.assistant_message_id)
            if reply is not None and reply.user_id == user_id:
                async with aclosing(reply.attach(0)) as viewer:
                    async for event in viewer:
                        yield event
            elif turn.stored is None:
                yield ChatFailed("not_found", "the reply to this message is missing", client_msg_id, None)
            else:
                async for event in self._elsewhere(user_id, turn.stored, 0, client_msg_id):
                    yield event
            return
        reply = self._start(user_id, turn, generation, origin)
        async with aclosing(reply.attach(0)) as viewer:
            yield ack_of(turn)
            async for event in viewer:
                yield event

    async def attach(self, user_id: str, message_id: str, after_seq: int = 0) -> AsyncIterator[ChatEvent]:
        """Watch `user_id`'s reply `message_id` having seen its deltas 1..after_seq: a catch-up
        Delta (reset), the live deltas, then Done or ChatFailed; for a reply that already ended,
        its stored Done. Another user's id, or an unknown one, yields ChatFailed("not_found")."""
        reply = self._replies.get(message_id)
        if reply is not None and reply.user_id == user_id:
            try:
                viewer = reply.attach(after_seq)
            except ValidationFailed as exc:
                yield ChatFailed(exc.code, exc.message, None, message_id)
                return
            async with aclosing(viewer):
                async for event in viewer:
                    yield event
            return
        row = await asyncio.to_thread(turns.owned_reply, self._sessions, user_id, message_id)
        if row is None:
            yield ChatFailed("not_found", "there is no such reply", None, message_id)
            return
        async for event in self._elsewhere(user_id, row, after_seq):
            yield event

    async def _elsewhere(self, user_id: str, row: Message, after_seq: int,
                         client_msg_id: str | None = None) -> AsyncIterator[ChatEvent]:
        """A reply of the caller's (`row`) that does not stream here: relayed from the process
        running it (backend/cluster/live_work.py), else its stored outcome, after its agent
        run's stored steps when it had one (as a page attached mid-run saw them last)."""
        if row.status not in UNFINISHED_STATUSES and self._agent is not None:
            for step in await asyncio.to_thread(self._agent.stored_steps, user_id, row.id):
                yield step
        if self.cluster is None:
            yield stored_outcome(row, client_msg_id)
            return
        async with aclosing(self.cluster.watch(row, after_seq, client_msg_id)) as events:
            async for event in events:
                yield event

    # --- the reply's run -----------------------------------------------------------------------

    def _start(self, user_id: str, turn: Turn, generation: Generation | None, origin: object = None) -> LiveReply:
        message_id = turn.assistant_message_id
        mirror = self.cluster.relay.mirror(message_id) if self.cluster is not None else None
        reply = LiveReply(user_id, turn, generation, lambda reason: self.end_reply(message_id, reason), mirror)
        if turn.prefix:  # a continued reply: its text so far is delta 1, so attachers see it
            reply.add(turn.prefix)
        self._replies[message_id] = reply
        reply.task = asyncio.create_task(self._run(reply), name=f"chat-reply-{message_id}")
        if turn.new_conversation:
            self.channels.publish(user_id, ConversationChanged("created", turn.conversation_id, turn.title), origin)
        self.channels.publish(user_id, TurnStarted(
            turn.conversation_id, turn.title, turn.client_msg_id, turn.user_message_id, turn.user_text,
            message_id, turn.new_conversation, turn.action, turn.parent_id), origin)
        return reply

    async def _run(self, reply: LiveReply) -> None:
        with tracing.span("chat.reply", message_id=reply.message_id, action=reply.turn.action):
            await self._run_reply(reply)

    async def _run_reply(self, reply: LiveReply) -> None:
        turn, generation, message_id = reply.turn, reply.generation, reply.message_id
        ending: Ending | None = None
        failed: ChatFailed | None = None
        try:
            try:
                if generation is None:
                    raise turn.prompt_error or GenerationError("the prompt could not be built")
                assert turn.params is not None
                runner = await self._agent.runner_for(reply, self._runtime.get()) if self._agent is not None else None
                if runner is not None:
                    ending = await self._agent.run(reply, runner)  # type: ignore[union-attr]
                    return
                generation.start(message_id, turn.params, messages=turn.messages,
                                 conversation_id=turn.conversation_id)
            except GenerationError as exc:
                ending = Ending(FINISH_ERROR, "error", str(exc) or exc.code)
                failed = ChatFailed(exc.code, ending.error or exc.code, turn.client_msg_id, message_id)
            except Exception as exc:
                log.exception("starting generation of %s failed", message_id)
                ending = Ending(FINISH_ERROR, "error", f"generation failed: {exc}")
                failed = ChatFailed(GenerationError.code, ending.error or "", turn.client_msg_id, message_id)
            else:
                last_flush = self._clock()
                async for event in generation.events():
                    if isinstance(event, GenerationDone):
                        ending = ending_of(generation, event)
                        break
                    if not event.text:
                        continue
                    delta = reply.feed(event.text)
                    if self._clock() - last_flush >= self._flush_interval_s:
                        # Stored before any page sees it, so a reload never shows less.
                        last_flush = self._clock()
                        await asyncio.to_thread(turns.flush, self._sessions, message_id, reply.text, reply.markdown.html)
                    reply.publish(delta)
                else:
                    ending = Ending(FINISH_ERROR, "error", "the generator ended without a final event")
        except Exception as exc:
            log.exception("reply %s failed", message_id)
            ending = Ending(FINISH_ERROR, "error", f"generation failed: {exc}")
        finally:
            if ending is None:  # cancelled (shutdown past its wait)
                reason = generation.ended_reason if generation is not None else None
                ending = Ending(FINISH_ABORT, "interrupted", reason or REASON_SERVER_ABORTED)
            reply.markdown.finish()
            html = reply.markdown.html
            # Synchronous, in this order: stored, then the gates freed, then the viewers told, so
            # a viewer that sees the end can send again at once.
            with tracing.span("persistence.final_write", status=ending.status, finish_reason=ending.finish_reason):
                turns.finish(self._sessions, message_id, turn.conversation_id, reply.text, html, ending,
                             turn.prior_completion_tokens)
            self._replies.pop(message_id, None)
            self._opener.release(turn.conversation_id)
            closing = generation.close() if generation is not None else None
            final = failed or done_of(message_id, html, ending.finish_reason, ending.status, ending.error,
                                      ending.done, turn.sources if reply.text.strip() else [], reply.seq, reply.text,
                                      tracing.current_trace_id())
            reply.end(final)
            if closing is not None:
                await closing

    def _close_abandoned(self, user_id: str, origin: object, begin: asyncio.Future[tuple[Turn, Generation | None]]) -> None:
        """The sender left while its turn was being stored: the reply runs anyway (it belongs to
        the conversation), with nobody attached, so the unwatched policy applies."""
        if begin.cancelled() or begin.exception() is not None:
            return
        turn, generation = begin.result()
        if not turn.duplicate:
            reply = self._start(user_id, turn, generation, origin)
            reply.attach(0).close()
