"""Ingestion jobs leased to one process (backend/rag/jobs.py, backend/rag/ingestion.py): two
DocumentService/IngestionWorker pairs on one database stand for two server processes.

Tests run on SQLite and, with TEST_DATABASE_URL, on PostgreSQL (the `session_factory` fixture).
Lease expiry is driven by a fake clock shared by the "processes", never by sleeping."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import func, select, text

from backend.errors import NotFound
from backend.models import Document, DocumentChunk, IngestionJob
from backend.rag import DocumentService, IngestionWorker, LeaseLost, TooManyPending
from backend.rag.jobs import REASON_ATTEMPTS
from tests.backend.rag.test_qa_fixes import GatedService, wait_for

QUIET = 3600.0  # heartbeat period for workers whose recovery the test calls itself


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def process(session_factory, embedder, rag_settings, clock):
    """process(name) -> a DocumentService of its own (a process run) on the shared database."""

    def _process(name: str) -> DocumentService:
        return DocumentService(session_factory, embedder, rag_settings, instance=name, clock=clock)

    return _process


def job_of(session_factory, document_id):
    with session_factory() as session:
        return session.get(IngestionJob, document_id)


def status_of(session_factory, document_id):
    with session_factory() as session:
        return session.scalar(select(Document.status).where(Document.id == document_id))


def chunks_of(session_factory, document_id):
    with session_factory() as session:
        return session.scalar(select(func.count()).select_from(DocumentChunk).where(DocumentChunk.document_id == document_id))


TEXT = b"Walruses haul out on sea ice. " * 20


def test_restarting_one_process_leaves_another_processes_work_alone(process, session_factory, users):
    b = GatedService(process("B"))
    worker_b = IngestionWorker(b, heartbeat_s=QUIET)  # type: ignore[arg-type]
    worker_a = None
    try:
        view, future = worker_b.submit("alice", "walrus.txt", TEXT)
        assert b.started.wait(10)  # B is indexing it
        a = process("A")  # A restarts: its start-up recovery, then its worker's
        assert a.recover_interrupted() == 0
        worker_a = IngestionWorker(a, heartbeat_s=QUIET)
        assert worker_a.recover() == 0
        assert status_of(session_factory, view.id) == "processing"
        assert job_of(session_factory, view.id).owner == "B"
        b.gate.set()
        assert future.result(timeout=30).status == "ready"
        assert job_of(session_factory, view.id) is None
    finally:
        b.gate.set()
        worker_b.shutdown()
        if worker_a is not None:
            worker_a.shutdown()


def test_a_renewal_racing_a_release_does_not_take_the_job_back(process, session_factory, users, clock):
    # Shutting down releases the queued jobs while the heartbeat thread may be renewing every
    # lease the process holds. A renewal that ran just after the release re-extended the
    # released leases, and the next start waited a whole lease (60 s) to take them over (seen
    # once in CI: test_qa_fixes' restart test ran out of its 60 s).
    a = process("A")
    view = a.upload("alice", "walrus.txt", TEXT)
    assert a.jobs.start(view.id)
    a.jobs.release([view.id], ran=True)
    assert a.jobs.renew() == set()  # the heartbeat's renewal, after the release
    assert job_of(session_factory, view.id).lease_expires_at <= clock.now
    assert a.jobs.start(view.id) is False  # not A's to run any more
    clock.advance(1)  # a second later, not a lease later
    b = process("B")
    assert [job.document_id for job in b.jobs.claim_expired(10)] == [view.id]


@pytest.mark.parametrize("started", [False, True], ids=["queued", "running"])
def test_a_dead_processes_job_is_taken_over_when_its_lease_expires(process, session_factory, users, clock,
                                                                     rag_settings, started):
    a = process("A")
    view = a.upload("alice", "walrus.txt", TEXT)  # then A dies: nobody renews the lease
    if started:
        assert a.jobs.start(view.id)
    b = process("B")
    worker_b = IngestionWorker(b, heartbeat_s=QUIET)
    try:
        assert worker_b.recover() == 0  # the lease is live: not B's to take
        assert job_of(session_factory, view.id).owner == "A"
        clock.advance(rag_settings.ingest_lease_s + 1)
        worker_b.recover()
        assert wait_for(lambda: status_of(session_factory, view.id) == "ready")
        assert job_of(session_factory, view.id) is None
        assert chunks_of(session_factory, view.id) > 0
    finally:
        worker_b.shutdown()


def test_after_the_last_attempt_an_expired_job_fails_its_document(process, session_factory, users, clock,
                                                                    rag_settings):
    holder = process("A")
    view = holder.upload("alice", "poison.txt", TEXT)
    for run in range(rag_settings.ingest_attempts):  # each run's process dies mid-way
        if run:
            holder = process(f"P{run}")
            assert [job.document_id for job in holder.jobs.claim_expired(5)] == [view.id]
        assert holder.jobs.start(view.id)
        clock.advance(rag_settings.ingest_lease_s + 1)
    last = process("Z")
    assert last.jobs.claim_expired(5) == []
    assert last.recover_interrupted() == 1
    with session_factory() as session:
        document = session.get(Document, view.id)
        assert (document.status, document.error) == ("failed", REASON_ATTEMPTS.format(attempts=rag_settings.ingest_attempts))
    assert job_of(session_factory, view.id) is None


def test_a_process_that_lost_its_lease_cannot_publish(process, session_factory, users, clock, rag_settings):
    a = process("A")
    view = a.upload("alice", "walrus.txt", TEXT)
    assert a.jobs.start(view.id)  # A stalls past its lease...
    clock.advance(rag_settings.ingest_lease_s + 1)
    b = process("B")
    assert [job.document_id for job in b.jobs.claim_expired(5)] == [view.id]  # ...and B takes over
    assert b.jobs.start(view.id)
    with pytest.raises(LeaseLost):  # A wakes up and finishes: dropped
        a.ingest(view.id, TEXT, fenced=True)
    assert status_of(session_factory, view.id) == "processing" and chunks_of(session_factory, view.id) == 0
    assert a.jobs.renew() == set() and not a.jobs.start(view.id)
    done = b.ingest(view.id, TEXT, fenced=True)
    assert done.status == "ready" and chunks_of(session_factory, view.id) == done.num_chunks
    # A late publish after B's leaves B's result alone.
    assert a.ingest(view.id, TEXT, fenced=True).num_chunks == done.num_chunks
    assert chunks_of(session_factory, view.id) == done.num_chunks


def test_two_processes_never_claim_or_ingest_the_same_job_twice(process, session_factory, users, clock, rag_settings):
    a = process("A")
    ids = [a.upload("alice", f"d{i}.txt", b"Document %d about walruses." % i).id for i in range(8)]
    clock.advance(rag_settings.ingest_lease_s + 1)  # A died
    claimers = [process("B"), process("C")]
    claimed: dict[str, list[str]] = {"B": [], "C": []}
    barrier = threading.Barrier(2)

    def claim(service: DocumentService) -> None:
        barrier.wait(10)
        while True:
            jobs = service.jobs.claim_expired(1)
            if not jobs:
                return
            claimed[service.jobs.owner] += [job.document_id for job in jobs]

    threads = [threading.Thread(target=claim, args=(s,)) for s in claimers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert sorted(claimed["B"] + claimed["C"]) == sorted(ids)  # each exactly once
    # And with workers: every job expires again; both recover at once; each is ingested once.
    clock.advance(rag_settings.ingest_lease_s + 1)
    ingested: list[str] = []
    services = [process("D"), process("E")]
    for service in services:
        original = service.ingest

        def counting(document_id, *args, _original=original, **kwargs):
            ingested.append(document_id)
            return _original(document_id, *args, **kwargs)

        service.ingest = counting  # type: ignore[method-assign]
    workers = [IngestionWorker(s, heartbeat_s=QUIET) for s in services]
    try:
        assert wait_for(lambda: all(status_of(session_factory, i) == "ready" for i in ids))
    finally:
        for worker in workers:
            worker.shutdown()
    assert sorted(ingested) == sorted(ids)


def test_postgresql_claims_skip_a_job_another_transaction_has_locked(process, session_factory, users, clock,
                                                                       rag_settings):
    with session_factory() as session:
        if session.bind.dialect.name != "postgresql":
            pytest.skip("PostgreSQL only (SQLite has one writer: there is no row lock to skip)")
    a = process("A")
    ids = [a.upload("alice", f"d{i}.txt", b"Document %d." % i).id for i in range(3)]
    clock.advance(rag_settings.ingest_lease_s + 1)
    with session_factory() as locker:  # another process mid-claim: holds the oldest job's row lock
        locker.execute(text("SELECT 1 FROM ingestion_jobs WHERE document_id = :id FOR UPDATE"), {"id": ids[0]})
        result: list[list[str]] = []
        claimer = threading.Thread(target=lambda: result.append(
            [job.document_id for job in process("B").jobs.claim_expired(10)]))
        claimer.start()
        claimer.join(30)  # without SKIP LOCKED it would wait for the lock until the rollback below
        finished = not claimer.is_alive()
        locker.rollback()
    claimer.join(30)
    assert finished, "the claim waited on a locked job instead of skipping it"
    assert sorted(result[0]) == sorted(ids[1:])


def test_deleting_a_document_being_indexed_ends_its_job(process, session_factory, users, clock, rag_settings):
    a = process("A")
    view = a.upload("alice", "walrus.txt", TEXT)
    assert a.jobs.start(view.id)
    a.delete("alice", view.id)  # the row stays as a tombstone: its job must not
    assert job_of(session_factory, view.id) is None
    clock.advance(rag_settings.ingest_lease_s + 1)
    assert process("B").jobs.claim_expired(5) == []
    with pytest.raises(NotFound):  # the run that was going on finds it gone
        a.ingest(view.id, TEXT, fenced=True)


def test_0008_fails_versions_an_earlier_release_left_processing(tmp_path):
    from alembic import command
    from sqlalchemy import create_engine

    from backend.db import alembic_config, run_migrations

    url = f"sqlite:///{tmp_path / 'old.db'}"
    command.upgrade(alembic_config(url), "0007")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id, username, username_key, password_hash, role, status, created_at) "
                          "VALUES ('u', 'u', 'u', 'x', 'user', 'active', '2026-01-01 00:00:00')"))
        for i, status in enumerate(("processing", "ready")):
            conn.execute(text(
                "INSERT INTO documents (id, user_id, name, version, kind, size_bytes, sha256, status, progress, "
                "num_chunks, shared, embedding_model, created_at, updated_at) VALUES "
                f"('d{i}', 'u', 'n{i}.txt', 1, 'txt', 1, 'x', '{status}', 0, 0, false, 'm', "
                "'2026-01-01 00:00:00', '2026-01-01 00:00:00')"))
    run_migrations(url)
    with engine.connect() as conn:
        rows = dict(conn.execute(text("SELECT id, status FROM documents")).all())
    engine.dispose()
    assert rows == {"d0": "failed", "d1": "ready"}  # no bytes anywhere: it could never be indexed


def test_the_per_user_cap_counts_every_processes_documents(process, session_factory, users):
    a, b = GatedService(process("A")), GatedService(process("B"))
    worker_a = IngestionWorker(a, max_pending_per_user=3, heartbeat_s=QUIET)  # type: ignore[arg-type]
    worker_b = IngestionWorker(b, max_pending_per_user=3, heartbeat_s=QUIET)  # type: ignore[arg-type]
    try:
        futures = [worker_a.submit("alice", f"a{i}.txt", TEXT)[1] for i in range(2)]
        futures.append(worker_b.submit("alice", "b0.txt", TEXT)[1])
        for worker in (worker_b, worker_a):  # 3 processing in all: each process refuses a 4th
            with pytest.raises(TooManyPending, match="3 documents being processed"):
                worker.submit("alice", "more.txt", TEXT)
        futures.append(worker_b.submit("bob", "bob.txt", TEXT)[1])  # per user
        a.gate.set()
        b.gate.set()
        assert all(f.result(timeout=30).status == "ready" for f in futures)
        assert worker_b.submit("alice", "later.txt", TEXT)[1].result(timeout=30).status == "ready"
    finally:
        a.gate.set()
        b.gate.set()
        worker_a.shutdown()
        worker_b.shutdown()
