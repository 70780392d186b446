"""Chat: store a user message, stream the model's reply, and persist the reply as it grows.

One `send` is one turn. Events, in order: `Ack`, `Delta`..., then `Done` or `ChatFailed`
(a ChatFailed may also come first, before anything was stored). Idempotent on
(user_id, client_msg_id): a retried id yields `Ack(duplicate=True)` and the stored outcome.

Persistence: the assistant row is inserted with status "streaming" before generation starts,
and its content and html are flushed at least every `flush_interval_s` while deltas arrive, so a
crash leaves a partial reply for `ConversationService.mark_interrupted_on_startup`. The final
write happens in a `finally` block as a plain synchronous call, so neither `aclose()` nor task
cancellation can skip it.

Limits and admission (issue 5): a new turn passes the per-user limits
(:class:`backend.limits.UsageLimiter`) and the admission queue
(:class:`backend.limits.AdmissionController`) *before anything is stored*. A refused send leaves
no trace, so the client can retry it later with the same client_msg_id; it ends with one
`ChatFailed(code="rate_limited" | "overloaded", retry_after_s=N)`. A retried id that is already
stored is answered from the database without passing the gates (it generates nothing). The
admission ticket is held until the first event of the stream (the engine started the request) and
the limiter's lease until the turn ends; every turn that reached the engine records its tokens
(a ``UsageRecord``, source "chat") when it ends, however it ends.

The system prompt and sampling defaults are read from the runtime settings store at the start of
every turn, so an admin's change applies to the next turn without a restart.

Cross-process seam: "one reply per conversation", `stop()` and the live registry (`self.live`,
backend/live.py: `end_reply` when a user's access ends) use this process's memory, which fits
the one-process-per-model layout; several processes would move them into the database.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Protocol, Sequence

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from backend.conversations import load_sources, make_title, owned_conversation
from backend.errors import ConversationBusy, DomainError, ValidationFailed
from backend.generator import (
    FINISH_ABORT,
    FINISH_ERROR,
    FINISH_LENGTH,
    FINISH_STOP,
    ChatMessage,
    GenerationDone,
    GenerationError,
    GenerationParams,
    TextDelta,
    TextGenerator,
)
from backend.live import KIND_GENERATION, LiveRegistry
from backend.limits import Admission, AdmissionController, Overloaded, RateLimited, UsageLimiter, record_usage
from backend.markdown import IncrementalMarkdown, render_markdown
from backend.models import Conversation, Message, new_id, utcnow
from backend.rag.sources import Source, build_prompt_with_sources, citation
from backend.runtime_settings import RuntimeSettings
from backend.settings import Settings

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 32_000
MAX_CLIENT_MSG_ID_CHARS = 64
FLUSH_INTERVAL_S = 0.5

_STATUS_BY_FINISH = {
    FINISH_STOP: "complete",
    FINISH_LENGTH: "complete",
    FINISH_ABORT: "interrupted",
    FINISH_ERROR: "error",
}
# Why an aborted reply ended, stored in `error` so the page can tell the person. A reply the
# person stopped is final as they wanted it: status "complete", finish_reason "abort".
REASON_CONNECTION_CLOSED = "the connection closed before the reply finished"
REASON_SERVER_ABORTED = "the server stopped the reply before it finished"
# The engine ends a request that waited past its queue deadline with an error starting so.
QUEUE_TIMEOUT_PREFIX = "queue_timeout:"
REASON_QUEUE_TIMEOUT = "the server is busy: the reply waited in the queue past its deadline; try again"


class SettingsSource(Protocol):
    """Where a turn reads the runtime settings (a RuntimeSettingsStore)."""

    def get(self) -> RuntimeSettings: ...


class DocumentSearch(Protocol):
    """Where a turn finds sources in the user's documents (backend.rag.retrieval.Retriever)."""

    def search(
        self, user_id: str, query: str, *, k: int | None = None, min_similarity: float | None = None
    ) -> list[Source]: ...


class ChatMetrics(Protocol):
    """What the chat path reports (backend.metrics.Metrics)."""

    def observe_done(self, done: GenerationDone, source: str) -> None: ...

    def count_rejection(self, kind: str) -> None: ...


@dataclass(frozen=True)
class FixedSettings:
    """A SettingsSource that never changes (tests, or a server without the store)."""

    settings: RuntimeSettings

    def get(self) -> RuntimeSettings:
        return self.settings


@dataclass(frozen=True)
class Ack:
    """The user message is stored; the reply will stream into `assistant_message_id`."""

    client_msg_id: str
    conversation_id: str
    user_message_id: str
    assistant_message_id: str
    duplicate: bool
    title: str


@dataclass(frozen=True)
class Delta:
    """New reply text. seq: 1, 2, ... per reply. committed_html: append; tail_html: replace."""

    message_id: str
    seq: int
    text: str
    committed_html: str
    tail_html: str


@dataclass(frozen=True)
class Done:
    """The reply ended. status: complete | interrupted | error. html: the whole reply, rendered.

    usage: {"prompt_tokens", "completion_tokens"} (None when unknown, e.g. after a close).
    timings: {"queue_ms", "ttft_ms", "decode_tokens_per_s"} in ms, ms and tokens/s (or None).
    sources: the citations of the documents the prompt quoted, [n] as the model saw them
    (backend.rag.sources.citation dicts); empty when the turn used no documents.
    """

    message_id: str
    finish_reason: str | None
    status: str
    html: str
    usage: dict[str, Any]
    timings: dict[str, Any]
    error: str | None
    sources: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ChatFailed:
    """The turn failed. code: a DomainError or GenerationError code ("invalid_input",
    "not_found", "busy", "prompt_too_long", "invalid_params", "unavailable", "generation_error",
    "rate_limited", "overloaded"), or "in_progress" for a retried id whose reply is still
    streaming. retry_after_s: whole seconds to wait before retrying (rate_limited, overloaded)."""

    code: str
    message: str
    client_msg_id: str | None
    message_id: str | None
    retry_after_s: int | None = None


ChatEvent = Ack | Delta | Done | ChatFailed


@dataclass
class _Turn:
    """What _begin stored (or found stored, for a duplicate)."""

    conversation_id: str
    title: str
    user_message_id: str
    assistant_message_id: str
    duplicate: bool
    history: list[ChatMessage] = field(default_factory=list)
    stored: Message | None = None  # the assistant row, for a duplicate
    # For a new turn: the prompt, or why it could not be built; the settings it was built with.
    messages: list[ChatMessage] = field(default_factory=list)
    prompt_tokens: int = 0
    prompt_error: GenerationError | None = None
    params: GenerationParams | None = None
    admission: Admission | None = None
    sources: list[dict[str, Any]] = field(default_factory=list)  # citations in the prompt


@dataclass
class _Outcome:
    finish_reason: str
    status: str
    error: str | None = None
    done: GenerationDone | None = None


class ChatService:
    """Runs chat turns against a TextGenerator.

    Args:
        session_factory: SQLAlchemy sessionmaker (sync; calls run in a worker thread).
        generator: the model.
        settings: the environment's defaults; used only when `runtime_settings` is None.
        flush_interval_s: most seconds between two writes of a streaming reply.
        clock: monotonic seconds (tests pass a fake).
        cache_salt_key: HMAC key of the per-user prefix-cache salt (None: 32 random bytes per
            service, which is enough because the engine's cache does not outlive the process).
        runtime_settings: read at the start of every turn (system prompt, default max_tokens,
            temperature, top_p). None: fixed values from `settings`.
        limiter: per-user limits (None: none). admission: the bounded queue (None: unbounded).
        metrics: told of every finished generation (source "chat") and every refusal.
        retriever: searches the user's documents for turns of conversations that use them
            (None: no turn does). Its failures are logged and the turn goes on without sources.
    """

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        generator: TextGenerator,
        settings: Settings,
        flush_interval_s: float = FLUSH_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        cache_salt_key: bytes | None = None,
        *,
        runtime_settings: SettingsSource | None = None,
        limiter: UsageLimiter | None = None,
        admission: AdmissionController | None = None,
        metrics: ChatMetrics | None = None,
        retriever: DocumentSearch | None = None,
    ) -> None:
        self._sessions = session_factory
        self._retriever = retriever
        # Without a settings store the retriever's own top_k / min_similarity apply.
        self._sources_from_settings = runtime_settings is not None
        self._generator = generator
        self._runtime: SettingsSource = runtime_settings or FixedSettings(
            RuntimeSettings.from_settings(settings, generator.context_length)
        )
        self._limiter = limiter
        self._admission = admission
        self._metrics = metrics
        self._flush_interval_s = flush_interval_s
        self._clock = clock
        self._cache_salt_key = cache_salt_key if cache_salt_key is not None else secrets.token_bytes(32)
        # Conversations with a reply streaming, and live replies -> owner (for stop()).
        self._busy: set[str] = set()
        self._live: dict[str, str] = {}
        self._stopped: set[str] = set()  # message ids whose owner pressed stop
        # Live replies per user, so that disabling an account (or ending a session) stops them
        # at once (backend/live.py); message id -> why the server ended it.
        self.live = LiveRegistry()
        self._ended: dict[str, str] = {}
        self._busy_lock = threading.Lock()  # _begin runs on worker threads

    def params(self, user_id: str, settings: RuntimeSettings | None = None) -> GenerationParams:
        """Sampling parameters from the runtime settings (read now unless given), with
        `user_id`'s prefix-cache salt."""
        s = settings or self._runtime.get()
        return GenerationParams(max_tokens=s.default_max_tokens, temperature=s.default_temperature,
                                top_p=s.default_top_p, cache_salt=self.cache_salt(user_id))

    def cache_salt(self, user_id: str) -> str:
        """HMAC-SHA256(cache_salt_key, user_id), hex: one prefix-cache namespace per user, so
        one user's cached prompts are never reused for (or timed by) another user."""
        return hmac.new(self._cache_salt_key, user_id.encode("utf-8"), hashlib.sha256).hexdigest()

    async def stop(self, user_id: str, assistant_message_id: str) -> bool:
        """Abort the reply `assistant_message_id` if it is streaming here and `user_id` owns it.
        Returns whether an abort was sent; the stream then ends with finish_reason "abort"."""
        if self._live.get(assistant_message_id) != user_id:
            return False
        self._stopped.add(assistant_message_id)
        await self._generator.abort(assistant_message_id)
        return True

    async def end_reply(self, assistant_message_id: str, reason: str) -> bool:
        """Abort the reply `assistant_message_id` if it is streaming here, because its user's
        access ended (`reason`, e.g. "the account was disabled"). The reply is stored
        "interrupted" with `reason` as its error. Returns whether an abort was sent."""
        if assistant_message_id not in self._live:
            return False
        self._ended[assistant_message_id] = reason
        await self._generator.abort(assistant_message_id)
        return True

    async def send(
        self, user_id: str, client_msg_id: str, conversation_id: str | None, text: str,
        use_documents: bool | None = None,
    ) -> AsyncIterator[ChatEvent]:
        """One chat turn; see the module docstring for the events. Never raises DomainError or
        GenerationError: they become ChatFailed.

        use_documents: None keeps the conversation's setting (False for a new one); a bool sets
        it for this turn and the next ones. When on, the user's documents are searched for
        `text` (in a worker thread) and the sources that fit the prompt budget are quoted in the
        prompt's last user turn, stored with the reply and sent in Done.sources; the stored user
        message keeps the user's own text."""
        try:
            _validate(client_msg_id, conversation_id, text)
            if use_documents is not None and not isinstance(use_documents, bool):
                raise ValidationFailed("use_documents must be true, false or null")
        except ValidationFailed as exc:
            yield ChatFailed(exc.code, exc.message, client_msg_id if isinstance(client_msg_id, str) else None, None)
            return
        settings = self._runtime.get()
        begin = asyncio.ensure_future(
            asyncio.to_thread(self._begin, user_id, client_msg_id, conversation_id, text, settings, use_documents)
        )
        try:
            turn = await asyncio.shield(begin)
        except asyncio.CancelledError:
            # The rows may still be written by the worker thread: close them once it is done.
            begin.add_done_callback(self._close_abandoned)
            raise
        except (RateLimited, Overloaded) as exc:
            self._count_rejection(exc.code)
            yield ChatFailed(exc.code, exc.message, client_msg_id, None, exc.retry_after_s)
            return
        except DomainError as exc:
            yield ChatFailed(exc.code, exc.message, client_msg_id, None)
            return
        if turn.duplicate:
            yield _ack(client_msg_id, turn)
            yield _replayed_outcome(client_msg_id, turn)
            return
        # aclosing: closing `send` must close the delegate now, not whenever it is collected.
        async with aclosing(self._generate(user_id, client_msg_id, turn)) as events:
            async for event in events:
                yield event

    async def _generate(self, user_id: str, client_msg_id: str, turn: _Turn) -> AsyncIterator[ChatEvent]:
        message_id = turn.assistant_message_id
        self._live[message_id] = user_id
        live = self.live.add(user_id, KIND_GENERATION, lambda reason: self.end_reply(message_id, reason))
        markdown = IncrementalMarkdown()
        parts: list[str] = []
        outcome: _Outcome | None = None
        failed: ChatFailed | None = None
        stream = None
        try:
            yield _ack(client_msg_id, turn)
            try:
                if turn.prompt_error is not None:
                    raise turn.prompt_error
                assert turn.params is not None
                stream = self._generator.stream(message_id, turn.messages, turn.params)
            except GenerationError as exc:
                outcome = _Outcome(FINISH_ERROR, "error", str(exc) or exc.code)
                failed = ChatFailed(exc.code, outcome.error or exc.code, client_msg_id, message_id)
            except Exception as exc:
                log.exception("starting generation of %s failed", message_id)
                outcome = _Outcome(FINISH_ERROR, "error", f"generation failed: {exc}")
                failed = ChatFailed(GenerationError.code, outcome.error or "", client_msg_id, message_id)
            else:
                seq = 0
                last_flush = self._clock()
                try:
                    async for event in stream:
                        if turn.admission is not None:
                            turn.admission.started()  # the engine is working on it: not waiting
                        if isinstance(event, GenerationDone):
                            outcome = self._outcome_of(message_id, event)
                            break
                        if not event.text:
                            continue
                        parts.append(event.text)
                        update_ = markdown.feed(event.text)
                        seq += 1
                        if self._clock() - last_flush >= self._flush_interval_s:
                            last_flush = self._clock()
                            await asyncio.to_thread(self._flush, message_id, "".join(parts), markdown.html)
                        yield Delta(message_id, seq, event.text, update_.committed_html, update_.tail_html)
                    else:
                        outcome = _Outcome(FINISH_ERROR, "error", "the generator ended without a final event")
                except Exception as exc:  # an engine failure mid-stream must still close the row
                    log.exception("generation of %s failed", message_id)
                    outcome = _Outcome(FINISH_ERROR, "error", f"generation failed: {exc}")
        finally:
            closed_early = outcome is None
            if closed_early:
                # aclose, cancellation, the socket went away: keep the partial reply.
                reason = self._ended.get(message_id, REASON_CONNECTION_CLOSED)
                outcome = _Outcome(FINISH_ABORT, "interrupted", reason)
            html = _final_html(markdown)
            # Synchronous on purpose: no await before it, so a second cancellation cannot skip it.
            self._finish(message_id, turn.conversation_id, "".join(parts), html, outcome)
            if stream is not None:
                self._account(user_id, turn, outcome, len(parts))
            if turn.admission is not None:
                turn.admission.release()
            self._live.pop(message_id, None)
            self.live.discard(live)
            self._ended.pop(message_id, None)
            self._stopped.discard(message_id)
            self._release(turn.conversation_id)
            if closed_early:
                await self._abort_stream(stream, message_id)
        if failed is not None:
            yield failed
            return
        yield _done(message_id, html, outcome, turn.sources)

    def _outcome_of(self, message_id: str, event: GenerationDone) -> _Outcome:
        if event.finish_reason == FINISH_ERROR and (event.error or "").startswith(QUEUE_TIMEOUT_PREFIX):
            return _Outcome(FINISH_ERROR, "error", f"{REASON_QUEUE_TIMEOUT} ({event.error})", event)
        if event.finish_reason == FINISH_ABORT:
            if message_id in self._stopped:
                return _Outcome(FINISH_ABORT, "complete", None, event)
            reason = self._ended.get(message_id) or event.error or REASON_SERVER_ABORTED
            return _Outcome(FINISH_ABORT, "interrupted", reason, event)
        status = _STATUS_BY_FINISH.get(event.finish_reason, "error")
        return _Outcome(event.finish_reason, status, event.error, event)

    def _release(self, conversation_id: str) -> None:
        with self._busy_lock:
            self._busy.discard(conversation_id)

    def _undo(self, claimed: str | None, admission: Admission | None) -> None:
        if admission is not None:
            admission.release()
        if claimed is not None:
            self._release(claimed)

    def _claim(self, conversation_id: str) -> str:
        with self._busy_lock:
            if conversation_id in self._busy:
                raise ConversationBusy()
            self._busy.add(conversation_id)
        return conversation_id

    def _account(self, user_id: str, turn: _Turn, outcome: _Outcome, deltas: int) -> None:
        """Record the tokens of a turn that reached the engine, and tell the metrics. Sync, in
        the `finally` of _generate. Without a final event (closed early) the prompt tokens are
        the ones counted for admission and each delta counts as one completion token."""
        done = outcome.done or GenerationDone(outcome.finish_reason, turn.prompt_tokens, deltas, error=outcome.error)
        try:
            lease = turn.admission.lease if turn.admission is not None else None
            if lease is not None:
                lease.record(done.prompt_tokens, done.completion_tokens, "chat")
            else:
                record_usage(self._sessions, user_id, done.prompt_tokens, done.completion_tokens, "chat")
        except Exception:
            log.exception("recording the usage of %s failed", turn.assistant_message_id)
        if self._metrics is not None:
            try:
                self._metrics.observe_done(done, "chat")
            except Exception:
                log.exception("metrics for %s failed", turn.assistant_message_id)

    def _count_rejection(self, kind: str) -> None:
        if self._metrics is not None:
            try:
                self._metrics.count_rejection(kind)
            except Exception:
                log.exception("counting a %s rejection failed", kind)

    def _plan(
        self, settings: RuntimeSettings, history: list[ChatMessage], sources: Sequence[Source] = ()
    ) -> tuple[list[ChatMessage], int, GenerationError | None, list[Source]]:
        """The prompt for `history` (and `sources`, quoted in its last user turn) under
        `settings`, its token count and the sources kept in it (sources are cut before
        history, the system prompt never); or why it cannot be built (stored as the reply's
        error after the Ack, as before limits existed)."""
        try:
            messages, used = build_prompt_with_sources(
                settings.system_prompt, history, sources, self._generator.count_prompt_tokens,
                self._generator.context_length, settings.default_max_tokens,
            )  # fmt: skip
            return messages, self._generator.count_prompt_tokens(messages), None, used
        except GenerationError as exc:
            return [], 0, exc, []
        except Exception as exc:
            log.exception("building the prompt failed")
            return [], 0, GenerationError(f"generation failed: {exc}"), []

    def _retrieve(self, user_id: str, text: str, settings: RuntimeSettings) -> list[Source] | None:
        """The sources for `text` among `user_id`'s documents, as many and as relevant as the
        runtime settings say (sources_top_k, sources_min_similarity); None when nothing was
        searched (no retriever, or the search failed: a document problem never blocks chatting)."""
        if self._retriever is None:
            return None
        try:
            if not self._sources_from_settings:
                return list(self._retriever.search(user_id, text))
            return list(self._retriever.search(
                user_id, text, k=settings.sources_top_k, min_similarity=settings.sources_min_similarity))
        except Exception:
            log.exception("searching the documents of user %s failed; answering without sources", user_id)
            return None

    def _admit(self, user_id: str, prompt_tokens: int) -> Admission:
        """Pass the per-user limits, then the admission queue. Raises RateLimited / Overloaded
        having taken nothing."""
        lease = self._limiter.acquire(user_id) if self._limiter is not None else None
        try:
            ticket = self._admission.admit(prompt_tokens) if self._admission is not None else None
        except BaseException:
            if lease is not None:
                lease.release()
            raise
        return Admission(lease, ticket)

    async def _abort_stream(self, stream: Any, message_id: str) -> None:
        try:
            if stream is not None and hasattr(stream, "aclose"):
                await stream.aclose()
            await self._generator.abort(message_id)
        except Exception:  # the row must be written even if the engine misbehaves
            log.exception("aborting %s failed", message_id)

    # --- database (sync; called through asyncio.to_thread, or directly when it must not be skipped)

    def _begin(
        self, user_id: str, client_msg_id: str, conversation_id: str | None, text: str, settings: RuntimeSettings,
        use_documents: bool | None = None,
    ) -> _Turn:
        """Store a new turn (or find it stored). Order: a stored id answers at once; the
        conversation is checked and claimed; the documents are searched (when the conversation
        uses them); the prompt is built; the limits and the queue are passed; only then is
        anything written. Raises DomainError (nothing stored)."""
        with self._sessions() as db:
            stored = _stored_turn(db, user_id, client_msg_id)
            if stored is not None:
                return stored
            claimed: str | None = None
            admission: Admission | None = None
            try:
                conversation: Conversation | None = None
                earlier: list[Message] = []
                if conversation_id is not None:
                    conversation = owned_conversation(db, user_id, conversation_id)
                    claimed = self._claim(conversation.id)
                    earlier = _earlier_messages(db, conversation.id, user_id)
                history = [_as_chat_message(m) for m in earlier if _in_prompt(m)]
                history.append(ChatMessage("user", text))
                searching = use_documents if use_documents is not None else bool(conversation and conversation.use_documents)
                found = self._retrieve(user_id, text, settings) if searching else None
                messages, prompt_tokens, prompt_error, used = self._plan(settings, history, found or ())
                # NULL: no search ran; "[]": it ran and no source was found or fitted.
                citations = [citation(n, s) for n, s in enumerate(used, start=1)] if found is not None else None
                if prompt_error is None:
                    admission = self._admit(user_id, prompt_tokens)
                if conversation is None:
                    conversation = Conversation(user_id=user_id, title=make_title(text), use_documents=bool(use_documents))
                    db.add(conversation)
                    db.flush()
                    claimed = self._claim(conversation.id)
                elif use_documents is not None:
                    conversation.use_documents = use_documents  # committed with the turn
                turn = self._insert_turn(db, conversation, earlier, user_id, client_msg_id, text, citations)
            except IntegrityError:
                self._undo(claimed, admission)
                db.rollback()
                # The same client_msg_id was stored concurrently: answer as a retry.
                stored = _stored_turn(db, user_id, client_msg_id)
                if stored is None:
                    raise
                return stored
            except BaseException:
                self._undo(claimed, admission)
                raise
        turn.history = history
        turn.messages, turn.prompt_tokens, turn.prompt_error = messages, prompt_tokens, prompt_error
        turn.params = self.params(user_id, settings)
        turn.admission = admission
        turn.sources = citations or []
        return turn

    def _insert_turn(
        self, db: Session, conversation: Conversation, earlier: list[Message], user_id: str,
        client_msg_id: str, text: str, citations: list[dict[str, Any]] | None = None,
    ) -> _Turn:
        position = earlier[-1].position + 1 if earlier else 0
        now = utcnow()
        if not conversation.title:
            conversation.title = make_title(text)
        conversation.updated_at = now
        user_message = Message(
            id=new_id(), conversation_id=conversation.id, user_id=user_id, position=position,
            role="user", content=text, html=render_markdown(text), status="complete",
            client_msg_id=client_msg_id, created_at=now, updated_at=now,
        )  # fmt: skip
        assistant = Message(
            id=new_id(), conversation_id=conversation.id, user_id=user_id, position=position + 1,
            role="assistant", content="", html="", status="streaming", parent_id=user_message.id,
            created_at=now, updated_at=now, sources=None if citations is None else json.dumps(citations),
        )  # fmt: skip
        db.add(user_message)
        db.flush()
        db.add(assistant)
        db.commit()
        return _Turn(conversation.id, conversation.title, user_message.id, assistant.id, False)

    def _flush(self, message_id: str, content: str, html: str) -> None:
        with self._sessions() as db:
            # The status guard keeps a late flush from overwriting the final write.
            db.execute(
                update(Message)
                .where(Message.id == message_id, Message.status == "streaming")
                .values(content=content, html=html, updated_at=utcnow())
            )
            db.commit()

    def _finish(self, message_id: str, conversation_id: str, content: str, html: str, outcome: _Outcome) -> None:
        done = outcome.done
        values: dict[str, Any] = dict(
            content=content, html=html, status=outcome.status, finish_reason=outcome.finish_reason,
            error=outcome.error, updated_at=utcnow(),
        )  # fmt: skip
        if done is not None:
            values.update(
                prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens,
                queue_ms=done.queue_ms, ttft_ms=done.ttft_ms, decode_tokens_per_s=done.decode_tokens_per_s,
            )  # fmt: skip
        try:
            with self._sessions() as db:
                db.execute(update(Message).where(Message.id == message_id).values(**values))
                db.execute(
                    update(Conversation).where(Conversation.id == conversation_id).values(updated_at=utcnow())
                )
                db.commit()
        except Exception:
            # Left "streaming": the next start-up marks it interrupted.
            log.exception("storing the end of reply %s failed", message_id)

    def _close_abandoned(self, begin: asyncio.Future[_Turn]) -> None:
        if begin.cancelled() or begin.exception() is not None:
            return
        turn = begin.result()
        if turn.duplicate:
            return
        if turn.admission is not None:
            turn.admission.release()
        self._finish(turn.assistant_message_id, turn.conversation_id, "", "", _Outcome(FINISH_ABORT, "interrupted", REASON_CONNECTION_CLOSED))
        self._release(turn.conversation_id)


def _earlier_messages(db: Session, conversation_id: str, user_id: str) -> list[Message]:
    return list(
        db.scalars(
            select(Message)
            .where(Message.conversation_id == conversation_id, Message.user_id == user_id)
            .order_by(Message.position)
        )
    )


def _validate(client_msg_id: object, conversation_id: object, text: object) -> None:
    if not isinstance(client_msg_id, str) or not 0 < len(client_msg_id) <= MAX_CLIENT_MSG_ID_CHARS:
        raise ValidationFailed(f"client_msg_id must be 1 to {MAX_CLIENT_MSG_ID_CHARS} characters")
    if conversation_id is not None and (not isinstance(conversation_id, str) or len(conversation_id) > 64):
        raise ValidationFailed("conversation_id must be a string or null")
    if not isinstance(text, str) or not text.strip():
        raise ValidationFailed("message text must not be empty")
    if len(text) > MAX_TEXT_CHARS:
        raise ValidationFailed(f"message text must be at most {MAX_TEXT_CHARS} characters")


def _stored_turn(db: Session, user_id: str, client_msg_id: str) -> _Turn | None:
    user_message = db.scalar(
        select(Message).where(
            Message.user_id == user_id, Message.client_msg_id == client_msg_id, Message.role == "user"
        )
    )
    if user_message is None:
        return None
    conversation = db.get(Conversation, user_message.conversation_id)
    assistant = db.scalar(
        select(Message).where(Message.user_id == user_id, Message.parent_id == user_message.id)
    )
    return _Turn(
        conversation_id=user_message.conversation_id,
        title=conversation.title if conversation is not None else "",
        user_message_id=user_message.id,
        assistant_message_id=assistant.id if assistant is not None else "",
        duplicate=True,
        stored=assistant,
    )


def _in_prompt(message: Message) -> bool:
    # Interrupted replies keep their partial text in the prompt; empty failed ones are skipped.
    return message.role == "user" or (message.role == "assistant" and bool(message.content.strip()))


def _as_chat_message(message: Message) -> ChatMessage:
    return ChatMessage(message.role, message.content)


def _ack(client_msg_id: str, turn: _Turn) -> Ack:
    return Ack(
        client_msg_id=client_msg_id,
        conversation_id=turn.conversation_id,
        user_message_id=turn.user_message_id,
        assistant_message_id=turn.assistant_message_id,
        duplicate=turn.duplicate,
        title=turn.title,
    )


def _final_html(markdown: IncrementalMarkdown) -> str:
    markdown.finish()
    return markdown.html


def _replayed_outcome(client_msg_id: str, turn: _Turn) -> ChatEvent:
    row = turn.stored
    if row is None:
        return ChatFailed("not_found", "the reply to this message is missing", client_msg_id, None)
    if row.status in ("streaming", "pending"):
        return ChatFailed("in_progress", "the reply to this message is still being generated", client_msg_id, row.id)
    return Done(
        message_id=row.id,
        finish_reason=row.finish_reason,
        status=row.status,
        html=row.html,
        usage={"prompt_tokens": row.prompt_tokens, "completion_tokens": row.completion_tokens},
        timings={"queue_ms": row.queue_ms, "ttft_ms": row.ttft_ms, "decode_tokens_per_s": row.decode_tokens_per_s},
        error=row.error,
        sources=load_sources(row.sources),
    )


def _done(message_id: str, html: str, outcome: _Outcome, sources: list[dict[str, Any]] | None = None) -> Done:
    done = outcome.done or GenerationDone(outcome.finish_reason)
    prompt_tokens = done.prompt_tokens if outcome.done else None
    completion_tokens = done.completion_tokens if outcome.done else None
    return Done(
        message_id=message_id,
        finish_reason=outcome.finish_reason,
        status=outcome.status,
        html=html,
        usage={"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
        timings={"queue_ms": done.queue_ms, "ttft_ms": done.ttft_ms, "decode_tokens_per_s": done.decode_tokens_per_s},
        error=outcome.error,
        sources=list(sources or []),
    )
