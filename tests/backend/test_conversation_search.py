"""Search over titles and message text (backend.conversation_search, migrations 0006 and 0007).

Every test with a database runs on SQLite and, with TEST_DATABASE_URL, on PostgreSQL
(tests/conftest.py); those marked sqlite_only check SQLite's FTS5 tables.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import pytest
from sqlalchemy import text

from backend.auth import AuthService
from backend.conversation_search import (
    ConversationSearch,
    _PG_MESSAGES,
    _PG_TITLES,
    highlight_html,
    pg_search_text,
    pg_tsvector,
    search_terms,
)
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
    # SQLite's snippet shows the words before the hit too, PostgreSQL's ts_headline starts at it.
    assert "<mark>bold</mark>&lt;/b&gt;" in hit.snippet_html
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


def test_the_index_follows_edits_renames_and_deletes(search, conversations, users, session_factory,
                                                     database_kind):
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
    if database_kind != "sqlite":
        return  # PostgreSQL's index is an expression index over the rows themselves
    with session_factory() as db:  # SQLite's FTS5 tables are emptied by the triggers
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
    # a reply's Markdown marks are not shown (a new-user pass saw "Zone\\_B" in the sidebar's search)
    assert highlight_html("**Zone\\_B** costs `£25`, see \ufdd0__init__\ufdd1") == (
        "Zone_B costs £25, see <mark>__init__</mark>")


@pytest.mark.sqlite_only  # FTS5 rowids
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


# --- HTML and code in the text, long titles (migration 0007); SQLite and PostgreSQL ----------


@dataclass
class Db:
    session_factory: object
    dialect: str
    user_id: str
    conversations: ConversationService
    search: ConversationSearch

    def add(self, conversation_id: str, position: int, content: str) -> str:
        return add(self.session_factory, conversation_id, self.user_id, position, "user", content)


@pytest.fixture
def any_db(session_factory, database_kind, fast_hasher):
    user = AuthService(session_factory, 3600, fast_hasher).sign_up("alice", "password one")
    return Db(session_factory, database_kind, user.id, ConversationService(session_factory),
              ConversationSearch(session_factory))


TAGGED = [  # (text, a word in it that was unsearchable on PostgreSQL with 0006's raw-text index)
    ("hello <script> walrus", "walrus"),
    ("a <style> beluga c", "beluga"),
    ("<!-- orca --> then more", "orca"),
    ("std::map<string,int> m; // dugong &manatee;", "manatee"),
    ("<div class=\"x\">narwhal</div>", "narwhal"),
]


@pytest.mark.parametrize(("content", "word"), TAGGED)
def test_words_after_tags_and_in_code_are_found(any_db, content, word):
    conv = any_db.conversations.create_conversation(any_db.user_id, "x")
    message = any_db.add(conv.id, 0, content)
    hits = any_db.search.search(any_db.user_id, word)
    assert [(h.conversation_id, h.message_id) for h in hits] == [(conv.id, message)]
    assert f"<mark>{word}</mark>" in hits[0].snippet_html
    assert "<" not in hits[0].snippet_html.replace("<mark>", "").replace("</mark>", "")


def test_snippet_keeps_tags_and_entities_as_text(any_db):
    conv = any_db.conversations.create_conversation(any_db.user_id, "x")
    any_db.add(conv.id, 0, "walrus: if (a<b && c>d) &lt;script&gt;")
    snippet = any_db.search.search(any_db.user_id, "walrus")[0].snippet_html
    assert "a&lt;b &amp;&amp; c&gt;d" in snippet and "<mark>walrus</mark>" in snippet
    assert "&amp;lt;script" in snippet  # the typed entity comes back as typed, escaped once


def test_a_short_message_with_tags_is_shown_whole(any_db):
    # PostgreSQL counts each entity as a word: its headline once stopped after "lives <b>here".
    conv = any_db.conversations.create_conversation(any_db.user_id, "x")
    any_db.add(conv.id, 0, "the walrus lives <b>here</b> in the middle")
    snippet = any_db.search.search(any_db.user_id, "walr")[0].snippet_html
    assert snippet == "the <mark>walrus</mark> lives &lt;b&gt;here&lt;/b&gt; in the middle"


def test_a_tag_in_the_title_does_not_hide_the_words_after_it(any_db):
    conv = any_db.conversations.create_conversation(any_db.user_id, "<script> walrus notes")
    hits = any_db.search.search(any_db.user_id, "walrus")
    assert [h.conversation_id for h in hits] == [conv.id]
    assert hits[0].title_html == "&lt;script&gt; <mark>walrus</mark> notes"


LONG_TITLE = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
              "sixteen seventeen walrus nineteen twenty twentyone twentytwo twentythree")


def test_a_long_title_is_highlighted_whole(any_db):
    conv = any_db.conversations.create_conversation(any_db.user_id, LONG_TITLE)
    for word in ("walrus", "one", "twentythree"):
        hits = any_db.search.search(any_db.user_id, word)
        assert [h.conversation_id for h in hits] == [conv.id]
        assert hits[0].title_html == " ".join(f"<mark>{w}</mark>" if w == word else w for w in LONG_TITLE.split())
        assert html.unescape(hits[0].title_html.replace("<mark>", "").replace("</mark>", "")) == LONG_TITLE


@pytest.mark.postgresql_only
def test_postgresql_queries_use_the_gin_indexes(any_db):
    conv = any_db.conversations.create_conversation(any_db.user_id, "walrus")
    with any_db.session_factory() as db:
        db.execute(text("""INSERT INTO messages (id, conversation_id, user_id, position, role, content, html, status,
                                                 created_at, updated_at)
                           SELECT 'bulk' || g, :c, :u, g, 'user', 'filler <p>text</p> ' || g, '', 'complete', now(), now()
                           FROM generate_series(1, 20000) AS g"""), {"c": conv.id, "u": any_db.user_id})
        db.execute(text("""INSERT INTO conversations (id, user_id, title, created_at, updated_at)
                           SELECT 'bulk' || g, :u, 'title ' || g, now(), now() FROM generate_series(1, 20000) AS g"""),
                   {"u": any_db.user_id})
        db.commit()
        db.execute(text("ANALYZE messages"))
        db.execute(text("ANALYZE conversations"))
        params = {"query": "walrus:*", "user_id": any_db.user_id, "options": "", "title_options": "", "limit": 10}
        for statement, index in ((_PG_MESSAGES, "ix_messages_content_tsv"), (_PG_TITLES, "ix_conversations_title_tsv")):
            plan = "\n".join(row[0] for row in db.execute(text("EXPLAIN " + str(statement)), params))
            assert index in plan, plan


# --- the SQL helpers, evaluated by SQLite (its replace() is PostgreSQL's) ----------------------


@pytest.mark.parametrize("value", [
    "plain", "<script>", "a <style> b", "a&b", "&amp; &lt;", "x<y && y>z", "", "<<>>&&", "ë\ufdd0<",
])
def test_pg_search_text_escapes_like_html_escape(db_engine, value):
    with db_engine.connect() as conn:
        escaped = conn.execute(text(f"SELECT {pg_search_text(':value')}"), {"value": value}).scalar()
    assert escaped == html.escape(value, quote=False)
    assert html.unescape(escaped) == value
    assert "<" not in escaped and ">" not in escaped


def test_pg_tsvector_wraps_the_escaped_column():
    assert pg_tsvector("m.content") == f"to_tsvector('english', {pg_search_text('m.content')})"
    assert pg_search_text("c.title").count("c.title") == 1
