"""PostgreSQL search indexes over the text with & < > escaped.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

PostgreSQL's default text-search parser reads tag-like text as tags: to_tsvector('english',
'a <style> b c') is empty and 'hello <script> walrus' indexes only "hello", so with 0006's
indexes over the raw text, messages holding HTML or code were partly unsearchable. The GIN
indexes are rebuilt over to_tsvector('english', <text with & < > escaped as entities>); the
search queries (backend.conversation_search.pg_tsvector) use this exact expression, or the
planner could not use the index. The expression is written out here, not imported, so this
migration stays what it was if the application's code changes (a test checks they agree).

SQLite: nothing (FTS5's unicode61 tokenizer has no tags). Downgrade restores 0006's indexes.
"""

from __future__ import annotations

from typing import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def escaped_tsvector(column: str) -> str:
    return f"to_tsvector('english', replace(replace(replace({column}, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'))"


INDEXES = (("ix_messages_content_tsv", "messages", "content"),
           ("ix_conversations_title_tsv", "conversations", "title"))


def _rebuild(expression) -> None:
    if op.get_context().dialect.name != "postgresql":
        return
    for name, table, column in INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
        op.execute(f"CREATE INDEX {name} ON {table} USING GIN ({expression(column)})")


def upgrade() -> None:
    _rebuild(escaped_tsvector)


def downgrade() -> None:
    _rebuild(lambda column: f"to_tsvector('english', {column})")
