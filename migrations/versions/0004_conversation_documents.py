"""Documents in the chat: a per-conversation switch and the citations stored with a reply.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29

conversations.use_documents: existing conversations keep chatting without documents (false).
messages.sources: JSON list of citation dicts (backend.rag.sources.citation), NULL for turns that
did not search the documents, which is every turn stored before this revision.
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN: SQLite accepts NOT NULL with a constant default in place.
    op.add_column(
        "conversations",
        sa.Column("use_documents", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column("messages", sa.Column("sources", sa.Text(), nullable=True))


def downgrade() -> None:
    # batch mode: SQLite before 3.35 cannot drop a column in place.
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("sources")
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("use_documents")
