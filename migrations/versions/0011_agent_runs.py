"""Agent runs in the chat: runs, their steps and their tool calls (issue 15).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02

`agent_runs`: one per chat turn run as an agent loop (status running | done | stopped | budget |
interrupted | error; budget_used JSON). `agent_steps`: model and tool steps by index.
`agent_tool_calls`: one per call; `idempotency_key` ("{run_id}:{step}:{call}") is unique, so a
retried step finds the stored result instead of running a side effect twice.
`conversations.use_tools`: the user's per-conversation toggle. Models: backend/agent/models.py.
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

from migrations import sqlite_search

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(length=32)
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("conversations", sa.Column("use_tools", sa.Boolean(), server_default=sa.false(), nullable=False))
    op.create_table(
        "agent_runs",
        sa.Column("id", ID, nullable=False),
        sa.Column("conversation_id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("message_id", ID, nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("ending", sa.Text(), nullable=True),
        sa.Column("budget_used", sa.Text(), nullable=True),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("ended_at", TS, nullable=True),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.CheckConstraint("status IN ('running', 'done', 'stopped', 'budget', 'interrupted', 'error')",
                           name=op.f("ck_agent_runs_status")),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"],
                                name=op.f("fk_agent_runs_conversation_id_conversations"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_agent_runs_user_id_users"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["message_id"], ["messages.id"], name=op.f("fk_agent_runs_message_id_messages"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_runs")),
    )
    op.create_index("ix_agent_runs_message_id", "agent_runs", ["message_id"])
    op.create_index("ix_agent_runs_status", "agent_runs", ["status"])
    op.create_table(
        "agent_steps",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", ID, nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=True),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.CheckConstraint("kind IN ('model', 'tool')", name=op.f("ck_agent_steps_kind")),
        sa.CheckConstraint("status IN ('running', 'done', 'stopped', 'interrupted', 'error')",
                           name=op.f("ck_agent_steps_status")),
        sa.ForeignKeyConstraint(["run_id"], ["agent_runs.id"], name=op.f("fk_agent_steps_run_id_agent_runs"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_steps")),
        sa.UniqueConstraint("run_id", "index", name=op.f("uq_agent_steps_run_id_index")),
    )
    op.create_table(
        "agent_tool_calls",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", ID, nullable=False),
        sa.Column("step_index", sa.Integer(), nullable=False),
        sa.Column("call_index", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("tool", sa.String(length=64), nullable=False),
        sa.Column("arguments", sa.Text(), nullable=False),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.CheckConstraint("status IN ('running', 'ok', 'refused', 'invalid', 'error')",
                           name=op.f("ck_agent_tool_calls_status")),
        sa.ForeignKeyConstraint(["run_id"], ["agent_runs.id"], name=op.f("fk_agent_tool_calls_run_id_agent_runs"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_tool_calls")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_agent_tool_calls_idempotency_key")),
    )
    op.create_index("ix_agent_tool_calls_run_id", "agent_tool_calls", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_agent_tool_calls_run_id", table_name="agent_tool_calls")
    op.drop_table("agent_tool_calls")
    op.drop_table("agent_steps")
    op.drop_index("ix_agent_runs_status", table_name="agent_runs")
    op.drop_index("ix_agent_runs_message_id", table_name="agent_runs")
    op.drop_table("agent_runs")
    with op.batch_alter_table("conversations") as batch:  # SQLite before 3.35 cannot drop in place
        batch.drop_column("use_tools")
    sqlite_search.remake("conversations")  # the copy dropped its search triggers
