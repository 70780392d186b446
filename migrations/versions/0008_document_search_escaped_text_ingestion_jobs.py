"""Document chunks searched over escaped text on PostgreSQL; ingestion jobs with leases.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

1. PostgreSQL's default text-search parser reads tag-like text as tags (see 0007):
   to_tsvector('english', 'hello <script> walrus') indexes only "hello", so a document chunk
   holding HTML or code was partly unsearchable. The GIN index `ix_document_chunks_tsv` is
   rebuilt over to_tsvector('english', <text with & < > escaped as entities>), the expression
   the keyword search uses (backend.rag.retrieval.pg_bm25_sql; a test checks they agree). The
   expression is written out here, not imported, so this migration stays what it was.
   SQLite: nothing (FTS5's unicode61 tokenizer has no tags).
2. `ingestion_jobs` (backend.models.IngestionJob): one row per document version waiting to be
   indexed or being indexed, holding the uploaded bytes and the lease of the process indexing
   it. Versions left `processing` by an earlier release have no bytes stored anywhere: they are
   marked failed here (what that release's start-up did to them).

Downgrade drops the table and restores 0003's index.
"""

from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(length=32)
INDEX = "ix_document_chunks_tsv"
REASON_INTERRUPTED = "the server stopped before this document was indexed; upload it again"


def escaped_tsvector(column: str) -> str:
    return f"to_tsvector('english', replace(replace(replace({column}, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'))"


def _rebuild(expression: str) -> None:
    if op.get_context().dialect.name != "postgresql":
        return
    op.execute(f"DROP INDEX IF EXISTS {INDEX}")
    op.execute(f"CREATE INDEX {INDEX} ON document_chunks USING GIN ({expression})")


def upgrade() -> None:
    _rebuild(escaped_tsvector("text"))
    op.create_table(
        "ingestion_jobs",
        sa.Column("document_id", ID, nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("claim", sa.String(length=32), nullable=False),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["document_id"], ["documents.id"], name=op.f("fk_ingestion_jobs_document_id_documents"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("document_id", name=op.f("pk_ingestion_jobs")),
    )
    op.create_index("ix_ingestion_jobs_lease_expires_at", "ingestion_jobs", ["lease_expires_at"])
    op.execute(f"UPDATE documents SET status = 'failed', error = '{REASON_INTERRUPTED}' WHERE status = 'processing'")


def downgrade() -> None:
    op.drop_index("ix_ingestion_jobs_lease_expires_at", table_name="ingestion_jobs")
    op.drop_table("ingestion_jobs")
    _rebuild("to_tsvector('english', text)")
