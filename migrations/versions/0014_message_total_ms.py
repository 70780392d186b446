"""Assistant messages keep how long the reply took, shown under it ("total 1.23 s").

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02

`messages.total_ms`: milliseconds the reply took (the engine's arrival to finish; an agent run's
wall time, so an answer the program wrote has one too); NULL for user messages, replies that
ended without a final event and rows from before.

Downgrade on SQLite copies the table (batch mode), which drops its search triggers with the old
table and renumbers its rowids: messages_fts is made again from the rows, as 0006 made it
(written out here, not imported, so this migration stays what it was).
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_MESSAGES_FTS = [
    "DROP TRIGGER IF EXISTS messages_fts_ai",
    "DROP TRIGGER IF EXISTS messages_fts_ad",
    "DROP TRIGGER IF EXISTS messages_fts_au",
    "DROP TABLE IF EXISTS messages_fts",
    "CREATE VIRTUAL TABLE messages_fts USING fts5(content, message_id UNINDEXED, "
    "tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN "
    "INSERT OR REPLACE INTO messages_fts(rowid, content, message_id) VALUES (new.rowid, new.content, new.id); END",
    "CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN "
    "DELETE FROM messages_fts WHERE rowid = old.rowid AND message_id = old.id; END",
    "CREATE TRIGGER messages_fts_au AFTER UPDATE OF content ON messages BEGIN "
    "UPDATE messages_fts SET content = new.content WHERE rowid = old.rowid AND message_id = old.id; END",
    "INSERT INTO messages_fts(rowid, content, message_id) SELECT rowid, content, id FROM messages",
]


def upgrade() -> None:
    op.add_column("messages", sa.Column("total_ms", sa.Float(), nullable=True))


def downgrade() -> None:
    # batch mode: SQLite before 3.35 cannot drop a column in place.
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("total_ms")
    if op.get_context().dialect.name == "sqlite":
        for statement in SQLITE_MESSAGES_FTS:
            op.execute(statement)
