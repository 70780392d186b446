from __future__ import annotations

import threading

import pytest
from sqlalchemy import func, select, text

from backend.errors import NotFound
from backend.models import Document, DocumentChunk
from backend.rag import DocumentTooLarge, IngestionWorker, NotAllowed, UnsupportedDocument, VectorIndex
from backend.rag.documents import REASON_INTERRUPTED

MODES = ("bm25", "vector", "hybrid")


def names_and_versions(sources):
    return {(s.document_name, s.version) for s in sources}


def chunk_count(session_factory, sql_filter="1=1"):
    with session_factory() as session:
        return session.scalar(text(f"SELECT count(*) FROM document_chunks WHERE {sql_filter}"))


def fts_count(session_factory, word):
    """Chunks the database's full-text index finds for `word` (FTS5 table, or PostgreSQL's
    expression of migration 0008's GIN index)."""
    with session_factory() as session:
        if session.bind.dialect.name == "postgresql":
            from backend.conversation_search import pg_tsvector

            sql = f"SELECT count(*) FROM document_chunks WHERE {pg_tsvector('text')} @@ to_tsquery('english', :w)"
        else:
            sql = "SELECT count(*) FROM document_chunks_fts WHERE document_chunks_fts MATCH :w"
        return session.scalar(text(sql), {"w": word})


@pytest.mark.parametrize("mode", MODES)
def test_a_new_version_replaces_the_old_in_retrieval(add, retriever, mode):
    first = add("alice", "policy.md", "Refunds are granted within fourteen days of purchase.")
    second = add("alice", "policy.md", "Refunds are granted within thirty days of purchase.")
    assert (first.version, second.version) == (1, 2)
    hits = retriever.search("alice", "refunds granted purchase days", mode=mode)
    assert names_and_versions(hits) == {("policy.md", 2)}
    assert all("thirty" in h.text for h in hits)
    assert not retriever.search("alice", "fourteen", mode="bm25")


def test_versions_list_and_superseded_chunks_are_removed(add, documents, session_factory):
    old = add("alice", "policy.md", "fourteen days")
    add("alice", "policy.md", "thirty days")
    listed = documents.list_documents("alice")
    assert [(d.name, d.version, d.status) for d in listed] == [("policy.md", 2, "ready")]
    assert chunk_count(session_factory, f"document_id = '{old.id}'") == 0
    assert fts_count(session_factory, "fourteen") == 0 and fts_count(session_factory, "thirty") == 1


@pytest.mark.parametrize("mode", MODES)
def test_deletion_removes_every_version_from_retrieval_at_once(add, documents, retriever, session_factory, mode):
    add("alice", "keep.txt", "Otters hold hands while sleeping.")
    add("alice", "gone.txt", "Walruses sleep on drifting ice.")
    doc = add("alice", "gone.txt", "Walruses sleep on drifting ice, version two.")
    assert "gone.txt" in {s.document_name for s in retriever.search("alice", "walruses sleep ice", mode=mode)}
    assert documents.delete("alice", doc.id) == 2
    hits = retriever.search("alice", "walruses sleep ice", mode=mode)
    assert "gone.txt" not in {s.document_name for s in hits}
    assert fts_count(session_factory, "walruses") == 0
    assert [d.name for d in documents.list_documents("alice")] == ["keep.txt"]


def test_other_users_cannot_delete_get_or_share(add, documents):
    doc = add("alice", "mine.txt", "private words")
    with pytest.raises(NotFound):
        documents.delete("bob", doc.id)
    with pytest.raises(NotFound):
        documents.get("bob", doc.id)
    with pytest.raises(NotAllowed):
        documents.set_shared("bob", doc.id, True)
    with pytest.raises(NotFound):  # root is admin but does not own it
        documents.set_shared("root", doc.id, True)
    assert documents.get("alice", doc.id).is_own


@pytest.mark.parametrize("mode", MODES)
def test_permission_isolation_between_two_users(add, retriever, documents, mode):
    add("alice", "alice.txt", "The vault combination is seven four one.")
    add("bob", "bob.txt", "The vault combination is nine nine two.")
    alice = retriever.search("alice", "vault combination", mode=mode, k=10)
    bob = retriever.search("bob", "vault combination", mode=mode, k=10)
    assert {s.document_name for s in alice} == {"alice.txt"}
    assert {s.document_name for s in bob} == {"bob.txt"}
    bob_doc = documents.list_documents("bob")[0]
    # Naming another user's document explicitly does not reach it either.
    assert retriever.search("alice", "vault combination", mode=mode, document_ids=[bob_doc.id]) == []
    with pytest.raises(NotFound):
        documents.chunk("alice", bob[0].document_id, bob[0].chunk_id)
    assert documents.chunk("bob", bob[0].document_id, bob[0].chunk_id).text == bob[0].text


@pytest.mark.parametrize("mode", MODES)
def test_admin_shared_documents_reach_everyone(add, retriever, documents, mode):
    with pytest.raises(NotAllowed):
        documents.upload("alice", "handbook.md", b"x", shared=True)
    shared = add("root", "handbook.md", "Holidays: the office closes on the first Monday of May.", shared=True)
    add("root", "private.md", "Root's private note about the first Monday of May.")
    for user in ("alice", "bob", "root"):
        names = {s.document_name for s in retriever.search(user, "office closes Monday May", mode=mode, k=10)}
        assert names == ({"handbook.md", "private.md"} if user == "root" else {"handbook.md"})
    assert [d.is_own for d in documents.list_documents("bob")] == [False]
    # A new version keeps the name shared unless the upload says otherwise.
    again = add("root", "handbook.md", "Holidays: the office closes on the second Monday of May.")
    assert again.shared and again.version == 2
    documents.set_shared("root", again.id, False)
    assert retriever.search("bob", "office closes Monday May", mode=mode) == []


def test_failed_ingestion_leaves_no_chunks_and_keeps_the_old_version(add, documents, retriever, session_factory, embedder, monkeypatch):
    add("alice", "guide.md", "Version one says the password rotates yearly.")
    data = b"Version two says the password rotates monthly. " * 50
    view = documents.upload("alice", "guide.md", data)
    calls = []

    def exploding_embed(texts):
        calls.append(len(texts))
        if len(calls) == 2:
            raise RuntimeError("out of memory")
        return type(embedder).embed(embedder, texts)

    monkeypatch.setattr(embedder, "embed", exploding_embed)
    result = documents.ingest(view.id, data)
    assert len(calls) == 2  # it failed midway, after a first batch was embedded
    assert result.status == "failed" and "internal error" in result.error
    assert chunk_count(session_factory, f"document_id = '{view.id}'") == 0
    assert fts_count(session_factory, "monthly") == 0
    monkeypatch.undo()
    hits = retriever.search("alice", "password rotates", mode="hybrid")
    assert names_and_versions(hits) == {("guide.md", 1)}
    listed = {(d.version, d.status) for d in documents.list_documents("alice")}
    assert listed == {(1, "ready"), (2, "failed")}


def test_unreadable_content_found_by_the_worker_fails_with_the_reason(documents, users):
    # Valid header and cross-reference table, but no text on the page: found only on extraction.
    from tests.backend.rag.conftest import make_pdf

    data = make_pdf([""])
    view = documents.upload("alice", "scan.pdf", data)
    result = documents.ingest(view.id, data)
    assert (result.status, result.num_chunks) == ("failed", 0)
    assert "no text" in result.error


def test_chunks_are_invisible_until_the_document_is_ready(documents, session_factory, users, embedder, rag_settings, monkeypatch):
    from backend.rag import HashingEmbedder, Retriever

    retriever = Retriever(session_factory, HashingEmbedder(), rag_settings)  # not the patched one
    data = b"Glaciers carve fjords slowly. " * 40
    view = documents.upload("alice", "ice.txt", data)
    seen_during = []

    def watching_embed(texts):
        seen_during.append((retriever.search("alice", "glaciers fjords", mode="hybrid"),
                            documents.get("alice", view.id).status))
        return type(embedder).embed(embedder, texts)

    monkeypatch.setattr(embedder, "embed", watching_embed)
    documents.ingest(view.id, data, progress=lambda f: None)
    monkeypatch.undo()
    assert len(seen_during) >= 2 and all(hits == [] and status == "processing" for hits, status in seen_during)
    assert retriever.search("alice", "glaciers fjords", mode="hybrid")


def test_progress_is_reported_and_stored(documents, users, rag_settings):
    data = b"\n\n".join(b"Paragraph %d about kelp forests and sea urchins." % i for i in range(200))
    view = documents.upload("alice", "kelp.md", data)
    fractions = []
    result = documents.ingest(view.id, data, progress=fractions.append)
    assert len(fractions) >= 2 and fractions == sorted(fractions) and fractions[-1] == 1.0
    assert result.status == "ready" and result.progress == 1.0 and result.num_chunks > rag_settings.embed_batch


def test_a_slower_older_version_never_replaces_a_newer_one(documents, retriever, users):
    v1_data, v2_data = b"old text about herons", b"new text about herons"
    v1 = documents.upload("alice", "birds.txt", v1_data)
    v2 = documents.upload("alice", "birds.txt", v2_data)
    assert documents.ingest(v2.id, v2_data).status == "ready"
    assert documents.ingest(v1.id, v1_data).status == "superseded"
    hits = retriever.search("alice", "herons", mode="bm25")
    assert [(h.version, h.text) for h in hits] == [(2, "new text about herons")]


def test_deleting_while_processing_never_publishes(documents, retriever, session_factory, users):
    data = b"Quokkas smile for photographs."
    view = documents.upload("alice", "q.txt", data)
    documents.delete("alice", view.id)
    with pytest.raises(NotFound):
        documents.ingest(view.id, data)
    assert chunk_count(session_factory) == 0


def test_recover_interrupted_fails_only_versions_that_cannot_be_indexed(documents, session_factory, users):
    from backend.models import IngestionJob

    leased = documents.upload("alice", "a.txt", b"text")  # its job is leased to this process
    orphan = documents.upload("alice", "b.txt", b"text")
    with session_factory.begin() as session:  # as a release before ingestion jobs left it
        session.execute(IngestionJob.__table__.delete().where(IngestionJob.document_id == orphan.id))
    assert documents.recover_interrupted() == 1
    assert documents.get("alice", orphan.id).status == "failed"
    assert documents.get("alice", orphan.id).error == REASON_INTERRUPTED
    assert documents.get("alice", leased.id).status == "processing"
    assert documents.recover_interrupted() == 0


def test_upload_errors_are_typed_and_store_nothing(documents, session_factory, users, rag_settings):
    with pytest.raises(DocumentTooLarge):
        documents.upload("alice", "big.txt", b"x" * (rag_settings.max_upload_bytes + 1))
    with pytest.raises(UnsupportedDocument):
        documents.upload("alice", "run.exe", b"MZ")
    with session_factory() as session:
        assert session.scalar(select(func.count()).select_from(Document)) == 0


def test_the_worker_ingests_off_the_calling_thread(documents, retriever, users):
    worker = IngestionWorker(documents)
    threads = []
    original = documents.ingest

    def recording_ingest(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    documents.ingest = recording_ingest
    try:
        view, future = worker.submit("alice", "w.md", b"# Worker\n\nIbises wade in shallow water.")
        assert view.status == "processing"
        assert future.result(timeout=30).status == "ready"
    finally:
        worker.shutdown()
    assert threads and threads[0] != threading.current_thread().name
    assert retriever.search("alice", "ibises wade", mode="bm25")


def test_vector_cache_follows_uploads_and_deletes(add, documents, session_factory, embedder, rag_settings):
    from backend.rag import Retriever

    index = VectorIndex()
    retriever = Retriever(session_factory, embedder, rag_settings, index)
    add("alice", "a.txt", "Lemurs leap between baobab trees.")
    assert [s.document_name for s in retriever.search("alice", "lemurs leap", mode="vector", k=1)] == ["a.txt"]
    retriever.search("alice", "lemurs leap", mode="vector", k=1)
    assert index.loads == 1  # unchanged index: the matrix is reused
    doc_b = add("alice", "b.txt", "Lemurs leap and lemurs leap again, lemurs leap.")
    assert [s.document_name for s in retriever.search("alice", "lemurs leap lemurs", mode="vector", k=1)] == ["b.txt"]
    assert index.loads == 2
    documents.delete("alice", doc_b.id)
    assert [s.document_name for s in retriever.search("alice", "lemurs leap lemurs", mode="vector", k=2)] == ["a.txt"]
    assert index.loads == 3


def test_vector_search_matches_brute_force(add, retriever, session_factory, embedder):
    import numpy as np

    for i in range(12):
        add("alice" if i % 3 else "bob", f"d{i}.txt", f"Note {i}: " + " ".join(f"w{(i * 7 + j) % 23}" for j in range(12)))
    query = "w3 w5 w8 w13"
    got = [(s.chunk_id, round(s.similarity, 5)) for s in retriever.search("alice", query, mode="vector", k=4)]
    with session_factory() as session:
        rows = session.execute(
            select(DocumentChunk.id, DocumentChunk.embedding).join(Document).where(Document.user_id == "alice")
        ).all()
    q = embedder.embed([query])[0]
    brute = sorted(((cid, float(np.frombuffer(blob, "<f4") @ q)) for cid, blob in rows), key=lambda x: (-x[1], x[0]))[:4]
    assert got == [(cid, round(s, 5)) for cid, s in brute]


def test_relevance_floor_and_k(add, retriever):
    add("alice", "z.txt", "Zebras have stripes.\n\nCarrots are orange.")
    assert retriever.search("alice", "zebra stripes", mode="hybrid", min_similarity=1.01 - 0.02, k=5) == []
    hits = retriever.search("alice", "zebras stripes", mode="hybrid", min_similarity=-1.0, k=1)
    assert len(hits) == 1 and "Zebras" in hits[0].text
    with pytest.raises(ValueError):
        retriever.search("alice", "x", mode="semantic")
    assert retriever.search("alice", "   ") == []
