"""Admission control: a bounded waiting room in front of this process's engine.

Per process by design, also with several processes: it guards this process's engine queue
(docs/ARCHITECTURE.md). Refusals are :class:`backend.limits.Overloaded` (HTTP 503 / chat
``overloaded`` with Retry-After).
"""

from __future__ import annotations

import threading

from backend.limits import Overloaded


class AdmissionController:
    """A bounded waiting room in front of the engine (thread-safe): requests admitted but not yet
    given their first token, and their prompt tokens; requests already admitted are never touched.

    Waiting = admitted and not yet given its first token. A request is refused when admitting
    it would make more than `max_waiting_requests` wait, or more than `max_waiting_prompt_tokens`
    prompt tokens wait, except that a request is always admitted when nothing waits (so one
    prompt longer than the token bound is not refused forever). The engine's own queue deadline
    (queue_timeout_s) ends a request that waits too long after admission.

    Args:
        max_waiting_requests, max_waiting_prompt_tokens: the bounds (>= 1).
        retry_after_s: the wait suggested to a refused request (>= 1).
    """

    def __init__(self, max_waiting_requests: int, max_waiting_prompt_tokens: int, retry_after_s: int = 5) -> None:
        if max_waiting_requests < 1 or max_waiting_prompt_tokens < 1 or retry_after_s < 1:
            raise ValueError("admission bounds and retry_after_s must be >= 1")
        self.max_waiting_requests = max_waiting_requests
        self.max_waiting_prompt_tokens = max_waiting_prompt_tokens
        self.retry_after_s = retry_after_s
        self._lock = threading.Lock()
        self._waiting_requests = 0
        self._waiting_tokens = 0
        self._admitted_total = 0
        self._rejected_total = 0

    def admit(self, prompt_tokens: int) -> Ticket:
        """Admit one request of `prompt_tokens` prompt tokens, or raise at once.

        Raises:
            Overloaded: the queue is full (retry_after_s as configured).
        """
        prompt_tokens = max(0, int(prompt_tokens))
        with self._lock:
            if self._waiting_requests and (
                self._waiting_requests + 1 > self.max_waiting_requests
                or self._waiting_tokens + prompt_tokens > self.max_waiting_prompt_tokens
            ):
                self._rejected_total += 1
                raise Overloaded(
                    self.retry_after_s,
                    f"The server is busy ({self._waiting_requests} requests waiting). "
                    f"Try again in {self.retry_after_s} s.",
                )
            self._waiting_requests += 1
            self._waiting_tokens += prompt_tokens
            self._admitted_total += 1
        return Ticket(self, prompt_tokens)

    def snapshot(self) -> dict[str, int]:
        """waiting_requests, waiting_prompt_tokens, admitted_total, rejected_total, and the bounds."""
        with self._lock:
            return {
                "waiting_requests": self._waiting_requests,
                "waiting_prompt_tokens": self._waiting_tokens,
                "admitted_total": self._admitted_total,
                "rejected_total": self._rejected_total,
                "max_waiting_requests": self.max_waiting_requests,
                "max_waiting_prompt_tokens": self.max_waiting_prompt_tokens,
            }

    def _leave(self, ticket: Ticket) -> None:
        with self._lock:
            if ticket._waiting:
                ticket._waiting = False
                self._waiting_requests -= 1
                self._waiting_tokens -= ticket.prompt_tokens


class Ticket:
    """An admitted request's place in the waiting room."""

    def __init__(self, controller: AdmissionController, prompt_tokens: int) -> None:
        self._controller = controller
        self.prompt_tokens = prompt_tokens
        self._waiting = True

    @property
    def waiting(self) -> bool:
        return self._waiting

    def started(self) -> None:
        """The first event arrived: the request no longer waits. Idempotent."""
        self.release()

    def release(self) -> None:
        """Leave the waiting room (finished, failed or abandoned). Idempotent, thread-safe."""
        self._controller._leave(self)
