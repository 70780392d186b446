"""Assistant messages keep the trace id of the turn that made them (backend/tracing.py).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02

`messages.trace_id`: 32 hex digits, NULL for user messages and rows from before; the admin opens
the reply's waterfall (/admin/traces/{trace_id}) from its Info panel.
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

from migrations import sqlite_search

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("trace_id", sa.String(length=32), nullable=True))


def downgrade() -> None:
    # batch mode: SQLite before 3.35 cannot drop a column in place.
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("trace_id")
    sqlite_search.remake("messages")  # the copy dropped its search triggers
