"""Documents of a user: upload (checked on the request path), ingestion (extract, chunk, embed;
off the request path: backend/rag/ingestion.py), versions, deletion, sharing, and the list a
user sees. An upload is also an ingestion job leased to this process (backend/rag/jobs.py), so
that a version is indexed even when the process that took it in stops.

Visibility is atomic: a version's chunks are written in the same transaction that marks it ready,
supersedes the older ready version of its name and bumps the index generation, so retrieval sees
either the old version whole or the new one whole, and a failure leaves no chunk behind. Every
query that reads or changes a document filters by its owner in SQL (another user's id is
NotFound, like an id that does not exist).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

import numpy as np
from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from backend.db import lock_for_write
from backend.errors import NotFound
from backend.models import Document, DocumentChunk, DocumentIndexState, IngestionJob, User, utcnow
from backend.rag.chunking import Chunk, chunk_pages
from backend.rag.embedder import Embedder
from backend.rag.errors import NotAllowed, TooManyPending, UnreadableDocument, UnsupportedDocument
from backend.rag.extract import check_upload, extract_pages
from backend.rag.jobs import REASON_INTERRUPTED, JobLeases, LeaseLost  # noqa: F401 (REASON_INTERRUPTED: re-exported)
from backend.rag.settings import RagSettings
from backend.rag.sources import Source

log = logging.getLogger(__name__)

REASON_INTERNAL = "indexing failed because of an internal error; upload it again"
REASON_STOPPED = "the server stopped while this document was being indexed; upload it again"
MAX_NAME_CHARS = 255
TOMBSTONE = "deleted"  # the error of the row a delete keeps to continue the name's version numbers
VERSION_ATTEMPTS = 8
# Progress shares: extraction and chunking, then embedding (the slow part) takes the rest.
PROGRESS_EXTRACTED = 0.05
PROGRESS_CHUNKED = 0.1
# Bidirectional formatting characters: they make a name display as something else ("exe.txt").
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _is_tombstone(document: Document) -> bool:
    return document.status == "superseded" and document.error == TOMBSTONE


class IngestionCancelled(Exception):
    """The worker is shutting down (or lost the job's lease): stop indexing between batches."""


def clean_filename(filename: str) -> str:
    """The upload's name with surrounding whitespace trimmed.

    Raises:
        UnsupportedDocument: empty, longer than MAX_NAME_CHARS, or holding a control character
            (NUL, TAB, BEL, newline...) or a bidirectional override/isolate (U+202E...).
    """
    name = filename.strip()
    if not name:
        raise UnsupportedDocument("the file has no name")
    if len(name) > MAX_NAME_CHARS:
        raise UnsupportedDocument(f"the file name is longer than {MAX_NAME_CHARS} characters")
    for ch in name:
        if unicodedata.category(ch) == "Cc" or ch in _BIDI:
            raise UnsupportedDocument(
                f"the file name holds the invisible or control character U+{ord(ch):04X}; rename the file"
            )
    return name


@dataclass(frozen=True)
class DocumentView:
    """One document version as its viewer sees it. status: processing | ready | failed;
    progress: 0..1 while processing; error: the reason when failed; is_own: uploaded by the
    viewer (False: shared by an admin); size_bytes: the uploaded file's size."""

    id: str
    name: str
    version: int
    kind: str
    size_bytes: int
    num_chunks: int
    status: str
    error: str | None
    progress: float
    shared: bool
    is_own: bool
    created_at: datetime
    updated_at: datetime


def view_of(document: Document, viewer_id: str) -> DocumentView:
    return DocumentView(
        id=document.id, name=document.name, version=document.version, kind=document.kind,
        size_bytes=document.size_bytes, num_chunks=document.num_chunks, status=document.status,
        error=document.error, progress=document.progress, shared=document.shared,
        is_own=document.user_id == viewer_id, created_at=document.created_at, updated_at=document.updated_at,
    )


def visible_to(user_id: str):  # type: ignore[no-untyped-def]
    """The SQL condition for documents `user_id` may retrieve: ready, and his own or shared."""
    return (Document.status == "ready") & or_(Document.user_id == user_id, Document.shared.is_(True))


def bump_generation(session: Session) -> None:
    """Mark a change of the retrievable chunks (inside the caller's transaction)."""
    session.execute(
        update(DocumentIndexState).where(DocumentIndexState.id == 1)
        .values(generation=DocumentIndexState.generation + 1)
    )


def embedding_input(chunk: Chunk) -> str:
    """What the embedder reads for a chunk: its heading path, then its text."""
    return f"{chunk.heading_path}\n\n{chunk.text}" if chunk.heading_path else chunk.text


class DocumentService:
    """Stores, versions and indexes documents. Thread-safe (one session per call); `ingest` is
    the slow part and belongs on a worker thread (see backend.rag.ingestion.IngestionWorker).

    instance: this process's name (Settings.instance_name), the owner of its ingestion jobs;
    clock: UTC now, for the jobs' leases (`jobs`, one JobLeases per service: one process run).
    """

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        embedder: Embedder,
        settings: RagSettings | None = None,
        count_tokens: Callable[[str], int] | None = None,
        *,
        instance: str = "local",
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.session_factory = session_factory
        self.embedder = embedder
        self.settings = settings or RagSettings()
        self.count_tokens = count_tokens or embedder.count_tokens
        self.jobs = JobLeases(session_factory, instance, self.settings.ingest_lease_s,
                              self.settings.ingest_attempts, clock)
        self._version_lock = threading.Lock()

    def upload(self, user_id: str, filename: str, data: bytes, *, shared: bool | None = None,
               max_processing: int | None = None) -> DocumentView:
        """Check the file and record a new version of `filename` (status processing) with its
        ingestion job (the bytes, leased to this process). The text is not indexed yet: pass the
        same bytes to `ingest` (or use IngestionWorker.submit); if nobody does before the lease
        expires, a worker of any process takes the job over.
        shared: None keeps the sharing of the name's latest version (False for a new name).
        max_processing: refuse when the user already has this many documents processing, in
        every process on this database (checked under the user's write lock, so two processes
        cannot both take the last slot). None: no cap.

        Raises:
            TooManyPending: max_processing reached.
            UnsupportedDocument, DocumentTooLarge, UnreadableDocument: see extract.check_upload.
            NotAllowed: shared=True by a user who is not an admin.
            NotFound: no such user.
        """
        filename = clean_filename(filename)
        kind = check_upload(filename, data, self.settings.max_upload_bytes)
        for attempt in range(VERSION_ATTEMPTS):
            try:
                with self._version_lock:  # one process: uploads of a name take turns
                    return self._record(user_id, filename, kind, data, shared, max_processing)
            except IntegrityError:  # another process took that version number: take the next
                if attempt == VERSION_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def _record(self, user_id: str, filename: str, kind: str, data: bytes, shared: bool | None,
                max_processing: int | None) -> DocumentView:
        with self.session_factory.begin() as session:
            if max_processing is not None:
                lock_for_write(session, f"documents-of:{user_id}")
                processing = session.scalar(select(func.count()).select_from(Document).where(
                    Document.user_id == user_id, Document.status == "processing"))
                if processing >= max_processing:
                    raise TooManyPending(
                        f"you have {processing} documents being processed; wait for one to finish "
                        f"(at most {max_processing} at a time)")
            role = session.scalar(select(User.role).where(User.id == user_id))
            if role is None:
                raise NotFound("no such user")
            if shared and role != "admin":
                raise NotAllowed("only an admin can share documents with everyone")
            latest = session.execute(
                select(Document.version, Document.shared).where(Document.user_id == user_id, Document.name == filename)
                .order_by(Document.version.desc()).limit(1)
            ).first()
            if shared is None:
                shared = bool(latest and latest.shared)
            document = Document(
                user_id=user_id, name=filename, version=(latest.version if latest else 0) + 1, kind=kind, size_bytes=len(data),
                sha256=hashlib.sha256(data).hexdigest(), status="processing", shared=shared,
                embedding_model=self.embedder.model_name,
            )
            session.add(document)
            session.flush()
            self.jobs.add(session, document.id, data)
            return view_of(document, user_id)

    def ingest(
        self,
        document_id: str,
        data: bytes,
        progress: Callable[[float], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        *,
        fenced: bool = False,
    ) -> DocumentView:
        """Extract, chunk and embed the bytes uploaded as `document_id`, then make the version
        ready (and end its ingestion job) in one transaction. Problems with the content mark it
        failed with the reason; a document deleted meanwhile is left deleted. Never raises for
        content problems.

        progress(fraction) is called (and the row's progress column updated) after extraction,
        after chunking and after each embedding batch. cancelled() is asked before each batch:
        True stops; unfenced, the version is marked failed (REASON_STOPPED); fenced, the job is
        released for another process (or the next start) to index, and LeaseLost is raised.
        fenced: the caller holds the job's lease (IngestionWorker): the result is published
        only while this process still holds it.

        Raises:
            NotFound: no such document (also when it was deleted while being indexed).
            LeaseLost: fenced, and the job is no longer this process's (or it stopped).
        """
        with self.session_factory() as session:
            document = session.get(Document, document_id)
            if document is None or _is_tombstone(document):
                raise NotFound("no such document")
            kind, owner = document.kind, document.user_id
        try:
            pages = extract_pages(kind, data)
            self._progress(document_id, PROGRESS_EXTRACTED, progress)
            chunks = chunk_pages(pages, self.count_tokens, self.settings.chunk_tokens, self.settings.chunk_overlap)
            self._progress(document_id, PROGRESS_CHUNKED, progress)
            vectors = self._embed(document_id, chunks, progress, cancelled)
        except IngestionCancelled:
            if fenced:
                self.jobs.release([document_id], ran=True)
                raise LeaseLost("stopped before the document was indexed; the job was released") from None
            return self._fail(document_id, owner, REASON_STOPPED, fenced)
        except UnreadableDocument as exc:
            return self._fail(document_id, owner, exc.message, fenced)
        except Exception:
            log.exception("ingesting document %s failed", document_id)
            return self._fail(document_id, owner, REASON_INTERNAL, fenced)
        return self._publish(document_id, owner, chunks, vectors, fenced)

    def _progress(self, document_id: str, done: float, progress: Callable[[float], None] | None) -> None:
        with self.session_factory.begin() as session:
            session.execute(update(Document).where(Document.id == document_id).values(progress=done))
        if progress is not None:
            progress(done)

    def _embed(
        self, document_id: str, chunks: list[Chunk], progress: Callable[[float], None] | None,
        cancelled: Callable[[], bool] | None,
    ) -> np.ndarray:
        batch = self.settings.embed_batch
        parts = []
        for start in range(0, len(chunks), batch):
            if cancelled is not None and cancelled():
                raise IngestionCancelled
            parts.append(self.embedder.embed([embedding_input(c) for c in chunks[start : start + batch]]))
            done = PROGRESS_CHUNKED + (1 - PROGRESS_CHUNKED) * min(1.0, (start + batch) / len(chunks))
            self._progress(document_id, done, progress)
        return np.concatenate(parts).astype("<f4", copy=False)

    def _end_job(self, session: Session, document_id: str, owner: str, fenced: bool) -> DocumentView | None:
        """Delete the version's job; None when the caller may go on ending the version, else the
        version as it is (ended meanwhile). Raises LeaseLost: another process holds the job."""
        if self.jobs.finish(session, document_id, fenced=fenced):
            return None
        status = session.scalar(select(Document.status).where(Document.id == document_id))
        if status == "processing":
            raise LeaseLost("another process took this document's ingestion job over")
        return self._current_or_gone(session, document_id, owner)

    def _publish(
        self, document_id: str, owner: str, chunks: list[Chunk], vectors: np.ndarray, fenced: bool = False
    ) -> DocumentView:
        with self.session_factory.begin() as session:
            ended = self._end_job(session, document_id, owner, fenced)
            if ended is not None:
                return ended
            document = session.scalar(
                select(Document).where(Document.id == document_id, Document.status == "processing")
            )
            if document is None:  # deleted (or failed) meanwhile: leave it so
                return self._current_or_gone(session, document_id, owner)
            newer_ready = session.scalar(
                select(func.count()).select_from(Document).where(
                    Document.user_id == owner, Document.name == document.name,
                    Document.status == "ready", Document.version > document.version,
                )
            )
            now = utcnow()
            if newer_ready:  # a later upload of the same name finished first
                document.status, document.progress, document.updated_at = "superseded", 1.0, now
                return view_of(document, owner)
            session.add_all(
                DocumentChunk(document_id=document_id, position=c.position, heading_path=c.heading_path,
                              page=c.page, text=c.text, num_tokens=c.num_tokens, embedding=vectors[i].tobytes())
                for i, c in enumerate(chunks)
            )
            older = select(Document.id).where(
                Document.user_id == owner, Document.name == document.name,
                Document.status == "ready", Document.version < document.version,
            )
            older_ids = list(session.scalars(older))
            if older_ids:
                session.execute(delete(DocumentChunk).where(DocumentChunk.document_id.in_(older_ids)))
                session.execute(update(Document).where(Document.id.in_(older_ids))
                                .values(status="superseded", updated_at=now))
            document.status, document.progress, document.num_chunks = "ready", 1.0, len(chunks)
            document.error, document.updated_at = None, now
            bump_generation(session)
            session.flush()
            return view_of(document, owner)

    def _fail(self, document_id: str, owner: str, reason: str, fenced: bool = False) -> DocumentView:
        with self.session_factory.begin() as session:
            ended = self._end_job(session, document_id, owner, fenced)
            if ended is not None:
                return ended
            session.execute(
                update(Document).where(Document.id == document_id, Document.status == "processing")
                .values(status="failed", error=reason, updated_at=utcnow())
            )
            return self._current_or_gone(session, document_id, owner)

    @staticmethod
    def _current_or_gone(session: Session, document_id: str, owner: str) -> DocumentView:
        document = session.get(Document, document_id)
        if document is None or _is_tombstone(document):
            raise NotFound("the document was deleted while it was being indexed")
        return view_of(document, owner)

    def list_documents(self, user_id: str) -> list[DocumentView]:
        """The user's own versions that are not superseded (processing, ready, failed), and the
        ready documents other users shared; by name, newest version first."""
        with self.session_factory() as session:
            rows = session.scalars(
                select(Document).where(
                    or_(
                        (Document.user_id == user_id) & (Document.status != "superseded"),
                        (Document.shared.is_(True)) & (Document.status == "ready"),
                    )
                ).order_by(Document.name, Document.version.desc())
            )
            return [view_of(d, user_id) for d in rows]

    def get(self, user_id: str, document_id: str) -> DocumentView:
        """One document the user owns, or a shared ready one. Raises NotFound otherwise."""
        with self.session_factory() as session:
            document = session.scalar(
                select(Document).where(
                    Document.id == document_id,
                    or_(Document.user_id == user_id, (Document.shared.is_(True)) & (Document.status == "ready")),
                )
            )
            if document is None or _is_tombstone(document):
                raise NotFound("no such document")
            return view_of(document, user_id)

    def delete(self, user_id: str, document_id: str) -> int:
        """Delete the user's document: every version of its name, chunks included; out of
        retrieval when this returns. Returns the number of versions deleted.

        The newest version's row stays as a tombstone (status superseded, no chunks, not
        shared, not listed) so that a later upload of the name continues the version numbers
        instead of restarting at 1 (a stored citation names "name vN": N is never reused).

        Raises:
            NotFound: no such document among the user's own.
        """
        with self.session_factory.begin() as session:
            name = session.scalar(select(Document.name).where(Document.id == document_id, Document.user_id == user_id))
            if name is None:
                raise NotFound("no such document")
            rows = session.execute(
                select(Document.id, Document.error).where(Document.user_id == user_id, Document.name == name)
                .order_by(Document.version.desc())
            ).all()
            ids = [row.id for row in rows]
            # Chunks and jobs first, explicitly: correct even where foreign keys are not enforced.
            session.execute(delete(DocumentChunk).where(DocumentChunk.document_id.in_(ids)))
            session.execute(delete(IngestionJob).where(IngestionJob.document_id.in_(ids)))
            session.execute(delete(Document).where(Document.id.in_(ids[1:])))
            session.execute(update(Document).where(Document.id == ids[0]).values(
                status="superseded", shared=False, num_chunks=0, error=TOMBSTONE, updated_at=utcnow()))
            bump_generation(session)
            return sum(1 for row in rows if row.error != TOMBSTONE)

    def set_shared(self, actor_id: str, document_id: str, shared: bool) -> DocumentView:
        """Share the actor's own document (every version of its name) with everyone, or stop.

        Raises:
            NotAllowed: the actor is not an admin.  NotFound: not one of the actor's documents.
        """
        with self.session_factory.begin() as session:
            if session.scalar(select(User.role).where(User.id == actor_id)) != "admin":
                raise NotAllowed("only an admin can share documents with everyone")
            document = session.scalar(select(Document).where(Document.id == document_id, Document.user_id == actor_id))
            if document is None:
                raise NotFound("no such document")
            session.execute(update(Document).where(Document.user_id == actor_id, Document.name == document.name)
                            .values(shared=shared, updated_at=utcnow()))
            bump_generation(session)
            session.flush()
            session.refresh(document)
            return view_of(document, actor_id)

    def chunk(self, user_id: str, document_id: str, chunk_id: int) -> Source:
        """One retrievable chunk of `document_id` (for a citation link): the user's own or
        shared, ready. Chunk ids may be reused after a delete; document ids never are, so a
        stored citation never opens another document's text.

        Raises:
            NotFound: no such chunk in that document, or not visible to the user.
        """
        with self.session_factory() as session:
            row = session.execute(
                select(DocumentChunk, Document.name, Document.version)
                .join(Document, Document.id == DocumentChunk.document_id)
                .where(DocumentChunk.id == chunk_id, DocumentChunk.document_id == document_id, visible_to(user_id))
            ).first()
            if row is None:
                raise NotFound("no such source")
            c, name, version = row
            return Source(c.id, c.document_id, name, version, c.position, c.heading_path, c.page, c.text, 0.0)

    def recover_interrupted(self) -> int:
        """At start-up (and periodically: IngestionWorker): versions that can no longer be
        indexed become failed: processing without an ingestion job, or whose job's lease expired
        after RagSettings.ingest_attempts runs. Jobs other processes hold (live leases) are
        never touched; expired ones with runs left are for IngestionWorker to take over.
        Returns how many failed. (Their chunks were never written: that happens at the end.)"""
        return self.jobs.fail_abandoned()
