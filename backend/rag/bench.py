"""Retrieval latency at N chunks (default 10,000): p50 / p90 of Retriever.search per mode.

Chunks are synthetic (words drawn with a Zipf law from the evaluation documents' vocabulary,
120 per chunk; random unit vectors) and written straight into a fresh migrated SQLite database,
spread over 100 documents of 4 users, a tenth of them shared; queries are the evaluation
questions, asked by one user. The query embedding is part of the measured time; the first
query (which loads the matrix) is reported apart. A benchmark, not a test: numbers vary with
the machine's load.

    python -m backend.rag.bench [--chunks 10000] [--fake-embedder] [--repeat 3] [--threads N]
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from backend.rag.evaluate import DEFAULT_SET, MODES, load_questions


def build(url: str, num_chunks: int, dim: int, model_name: str, seed: int = 0) -> None:
    from sqlalchemy import insert

    from backend.db import create_db_engine, run_migrations
    from backend.models import Document, DocumentChunk, User, new_id, utcnow
    from backend.rag.documents import bump_generation

    run_migrations(url)
    rng = np.random.default_rng(seed)
    words = sorted({w.lower() for p in (DEFAULT_SET / "docs").iterdir() for w in re.findall(r"[A-Za-z]+", p.read_text())})
    weights = 1.0 / np.arange(1, len(words) + 1)
    weights = weights / weights.sum()
    order = rng.permutation(len(words))
    users = [f"user{i}" for i in range(4)]
    engine = create_db_engine(url)
    with engine.begin() as conn:
        conn.execute(insert(User), [dict(id=u, username=u, username_key=u, password_hash="-", created_at=utcnow()) for u in users])
        docs = []
        for d in range(100):
            docs.append(dict(id=new_id(), user_id=users[d % 4], name=f"doc{d}.md", version=1, kind="md", size_bytes=1,
                             sha256="0" * 64, status="ready", error=None, progress=1.0, num_chunks=0,
                             shared=d % 10 == 0, embedding_model=model_name, created_at=utcnow(), updated_at=utcnow()))
        conn.execute(insert(Document), docs)
        vectors = rng.standard_normal((num_chunks, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        rows = []
        for i in range(num_chunks):
            text = " ".join(words[order[j]] for j in rng.choice(len(words), size=120, p=weights))
            rows.append(dict(document_id=docs[i % 100]["id"], position=i // 100, heading_path="", page=None,
                             text=text, num_tokens=120, embedding=vectors[i].astype("<f4").tobytes()))
        conn.execute(insert(DocumentChunk), rows)
    from sqlalchemy.orm import Session

    with Session(engine) as session, session.begin():
        bump_generation(session)
    engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="passes over the 40 questions")
    parser.add_argument("--fake-embedder", action="store_true")
    parser.add_argument("--threads", type=int, default=None, help="torch threads for the embedder (default: torch's)")
    args = parser.parse_args(argv)
    from backend.db import create_db_engine, make_session_factory
    from backend.rag.embedder import Embedder, HashingEmbedder, SentenceTransformerEmbedder
    from backend.rag.retrieval import Retriever

    embedder: Embedder = HashingEmbedder() if args.fake_embedder else SentenceTransformerEmbedder(num_threads=args.threads)
    embedder.embed(["warm-up"])  # model load is start-up cost, not query cost
    questions = [q.question for q in load_questions(DEFAULT_SET)]
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        started = time.perf_counter()
        build(url, args.chunks, embedder.dim, embedder.model_name)
        print(f"{args.chunks} chunks written in {time.perf_counter() - started:.1f} s ({embedder.model_name})")
        engine = create_db_engine(url)
        retriever = Retriever(make_session_factory(engine), embedder)
        started = time.perf_counter()
        retriever.search("user1", questions[0])
        print(f"first query (loads the {args.chunks} x {embedder.dim} matrix): {(time.perf_counter() - started) * 1000:.1f} ms")
        embed_ms = []
        for q in questions:
            started = time.perf_counter()
            embedder.embed([q])
            embed_ms.append((time.perf_counter() - started) * 1000)
        print(f"query embedding alone: p50 {statistics.median(embed_ms):.1f} ms")
        for mode in MODES:
            times = []
            for _ in range(args.repeat):
                for q in questions:
                    started = time.perf_counter()
                    retriever.search("user1", q, mode=mode)
                    times.append((time.perf_counter() - started) * 1000)
            times.sort()
            p90 = times[int(0.9 * (len(times) - 1))]
            print(f"{mode:<7} p50 {statistics.median(times):6.1f} ms   p90 {p90:6.1f} ms   ({len(times)} queries)")
        engine.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
