"""asyncio front of the engine: the step loop on one background thread, events to coroutines."""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from collections.abc import AsyncIterator

from engine.errors import DuplicateRequestError, EngineNotRunningError
from engine.llm_engine import LLMEngine
from engine.outputs import RequestOutput
from engine.sampling_params import SamplingParams
from engine.stats import EngineStats

logger = logging.getLogger(__name__)


@dataclass
class _Sink:
    """Where the engine thread puts one request's events. Holds no reference to the stream,
    so an abandoned stream can be collected (and abort its request)."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[RequestOutput]
    num_unfinished: int = 1  # samples (SamplingParams.n) whose final event is still to come

    def put(self, output: RequestOutput) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, output)


class RequestStream:
    """Async iterator over one request's events; it ends after the final (finished=True) event
    of each of its SamplingParams.n samples (told apart by RequestOutput.index).

    Leaving early aborts the request: `aclose()`, cancellation of the task awaiting the next
    event, or the stream being garbage-collected unfinished.
    """

    def __init__(self, engine: AsyncLLMEngine, request_id: str, sink: _Sink,
                 num_samples: int = 1) -> None:
        self.request_id = request_id
        self._engine = engine
        self._queue = sink.queue
        self._num_unfinished = num_samples  # not sink's: the engine thread counts that one down
        self.finished = False

    def __aiter__(self) -> RequestStream:
        return self

    async def __anext__(self) -> RequestOutput:
        if self.finished:
            raise StopAsyncIteration
        try:
            output = await self._queue.get()
        except BaseException:  # cancelled: the consumer is leaving
            self._abandon()
            raise
        if output.finished:
            self._num_unfinished -= 1
            self.finished = self._num_unfinished == 0
        return output

    async def aclose(self) -> None:
        self._abandon()

    def _abandon(self) -> None:
        if not self.finished:
            self.finished = True
            self._engine.abort(self.request_id)

    def __del__(self) -> None:
        if not getattr(self, "finished", True):
            self._engine.abort(self.request_id)


class AsyncLLMEngine:
    """Runs `LLMEngine.step()` on one daemon thread and routes events to asyncio consumers.

    The thread sleeps on a condition variable while there is no work. If a step raises, every
    request in flight finishes with "error" and the loop keeps serving.
    """

    def __init__(self, engine: LLMEngine) -> None:
        self.engine = engine
        self._cond = threading.Condition()
        self._sinks: dict[str, _Sink] = {}
        self._thread: threading.Thread | None = None
        self._stopping = False

    @property
    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._stopping

    def start(self) -> None:
        """Start the step loop (idempotent)."""
        if self.is_running:
            return
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="engine-step-loop", daemon=True)
        self._thread.start()

    def shutdown(self, timeout: float | None = 30.0) -> None:
        """Abort every request, let the loop deliver their "abort" events, then stop it."""
        if self._thread is None:
            return
        with self._cond:
            self.engine.abort_all_requests()
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(timeout)
        self._thread = None

    def add_request(self, request_id: str, prompt: str | list[int],
                    params: SamplingParams | None = None, *,
                    cache_salt: str | None = None) -> AsyncIterator[RequestOutput]:
        """Queue a request; returns its event stream. Call from a running event loop.
        cache_salt: the prefix-cache key of LLMEngine.add_request.

        Raises synchronously, before anything is queued, what LLMEngine.add_request raises,
        DuplicateRequestError also while a finished request's last events with this id are
        still being delivered, and EngineNotRunningError when the loop is not running.
        A new structured-output constraint is compiled here, on the caller's thread, outside
        the lock the step loop takes (milliseconds for typical schemas; cached after).
        """
        if not self.is_running:
            raise EngineNotRunningError("the engine's step loop is not running")
        n = params.n if isinstance(params, SamplingParams) else 1
        if isinstance(params, SamplingParams) and params.structured_output is not None:
            # Compile (or find cached) outside the lock the step loop takes; raises
            # InvalidStructuredOutputError. add_request below then reuses the cached grammar.
            compiler = self.engine.grammar_compiler
            if not compiler.is_cached(params.structured_output):  # else no throw-away matcher copy
                compiler.matcher(params.structured_output)
        sink = _Sink(asyncio.get_running_loop(), asyncio.Queue(), num_unfinished=n)
        with self._cond:
            if request_id in self._sinks:  # finished in the engine, last event not yet delivered
                raise DuplicateRequestError(f"request id {request_id!r} is already in use")
            self.engine.add_request(request_id, prompt, params, cache_salt=cache_salt)
            self._sinks[request_id] = sink
            self._cond.notify_all()
        return RequestStream(self, request_id, sink, num_samples=n)

    def stats(self) -> EngineStats:
        """LLMEngine.stats(): live statistics as of the last step boundary. Thread-safe."""
        return self.engine.stats()

    def abort(self, request_id: str) -> None:
        """Abort at the next step boundary; unknown or finished ids are ignored. Thread-safe."""
        with self._cond:
            self.engine.abort_request(request_id)
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopping and not self.engine.has_unfinished_requests():
                    self._cond.wait()
                if self._stopping and not self.engine.has_unfinished_requests():
                    return
            try:
                outputs = self.engine.step()
            except Exception as exc:  # noqa: BLE001 - keep serving the next requests
                logger.exception("engine step raised; failing every request in flight")
                outputs = self.engine.fail_all(f"engine step failed: {exc}")
            self._dispatch(outputs)

    def _dispatch(self, outputs: list[RequestOutput]) -> None:
        for output in outputs:
            with self._cond:
                sink = self._sinks.get(output.request_id)
                if sink is not None and output.finished:
                    sink.num_unfinished -= 1
                    if sink.num_unfinished == 0:
                        self._sinks.pop(output.request_id, None)
            if sink is None:
                continue
            try:
                sink.put(output)
            except RuntimeError:  # the consumer's event loop is closed
                self.engine.abort_request(output.request_id)
