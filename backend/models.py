"""ORM models: users, log-in sessions, conversations and their messages.

One declarative `Base` whose MetaData carries a naming convention, so every constraint and index
has a stable name that Alembic migrations can refer to on SQLite and PostgreSQL alike.
Ids are uuid4 hex strings (32 characters); timestamps are timezone-aware UTC datetimes.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

ROLES = ("user", "assistant", "system")
USER_ROLES = ("admin", "user")
USER_STATUSES = ("active", "pending", "disabled")
MESSAGE_STATUSES = ("pending", "streaming", "complete", "interrupted", "error")
ID_LENGTH = 32
USERNAME_MAX = 32


def new_id() -> str:
    """A fresh uuid4 in hex (32 characters)."""
    return uuid.uuid4().hex


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class UtcDateTime(TypeDecorator[datetime]):
    """DateTime that always comes back timezone-aware in UTC.

    SQLite stores no offset and returns naive values; PostgreSQL keeps `timestamptz`. Storing
    UTC and re-attaching the zone on read makes both behave the same.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given; use an aware UTC datetime")
        return value.astimezone(timezone.utc)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class User(Base):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True, default=new_id)
    username: Mapped[str] = mapped_column(String(USERNAME_MAX))
    # Case-folded username: "Alice" and "alice" are one account.
    username_key: Mapped[str] = mapped_column(String(USERNAME_MAX), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # role: admin | user. The first account created is the admin.
    role: Mapped[str] = mapped_column(String(16), default="user", server_default="user")
    # status: active | pending (sign-up awaiting approval) | disabled (by an admin).
    # Only active users have working sessions and API keys.
    status: Mapped[str] = mapped_column(String(16), default="active", server_default="active")
    # theme: system (follow prefers-color-scheme) | light | dark (migration 0005).
    theme: Mapped[str] = mapped_column(String(8), default="system", server_default="system")

    __table_args__ = (
        CheckConstraint(f"role IN {USER_ROLES!r}", name="role"),
        CheckConstraint(f"status IN {USER_STATUSES!r}", name="status"),
    )


class AuthSession(Base):
    """A log-in session. Only the SHA-256 of the cookie token is stored."""

    __tablename__ = "auth_sessions"

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)


class Conversation(Base):
    __tablename__ = "conversations"
    __table_args__ = (Index("ix_conversations_user_id_updated_at", "user_id", "updated_at"),)

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # Retrieve from the owner's documents on every turn (issue 6; migration 0004).
    use_documents: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # A turn is an agent run with tools (issue 15; migration 0011): the user's ⚙ setting.
    use_tools: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Migration 0005. current_message_id: the leaf of the active branch (the newest message the
    # page shows); the prompt is the path from the root to it. Not a foreign key (messages
    # already point here), checked by the code: NULL or a message of this conversation.
    current_message_id: Mapped[str | None] = mapped_column(String(ID_LENGTH))
    pinned: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Per-conversation settings; NULL follows the admin's defaults (within his limits).
    system_prompt: Mapped[str | None] = mapped_column(Text)
    temperature: Mapped[float | None] = mapped_column(Float)
    max_tokens: Mapped[int | None] = mapped_column(Integer)
    # The budget of its agent runs (migration 0012; backend.agent.access.budget_of): steps, tool
    # calls, tokens, seconds; NULL: the admin's default; each capped by the admin's maximum.
    agent_steps: Mapped[int | None] = mapped_column(Integer)
    agent_tool_calls: Mapped[int | None] = mapped_column(Integer)
    agent_tokens: Mapped[int | None] = mapped_column(BigInteger)
    agent_wall_s: Mapped[int | None] = mapped_column(Integer)


class Message(Base):
    """One chat message.

    Messages form a tree (migration 0005): parent_id is the message before this one on its
    branch: an assistant message's parent is the user message it answers, a user message's
    parent the reply it follows (NULL for the first message). Siblings (same parent) are the
    alternatives made by regenerate (assistant) and edit (user), in position order.
    position: 0, 1, 2, ... within the conversation in creation order (unique; orders siblings).
    client_msg_id: the client's id of the action that made the message (a send or an edit: the
        user message; a regenerate: the assistant message); unique per user, so a retried action
        is recognised. NULL otherwise (NULLs never collide in a unique constraint).
    status: pending | streaming | complete | interrupted | error.
    finish_reason: stop | length | abort | error (None while streaming).
    queue_ms, ttft_ms: milliseconds; decode_tokens_per_s: tokens per second.
    total_ms: milliseconds the reply took (GenerationDone.e2e_ms): the engine's arrival to finish,
        or an agent run's wall time; a continued reply's is its last part's, as queue_ms's. NULL
        for user messages, replies that ended without a final event and rows from before (0014).
    """

    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("user_id", "client_msg_id"),
        UniqueConstraint("conversation_id", "position"),
        CheckConstraint(f"role IN {ROLES!r}", name="role"),
        CheckConstraint(f"status IN {MESSAGE_STATUSES!r}", name="status"),
    )

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True, default=new_id)
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE")
    )
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text, default="")
    html: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(16), index=True)
    finish_reason: Mapped[str | None] = mapped_column(String(16))
    client_msg_id: Mapped[str | None] = mapped_column(String(64))
    parent_id: Mapped[str | None] = mapped_column(
        ForeignKey("messages.id", ondelete="SET NULL"), index=True
    )
    prompt_tokens: Mapped[int | None] = mapped_column(Integer)
    completion_tokens: Mapped[int | None] = mapped_column(Integer)
    queue_ms: Mapped[float | None] = mapped_column(Float)
    ttft_ms: Mapped[float | None] = mapped_column(Float)
    decode_tokens_per_s: Mapped[float | None] = mapped_column(Float)
    total_ms: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # An assistant reply's citations: JSON list of backend.rag.sources.citation() dicts, numbered
    # as in the prompt; NULL when the turn did not search the documents (migration 0004).
    sources: Mapped[str | None] = mapped_column(Text)
    # The OpenTelemetry trace id (32 hex digits) of the turn that made or last continued an
    # assistant reply (backend/tracing.py; migration 0009); NULL for user messages and older rows.
    trace_id: Mapped[str | None] = mapped_column(String(32))


class ApiKey(Base):
    """A named API key of one user. Only the SHA-256 of the secret is stored; `prefix` (the
    secret's first characters) lets the owner tell keys apart. revoked_at set: no longer works."""

    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    prefix: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime())


class AppSetting(Base):
    """One runtime setting the admin changed: key -> JSON-encoded value. Settings without a row
    keep their defaults (from the environment)."""

    __tablename__ = "app_settings"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_by: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))


class UsageRecord(Base):
    """Tokens one finished generation used (chat turn or API call), for per-user daily limits
    and accounting. source: "chat" | "api"."""

    __tablename__ = "usage_records"
    __table_args__ = (Index("ix_usage_records_user_id_created_at", "user_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(16))
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


# --- Documents for retrieval-augmented answers (issue 6) -------------------------------------

DOCUMENT_STATUSES = ("processing", "ready", "failed", "superseded")
DOCUMENT_KINDS = ("txt", "md", "html", "pdf")


class Document(Base):
    """One uploaded version of a user's document.

    (user_id, name, version) is unique; re-uploading a name makes version + 1. status:
    processing (being chunked and embedded, `progress` 0..1) | ready (its chunks are retrievable)
    | failed (`error` says why; it has no chunks) | superseded (a newer version of the name became
    ready; its chunks were removed). Only `ready` documents are ever retrieved. shared: set by an
    admin, retrievable by every user. embedding_model: the embedder that made its vectors.
    size_bytes: the uploaded file's size; sha256: hex digest of its bytes.
    """

    __tablename__ = "documents"
    __table_args__ = (
        UniqueConstraint("user_id", "name", "version"),
        CheckConstraint(f"status IN {DOCUMENT_STATUSES!r}", name="status"),
        CheckConstraint(f"kind IN {DOCUMENT_KINDS!r}", name="kind"),
        Index("ix_documents_status_user_id", "status", "user_id"),
    )

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    version: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(8))
    size_bytes: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="processing")
    error: Mapped[str | None] = mapped_column(Text)
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    num_chunks: Mapped[int] = mapped_column(Integer, default=0)
    shared: Mapped[bool] = mapped_column(Boolean, default=False)
    embedding_model: Mapped[str] = mapped_column(String(128), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


# document_chunks.id is an INTEGER: 32-bit on PostgreSQL (a larger value in a query is an
# error there, not "no rows"), so ids past this are not found without asking the database.
MAX_CHUNK_ID = 2**31 - 1


class DocumentChunk(Base):
    """One retrievable piece of a document version.

    id: an integer (the full-text index's rowid). position: 0, 1, ... within the document.
    heading_path: the Markdown/HTML headings above the chunk, joined with " > " ("" if none).
    page: 1-based PDF page where the chunk starts (None for other kinds). num_tokens: its length
    by the chunker's tokenizer. embedding: float32 little-endian, L2-normalised, the embedder's
    dimension (bytes = 4 * dim). A full-text index (SQLite FTS5 table `document_chunks_fts`,
    PostgreSQL GIN over to_tsvector) is kept in step with `text` by migration 0003.
    """

    __tablename__ = "document_chunks"
    __table_args__ = (UniqueConstraint("document_id", "position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    heading_path: Mapped[str] = mapped_column(Text, default="")
    page: Mapped[int | None] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    num_tokens: Mapped[int] = mapped_column(Integer)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)


class DocumentIndexState(Base):
    """One row (id 1): `generation` grows in every transaction that changes which chunks are
    retrievable, so in-memory vector caches (in any process) know when to reload."""

    __tablename__ = "document_index_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    generation: Mapped[int] = mapped_column(Integer, default=0)


class IngestionJob(Base):
    """A document version waiting to be indexed, or being indexed, by one process (a lease).

    Written with its `processing` Document in one transaction (the uploaded bytes in `data`, so
    any process can index it) and deleted in the transaction that makes the version ready,
    failed or superseded. The holder: `owner` (Settings.instance_name, for people) and `claim`
    (a random token per process run, for the code: only the claim's holder may renew the lease
    or publish the result). `lease_expires_at`: renewed by the holder's heartbeat; once past,
    any process may claim the job (SELECT ... FOR UPDATE SKIP LOCKED on PostgreSQL). `attempts`:
    indexing runs started; a job whose lease expires after RagSettings.ingest_attempts of them
    fails the document instead of being claimed again (backend/rag/jobs.py).
    """

    __tablename__ = "ingestion_jobs"
    __table_args__ = (Index("ix_ingestion_jobs_lease_expires_at", "lease_expires_at"),)

    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    owner: Mapped[str] = mapped_column(String(64))
    claim: Mapped[str] = mapped_column(String(32))
    lease_expires_at: Mapped[datetime] = mapped_column(UtcDateTime())
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)



# --- Notes the assistant saves for a user (issue 15, migration 0010) --------------------------

NOTE_TITLE_MAX = 200
NOTE_TEXT_MAX = 5000
IDEMPOTENCY_KEY_MAX = 128


class Note(Base):
    """A note in one user's notes: written by the `save_note` agent tool (backend/agent/tools).

    idempotency_key: unique; the tool call that wrote it ("{run_id}:{step}:{call}"), so a
    retried call finds the stored note instead of writing a second one. conversation_id: the
    conversation whose run saved it (NULL once that conversation is deleted).
    """

    __tablename__ = "notes"
    __table_args__ = (Index("ix_notes_user_id_created_at", "user_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(NOTE_TITLE_MAX))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    idempotency_key: Mapped[str] = mapped_column(String(IDEMPOTENCY_KEY_MAX), unique=True)
    conversation_id: Mapped[str | None] = mapped_column(
        ForeignKey("conversations.id", ondelete="SET NULL")
    )

# Tables the ORM does not declare: SQLite's FTS5 indexes and their shadow tables, over chunks
# (migration 0003) and over message text and conversation titles (migration 0006).
# On PostgreSQL the same searches use GIN expression indexes over to_tsvector(...) (migrations
# 0003, 0006, 0007, 0008; their expressions are the queries', checked by those migrations' tests).
# Autogenerate comparisons skip both (`include_name=include_in_autogenerate`): `alembic check`
# and tests/backend/test_db_migrations.py would otherwise want them dropped.
FTS_TABLE_PREFIXES = ("document_chunks_fts", "messages_fts", "conversations_fts")
PG_SEARCH_INDEXES = frozenset({"ix_document_chunks_tsv", "ix_messages_content_tsv", "ix_conversations_title_tsv"})


def include_in_autogenerate(name: str | None, type_: str, parent_names: object) -> bool:
    """Alembic `include_name` hook: False for SQLite's full-text index tables and PostgreSQL's
    full-text GIN indexes, True otherwise."""
    if name is None:
        return True
    if type_ == "table":
        return not name.startswith(FTS_TABLE_PREFIXES)
    return not (type_ == "index" and name in PG_SEARCH_INDEXES)


# The agent's run records (issue 15, migration 0011) live beside its code, on this metadata.
from backend.agent import models as _agent_models  # noqa: E402,F401
