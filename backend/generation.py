"""One generation, one lifecycle: what a request to the model holds, taken and given back once.

A generation is one call of the model for one caller: a chat reply (source "chat"), one ``/v1``
request with all its ``n`` samples (source "api"), later a step of an agent run. Whatever the
ending (complete, length, stop, abort, error, the client gone, the account disabled, shutdown),
the same object opens and closes, each exactly once:

- the per-user lease of :class:`backend.limits.UsageLimiter` (concurrency, requests per minute),
- the admission ticket of :class:`backend.admission.AdmissionController` (given back early, at
  the first event, when the engine starts on it),
- the live-registry entry (:mod:`backend.live`: disabling the account ends it),
- the usage record (prompt tokens once, completion tokens of every sample),
- the metrics (one observation per sample, and refusals),
- the abort in the engine of every sample still unfinished.

:class:`Generations` is the one factory: :meth:`Generations.admit` passes the gates (sync: call it
off the event loop), :meth:`Generation.start` queues the request with its ``n`` samples,
:meth:`Generation.events` yields them, :meth:`Generation.close` settles. ``counts`` tallies every
opening and every release, so tests (and an operator) can check they pair up.

The prefix-cache salt of a user is :meth:`Generations.cache_salt`, for chat and ``/v1`` alike.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections import Counter
from dataclasses import dataclass, field
from typing import AsyncIterator, Callable, Protocol, Sequence

from sqlalchemy.orm import Session, sessionmaker

from backend.generator import (FINISH_ABORT, FINISH_ERROR, ChatMessage, GenerationDone, count_text,
                               GenerationEvent, GenerationParams, TextDelta, TextGenerator)
from backend.admission import AdmissionController, Ticket
from backend.limits import Lease, Overloaded, RateLimited, UsageLimiter, record_usage
from backend.live import KIND_GENERATION, LiveEntry, LiveRegistry
from backend import tracing

log = logging.getLogger(__name__)


class GenerationMetrics(Protocol):
    """What a generation reports (backend.metrics.Metrics)."""

    def observe_done(self, done: GenerationDone, source: str) -> None: ...

    def count_rejection(self, kind: str) -> None: ...


@dataclass
class Sample:
    """One of a generation's n samples: its text so far and its final event."""

    parts: list[str] = field(default_factory=list)
    done: GenerationDone | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts)


class Generations:
    """Makes :class:`Generation` objects and holds what they share.

    Args:
        generator: the model. session_factory: where usage is recorded without a limiter.
        limiter / admission / metrics: None for none. live: the registry of live work per user.
        cache_salt_key: HMAC key of the per-user prefix-cache salt (None: 32 random bytes,
            enough because the engine's cache does not outlive the process).
    """

    def __init__(self, generator: TextGenerator, session_factory: sessionmaker[Session] | None = None, *,
                 limiter: UsageLimiter | None = None, admission: AdmissionController | None = None,
                 metrics: GenerationMetrics | None = None, live: LiveRegistry | None = None,
                 cache_salt_key: bytes | None = None) -> None:
        self.generator = generator
        self.sessions = session_factory
        self.limiter = limiter
        self.admission = admission
        self.metrics = metrics
        self.live = live if live is not None else LiveRegistry()
        self._salt_key = cache_salt_key if cache_salt_key is not None else secrets.token_bytes(32)
        # opened, closed, lease_released, ticket_released, live_added, live_discarded, aborted.
        self.counts: Counter[str] = Counter()
        self.open: set[Generation] = set()

    def cache_salt(self, user_id: str) -> str:
        """HMAC-SHA256(key, user_id), hex: one prefix-cache namespace per user, so one user's
        cached prompts are never reused for (or timed by) another user."""
        return hmac.new(self._salt_key, user_id.encode("utf-8"), hashlib.sha256).hexdigest()

    def admit(self, user_id: str, source: str, prompt_tokens: int, n: int = 1) -> Generation:
        """Pass the per-user limits, then the admission queue (for n x prompt_tokens). Sync (the
        limiter reads the database). Raises RateLimited / Overloaded having taken nothing (the
        refusal is counted in the metrics)."""
        lease: Lease | None = None
        try:
            with tracing.span("admission", source=source, prompt_tokens=prompt_tokens, n=n):
                lease = self.limiter.acquire(user_id) if self.limiter is not None else None
                ticket = self.admission.admit(prompt_tokens * n) if self.admission is not None else None
        except (RateLimited, Overloaded) as exc:
            if lease is not None:
                lease.release()
            self._count_rejection(exc.code)
            raise
        except BaseException:
            if lease is not None:
                lease.release()
            raise
        generation = Generation(self, user_id, source, prompt_tokens, n, lease, ticket)
        generation.trace_parent = tracing.current_span()  # for its engine spans (backend/tracing.py)
        self.counts["opened"] += 1
        self.open.add(generation)
        return generation

    def _count_rejection(self, kind: str) -> None:
        if self.metrics is not None:
            try:
                self.metrics.count_rejection(kind)
            except Exception:
                log.exception("counting a %s rejection failed", kind)


class Generation:
    """One admitted generation; see the module docstring. Not thread-safe: after admit(), use
    it on the event loop.

    Attributes:
        request_id: the engine's id (set by start()). samples: one Sample per n.
        ended_reason: why the server ended it (end()), else None. stopped: its owner stopped it.
    """

    def __init__(self, hub: Generations, user_id: str, source: str, prompt_tokens: int, n: int,
                 lease: Lease | None, ticket: Ticket | None) -> None:
        self.hub = hub
        self.user_id = user_id
        self.source = source
        self.prompt_tokens = prompt_tokens
        self.samples = [Sample() for _ in range(n)]
        self.request_id: str | None = None
        self.ended_reason: str | None = None
        self.stopped = False
        self._lease = lease
        self._ticket = ticket
        self._stream: AsyncIterator[GenerationEvent] | None = None
        self._live: LiveEntry | None = None
        self._closed = False
        self._outside: GenerationDone | None = None
        self._on_end: list[Callable[[], None]] = []
        self.trace_parent: object = None

    @property
    def started(self) -> bool:
        return self._stream is not None

    @property
    def finished(self) -> bool:
        """Every sample has its final event."""
        return all(s.done is not None for s in self.samples)

    def start(self, request_id: str, params: GenerationParams, *, messages: Sequence[ChatMessage] | None = None,
              prompt: str | None = None, conversation_id: str | None = None) -> None:
        """Queue the request (chat `messages`, or a raw `prompt`) with params.n = len(samples).
        `conversation_id`: a chat reply's, kept on its live-registry entry (the re-check ends the
        reply when the conversation is gone). Raises GenerationError (nothing queued; close()
        still settles the gates)."""
        if self._closed or self._stream is not None:
            raise RuntimeError("a generation starts once, before it is closed")
        self.request_id = request_id
        params = params if params.n == len(self.samples) else _with_n(params, len(self.samples))
        generator = self.hub.generator
        if messages is not None:
            self._stream = generator.stream(request_id, messages, params)
        else:
            self._stream = generator.stream_prompt(request_id, prompt or "", params)
        self._live = self.hub.live.add(self.user_id, KIND_GENERATION, self.end, conversation_id=conversation_id)
        self.hub.counts["live_added"] += 1

    async def events(self) -> AsyncIterator[GenerationEvent]:
        """Every sample's events as they come; each sample's last is its GenerationDone. A
        generator that fails mid-stream ends the unfinished samples with finish_reason "error"."""
        if self._stream is None:
            return
        if self.ended_reason is not None or self.stopped:
            await self._abort()  # ended before it started: it must not run on
        try:
            async for event in self._stream:
                if self._ticket is not None:
                    self._ticket.started()  # the engine works on it: it no longer waits
                sample = self.samples[event.index] if 0 <= event.index < len(self.samples) else None
                if sample is None or sample.done is not None:
                    continue
                if isinstance(event, TextDelta):
                    if event.text:
                        sample.parts.append(event.text)
                else:
                    sample.done = event
                    tracing.record_engine(event.timeline, sample=event.index, finish_reason=event.finish_reason,
                                          prompt_tokens=event.prompt_tokens, completion_tokens=event.completion_tokens,
                                          parent=self.trace_parent)
                yield event
                if self.finished:
                    return
        except Exception as exc:  # an engine failure mid-stream must still end every sample
            log.exception("generation %s failed", self.request_id)
            for index, sample in enumerate(self.samples):
                if sample.done is None:
                    sample.done = GenerationDone(FINISH_ERROR, self.prompt_tokens, error=f"generation failed: {exc}",
                                                 index=index)
                    yield sample.done

    def account_outside(self, done: GenerationDone) -> None:
        """The final event of work that ran under this generation's gates without its own
        stream (an agent run's model steps, backend/chat/agent_turn.py: their prompt and
        completion tokens summed): close() records its usage and metrics as a stream's, once.
        Ignored once closed or for a generation that has its own stream."""
        if not self._closed and self._stream is None:
            self._outside = done

    def run_outside(self, conversation_id: str | None, on_end: Callable[[], None]) -> None:
        """Work runs under this generation's gates without a stream of its own (an agent run,
        backend/chat/agent_turn.py): register it in the live-work registry as start() does a
        stream (so ending the user's access, a deleted conversation or shutdown reach it) and
        call `on_end` when the generation is stopped or ended (see :meth:`on_end`)."""
        if not self._closed and self._stream is None and self._live is None:
            self._live = self.hub.live.add(self.user_id, KIND_GENERATION, self.end, conversation_id=conversation_id)
            self.hub.counts["live_added"] += 1
        self.on_end(on_end)

    def on_end(self, callback: Callable[[], None]) -> None:
        """Call `callback` (synchronously, on the event loop) when the generation is stopped or
        ended: for work under its gates without a stream of its own (an agent run, whose stop
        event this sets), which aborting the stream cannot reach. Called at once if that has
        already happened."""
        if self.stopped or self.ended_reason is not None:
            callback()
        else:
            self._on_end.append(callback)

    def _ended(self) -> None:
        callbacks, self._on_end = self._on_end, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                log.exception("an end callback of %s failed", self.request_id)

    async def stop(self) -> None:
        """Its owner stopped it: abort; the samples end with finish_reason "abort"."""
        self.stopped = True
        self._ended()
        await self._abort()

    async def end(self, reason: str) -> None:
        """The server ended it (access ended, shutdown, nobody watching): abort with `reason`."""
        if self.ended_reason is None:
            self.ended_reason = reason
        self._ended()
        await self._abort()

    async def close(self) -> None:
        """Abort what is unfinished, record usage and metrics, give back the ticket, the lease
        and the live entry. Idempotent; the settling is synchronous, so a cancellation during
        the abort cannot skip it."""
        if self._closed:
            return
        self._closed = True
        unfinished = self._stream is not None and not self.finished
        self._settle()
        if unfinished:
            await self._abort()
        if self._stream is not None:  # finished or not: let the stream run its clean-up now
            close = getattr(self._stream, "aclose", None)
            if close is not None:
                try:
                    await close()
                except Exception:
                    log.exception("closing the stream of %s failed", self.request_id)

    def discard(self) -> None:
        """Give back the gates of a generation that will never start (its turn failed before
        the model was called). Idempotent; a no-op once closed."""
        if self._closed or self._stream is not None:
            return
        self._closed = True
        self._settle()

    async def _abort(self) -> None:
        if self._stream is None or self.request_id is None or self.finished:
            return
        self.hub.counts["aborted"] += 1
        try:
            await self.hub.generator.abort(self.request_id)
        except Exception:
            log.exception("aborting %s failed", self.request_id)

    def final_events(self) -> list[GenerationDone]:
        """Each sample's final event, or for one that has none (closed early) an "abort" with the
        admitted prompt tokens and its text's tokens. With account_outside(): that event."""
        if self._outside is not None:
            return [self._outside]
        out = []
        for index, sample in enumerate(self.samples):
            if sample.done is not None:
                out.append(sample.done)
                continue
            completion = self._count_text(sample.text) if sample.parts else 0
            out.append(GenerationDone(FINISH_ABORT, self.prompt_tokens, completion, index=index))
        return out

    def _count_text(self, text: str) -> int:
        return count_text(self.hub.generator, text)

    def _settle(self) -> None:
        hub = self.hub
        hub.counts["closed"] += 1
        hub.open.discard(self)
        if self._live is not None:
            hub.live.discard(self._live)
            hub.counts["live_discarded"] += 1
        if self._stream is not None or self._outside is not None:
            self._account()
        if self._ticket is not None:
            self._ticket.release()
            hub.counts["ticket_released"] += 1
        if self._lease is not None:
            self._lease.release()
            hub.counts["lease_released"] += 1

    def _account(self) -> None:
        finals = self.final_events()
        prompt = next((d.prompt_tokens for d in finals if d.prompt_tokens), self.prompt_tokens)
        completion = sum(d.completion_tokens for d in finals)
        try:
            if self._lease is not None:
                self._lease.record(prompt, completion, self.source)
            elif self.hub.sessions is not None:
                record_usage(self.hub.sessions, self.user_id, prompt, completion, self.source)
        except Exception:
            log.exception("recording the usage of %s failed", self.request_id)
        if self.hub.metrics is not None:
            for done in finals:
                try:
                    self.hub.metrics.observe_done(done, self.source)
                except Exception:
                    log.exception("metrics for %s failed", self.request_id)


def _with_n(params: GenerationParams, n: int) -> GenerationParams:
    from dataclasses import replace

    return replace(params, n=n)
