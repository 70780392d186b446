"""Roles and account status, API keys, runtime settings, usage records.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

Existing databases: every user stays active; the earliest-created user becomes the admin (the
first account created is the admin). Column types are spelled out (frozen history, see 0001).
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(length=32)


def upgrade() -> None:
    # batch mode: SQLite cannot add a CHECK constraint to an existing table in place.
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("role", sa.String(length=16), nullable=False, server_default="user"))
        batch.add_column(sa.Column("status", sa.String(length=16), nullable=False, server_default="active"))
        batch.create_check_constraint(op.f("ck_users_role"), "role IN ('admin', 'user')")
        batch.create_check_constraint(op.f("ck_users_status"), "status IN ('active', 'pending', 'disabled')")
    users = sa.table("users", sa.column("id", ID), sa.column("role", sa.String), sa.column("created_at", sa.DateTime))
    first = sa.select(users.c.id).order_by(users.c.created_at, users.c.id).limit(1).scalar_subquery()
    op.execute(users.update().where(users.c.id == first).values(role="admin"))

    op.create_table(
        "api_keys",
        sa.Column("id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_api_keys_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    op.create_index(op.f("ix_api_keys_user_id"), "api_keys", ["user_id"])

    op.create_table(
        "app_settings",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", ID, nullable=True),
        sa.ForeignKeyConstraint(["updated_by"], ["users.id"], name=op.f("fk_app_settings_updated_by_users"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_app_settings")),
    )

    op.create_table(
        "usage_records",
        sa.Column("id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_usage_records_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_usage_records")),
    )
    op.create_index("ix_usage_records_user_id_created_at", "usage_records", ["user_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_usage_records_user_id_created_at", table_name="usage_records")
    op.drop_table("usage_records")
    op.drop_table("app_settings")
    op.drop_index(op.f("ix_api_keys_user_id"), table_name="api_keys")
    op.drop_table("api_keys")
    with op.batch_alter_table("users") as batch:
        batch.drop_constraint(op.f("ck_users_status"), type_="check")
        batch.drop_constraint(op.f("ck_users_role"), type_="check")
        batch.drop_column("status")
        batch.drop_column("role")
