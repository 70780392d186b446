"""Documents, their chunks with embeddings, and a full-text index over the chunks.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29

SQLite: an external-content FTS5 table `document_chunks_fts` (rowid = document_chunks.id,
porter stemming over unicode61) kept in step by triggers, so a chunk enters and leaves the
full-text index in the same transaction as its row (ON DELETE CASCADE included: SQLite fires
delete triggers for cascaded rows). PostgreSQL: a GIN index over to_tsvector('english', text);
queries use the same expression, so the index serves them and nothing needs to be kept in step.
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(length=32)

SQLITE_FTS = [
    "CREATE VIRTUAL TABLE document_chunks_fts USING fts5("
    "text, content='document_chunks', content_rowid='id', "
    "tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER document_chunks_fts_ai AFTER INSERT ON document_chunks BEGIN "
    "INSERT INTO document_chunks_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER document_chunks_fts_ad AFTER DELETE ON document_chunks BEGIN "
    "INSERT INTO document_chunks_fts(document_chunks_fts, rowid, text) "
    "VALUES ('delete', old.id, old.text); END",
    "CREATE TRIGGER document_chunks_fts_au AFTER UPDATE OF text ON document_chunks BEGIN "
    "INSERT INTO document_chunks_fts(document_chunks_fts, rowid, text) "
    "VALUES ('delete', old.id, old.text); "
    "INSERT INTO document_chunks_fts(rowid, text) VALUES (new.id, new.text); END",
]
POSTGRESQL_FTS = (
    "CREATE INDEX ix_document_chunks_tsv ON document_chunks "
    "USING GIN (to_tsvector('english', text))"
)


def upgrade() -> None:
    op.create_table(
        "documents",
        sa.Column("id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("progress", sa.Float(), nullable=False),
        sa.Column("num_chunks", sa.Integer(), nullable=False),
        sa.Column("shared", sa.Boolean(), nullable=False),
        sa.Column("embedding_model", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("status IN ('processing', 'ready', 'failed', 'superseded')", name=op.f("ck_documents_status")),
        sa.CheckConstraint("kind IN ('txt', 'md', 'html', 'pdf')", name=op.f("ck_documents_kind")),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_documents_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_documents")),
        sa.UniqueConstraint("user_id", "name", "version", name=op.f("uq_documents_user_id_name_version")),
    )
    op.create_index("ix_documents_status_user_id", "documents", ["status", "user_id"])

    op.create_table(
        "document_chunks",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("document_id", ID, nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("heading_path", sa.Text(), nullable=False),
        sa.Column("page", sa.Integer(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("num_tokens", sa.Integer(), nullable=False),
        sa.Column("embedding", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["document_id"], ["documents.id"], name=op.f("fk_document_chunks_document_id_documents"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_document_chunks")),
        sa.UniqueConstraint("document_id", "position", name=op.f("uq_document_chunks_document_id_position")),
    )

    op.create_table(
        "document_index_state",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_document_index_state")),
    )
    op.execute("INSERT INTO document_index_state (id, generation) VALUES (1, 0)")

    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        for statement in SQLITE_FTS:
            op.execute(statement)
    elif dialect == "postgresql":
        op.execute(POSTGRESQL_FTS)


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        # Dropping the content table drops its triggers; the FTS5 table takes its shadow tables.
        op.execute("DROP TABLE IF EXISTS document_chunks_fts")
    elif dialect == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_document_chunks_tsv")
    op.drop_table("document_index_state")
    op.drop_table("document_chunks")
    op.drop_index("ix_documents_status_user_id", table_name="documents")
    op.drop_table("documents")
