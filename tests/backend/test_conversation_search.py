"""Search over titles and message text (backend.conversation_search, migration 0006)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from backend.auth import AuthService
from backend.conversation_search import ConversationSearch, highlight_html, search_terms
from backend.conversations import ConversationService
from backend.models import Message


@pytest.fixture
def users(session_factory, fast_hasher):
    auth = AuthService(session_factory, 3600, fast_hasher)
    return auth.sign_up("alice", "password one"), auth.sign_up("bob", "password two")


@pytest.fixture
def conversations(session_factory):
    return ConversationService(session_factory)


@pytest.fixture
def search(session_factory):
    return ConversationSearch(session_factory)


def add(session_factory, conversation_id, user_id, position, role, content, parent_id=None) -> str:
    with session_factory() as db:
        message = Message(conversation_id=conversation_id, user_id=user_id, position=position, role=role,
                          content=content, html="", status="complete", parent_id=parent_id)
        db.add(message)
        db.commit()
        return message.id


def test_message_text_is_found_with_a_highlighted_snippet(search, conversations, users, session_factory):
    alice, _ = users
    conv = conversations.create_conversation(alice.id, "Trip")
    add(session_factory, conv.id, alice.id, 0, "user", "Which ferry goes to the islands?")
    answer = add(session_factory, conv.id, alice.id, 1, "assistant", "The morning ferry leaves at seven.")
    hits = search.search(alice.id, "morning")
    assert [(h.conversation_id, h.message_id, h.role) for h in hits] == [(conv.id, answer, "assistant")]
    assert "<mark>morning</mark>" in hits[0].snippet_html
    assert hits[0].title_html == "Trip"


def test_title_matches_come_first_and_are_highlighted(search, conversations, users, session_factory):
    alice, _ = users
    in_text = conversations.create_conversation(alice.id, "Other")
    add(session_factory, in_text.id, alice.id, 0, "user", "notes about pottery glazes")
    titled = conversations.create_conversation(alice.id, "Pottery class")
    hits = search.search(alice.id, "pottery")
    assert [h.conversation_id for h in hits] == [titled.id, in_text.id]
    assert hits[0].title_html == "<mark>Pottery</mark> class"
    assert hits[0].message_id is None and hits[0].snippet_html == ""


def test_ranking_prefers_the_denser_match(search, conversations, users, session_factory):
    alice, _ = users
    sparse = conversations.create_conversation(alice.id, "a")
    add(session_factory, sparse.id, alice.id, 0, "user",
        "long message " + "filler words here " * 40 + "with one quokka mention")
    dense = conversations.create_conversation(alice.id, "b")
    add(session_factory, dense.id, alice.id, 0, "user", "quokka quokka quokka")
    assert [h.conversation_id for h in search.search(alice.id, "quokka")] == [dense.id, sparse.id]


def test_one_result_per_conversation_with_its_best_message(search, conversations, users, session_factory):
    alice, _ = users
    conv = conversations.create_conversation(alice.id, "x")
    add(session_factory, conv.id, alice.id, 0, "user", "lemon " + "cake and other things " * 20)
    best = add(session_factory, conv.id, alice.id, 1, "assistant", "lemon lemon")
    hits = search.search(alice.id, "lemon")
    assert len(hits) == 1 and hits[0].message_id == best


def test_every_term_must_match_as_a_word_prefix_and_stems(search, conversations, users, session_factory):
    alice, _ = users
    conv = conversations.create_conversation(alice.id, "x")
    add(session_factory, conv.id, alice.id, 0, "user", "The gardeners were planting tomatoes")
    assert search.search(alice.id, "plant tomato")  # stemmed
    assert search.search(alice.id, "garden toma")  # prefixes
    assert search.search(alice.id, "tomatoes potatoes") == []  # all terms required
    assert search.search(alice.id, "tomatoes _")  # "_" is no term (it would match nothing)


def test_html_in_content_is_escaped_in_snippets_and_titles(search, conversations, users, session_factory):
    alice, _ = users
    conv = conversations.create_conversation(alice.id, "<b>bold</b> title")
    add(session_factory, conv.id, alice.id, 0, "user", 'say <b>bold</b> & <img src=x onerror="alert(1)">')
    hit = search.search(alice.id, "bold")[0]
    assert "<b>" not in hit.snippet_html and "<img" not in hit.snippet_html
    assert "&lt;b&gt;<mark>bold</mark>&lt;/b&gt;" in hit.snippet_html
    assert "&amp;" in hit.snippet_html
    assert hit.title_html == "&lt;b&gt;<mark>bold</mark>&lt;/b&gt; title"


def test_another_users_text_is_never_found(search, conversations, users, session_factory):
    alice, bob = users
    conv = conversations.create_conversation(bob.id, "secret walrus plans")
    add(session_factory, conv.id, bob.id, 0, "user", "the walrus password is hunter2")
    assert search.search(alice.id, "walrus") == []
    assert search.search(alice.id, "hunter2") == []
    assert [h.conversation_id for h in search.search(bob.id, "walrus")] == [conv.id]


@pytest.mark.parametrize("query", [
    '"', '""', '"unbalanced', "*", "walrus*", "NEAR(walrus plans)", "walrus NEAR plans", "AND", "OR OR",
    "NOT walrus", "-walrus", "content:walrus", "title:walrus", "^walrus", "walrus)", "(", "{a b}", "a:b",
    "'; DROP TABLE messages; --", "\x00", "\ufdd0walrus\ufdd1", "walrus " * 200, "ë" * 500, "",
])
def test_hostile_queries_never_fail(search, conversations, users, session_factory, query):
    alice, _ = users
    conv = conversations.create_conversation(alice.id, "walrus plans")
    add(session_factory, conv.id, alice.id, 0, "user", "near the walrus")
    hits = search.search(alice.id, query)
    assert all(h.conversation_id == conv.id for h in hits)
    with session_factory() as db:
        assert db.execute(text("SELECT count(*) FROM messages")).scalar() == 1


def test_fts_syntax_words_are_plain_words(search, conversations, users, session_factory):
    alice, _ = users
    conv = conversations.create_conversation(alice.id, "x")
    add(session_factory, conv.id, alice.id, 0, "user", "not near or and")
    assert [h.conversation_id for h in search.search(alice.id, "NOT NEAR")] == [conv.id]


def test_the_index_follows_edits_renames_and_deletes(search, conversations, users, session_factory):
    alice, _ = users
    conv = conversations.create_conversation(alice.id, "first title")
    message = add(session_factory, conv.id, alice.id, 0, "assistant", "")
    with session_factory() as db:  # a streamed reply's content grows by updates
        db.execute(text("UPDATE messages SET content = 'armadillo facts' WHERE id = :id"), {"id": message})
        db.commit()
    assert search.search(alice.id, "armadillo")[0].message_id == message
    conversations.rename_conversation(alice.id, conv.id, "second heading")
    assert search.search(alice.id, "first") == []
    assert search.search(alice.id, "heading")[0].conversation_id == conv.id
    conversations.delete_conversation(alice.id, conv.id)
    assert search.search(alice.id, "armadillo") == [] and search.search(alice.id, "heading") == []
    with session_factory() as db:
        assert db.execute(text("SELECT count(*) FROM messages_fts")).scalar() == 0
        assert db.execute(text("SELECT count(*) FROM conversations_fts")).scalar() == 0


def test_search_terms_keep_only_words():
    assert search_terms('"NEAR(a* b)" OR -c:d') == ["near", "a", "b", "or", "c", "d"]
    assert search_terms("***") == [] and search_terms("_ __") == []
    assert search_terms("snake_case x") == ["snake", "case", "x"]


def test_highlight_marks_are_balanced_and_the_rest_escaped():
    assert highlight_html("a \ufdd0<b>\ufdd1 c") == "a <mark>&lt;b&gt;</mark> c"
    assert highlight_html("\ufdd1x\ufdd0y") == "x<mark>y</mark>"
    assert highlight_html("\ufdd0\ufdd0x\ufdd1\ufdd1") == "<mark>x</mark>"


def test_an_index_entry_at_a_reused_rowid_never_breaks_a_write(search, conversations, users, session_factory):
    # Were rowids ever renumbered (VACUUM, a table copy), an entry could sit at the rowid a new
    # message gets: the insert replaces it, and a delete or update touches only its own id.
    alice, _ = users
    conv = conversations.create_conversation(alice.id, "x")
    with session_factory() as db:
        db.execute(text("INSERT INTO messages_fts(rowid, content, message_id) VALUES (999, 'stale text', 'gone')"))
        db.execute(text("INSERT INTO messages (rowid, id, conversation_id, user_id, position, role, content, html, "
                        "status, created_at, updated_at) VALUES (999, 'fresh', :c, :u, 0, 'user', 'new words', '', "
                        "'complete', '2026-01-01', '2026-01-01')"), {"c": conv.id, "u": alice.id})
        db.execute(text("INSERT INTO messages_fts(rowid, content, message_id) VALUES (998, 'orphan text', 'other')"))
        db.execute(text("UPDATE messages SET rowid = 998 WHERE id = 'fresh'"))  # now at the orphan's rowid
        db.execute(text("DELETE FROM messages WHERE id = 'fresh'"))
        db.commit()
        assert db.execute(text("SELECT message_id FROM messages_fts WHERE messages_fts MATCH 'orphan'")).all() \
            == [("other",)]  # not deleted: it is not the deleted message's entry
    assert search.search(alice.id, "stale") == [] and search.search(alice.id, "orphan") == []
