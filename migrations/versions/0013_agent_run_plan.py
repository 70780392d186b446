"""The plan of an agent run (issue 15, the "planned" policy).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02

`agent_runs.plan`: JSON list of the tool names the server chose for the turn
(backend.agent.routing), stored on the first attempt so that a retried run makes the same calls
at the same step indexes (their idempotency keys) even when the cues would now choose otherwise
(a document added, a search that fails). NULL for runs of the other policies and older runs.
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("agent_runs", sa.Column("plan", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("agent_runs") as batch:  # SQLite before 3.35 cannot drop in place
        batch.drop_column("plan")
