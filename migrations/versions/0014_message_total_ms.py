"""Assistant messages keep how long the reply took, shown under it ("total 1.23 s").

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02

`messages.total_ms`: milliseconds the reply took (the engine's arrival to finish; an agent run's
wall time, so an answer the program wrote has one too); NULL for user messages, replies that
ended without a final event and rows from before.

Downgrade on SQLite copies the table (batch mode), which drops its search triggers with the old
table and renumbers its rowids: messages_fts is made again from the rows, as 0006 made it
(migrations/sqlite_search.py).
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

from migrations import sqlite_search

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("total_ms", sa.Float(), nullable=True))


def downgrade() -> None:
    # batch mode: SQLite before 3.35 cannot drop a column in place.
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("total_ms")
    sqlite_search.remake("messages")
