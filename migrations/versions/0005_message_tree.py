"""Messages form a tree; conversations get an active branch, a pin and their own settings; users a theme.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

Until now a conversation was a list ordered by position, and only an assistant message had a
parent (the user message it answers). A user message's parent becomes the message before it in
that list, so every existing conversation is one branch and keeps every message;
conversations.current_message_id (the active branch's leaf) becomes its last message.
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("conversations", sa.Column("current_message_id", sa.String(32), nullable=True))
    op.add_column("conversations", sa.Column("pinned", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("conversations", sa.Column("system_prompt", sa.Text(), nullable=True))
    op.add_column("conversations", sa.Column("temperature", sa.Float(), nullable=True))
    op.add_column("conversations", sa.Column("max_tokens", sa.Integer(), nullable=True))
    op.add_column("users", sa.Column("theme", sa.String(8), nullable=False, server_default="system"))
    # Plain SQL with correlated subqueries: runs on SQLite and PostgreSQL, online and offline.
    op.execute(
        "UPDATE messages SET parent_id = (SELECT m.id FROM messages AS m"
        " WHERE m.conversation_id = messages.conversation_id AND m.position < messages.position"
        " ORDER BY m.position DESC LIMIT 1)"
        " WHERE role <> 'assistant' OR parent_id IS NULL"
    )
    op.execute(
        "UPDATE conversations SET current_message_id = (SELECT m.id FROM messages AS m"
        " WHERE m.conversation_id = conversations.id ORDER BY m.position DESC LIMIT 1)"
    )


def downgrade() -> None:
    op.execute("UPDATE messages SET parent_id = NULL WHERE role = 'user'")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("theme")
    with op.batch_alter_table("conversations") as batch:
        for column in ("max_tokens", "temperature", "system_prompt", "pinned", "current_message_id"):
            batch.drop_column(column)
