"""IngestionWorker: one process's ingestion off the request path, with leased jobs.

Uploads submitted here are indexed on the worker's thread, fairly across users. A heartbeat
thread renews the leases of the jobs this process holds (queued or running) every quarter of
RagSettings.ingest_lease_s, and each time (the first at start-up) runs recovery: versions that
can no longer be indexed fail (DocumentService.recover_interrupted), and jobs whose lease has
expired (their process died or stopped) are claimed (backend/rag/jobs.py) and queued here.
A job another live process holds is never touched, so restarting one process never fails or
repeats another's work.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict, deque
from concurrent.futures import Future

from backend.rag.documents import DocumentService, DocumentView
from backend.rag.errors import TooManyPending
from backend.rag.jobs import LeaseLost

log = logging.getLogger(__name__)

# Jobs of dead processes taken over per recovery, at most (fewer when this queue is long).
CLAIM_BATCH = 8


class IngestionWorker:
    """Runs ingestion off the request path, one document at a time (embedding uses the CPU
    cores already; two at once would only interleave), fairly across users: the next document
    is taken from the users in turn (round-robin), so one user's many or big uploads do not
    hold back everyone else's. A user may have at most `max_pending_per_user` documents queued
    or running, here and in every other process on the database (DocumentService.upload's
    max_processing). The web layer calls `submit` from a thread (run_in_threadpool), returns the
    processing DocumentView at once, and the list shows progress and the final status.

    heartbeat_s: seconds between lease renewals and recoveries (default a quarter of the
    lease). The threads start at construction; `shutdown` stops them.
    """

    def __init__(
        self, service: DocumentService, max_pending_per_user: int = 5, *, heartbeat_s: float | None = None
    ) -> None:
        if max_pending_per_user < 1:
            raise ValueError("max_pending_per_user must be >= 1")
        self.service = service
        self.max_pending_per_user = max_pending_per_user
        self.heartbeat_s = heartbeat_s if heartbeat_s is not None else service.settings.ingest_lease_s / 4
        self._lock = threading.Condition()
        self._queues: OrderedDict[str, deque[tuple[str, bytes, Future[DocumentView]]]] = OrderedDict()
        self._pending: dict[str, int] = {}  # user -> documents queued or running (or being uploaded)
        self._held: set[str] = set()  # document ids queued or running here
        self._lost: set[str] = set()  # of those, jobs whose lease another process took over
        self._stopping = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rag-ingest", daemon=True)
        self._heart = threading.Thread(target=self._beat, name="rag-lease", daemon=True)
        self._thread.start()
        self._heart.start()

    def submit(
        self, user_id: str, filename: str, data: bytes, *, shared: bool | None = None
    ) -> tuple[DocumentView, Future[DocumentView]]:
        """Upload (raising its typed errors here, on the caller's thread) and queue the ingestion.
        The future resolves to the final DocumentView (ready, failed or superseded); it is
        cancelled when the worker stops first (the job is released for a later run) and raises
        LeaseLost when another process took the job over.

        Raises:
            TooManyPending: the user has max_pending_per_user documents queued or running.
            RuntimeError: the worker was shut down.
            and upload's errors (UnsupportedDocument, DocumentTooLarge, ...).
        """
        with self._lock:
            if self._stopping:
                raise RuntimeError("the ingestion worker is shut down")
            pending = self._pending.get(user_id, 0)
            if pending >= self.max_pending_per_user:
                raise TooManyPending(
                    f"you have {pending} documents being processed; wait for one to finish "
                    f"(at most {self.max_pending_per_user} at a time)"
                )
            self._pending[user_id] = pending + 1
        try:
            # The count above is this process's; the database's covers every process.
            document = self.service.upload(user_id, filename, data, shared=shared,
                                           max_processing=self.max_pending_per_user)
        except BaseException:
            with self._lock:
                self._release(user_id)
            raise
        future: Future[DocumentView] = Future()
        if not self._enqueue(user_id, document.id, data, future):
            future.cancel()
        return document, future

    def _enqueue(self, user_id: str, document_id: str, data: bytes, future: Future[DocumentView]) -> bool:
        """Queue a job this process holds (the caller counted it in _pending). False: stopping
        (the job is released for another process or the next run)."""
        with self._lock:
            if not self._stopping:
                self._held.add(document_id)
                self._queues.setdefault(user_id, deque()).append((document_id, data, future))
                self._lock.notify()
                return True
            self._release(user_id)
        self.service.jobs.release([document_id], ran=False)
        return False

    def pending(self, user_id: str) -> int:
        """Documents of the user queued or running here."""
        with self._lock:
            return self._pending.get(user_id, 0)

    def recover(self) -> int:
        """Recovery, as the heartbeat runs it: fail what cannot be indexed any more, then take
        over expired jobs (never a live lease of another process) and queue them here.
        Returns how many jobs were taken over."""
        failed = self.service.recover_interrupted()
        if failed:
            log.info("marked %d documents that can no longer be indexed as failed", failed)
        with self._lock:
            if self._stopping:
                return 0
            room = CLAIM_BATCH - sum(len(q) for q in self._queues.values())
        taken = 0
        for job in self.service.jobs.claim_expired(room):
            with self._lock:
                if job.document_id in self._held:  # ours already (our lease had lapsed): queued once
                    continue
                self._pending[job.user_id] = self._pending.get(job.user_id, 0) + 1
            if self._enqueue(job.user_id, job.document_id, job.data, Future()):
                taken += 1
        if taken:
            log.info("took over %d documents whose indexing process stopped", taken)
        return taken

    def _beat(self) -> None:
        while True:
            try:
                with self._lock:
                    held = set(self._held)  # before renewing: each was in the table by then
                still = self.service.jobs.renew()
                with self._lock:
                    self._lost |= (held - still) & self._held  # a finished one is gone from both
                self.recover()
            except Exception:  # the database is away: try again at the next beat
                log.exception("renewing ingestion leases failed")
            if self._stop.wait(self.heartbeat_s):
                return

    def _release(self, user_id: str) -> None:
        left = self._pending.get(user_id, 0) - 1
        if left > 0:
            self._pending[user_id] = left
        else:
            self._pending.pop(user_id, None)

    def _next(self) -> tuple[str, str, bytes, Future[DocumentView]] | None:
        with self._lock:
            while not self._queues and not self._stopping:
                self._lock.wait()
            if self._stopping:
                return None
            user_id, queue = next(iter(self._queues.items()))
            document_id, data, future = queue.popleft()
            del self._queues[user_id]
            if queue:  # round-robin: this user goes to the back of the line
                self._queues[user_id] = queue
            return user_id, document_id, data, future

    def _run(self) -> None:
        while True:
            item = self._next()
            if item is None:
                return
            user_id, document_id, data, future = item
            try:
                if not future.set_running_or_notify_cancel():
                    continue
                if not self.service.jobs.start(document_id):
                    future.set_exception(LeaseLost("another process took this document's ingestion job over"))
                    continue

                def cancelled(document_id: str = document_id) -> bool:
                    return self._stopping or document_id in self._lost

                future.set_result(self.service.ingest(document_id, data, cancelled=cancelled, fenced=True))
            except BaseException as exc:  # LeaseLost, NotFound (deleted meanwhile) or a bug: tell the waiter
                if not future.done():
                    future.set_exception(exc)
            finally:
                with self._lock:
                    self._release(user_id)
                    self._held.discard(document_id)
                    self._lost.discard(document_id)

    def shutdown(self, wait: bool = True) -> None:
        """Stop promptly: refuse new work, cancel what is queued and release those jobs (their
        leases end now, so another process, or this one's next start, indexes them), and make
        the running one stop before its next embedding batch (released too). With wait, return
        when both threads have ended (after at most one batch)."""
        with self._lock:
            self._stopping = True
            queued = [item for queue in self._queues.values() for item in queue]
            self._queues.clear()
            self._lock.notify_all()
        self._stop.set()
        for document_id, _data, future in queued:
            future.cancel()
        with self._lock:
            for document_id, _data, _future in queued:
                self._held.discard(document_id)
        try:
            self.service.jobs.release([document_id for document_id, _, _ in queued], ran=False)
        except Exception:  # the database is away: the leases expire by themselves
            log.exception("releasing queued ingestion jobs failed")
        with self._lock:
            self._pending.clear()
        if wait:
            self._thread.join()
            self._heart.join()
