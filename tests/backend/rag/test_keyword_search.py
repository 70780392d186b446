"""Keyword search (BM25) on SQLite and PostgreSQL: tag-like text is searchable (migration 0008),
and PostgreSQL ranks by BM25 as FTS5 does (rare terms weigh more, repeats saturate).

Tests taking `session_factory` run on SQLite and, with TEST_DATABASE_URL, on PostgreSQL."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from sqlalchemy import text

from backend.conversation_search import pg_tsvector
from backend.rag.retrieval import pg_bm25_sql

REPO = Path(__file__).resolve().parents[3]

CODE = (
    "Embedding a widget: put <script src=x.js> in the head, then the walrus helper, and a "
    "<style> block for otters; &lt;b&gt; stays literal. Finally pelicans."
)


def _migration_0008():
    path = next((REPO / "migrations" / "versions").glob("0008_*.py"))
    spec = importlib.util.spec_from_file_location("migration_0008", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.parametrize("word", ["walrus", "otters", "pelicans", "script", "style", "widget"])
def test_words_after_tag_like_text_are_found(add, retriever, word):
    document = add("alice", "code.txt", CODE)
    assert document.status == "ready"
    for mode in ("bm25", "hybrid"):
        hits = retriever.search("alice", word, mode=mode)
        assert [h.document_id for h in hits][:1] == [document.id], (mode, word)
        assert hits[0].bm25 is not None and hits[0].bm25 > 0
        assert hits[0].text.startswith("Embedding a widget: put <script")  # stored as written


def test_a_rare_term_outranks_a_common_one(add, retriever):
    # "called" is in every document, "gale" in one: BM25's idf ranks the gale chunk first. With
    # ts_rank (no idf) PostgreSQL tied every chunk holding one of the two words once.
    for i in range(6):
        add("alice", f"common{i}.txt", f"The meeting was called for noon on day {i} in room {i}.")
    gale = add("alice", "gale.txt", "The crossing was called off in a gale.")
    other = add("alice", "plain.txt", "The ferry was called the Heron.")
    hits = retriever.search("alice", "gale called", mode="bm25", k=8)
    assert hits[0].document_id == gale.id
    assert hits[0].bm25 > 2 * max(h.bm25 for h in hits[1:])
    assert other.id in {h.document_id for h in hits}


def test_repeats_saturate_and_short_chunks_win_ties(add, retriever):
    once = add("alice", "once.txt", "Heron.")
    long_once = add("alice", "long.txt", "Heron " + "and the rest of a long paragraph about other things " * 4)
    many = add("alice", "many.txt", "Heron heron heron heron heron heron heron heron.")
    add("alice", "none.txt", "Nothing about birds here.")
    scores = {h.document_id: h.bm25 for h in retriever.search("alice", "heron", mode="bm25", k=5)}
    assert scores[many.id] > scores[once.id] > scores[long_once.id]
    assert scores[many.id] < 2.2 * scores[once.id]  # tf saturates at k1 + 1 = 2.2 times one hit


def test_keyword_search_keeps_to_the_documents_named_and_the_users_own(add, retriever):
    mine = add("alice", "a.txt", "Walrus colonies haul out on ice.")
    second = add("alice", "b.txt", "A walrus can weigh a tonne.")
    add("bob", "c.txt", "Walrus tusks grow for life.")
    assert {h.document_id for h in retriever.search("alice", "walrus", mode="bm25")} == {mine.id, second.id}
    only = retriever.search("alice", "walrus", mode="bm25", document_ids=[second.id])
    assert [h.document_id for h in only] == [second.id]


def test_0008_index_expression_is_the_keyword_querys_expression():
    # An expression index serves only a query with the identical expression.
    migration = _migration_0008()
    assert migration.escaped_tsvector("text") == pg_tsvector("text")
    assert f"{pg_tsvector('c.text')} @@ to_tsquery('english', :tsquery)" in pg_bm25_sql(False)
    assert f"{pg_tsvector('c.text')} @@ to_tsquery('english', :tsquery)" in pg_bm25_sql(True)


def test_postgresql_keyword_search_uses_the_0008_index(add, session_factory):
    with session_factory() as session:
        if session.bind.dialect.name != "postgresql":
            pytest.skip("PostgreSQL only")
    add("alice", "code.txt", CODE)
    # The match condition of pg_bm25_sql (test above), alone: the planner may serve it from the index.
    sql = f"SELECT c.id FROM document_chunks AS c WHERE {pg_tsvector('c.text')} @@ to_tsquery('english', :tsquery)"
    with session_factory() as session:
        session.execute(text("SET LOCAL enable_seqscan = off"))
        plan = "\n".join(r[0] for r in session.execute(text("EXPLAIN " + sql), {"tsquery": "walrus"}))
        definition = session.scalar(text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_document_chunks_tsv'"))
    assert "ix_document_chunks_tsv" in plan, plan
    assert "'&lt;'" in definition and "'&gt;'" in definition and "'&amp;'" in definition
