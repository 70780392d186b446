"""Retrieval: BM25 through the database's full-text index, vector search, and their fusion.

Keyword search runs in SQL with the permission condition in the same query, and scores Okapi
BM25 on both databases: SQLite FTS5 `bm25()` (lower is better, negated here), or on PostgreSQL
the same formula (k1 = 1.2, b = 0.75, FTS5's idf floor) written out in SQL over
to_tsvector('english', text with & < > escaped), the expression of migration 0008's GIN index
(higher is better). PostgreSQL's own ts_rank has no inverse document frequency: a chunk with one
occurrence of a common question word ("called", "must") scored exactly as one with the rare word
that mattered, so these ties topped the keyword list and, min-max normalised, pushed the vector
search's best hit out of the hybrid top 5 (hybrid recall@5 0.950 against 0.975 for vector alone).
Vector search: VectorIndex. Hybrid: the two candidate lists fused by relative score
(min-max normalised convex combination) or by reciprocal rank fusion; see RagSettings.fusion.
The relevance floor is
the cosine similarity of query and chunk, applied to every mode that embeds the query.
The final rows are read by one more query with the permission condition, so a stale cache can
only lose a hit, never leak one.
"""

from __future__ import annotations

import re
from typing import Sequence

from sqlalchemy import bindparam, column, func, literal_column, select, table, text
from sqlalchemy.orm import Session, sessionmaker

from backend.conversation_search import pg_tsvector
from backend.models import Document, DocumentChunk
from backend.rag.documents import visible_to
from backend.rag.embedder import Embedder
from backend.rag.settings import RagSettings
from backend.rag.sources import Source
from backend.rag.vector_index import VectorIndex

MODES = ("hybrid", "bm25", "vector")
MAX_QUERY_TERMS = 32
# Words that match nearly every chunk: they cost the keyword search time and add no signal.
STOP_WORDS = frozenset(
    "a an and are as at be but by can could did do does for from had has have how i if in into is "
    "it its me my of on or our should so than that the their them then there these they this to "
    "was we were what when where which who whom why will with would you your".split()
)
_FTS = table("document_chunks_fts", column("rowid"))
# Okapi BM25 as SQLite FTS5 computes it (fts5_aux.c): k1, b, and idf = ln((N - n + 0.5) / (n + 0.5))
# floored at 1e-6. PostgreSQL: N, the mean length and each term's n are those of the chunks the
# user may retrieve (FTS5's are the whole table's); a chunk's length is its num_tokens.
BM25_K1 = 1.2
BM25_B = 0.75
_PG_VISIBLE = "d.status = 'ready' AND (d.user_id = :user_id OR d.shared)"
_PG_BM25 = """
    WITH hits AS (
        SELECT c.id, c.document_id, c.num_tokens AS dl, {tsv} AS tsv
        FROM document_chunks AS c JOIN documents AS d ON d.id = c.document_id
        WHERE {tsv} @@ to_tsquery('english', :tsquery) AND {visible}
    ), tf AS (
        SELECT h.id, h.document_id, h.dl, t.lexeme, cardinality(t.positions) AS tf
        FROM hits AS h, unnest(h.tsv) AS t
        WHERE t.lexeme = ANY (tsvector_to_array(to_tsvector('english', :words)))
    ), df AS (
        SELECT lexeme, count(*) AS n FROM tf GROUP BY lexeme
    ), stats AS (
        SELECT count(*) AS n, coalesce(avg(c.num_tokens), 1) AS avgdl
        FROM document_chunks AS c JOIN documents AS d ON d.id = c.document_id
        WHERE {visible}
    )
    SELECT tf.id, sum(
        greatest(ln((stats.n - df.n + 0.5) / (df.n + 0.5)), 1e-6)
        * tf.tf * ({k1} + 1) / (tf.tf + {k1} * (1 - {b} + {b} * tf.dl / greatest(stats.avgdl, 1)))
    ) AS score
    FROM tf JOIN df ON df.lexeme = tf.lexeme CROSS JOIN stats
    {only}
    GROUP BY tf.id
    ORDER BY score DESC, tf.id
    LIMIT :limit
"""


def pg_bm25_sql(only_documents: bool) -> str:
    """The PostgreSQL keyword query: [(chunk id, BM25 score)] best first, for parameters
    tsquery (the terms joined by |), words (the terms joined by spaces), user_id, limit, and
    with only_documents, ids (an expanding list of document ids)."""
    return _PG_BM25.format(
        tsv=pg_tsvector("c.text"), visible=_PG_VISIBLE, k1=BM25_K1, b=BM25_B,
        only="WHERE tf.document_id IN :ids" if only_documents else "",
    )


def _min_max(ranking: list[tuple[int, float]]) -> dict[int, float]:
    """Scores rescaled to [0, 1] within the list (the best 1, the worst 0; all 1 if equal)."""
    if not ranking:
        return {}
    low, high = min(s for _, s in ranking), max(s for _, s in ranking)
    return {c: (s - low) / (high - low) if high > low else 1.0 for c, s in ranking}


def query_terms(query: str) -> list[str]:
    """Lower-cased word terms of `query` (stop words dropped unless nothing else is left),
    deduplicated, at most MAX_QUERY_TERMS. Only \\w characters: safe in any match syntax."""
    words = list(dict.fromkeys(w.lower() for w in re.findall(r"\w+", query)))
    content = [w for w in words if w not in STOP_WORDS]
    return (content or words)[:MAX_QUERY_TERMS]


class Retriever:
    """search() for one user's question. Thread-safe; share one VectorIndex per process."""

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        embedder: Embedder,
        settings: RagSettings | None = None,
        index: VectorIndex | None = None,
    ) -> None:
        self.session_factory = session_factory
        self.embedder = embedder
        self.settings = settings or RagSettings()
        self.index = index or VectorIndex()

    def search(
        self,
        user_id: str,
        query: str,
        *,
        k: int | None = None,
        mode: str = "hybrid",
        min_similarity: float | None = None,
        document_ids: Sequence[str] | None = None,
    ) -> list[Source]:
        """The best `k` (default settings.top_k) chunks for `query` that `user_id` may retrieve
        (his own ready documents and shared ones; only `document_ids` when given), best first.

        mode: "hybrid" | "bm25" | "vector". min_similarity: cosine floor (default
        settings.min_similarity; -1 disables it; not applied in "bm25" mode, which does not
        embed the query). An empty or stop-word-only query in "bm25" mode matches nothing.

        Raises:
            ValueError: unknown mode, or k < 1.
        """
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        k = self.settings.top_k if k is None else k
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        floor = self.settings.min_similarity if min_similarity is None else min_similarity
        if not query.strip():
            return []
        limit = max(self.settings.candidates, k)
        model = self.embedder.model_name
        query_vector = self.embedder.embed([query])[0] if mode != "bm25" else None
        with self.session_factory() as session:
            keyword = self._bm25(session, user_id, query, limit, document_ids) if mode != "vector" else []
            vector: list[tuple[int, float]] = []
            similarity: dict[int, float] = {}
            if query_vector is not None:
                vector = self.index.search(session, user_id, query_vector, model, limit, document_ids)
                similarity = dict(vector)
                missing = [c for c, _ in keyword if c not in similarity]
                if missing:
                    similarity.update(self.index.similarities(session, missing, query_vector, model))
            # One scale for keyword scores: higher is better (FTS5's bm25() is lower-better).
            keyword = [(c, -sc if session.bind.dialect.name == "sqlite" else sc) for c, sc in keyword]
            if mode == "bm25":
                ranked = keyword
            elif mode == "vector":
                ranked = vector
            else:
                ranked = self._fuse(keyword, vector)
            if query_vector is not None:
                ranked = [(c, s) for c, s in ranked if similarity.get(c, -2.0) >= floor]
            ranked = ranked[:k]
            return self._sources(session, user_id, ranked, similarity, dict(keyword))

    def _fuse(self, keyword: list[tuple[int, float]], vector: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """Merge two rankings [(chunk id, score)], best first (settings.fusion says how)."""
        scores: dict[int, float] = {}
        if self.settings.fusion == "rrf":
            for ranking in (keyword, vector):
                for rank, (chunk_id, _) in enumerate(ranking, start=1):
                    scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (self.settings.rrf_k + rank)
        else:
            weight = self.settings.vector_weight
            for ranking, share in ((keyword, 1.0 - weight), (vector, weight)):
                for chunk_id, normalised in _min_max(ranking).items():
                    scores[chunk_id] = scores.get(chunk_id, 0.0) + share * normalised
        # Ties (equal fused score) go to the lower chunk id: results are deterministic.
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))

    def _bm25(
        self, session: Session, user_id: str, query: str, limit: int, document_ids: Sequence[str] | None
    ) -> list[tuple[int, float]]:
        """[(chunk id, score)] best first; any query term may match (OR)."""
        terms = query_terms(query)
        if not terms:
            return []
        dialect = session.bind.dialect.name
        if dialect == "sqlite":
            score = func.bm25(literal_column("document_chunks_fts")).label("score")
            match = literal_column("document_chunks_fts").op("MATCH")(" OR ".join(f'"{t}"' for t in terms))
            stmt = (
                select(DocumentChunk.id, score).select_from(_FTS)
                .join(DocumentChunk, DocumentChunk.id == _FTS.c.rowid)
                .join(Document, Document.id == DocumentChunk.document_id)
                .where(match, visible_to(user_id)).order_by(score, DocumentChunk.id)
            )
        elif dialect == "postgresql":
            params = {"tsquery": " | ".join(terms), "words": " ".join(terms), "user_id": user_id, "limit": limit}
            stmt = text(pg_bm25_sql(document_ids is not None))
            if document_ids is not None:
                stmt = stmt.bindparams(bindparam("ids", expanding=True))
                params["ids"] = list(document_ids)
            return [(int(c), float(sc)) for c, sc in session.execute(stmt, params)]
        else:
            raise NotImplementedError(f"keyword search needs SQLite or PostgreSQL, not {dialect}")
        if document_ids is not None:
            stmt = stmt.where(Document.id.in_(list(document_ids)))
        return [(int(c), float(s)) for c, s in session.execute(stmt.limit(limit))]

    @staticmethod
    def _sources(
        session: Session, user_id: str, ranked: list[tuple[int, float]], similarity: dict[int, float],
        keyword: dict[int, float],
    ) -> list[Source]:
        if not ranked:
            return []
        rows = session.execute(
            select(DocumentChunk, Document.name, Document.version)
            .join(Document, Document.id == DocumentChunk.document_id)
            .where(DocumentChunk.id.in_([c for c, _ in ranked]), visible_to(user_id))
        ).all()
        found = {row[0].id: row for row in rows}
        sources = []
        for chunk_id, score in ranked:
            if chunk_id not in found:
                continue
            chunk, name, version = found[chunk_id]
            sources.append(Source(
                chunk.id, chunk.document_id, name, version, chunk.position, chunk.heading_path, chunk.page,
                chunk.text, score, similarity.get(chunk_id), keyword.get(chunk_id),
            ))
        return sources
