"""Recall@k of BM25, vector and hybrid retrieval on an evaluation set.

The set is a folder with `docs/` (the documents) and `questions.json`: a list of
{"id", "question", "document", "evidence"}, where evidence is a phrase that occurs exactly once
in the document (whitespace-insensitive) and answers the question. A question counts as found
when one of the top-k chunks comes from that document and contains the evidence whole: the
oracle names the passage, not a chunk id, so it does not depend on how the text was chunked.
The documents are ingested into a fresh migrated database: SQLite in a temporary folder, or,
with a PostgreSQL server URL (--database-url, or TEST_DATABASE_URL in the test), a throwaway
database created on that server and dropped afterwards (its user needs CREATE DATABASE).

    python -m backend.rag.evaluate [FOLDER] [--k 5] [--fake-embedder] [--database-url URL]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from backend.rag.embedder import Embedder

DEFAULT_SET = Path(__file__).resolve().parents[2] / "tests" / "backend" / "rag" / "eval"
MODES = ("bm25", "vector", "hybrid")
RRF = "hybrid-rrf"  # hybrid with reciprocal rank fusion instead of the default, for comparison


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    document: str
    evidence: str


def flat(text: str) -> str:
    return " ".join(text.split())


def load_questions(folder: Path) -> list[Question]:
    return [Question(**item) for item in json.loads((folder / "questions.json").read_text())]


@contextmanager
def fresh_database(server_url: str | None) -> Iterator[str]:
    """The URL of an empty migrated database: a SQLite file in a temporary folder (server_url
    None), or a new database on the PostgreSQL server of `server_url`, dropped on exit.

    Raises:
        sqlalchemy.exc.OperationalError / ProgrammingError: the server is unreachable or its
            user may not create databases.
    """
    from sqlalchemy import create_engine, make_url, text

    from backend.db import run_migrations

    if server_url is None:
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{Path(tmp) / 'eval.db'}"
            run_migrations(url)
            yield url
        return
    name = f"crescent_eval_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            url = make_url(server_url).set(database=name).render_as_string(hide_password=False)
            run_migrations(url)
            yield url
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def evaluate(
    folder: Path, embedder: Embedder, k: int = 5, database_url: str | None = None
) -> tuple[dict[str, float], dict[str, list[str]]]:
    """({mode: recall@k}, {mode: ids of the questions missed}) over the set in `folder`, for
    the three modes with default settings (no relevance floor) and for RRF. database_url: a
    PostgreSQL server to evaluate on (a throwaway database is made there); None: SQLite."""
    from backend.db import create_db_engine, make_session_factory
    from backend.models import User
    from backend.rag.documents import DocumentService
    from backend.rag.retrieval import Retriever
    from backend.rag.settings import RagSettings

    questions = load_questions(folder)
    settings = RagSettings(min_similarity=-1.0)  # measure ranking, not the floor
    with fresh_database(database_url) as url:
        engine = create_db_engine(url)
        try:
            session_factory = make_session_factory(engine)
            with session_factory.begin() as session:
                session.add(User(id="eval", username="eval", username_key="eval", password_hash="-"))
            documents = DocumentService(session_factory, embedder, settings)
            for path in sorted((folder / "docs").iterdir()):
                view = documents.upload("eval", path.name, path.read_bytes())
                result = documents.ingest(view.id, path.read_bytes())
                if result.status != "ready":
                    raise RuntimeError(f"{path.name}: {result.status} ({result.error})")
            retriever = Retriever(session_factory, embedder, settings)
            rrf = Retriever(session_factory, embedder, replace(settings, fusion="rrf"), retriever.index)
            runs = [(mode, retriever, mode) for mode in MODES] + [(RRF, rrf, "hybrid")]
            missed: dict[str, list[str]] = {name: [] for name, _, _ in runs}
            for q in questions:
                for name, searcher, mode in runs:
                    hits = searcher.search("eval", q.question, k=k, mode=mode)
                    if not any(h.document_name == q.document and flat(q.evidence) in flat(h.text) for h in hits):
                        missed[name].append(q.id)
        finally:
            engine.dispose()
    recall = {name: 1.0 - len(ids) / len(questions) for name, ids in missed.items()}
    return recall, missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_SET)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--fake-embedder", action="store_true", help="HashingEmbedder instead of all-MiniLM-L6-v2")
    parser.add_argument("--database-url", help="a PostgreSQL server URL to evaluate on (default: SQLite)")
    args = parser.parse_args(argv)
    from backend.rag.embedder import HashingEmbedder, SentenceTransformerEmbedder

    embedder: Embedder = HashingEmbedder() if args.fake_embedder else SentenceTransformerEmbedder()
    recall, missed = evaluate(args.folder, embedder, args.k, args.database_url)
    n = len(load_questions(args.folder))
    where = "PostgreSQL" if args.database_url else "SQLite"
    print(f"recall@{args.k} over {n} questions ({embedder.model_name}, {where}):")
    for name in (*MODES, RRF):
        print(f"  {name:<10} {recall[name]:.3f}   missed: {', '.join(missed[name]) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
