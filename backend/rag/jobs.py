"""Ingestion jobs with leases: which process indexes which uploaded document version.

One `ingestion_jobs` row (backend.models.IngestionJob, migration 0008) per version still
`processing`, written in the upload's transaction with the bytes, so any process sharing the
database can index it, and deleted in the transaction that makes the version ready, failed or
superseded. A job is leased to one process run (`claim`, a random token per JobLeases; `owner`,
the instance name, for people) until `lease_expires_at`; the holder's heartbeat renews it.

Only the holder starts, renews, releases or finishes a job (every statement says
`claim = <ours>`), so a process that lost its lease (stalled past it) cannot publish over the
process that took the job over: the finishing DELETE finds no row of ours and the work is
dropped. A job whose lease has expired (its process died, or stopped and released it) is
claimed by whichever process asks first: PostgreSQL `UPDATE ... WHERE document_id IN (SELECT ...
FOR UPDATE SKIP LOCKED)`, so concurrent claimers take different rows without waiting on each
other; SQLite runs the same UPDATE under its single writer lock. After `max_attempts` started
runs, an expired job fails its document instead (a document that kills its process is not
retried forever). Lease times come from the `clock` (UTC): processes on several hosts need
synchronised clocks, to well within the lease (60 s by default).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable

from sqlalchemy import case, delete, exists, select, update
from sqlalchemy.orm import Session, sessionmaker

from backend.models import Document, IngestionJob, utcnow

REASON_ATTEMPTS = "indexing was interrupted {attempts} times (the server stopped each time); upload it again"
REASON_INTERRUPTED = "the server stopped before this document was indexed; upload it again"
MAX_OWNER_CHARS = 64


class LeaseLost(Exception):
    """This process no longer holds the document's ingestion job (its lease expired and another
    process took the job over, or the job ended): its work on it is dropped."""


@dataclass(frozen=True)
class Job:
    """A job claimed by this process: the version to index, its owner, the uploaded bytes."""

    document_id: str
    user_id: str
    data: bytes


class JobLeases:
    """The ingestion jobs of one process run. Thread-safe (a session per call).

    owner: the instance name (Settings.instance_name). lease_s: seconds a lease lasts without
    renewal. max_attempts: started runs before an expired job fails its document. clock: UTC now.
    """

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        owner: str,
        lease_s: float,
        max_attempts: int,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.session_factory = session_factory
        self.owner = owner[:MAX_OWNER_CHARS]
        self.claim = uuid.uuid4().hex
        self.lease_s = lease_s
        self.max_attempts = max_attempts
        self.clock = clock

    def _until(self) -> datetime:
        return self.clock() + timedelta(seconds=self.lease_s)

    def _ours(self):  # type: ignore[no-untyped-def]
        return IngestionJob.claim == self.claim

    def add(self, session: Session, document_id: str, data: bytes) -> None:
        """A job for a version just recorded, leased to this process (inside the caller's
        transaction, the one that inserts the Document)."""
        session.add(IngestionJob(document_id=document_id, data=data, owner=self.owner, claim=self.claim,
                                 lease_expires_at=self._until(), attempts=0, created_at=self.clock()))

    def start(self, document_id: str) -> bool:
        """Count a run and renew the lease before indexing. False: the job is not ours (any more)."""
        with self.session_factory.begin() as session:
            result = session.execute(
                update(IngestionJob).where(IngestionJob.document_id == document_id, self._ours())
                .values(attempts=IngestionJob.attempts + 1, lease_expires_at=self._until())
            )
            return (result.rowcount or 0) == 1

    def renew(self) -> set[str]:
        """Extend every lease this process holds; returns their document ids (a job missing from
        it has ended, or was taken over after our lease expired)."""
        with self.session_factory.begin() as session:
            rows = session.execute(
                update(IngestionJob).where(self._ours()).values(lease_expires_at=self._until())
                .returning(IngestionJob.document_id)
            )
            return {row[0] for row in rows}

    def release(self, document_ids: list[str], *, ran: bool) -> None:
        """Give jobs back at once (shutting down): their leases end now, so another process (or
        this one's next run) takes them over. ran: their runs were cut short: not counted.
        A released job gets a claim nobody holds: this process's heartbeat, if it renews at the
        same moment, can no longer extend that lease (it did, and the jobs then waited out a
        whole lease before the next start could take them over)."""
        if not document_ids:
            return
        values: dict[str, object] = {"lease_expires_at": self.clock(), "claim": uuid.uuid4().hex}
        if ran:
            values["attempts"] = case((IngestionJob.attempts > 0, IngestionJob.attempts - 1), else_=0)
        with self.session_factory.begin() as session:
            session.execute(update(IngestionJob).where(IngestionJob.document_id.in_(document_ids), self._ours())
                            .values(**values))

    def finish(self, session: Session, document_id: str, *, fenced: bool) -> bool:
        """Delete the job inside the transaction that ends the version. fenced: only if it is
        ours (False when it is not: the caller must not publish); else whoever holds it."""
        condition = [IngestionJob.document_id == document_id] + ([self._ours()] if fenced else [])
        result = session.execute(delete(IngestionJob).where(*condition))
        return not fenced or (result.rowcount or 0) == 1

    def claim_expired(self, limit: int) -> list[Job]:
        """Take over at most `limit` jobs whose lease has expired and that have runs left, oldest
        first, leased to this process now; their bytes and owners. Never a live lease."""
        if limit < 1:
            return []
        now = self.clock()
        expired = (IngestionJob.lease_expires_at < now) & (IngestionJob.attempts < self.max_attempts)
        pick = (
            select(IngestionJob.document_id).where(expired)
            .order_by(IngestionJob.created_at, IngestionJob.document_id).limit(limit)
            .with_for_update(skip_locked=True)
        )
        with self.session_factory.begin() as session:
            ids = list(session.scalars(
                update(IngestionJob).where(IngestionJob.document_id.in_(pick), expired)
                .values(owner=self.owner, claim=self.claim, lease_expires_at=self._until())
                .returning(IngestionJob.document_id)
            ))
            if not ids:
                return []
            rows = session.execute(
                select(IngestionJob.document_id, Document.user_id, IngestionJob.data, IngestionJob.created_at)
                .join(Document, Document.id == IngestionJob.document_id)
                .where(IngestionJob.document_id.in_(ids))
                .order_by(IngestionJob.created_at, IngestionJob.document_id)
            ).all()
            return [Job(r.document_id, r.user_id, r.data) for r in rows]

    def fail_abandoned(self) -> int:
        """Versions that can no longer be indexed become failed: `processing` without a job (left
        by a release before leases), and jobs whose lease expired after max_attempts runs (their
        job is deleted). Live leases are never touched. Returns how many versions failed."""
        now = self.clock()
        exhausted = (IngestionJob.lease_expires_at < now) & (IngestionJob.attempts >= self.max_attempts)
        failed = 0
        with self.session_factory.begin() as session:
            result = session.execute(
                update(Document).where(
                    Document.status == "processing",
                    ~exists().where(IngestionJob.document_id == Document.id),
                ).values(status="failed", error=REASON_INTERRUPTED, updated_at=now)
                .execution_options(synchronize_session=False)
            )
            failed += result.rowcount or 0
            ids = list(session.scalars(
                delete(IngestionJob).where(exhausted).returning(IngestionJob.document_id)
            ))
            if ids:
                result = session.execute(
                    update(Document).where(Document.id.in_(ids), Document.status == "processing")
                    .values(status="failed", error=REASON_ATTEMPTS.format(attempts=self.max_attempts), updated_at=now)
                    .execution_options(synchronize_session=False)
                )
                failed += result.rowcount or 0
        return failed
