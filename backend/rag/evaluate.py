"""Recall@k of BM25, vector and hybrid retrieval on an evaluation set.

The set is a folder with `docs/` (the documents) and `questions.json`: a list of
{"id", "question", "document", "evidence"}, where evidence is a phrase that occurs exactly once
in the document (whitespace-insensitive) and answers the question. A question counts as found
when one of the top-k chunks comes from that document and contains the evidence whole: the
oracle names the passage, not a chunk id, so it does not depend on how the text was chunked.
The documents are ingested into a fresh migrated SQLite database in a temporary folder.

    python -m backend.rag.evaluate [FOLDER] [--k 5] [--fake-embedder]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

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


def evaluate(folder: Path, embedder: Embedder, k: int = 5) -> tuple[dict[str, float], dict[str, list[str]]]:
    """({mode: recall@k}, {mode: ids of the questions missed}) over the set in `folder`, for
    the three modes with default settings (no relevance floor) and for RRF."""
    from backend.db import create_db_engine, make_session_factory, run_migrations
    from backend.models import User
    from backend.rag.documents import DocumentService
    from backend.rag.retrieval import Retriever
    from backend.rag.settings import RagSettings

    questions = load_questions(folder)
    settings = RagSettings(min_similarity=-1.0)  # measure ranking, not the floor
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'eval.db'}"
        run_migrations(url)
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
    args = parser.parse_args(argv)
    from backend.rag.embedder import HashingEmbedder, SentenceTransformerEmbedder

    embedder: Embedder = HashingEmbedder() if args.fake_embedder else SentenceTransformerEmbedder()
    recall, missed = evaluate(args.folder, embedder, args.k)
    n = len(load_questions(args.folder))
    print(f"recall@{args.k} over {n} questions ({embedder.model_name}):")
    for name in (*MODES, RRF):
        print(f"  {name:<10} {recall[name]:.3f}   missed: {', '.join(missed[name]) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
