"""Notes a user's agent runs save (the `save_note` tool, issue 15).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02

`notes`: one row per saved note. `idempotency_key` is unique: the tool call that wrote it
("{run_id}:{step_index}:{call_index}"), so a retried call cannot write a second note (the
insert's IntegrityError is caught and the stored note returned, on SQLite and PostgreSQL).
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(length=32)


def upgrade() -> None:
    op.create_table(
        "notes",
        sa.Column("id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("conversation_id", ID, nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_notes_user_id_users"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["conversation_id"], ["conversations.id"], name=op.f("fk_notes_conversation_id_conversations"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notes")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_notes_idempotency_key")),
    )
    op.create_index("ix_notes_user_id_created_at", "notes", ["user_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_notes_user_id_created_at", table_name="notes")
    op.drop_table("notes")
