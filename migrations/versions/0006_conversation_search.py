"""Full-text search over conversation titles and message text.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

SQLite: two FTS5 tables that keep their own copy of the text (porter stemming over unicode61):
`messages_fts(content, message_id UNINDEXED)` and `conversations_fts(title, conversation_id
UNINDEXED)`, rowid = the source row's rowid, kept in step by triggers in the same transaction
as the row (cascaded deletes included: SQLite fires delete triggers for them). Results are read
back through the stored ids, never through the rowid. Both are filled from the existing rows.
Not external-content tables: messages and conversations have text primary keys, and an
external-content index would read the text back by a rowid that VACUUM may renumber. Should
rowids ever be renumbered, the triggers still touch only the entry of the same id (a stale entry
is never returned: results join the live rows by id), and an insert replaces an entry holding
its rowid, so no write of a message can fail because of the index.
A later migration that rebuilds messages or conversations in batch mode drops their triggers
with the old table and renumbers the rowids: it must remake that table's index from its rows
(migrations/sqlite_search.py; tests/backend/test_db_migrations.py checks, at head and after every
downgrade, that the triggers exist and that every row's index entry sits at its rowid).

PostgreSQL: GIN indexes over to_tsvector('english', ...) of messages.content and
conversations.title; queries use the same expressions, so nothing needs to be kept in step.
"""

from __future__ import annotations

from typing import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TOKENIZE = "tokenize='porter unicode61 remove_diacritics 2'"

SQLITE_FTS = [
    f"CREATE VIRTUAL TABLE messages_fts USING fts5(content, message_id UNINDEXED, {TOKENIZE})",
    "CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN "
    "INSERT OR REPLACE INTO messages_fts(rowid, content, message_id) VALUES (new.rowid, new.content, new.id); END",
    "CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN "
    "DELETE FROM messages_fts WHERE rowid = old.rowid AND message_id = old.id; END",
    "CREATE TRIGGER messages_fts_au AFTER UPDATE OF content ON messages BEGIN "
    "UPDATE messages_fts SET content = new.content WHERE rowid = old.rowid AND message_id = old.id; END",
    "INSERT INTO messages_fts(rowid, content, message_id) SELECT rowid, content, id FROM messages",
    f"CREATE VIRTUAL TABLE conversations_fts USING fts5(title, conversation_id UNINDEXED, {TOKENIZE})",
    "CREATE TRIGGER conversations_fts_ai AFTER INSERT ON conversations BEGIN "
    "INSERT OR REPLACE INTO conversations_fts(rowid, title, conversation_id) "
    "VALUES (new.rowid, new.title, new.id); END",
    "CREATE TRIGGER conversations_fts_ad AFTER DELETE ON conversations BEGIN "
    "DELETE FROM conversations_fts WHERE rowid = old.rowid AND conversation_id = old.id; END",
    "CREATE TRIGGER conversations_fts_au AFTER UPDATE OF title ON conversations BEGIN "
    "UPDATE conversations_fts SET title = new.title WHERE rowid = old.rowid AND conversation_id = old.id; END",
    "INSERT INTO conversations_fts(rowid, title, conversation_id) SELECT rowid, title, id FROM conversations",
]
SQLITE_TRIGGERS = ("messages_fts_ai", "messages_fts_ad", "messages_fts_au",
                   "conversations_fts_ai", "conversations_fts_ad", "conversations_fts_au")
POSTGRESQL_FTS = [
    "CREATE INDEX ix_messages_content_tsv ON messages USING GIN (to_tsvector('english', content))",
    "CREATE INDEX ix_conversations_title_tsv ON conversations USING GIN (to_tsvector('english', title))",
]


def upgrade() -> None:
    dialect = op.get_context().dialect.name
    statements = SQLITE_FTS if dialect == "sqlite" else POSTGRESQL_FTS if dialect == "postgresql" else []
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        for trigger in SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        op.execute("DROP TABLE IF EXISTS messages_fts")
        op.execute("DROP TABLE IF EXISTS conversations_fts")
    elif dialect == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_messages_content_tsv")
        op.execute("DROP INDEX IF EXISTS ix_conversations_title_tsv")
