"""QA findings on documents (issue 6): citation links that cannot open another document's text,
monotonic versions, concurrent uploads, a fair and promptly stoppable ingestion queue, oversized
chunks, hostile file names."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import select

from backend.errors import NotFound
from backend.generator import ChatMessage
from backend.models import Document
from backend.rag import (
    DocumentService, IngestionWorker, LeaseLost, Source, TooManyPending, UnsupportedDocument, build_prompt_with_sources, chunk_pages,
    with_sources,
)
from backend.rag.extract import Page
from tests.backend.conftest import fake_count_tokens


# -- 1. citations carry the document id; versions never restart ---------------------------------


def test_a_reused_chunk_id_does_not_open_another_documents_text(add, documents, retriever):
    first = add("alice", "a.txt", "Pelicans scoop fish with their pouches.")
    (cited,) = retriever.search("alice", "pelicans scoop fish", mode="bm25")
    documents.delete("alice", first.id)
    # SQLite reuses the freed rowid for the next chunk (no AUTOINCREMENT).
    other = add("alice", "b.txt", "Flamingos stand on one leg.")
    (new,) = retriever.search("alice", "flamingos stand", mode="bm25")
    if documents.session_factory.kw["bind"].dialect.name == "sqlite":
        assert new.chunk_id == cited.chunk_id  # the premise: the id was reused (PostgreSQL: never)
    with pytest.raises(NotFound):  # the stored citation (a.txt's id) finds nothing
        documents.chunk("alice", cited.document_id, cited.chunk_id)
    assert documents.chunk("alice", other.id, new.chunk_id).text == new.text


def test_versions_continue_after_a_delete(add, documents):
    add("alice", "n.txt", "One.")
    second = add("alice", "n.txt", "Two.")
    assert second.version == 2
    assert documents.delete("alice", second.id) == 2
    assert documents.list_documents("alice") == []
    with pytest.raises(NotFound):
        documents.get("alice", second.id)
    third = add("alice", "n.txt", "Three.")
    assert (third.version, third.status) == (3, "ready")
    assert [d.version for d in documents.list_documents("alice")] == [3]
    assert documents.delete("alice", third.id) == 1


# -- 2. concurrent uploads of one name ----------------------------------------------------------


def test_parallel_uploads_of_one_name_all_get_distinct_versions(documents, users):
    barrier = threading.Barrier(6)
    results: list[object] = []

    def go(i: int) -> None:
        barrier.wait()
        try:
            results.append(documents.upload("alice", "same.txt", f"Text {i}.".encode()).version)
        except Exception as exc:  # noqa: BLE001 - the test reports it
            results.append(exc)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(results) == [1, 2, 3, 4, 5, 6], results  # type: ignore[type-var]


# -- 3. the ingestion queue ---------------------------------------------------------------------


class GatedService:
    """A DocumentService stand-in whose ingest blocks until released; records the order."""

    def __init__(self, real):
        self.real = real
        self.order: list[str] = []
        self.gate = threading.Event()
        self.started = threading.Event()

    def __getattr__(self, name):  # settings, jobs, recover_interrupted, upload...
        return getattr(self.real, name)

    def ingest(self, document_id, data, progress=None, cancelled=None, *, fenced=False):
        self.started.set()
        self.gate.wait(30)
        self.order.append(data.decode())
        return self.real.ingest(document_id, data, progress, cancelled, fenced=fenced)


def test_the_queue_takes_users_in_turn_and_caps_each_user(documents, users):
    service = GatedService(documents)
    worker = IngestionWorker(service, max_pending_per_user=4)  # type: ignore[arg-type]
    try:
        futures = [worker.submit("alice", "a0.txt", b"alice 0")[1]]
        assert service.started.wait(10)  # alice 0 is running; the rest queue behind it
        futures += [worker.submit("alice", f"a{i}.txt", f"alice {i}".encode())[1] for i in (1, 2, 3)]
        with pytest.raises(TooManyPending, match="4 documents being processed"):
            worker.submit("alice", "a4.txt", b"alice 4")
        futures += [worker.submit("bob", f"b{i}.txt", f"bob {i}".encode())[1] for i in (0, 1)]
        service.gate.set()
        for future in futures:
            assert future.result(timeout=30).status == "ready"
    finally:
        worker.shutdown()
    assert service.order == ["alice 0", "alice 1", "bob 0", "alice 2", "bob 1", "alice 3"]
    assert worker.pending("alice") == 0


def test_shutdown_stops_promptly_and_the_next_start_indexes_the_rest(documents, session_factory, users, embedder,
                                                                     rag_settings):
    service = GatedService(documents)
    worker = IngestionWorker(service, max_pending_per_user=10)  # type: ignore[arg-type]
    running, running_future = worker.submit("alice", "r.txt", b"Running now. " * 50)
    assert service.started.wait(10)
    queued = [worker.submit("alice", f"q{i}.txt", b"Queued text.")[1] for i in range(3)]
    stopper = threading.Thread(target=worker.shutdown)
    stopper.start()
    service.gate.set()
    stopper.join(30)
    assert not stopper.is_alive()
    assert all(f.cancelled() for f in queued)
    with pytest.raises(LeaseLost):  # stopped between batches: released, not failed
        running_future.result(timeout=0)
    with session_factory() as session:
        statuses = dict(session.execute(select(Document.name, Document.status)).all())
    assert statuses == dict.fromkeys(["r.txt", "q0.txt", "q1.txt", "q2.txt"], "processing")
    assert documents.recover_interrupted() == 0  # nothing to fail: every job can still be indexed
    with pytest.raises(RuntimeError):
        worker.submit("alice", "late.txt", b"Late.")
    # The next start (a new process run) takes the released jobs over at once and indexes them.
    restarted = IngestionWorker(DocumentService(session_factory, embedder, rag_settings, instance="again"))
    try:
        assert wait_for(lambda: set(statuses_of(session_factory).values()) == {"ready"}), statuses_of(session_factory)
    finally:
        restarted.shutdown()


def statuses_of(session_factory) -> dict[str, str]:
    with session_factory() as session:
        return dict(session.execute(select(Document.name, Document.status)).all())


def wait_for(condition, deadline_s: float = 60.0) -> bool:
    """Poll `condition` until it holds or the deadline passes (a deadline, not a timing)."""
    import time

    end = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def test_progress_moves_before_embedding(documents, users):
    seen: list[float] = []
    view = documents.upload("alice", "p.txt", b"Some words here. " * 40)
    documents.ingest(view.id, b"Some words here. " * 40, progress=seen.append)
    assert 0 < seen[0] < seen[1] < seen[-1] == 1.0


# -- 4. oversized chunks ------------------------------------------------------------------------


def test_a_huge_word_is_split_into_chunks_capped_in_characters():
    def one_token_per_word(text: str) -> int:  # like MiniLM: a long unknown word is one [UNK]
        return len(text.split())

    chunks = chunk_pages([Page("Intro words. " + "x" * 200_000 + " tail.")], one_token_per_word, 200, 40)
    cap = 200 * 8
    assert max(len(c.text) for c in chunks) <= cap
    assert sum(c.text.count("x") for c in chunks) >= 200_000


def src(text: str, n: int) -> Source:
    return Source(n, f"doc{n}", "doc.md", 1, 0, "", None, text, 1.0 / n)


def test_an_oversized_top_source_is_skipped_not_every_source():
    history = [ChatMessage("user", "question?")]
    sources = [src("huge " * 2000, 1), src("small one", 2), src("small two", 3)]
    budget = fake_count_tokens([ChatMessage("user", with_sources("question?", sources[1:]))]) + 5
    messages, used = build_prompt_with_sources(None, history, sources, fake_count_tokens, budget + 10, 10)
    assert used == sources[1:]
    assert messages[-1].content == with_sources("question?", used)


# -- 5. file names ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a\x00.txt", "bell\x07.txt", "tab\there.txt", "line\n.txt",
                                  "invoice\u202etxt.exe.md", "x\u2066.md", "   "])
def test_names_with_control_or_bidi_characters_are_refused(documents, users, name):
    with pytest.raises(UnsupportedDocument):
        documents.upload("alice", name, b"Some text.")


def test_surrounding_whitespace_is_trimmed(documents, users):
    assert documents.upload("alice", "  notes.md \n", b"Some text.").name == "notes.md"
