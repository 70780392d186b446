"""Search a user's conversations: titles and message text, with highlighted snippets.

The index is the database's: SQLite FTS5 tables `conversations_fts` / `messages_fts` (porter
stemming; ranked by bm25(), lower is better), or PostgreSQL to_tsvector('english') of the text
with & < > escaped (pg_search_text) and GIN indexes (ranked by ts_rank, higher is better);
migration 0006 builds both, 0007 rebuilds the PostgreSQL indexes over the escaped text. The
owner condition is inside every SQL query, so another user's text is never read, let alone
returned.

The query is never passed to the match syntax as typed: it is cut into word terms (runs of
letters and digits), each quoted and prefix-matched, all required (AND). FTS operators (`"`,
`*`, `NEAR`, `OR`, `-`, column filters) are thereby plain words or nothing, and no input makes
the query fail.

Snippets come from the database with two marker characters around each hit; every other
character is HTML-escaped here, and the markers become `<mark>`/`</mark>` (always balanced).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, text
from sqlalchemy.orm import Session, sessionmaker

from backend.models import UtcDateTime

MAX_QUERY_CHARS = 200
MAX_QUERY_TERMS = 12
MAX_RESULTS = 50
# Message hits read before keeping the best one per conversation.
MESSAGE_CANDIDATES = 200
SNIPPET_TOKENS = 16
# Unicode noncharacters: never meaningful in text, so they can mark a hit's start and end.
MARK_START = "\ufdd0"
MARK_END = "\ufdd1"
_MARKS = re.compile(f"([{MARK_START}{MARK_END}])")


@dataclass(frozen=True)
class SearchHit:
    """One conversation that matched, with its best message hit (if the text matched).

    title_html / snippet_html: HTML-escaped text whose hits are wrapped in <mark>; safe to insert.
    message_id: the best-ranked matching message (None when only the title matched); it may be
    on a branch that is not the active one. score: higher is better (comparable within one search).
    """

    conversation_id: str
    title: str
    title_html: str
    message_id: str | None
    role: str | None
    snippet_html: str
    updated_at: datetime
    pinned: bool
    score: float


def search_terms(query: str) -> list[str]:
    """The lower-cased word terms of `query`, deduplicated, at most MAX_QUERY_TERMS: runs of
    letters and digits (the tokenizer's words: "_" separates, as in unicode61), so each is safe
    inside a quoted FTS5 string or a tsquery lexeme, and none is a separator-only term that
    would match nothing and empty the whole AND."""
    words = re.findall(r"[^\W_]+", query[:MAX_QUERY_CHARS].lower())
    return list(dict.fromkeys(words))[:MAX_QUERY_TERMS]


# Markdown's marks in a reply's text, which a snippet shows as plain text: a backslash escape ("delivery\_zone"), bold
# and code marks, a heading's or a quote's opening marks.
_MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])")
_MARKDOWN_MARKS = re.compile(r"\*\*|`+|^[ \t]*(?:#{1,6}|>)[ \t]+", re.MULTILINE)


def plain_text(markdown: str) -> str:
    """`markdown` with the marks a reader does not see taken out ("**Zone\\_B** costs `£25`" ->
    "Zone_B costs £25"); the words and other characters as they are (a snippet, not a renderer)."""
    return _MARKDOWN_ESCAPE.sub(r"\1", _MARKDOWN_MARKS.sub("", markdown))


def highlight_html(marked: str) -> str:
    """Text with MARK_START/MARK_END around hits -> escaped HTML with balanced <mark> elements
    (a stray or repeated marker, e.g. one typed into a message, changes nothing), Markdown's marks
    taken out (plain_text: a new-user pass saw "\\_" in a snippet)."""
    out: list[str] = []
    open_ = False
    for part in _MARKS.split(marked):
        if part == MARK_START:
            if not open_:
                out.append("<mark>")
                open_ = True
        elif part == MARK_END:
            if open_:
                out.append("</mark>")
                open_ = False
        else:
            out.append(html.escape(plain_text(part), quote=True))
    if open_:
        out.append("</mark>")
    return "".join(out)


def _fts5_query(terms: list[str]) -> str:
    return " AND ".join(f'"{t}"*' for t in terms)


def _tsquery(terms: list[str]) -> str:
    return " & ".join(f"{t}:*" for t in terms)


_SQLITE_TITLES = text(f"""
    SELECT c.id, c.title, c.updated_at, c.pinned, bm25(conversations_fts) AS score,
           highlight(conversations_fts, 0, '{MARK_START}', '{MARK_END}') AS marked
    FROM conversations_fts JOIN conversations AS c ON c.id = conversations_fts.conversation_id
    WHERE conversations_fts MATCH :query AND c.user_id = :user_id
    ORDER BY score, c.id LIMIT :limit
""").columns(updated_at=UtcDateTime())
_SQLITE_MESSAGES = text(f"""
    SELECT m.conversation_id, m.id, m.role, bm25(messages_fts) AS score,
           snippet(messages_fts, 0, '{MARK_START}', '{MARK_END}', '…', {SNIPPET_TOKENS}) AS marked
    FROM messages_fts JOIN messages AS m ON m.id = messages_fts.message_id
    WHERE messages_fts MATCH :query AND m.user_id = :user_id
    ORDER BY score, m.position LIMIT :limit
""")
# PostgreSQL's headline counts each entity of the escaped text as a word (`<b>` is three) and
# stops at MinWords once the hit is covered: with MinWords={SNIPPET_TOKENS}, "the zebra lives <b>here</b> in
# the middle" came back as "zebra lives <b>here". At least SNIPPET_TOKENS words, as SQLite's.
_HEADLINE_OPTIONS = (f'StartSel="{MARK_START}", StopSel="{MARK_END}", MaxWords={SNIPPET_TOKENS + 8}, '
                     f'MinWords={SNIPPET_TOKENS}')
# A title is short: all of it, highlighted (as SQLite's highlight()), not a fragment of MaxWords.
_TITLE_HEADLINE_OPTIONS = f'StartSel="{MARK_START}", StopSel="{MARK_END}", HighlightAll=true'


def pg_search_text(column: str) -> str:
    """The SQL expression PostgreSQL parses for search: `column` with & < > escaped as entities.

    The default parser reads what looks like a tag as a tag: `to_tsvector('english', 'a <style> b')`
    is empty, and after `<script>` no word is indexed; ts_headline drops tags from its output.
    Escaped, a tag's name and the words after it are plain words, and entities are kept whole.
    Migration 0007's GIN indexes are over to_tsvector('english', pg_search_text(column)) with
    this exact text, and the queries below use it too: an expression index serves only a query
    with the identical expression. Headlines made from it are unescaped again in Python."""
    return f"replace(replace(replace({column}, '&', '&amp;'), '<', '&lt;'), '>', '&gt;')"


def pg_tsvector(column: str) -> str:
    """to_tsvector('english', pg_search_text(column)): the expression of the GIN indexes (0007)."""
    return f"to_tsvector('english', {pg_search_text(column)})"


_PG_TITLES = text("""
    SELECT c.id, c.title, c.updated_at, c.pinned,
           ts_rank({tsv}, q) AS rank,
           ts_headline('english', {escaped}, q, :title_options) AS marked
    FROM conversations AS c, to_tsquery('english', :query) AS q
    WHERE c.user_id = :user_id AND {tsv} @@ q
    ORDER BY rank DESC, c.id LIMIT :limit
""".format(tsv=pg_tsvector("c.title"), escaped=pg_search_text("c.title"))).columns(updated_at=UtcDateTime())
# The headline (costly: it re-parses the text) is computed only for the rows kept.
_PG_MESSAGES = text("""
    SELECT hit.conversation_id, hit.id, hit.role, hit.rank,
           ts_headline('english', {escaped}, to_tsquery('english', :query), :options) AS marked
    FROM (SELECT m.conversation_id, m.id, m.role, m.content, m.position,
                 ts_rank({tsv}, q) AS rank
          FROM messages AS m, to_tsquery('english', :query) AS q
          WHERE m.user_id = :user_id AND {tsv} @@ q
          ORDER BY rank DESC, m.position LIMIT :limit) AS hit
    ORDER BY hit.rank DESC, hit.position
""".format(tsv=pg_tsvector("m.content"), escaped=pg_search_text("hit.content")))
_CONVERSATIONS = text("""
    SELECT id, title, updated_at, pinned FROM conversations
    WHERE user_id = :user_id AND id IN :ids
""").bindparams(bindparam("ids", expanding=True)).columns(updated_at=UtcDateTime())


class ConversationSearch:
    """search() over one user's conversations. Thread-safe (a session per call)."""

    def __init__(self, session_factory: sessionmaker[Session]) -> None:
        self._sessions = session_factory

    def search(self, user_id: str, query: str, limit: int = 20) -> list[SearchHit]:
        """Conversations of `user_id` whose title or message text holds every term of `query`
        (as a word prefix), best first: a title hit before a text-only hit, then by rank.
        At most `limit` (1..MAX_RESULTS); [] for a query without word characters."""
        terms = search_terms(query)
        if not terms:
            return []
        limit = max(1, min(int(limit), MAX_RESULTS))
        with self._sessions() as db:
            dialect = db.get_bind().dialect.name
            if dialect == "sqlite":
                params = {"query": _fts5_query(terms), "user_id": user_id}
                titles, messages = _SQLITE_TITLES, _SQLITE_MESSAGES
                # bm25: lower is better; turn it into higher-is-better.
                sign = -1.0
            elif dialect == "postgresql":
                params = {"query": _tsquery(terms), "user_id": user_id, "options": _HEADLINE_OPTIONS,
                          "title_options": _TITLE_HEADLINE_OPTIONS}
                titles, messages = _PG_TITLES, _PG_MESSAGES
                sign = 1.0
            else:
                raise NotImplementedError(f"conversation search needs SQLite or PostgreSQL, not {dialect}")
            title_rows = [tuple(r) for r in db.execute(titles, {**params, "limit": limit})]
            message_rows = [tuple(r) for r in db.execute(messages, {**params, "limit": MESSAGE_CANDIDATES})]
            if dialect == "postgresql":  # the headlines were made from pg_search_text()
                title_rows = [(*r[:-1], html.unescape(r[-1])) for r in title_rows]
                message_rows = [(*r[:-1], html.unescape(r[-1])) for r in message_rows]
            best: dict[str, tuple] = {}
            for row in message_rows:  # best first: keep the first hit of each conversation
                best.setdefault(row[0], row)
            by_title = {row[0]: row for row in title_rows}
            text_only = [cid for cid in best if cid not in by_title]
            others = {row[0]: row for row in db.execute(_CONVERSATIONS, {"user_id": user_id, "ids": text_only})} \
                if text_only else {}
        hits = [
            _hit(cid, title, highlight_html(marked), updated_at, pinned, best.get(cid), sign * float(rank), sign)
            for cid, title, updated_at, pinned, rank, marked in title_rows
        ]
        for cid in text_only:
            if cid in others:  # else deleted between the two queries
                _, title, updated_at, pinned = others[cid]
                hits.append(_hit(cid, title, html.escape(title), updated_at, pinned, best[cid], None, sign))
        return hits[:limit]


def _hit(cid: str, title: str, title_html: str, updated_at: datetime, pinned: bool, message: tuple | None,
         title_score: float | None, sign: float) -> SearchHit:
    return SearchHit(
        conversation_id=cid, title=title, title_html=title_html,
        message_id=message[1] if message is not None else None,
        role=message[2] if message is not None else None,
        snippet_html=highlight_html(message[4]) if message is not None else "",
        updated_at=updated_at, pinned=bool(pinned),
        score=title_score if title_score is not None else sign * float(message[3]),  # type: ignore[index]
    )
