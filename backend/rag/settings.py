"""Knobs of the document library, validated on construction."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RagSettings:
    """max_upload_bytes: the upload size limit. chunk_tokens / chunk_overlap: chunk length and
    overlap in the embedder's tokens (MiniLM reads at most 256). top_k: sources per answer.
    min_similarity: relevance floor, cosine similarity of query and chunk in [-1, 1] (chunks
    below it are never returned; -1 disables it). candidates: how many hits each of BM25 and
    vector search passes to the fusion. fusion: how hybrid mode merges the two rankings:
    "relative" (each list's scores min-max normalised to [0, 1], then vector_weight * vector +
    (1 - vector_weight) * keyword, a missing entry counting 0: the convex combination of Bruch,
    Gai & Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS 2023; Weaviate's
    relativeScoreFusion) or "rrf" (reciprocal rank fusion, sum of 1 / (rrf_k + rank), rrf_k = 60
    as in Cormack, Clarke & Buettcher, SIGIR 2009). On the evaluation set, RRF let weak
    one-word keyword matches outrank the vector search's best hit (docs/INTERFACES.md section 7
    has the numbers). embed_batch: chunks embedded per progress step. ingest_lease_s: seconds an
    ingestion job stays leased to its process without a heartbeat (renewed every quarter of it;
    past it, any process may take the job over: backend/rag/jobs.py). ingest_attempts: indexing
    runs a job may start; when the lease of the last one expires the document fails.

    Raises:
        ValueError: a value out of range.
    """

    max_upload_bytes: int = 10 * 1024 * 1024
    chunk_tokens: int = 200
    chunk_overlap: int = 40
    top_k: int = 5
    min_similarity: float = 0.2
    candidates: int = 50
    fusion: str = "relative"
    vector_weight: float = 0.5
    rrf_k: int = 60
    embed_batch: int = 32
    ingest_lease_s: float = 60.0
    ingest_attempts: int = 3

    def __post_init__(self) -> None:
        if self.max_upload_bytes < 1:
            raise ValueError("max_upload_bytes must be positive")
        if self.chunk_tokens < 8 or not 0 <= self.chunk_overlap <= self.chunk_tokens // 2:
            raise ValueError("need chunk_tokens >= 8 and 0 <= chunk_overlap <= chunk_tokens // 2")
        if not 1 <= self.top_k <= 50:
            raise ValueError("top_k must be in [1, 50]")
        if not -1.0 <= self.min_similarity <= 1.0:
            raise ValueError("min_similarity must be in [-1, 1]")
        if self.fusion not in ("relative", "rrf") or not 0.0 <= self.vector_weight <= 1.0:
            raise ValueError("fusion must be 'relative' or 'rrf', vector_weight in [0, 1]")
        if self.candidates < self.top_k or self.rrf_k < 1 or self.embed_batch < 1:
            raise ValueError("need candidates >= top_k, rrf_k >= 1, embed_batch >= 1")
        if not self.ingest_lease_s > 0 or self.ingest_attempts < 1:
            raise ValueError("need ingest_lease_s > 0 and ingest_attempts >= 1")
