"""Documents of a user: upload (checked on the request path), ingestion (extract, chunk, embed;
off the request path), versions, deletion, sharing, and the list a user sees.

Visibility is atomic: a version's chunks are written in the same transaction that marks it ready,
supersedes the older ready version of its name and bumps the index generation, so retrieval sees
either the old version whole or the new one whole, and a failure leaves no chunk behind. Every
query that reads or changes a document filters by its owner in SQL (another user's id is
NotFound, like an id that does not exist).
"""

from __future__ import annotations

import hashlib
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

import numpy as np
from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from backend.errors import NotFound
from backend.models import Document, DocumentChunk, DocumentIndexState, User, utcnow
from backend.rag.chunking import Chunk, chunk_pages
from backend.rag.embedder import Embedder
from backend.rag.errors import NotAllowed, UnreadableDocument
from backend.rag.extract import check_upload, extract_pages
from backend.rag.settings import RagSettings
from backend.rag.sources import Source

log = logging.getLogger(__name__)

REASON_INTERRUPTED = "the server stopped before this document was indexed; upload it again"
REASON_INTERNAL = "indexing failed because of an internal error; upload it again"


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
    the slow part and belongs on a worker thread (see IngestionWorker)."""

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        embedder: Embedder,
        settings: RagSettings | None = None,
        count_tokens: Callable[[str], int] | None = None,
    ) -> None:
        self.session_factory = session_factory
        self.embedder = embedder
        self.settings = settings or RagSettings()
        self.count_tokens = count_tokens or embedder.count_tokens

    def upload(self, user_id: str, filename: str, data: bytes, *, shared: bool | None = None) -> DocumentView:
        """Check the file and record a new version of `filename` (status processing). The text is
        not indexed yet: pass the same bytes to `ingest` (or use IngestionWorker.submit).
        shared: None keeps the sharing of the name's latest version (False for a new name).

        Raises:
            UnsupportedDocument, DocumentTooLarge, UnreadableDocument: see extract.check_upload.
            NotAllowed: shared=True by a user who is not an admin.
            NotFound: no such user.
        """
        kind = check_upload(filename, data, self.settings.max_upload_bytes)
        with self.session_factory.begin() as session:
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
            return view_of(document, user_id)

    def ingest(self, document_id: str, data: bytes, progress: Callable[[float], None] | None = None) -> DocumentView:
        """Extract, chunk and embed the bytes uploaded as `document_id`, then make the version
        ready in one transaction. Problems with the content mark it failed with the reason; a
        document deleted meanwhile is left deleted. Never raises for content problems.

        progress(fraction) is called (and the row's progress column updated) after each batch.

        Raises:
            NotFound: no such document (also when it was deleted while being indexed).
        """
        with self.session_factory() as session:
            document = session.get(Document, document_id)
            if document is None:
                raise NotFound("no such document")
            kind, owner = document.kind, document.user_id
        try:
            chunks = chunk_pages(extract_pages(kind, data), self.count_tokens,
                                 self.settings.chunk_tokens, self.settings.chunk_overlap)
            vectors = self._embed(document_id, chunks, progress)
        except UnreadableDocument as exc:
            return self._fail(document_id, owner, exc.message)
        except Exception:
            log.exception("ingesting document %s failed", document_id)
            return self._fail(document_id, owner, REASON_INTERNAL)
        return self._publish(document_id, owner, chunks, vectors)

    def _embed(self, document_id: str, chunks: list[Chunk], progress: Callable[[float], None] | None) -> np.ndarray:
        batch = self.settings.embed_batch
        parts = []
        for start in range(0, len(chunks), batch):
            parts.append(self.embedder.embed([embedding_input(c) for c in chunks[start : start + batch]]))
            done = min(1.0, (start + batch) / len(chunks))
            with self.session_factory.begin() as session:
                session.execute(update(Document).where(Document.id == document_id).values(progress=done))
            if progress is not None:
                progress(done)
        return np.concatenate(parts).astype("<f4", copy=False)

    def _publish(self, document_id: str, owner: str, chunks: list[Chunk], vectors: np.ndarray) -> DocumentView:
        with self.session_factory.begin() as session:
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

    def _fail(self, document_id: str, owner: str, reason: str) -> DocumentView:
        with self.session_factory.begin() as session:
            session.execute(
                update(Document).where(Document.id == document_id, Document.status == "processing")
                .values(status="failed", error=reason, updated_at=utcnow())
            )
            return self._current_or_gone(session, document_id, owner)

    @staticmethod
    def _current_or_gone(session: Session, document_id: str, owner: str) -> DocumentView:
        document = session.get(Document, document_id)
        if document is None:
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
            if document is None:
                raise NotFound("no such document")
            return view_of(document, user_id)

    def delete(self, user_id: str, document_id: str) -> int:
        """Delete the user's document: every version of its name, chunks included; out of
        retrieval when this returns. Returns the number of versions deleted.

        Raises:
            NotFound: no such document among the user's own.
        """
        with self.session_factory.begin() as session:
            name = session.scalar(select(Document.name).where(Document.id == document_id, Document.user_id == user_id))
            if name is None:
                raise NotFound("no such document")
            ids = list(session.scalars(select(Document.id).where(Document.user_id == user_id, Document.name == name)))
            # Chunks first, explicitly: correct even where foreign keys are not enforced.
            session.execute(delete(DocumentChunk).where(DocumentChunk.document_id.in_(ids)))
            session.execute(delete(Document).where(Document.id.in_(ids)))
            bump_generation(session)
            return len(ids)

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

    def chunk(self, user_id: str, chunk_id: int) -> Source:
        """One retrievable chunk (for a citation link): the user's own or shared, ready.

        Raises:
            NotFound: no such chunk, or not visible to the user.
        """
        with self.session_factory() as session:
            row = session.execute(
                select(DocumentChunk, Document.name, Document.version)
                .join(Document, Document.id == DocumentChunk.document_id)
                .where(DocumentChunk.id == chunk_id, visible_to(user_id))
            ).first()
            if row is None:
                raise NotFound("no such source")
            c, name, version = row
            return Source(c.id, c.document_id, name, version, c.position, c.heading_path, c.page, c.text, 0.0)

    def recover_interrupted(self) -> int:
        """At start-up: versions left processing by a stopped process become failed. Returns
        how many. (Their chunks were never written: they were to be written at the end.)"""
        with self.session_factory.begin() as session:
            result = session.execute(
                update(Document).where(Document.status == "processing")
                .values(status="failed", error=REASON_INTERRUPTED, updated_at=utcnow())
            )
            return result.rowcount or 0


class IngestionWorker:
    """Runs ingestion off the request path, one document at a time (embedding uses the CPU
    cores already; two at once would only interleave). The web layer calls `submit` from a
    thread (run_in_threadpool), returns the processing DocumentView at once, and the list shows
    progress and the final status."""

    def __init__(self, service: DocumentService) -> None:
        self.service = service
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-ingest")

    def submit(
        self, user_id: str, filename: str, data: bytes, *, shared: bool | None = None
    ) -> tuple[DocumentView, Future[DocumentView]]:
        """Upload (raising its typed errors here, on the caller's thread) and queue the ingestion.
        The future resolves to the final DocumentView (ready, failed or superseded)."""
        document = self.service.upload(user_id, filename, data, shared=shared)
        return document, self._executor.submit(self.service.ingest, document.id, data)

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking work; with wait, finish what is queued. Unfinished versions stay
        processing until `DocumentService.recover_interrupted` at the next start."""
        self._executor.shutdown(wait=wait, cancel_futures=not wait)
