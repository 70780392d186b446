"""Vector search over the embeddings stored in the database, through an in-memory matrix.

The matrix of every retrievable chunk (one embedding model) is loaded once per index
generation (`document_index_state.generation`, bumped by every change of what is retrievable,
in the same transaction): one tiny SELECT per query tells whether it is still current, in this
process or after another process changed the documents. Which rows a user may see comes from an
SQL query with the permission condition in it (cached per user and generation); the matrix is
only the arithmetic. Scores: dot products of unit vectors = cosine similarity.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.models import Document, DocumentChunk, DocumentIndexState
from backend.rag.documents import visible_to


def _matvec(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """[n, dim] x [dim] -> [n] float32, on the calling thread only. A BLAS matrix-vector product
    fans out to worker threads that spin; on a busy 2-core machine that measured 12 ms against
    0.4 ms for this single-threaded loop at 10,000 x 384."""
    return np.einsum("ij,j->i", vectors, query.astype(np.float32, copy=False))


@dataclass(frozen=True)
class _Matrix:
    generation: int
    model_name: str
    ids: np.ndarray  # int64 [n], ascending chunk ids
    vectors: np.ndarray  # float32 [n, dim]


class VectorIndex:
    """Thread-safe; one per process, shared by every request. max_users: per-user row sets kept."""

    def __init__(self, max_users: int = 1024) -> None:
        self.max_users = max_users
        self._matrix: _Matrix | None = None
        self._rows: OrderedDict[tuple[int, str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0  # how many times the matrix was (re)built, for tests and metrics

    @staticmethod
    def generation(session: Session) -> int:
        return session.scalar(select(DocumentIndexState.generation).where(DocumentIndexState.id == 1)) or 0

    def _current(self, session: Session, model_name: str) -> _Matrix:
        # Read the generation before the rows: a matrix is never labelled newer than its data.
        generation = self.generation(session)
        matrix = self._matrix
        if matrix is not None and matrix.generation == generation and matrix.model_name == model_name:
            return matrix
        rows = session.execute(
            select(DocumentChunk.id, DocumentChunk.embedding)
            .join(Document, Document.id == DocumentChunk.document_id)
            .where(Document.status == "ready", Document.embedding_model == model_name)
            .order_by(DocumentChunk.id)
        ).all()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if rows:
            vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
        else:
            vectors = np.zeros((0, 1), dtype=np.float32)
        matrix = _Matrix(generation, model_name, ids, vectors)
        with self._lock:
            self._matrix = matrix
            self.loads += 1
            self._rows = OrderedDict((k, v) for k, v in self._rows.items() if k[0] == generation)
        return matrix

    def _visible_rows(self, session: Session, matrix: _Matrix, user_id: str, document_ids: Sequence[str] | None) -> np.ndarray:
        key = (matrix.generation, matrix.model_name, user_id)
        if document_ids is None:
            with self._lock:
                cached = self._rows.get(key)
                if cached is not None:
                    self._rows.move_to_end(key)
                    return cached
        query = (
            select(DocumentChunk.id).join(Document, Document.id == DocumentChunk.document_id)
            .where(visible_to(user_id), Document.embedding_model == matrix.model_name)
        )
        if document_ids is not None:
            query = query.where(Document.id.in_(list(document_ids)))
        allowed = np.fromiter(session.scalars(query), dtype=np.int64)
        positions = np.searchsorted(matrix.ids, allowed)
        # A chunk committed after the matrix was read is not in it: skip it (next load has it).
        present = positions < len(matrix.ids)
        positions = positions[present]
        rows = np.sort(positions[matrix.ids[positions] == allowed[present]])
        if document_ids is None:
            with self._lock:
                self._rows[key] = rows
                while len(self._rows) > self.max_users:
                    self._rows.popitem(last=False)
        return rows

    def search(
        self, session: Session, user_id: str, query: np.ndarray, model_name: str, limit: int,
        document_ids: Sequence[str] | None = None,
    ) -> list[tuple[int, float]]:
        """The `limit` chunks most similar to `query` (float32 [dim], unit length) among those
        `user_id` may retrieve: [(chunk id, cosine similarity)], most similar first."""
        matrix = self._current(session, model_name)
        rows = self._visible_rows(session, matrix, user_id, document_ids)
        if len(rows) == 0 or limit <= 0:
            return []
        # All rows then a gather: cheaper than gathering the [len(rows), dim] sub-matrix first.
        scores = _matvec(matrix.vectors, query)[rows]  # [len(rows)]
        if len(rows) > limit:
            top = np.argpartition(-scores, limit - 1)[:limit]
        else:
            top = np.arange(len(rows))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(matrix.ids[rows[i]]), float(scores[i])) for i in top]

    def similarities(self, session: Session, chunk_ids: Sequence[int], query: np.ndarray, model_name: str) -> dict[int, float]:
        """Cosine similarity of `query` with each of `chunk_ids` found in the current matrix."""
        matrix = self._current(session, model_name)
        wanted = np.asarray(sorted(set(chunk_ids)), dtype=np.int64)
        positions = np.searchsorted(matrix.ids, wanted)
        ok = positions < len(matrix.ids)
        wanted, positions = wanted[ok], positions[ok]
        hit = matrix.ids[positions] == wanted
        scores = _matvec(matrix.vectors[positions[hit]], query)
        return {int(c): float(s) for c, s in zip(wanted[hit], scores)}
