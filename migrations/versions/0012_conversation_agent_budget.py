"""A conversation's own agent run budget (issue 15).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02

`conversations.agent_steps`, `agent_tool_calls`, `agent_tokens` (BIGINT: the admin may allow up to
10^10), `agent_wall_s` (seconds): the ⚙ dialog's "Tool run limits"; NULL follows the admin's
default (runtime settings agent_default_*), each capped by the admin's maximum (agent_max_*) when
a run starts (backend.agent.access.budget_of). Existing conversations get NULL: the defaults.
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

from migrations import sqlite_search

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (("agent_steps", sa.Integer()), ("agent_tool_calls", sa.Integer()), ("agent_tokens", sa.BigInteger()),
           ("agent_wall_s", sa.Integer()))


def upgrade() -> None:
    for name, kind in COLUMNS:
        op.add_column("conversations", sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("conversations") as batch:  # SQLite before 3.35 cannot drop in place
        for name, _ in reversed(COLUMNS):
            batch.drop_column(name)
    sqlite_search.remake("conversations")  # the copy dropped its search triggers
