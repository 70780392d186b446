"""Rows of agent runs (issue 15, migration 0011): a run, its steps, its tool calls.

Kept beside the agent's code (same declarative Base and naming convention as backend.models).
Timestamps are UTC; durations in milliseconds. JSON columns are text (SQLite and PostgreSQL).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from backend.models import ID_LENGTH, Base, UtcDateTime, new_id, utcnow

RUN_STATUSES = ("running", "done", "stopped", "budget", "interrupted", "error")
STEP_KINDS = ("model", "tool")
STEP_STATUSES = ("running", "done", "stopped", "interrupted", "error")
CALL_STATUSES = ("running", "ok", "refused", "invalid", "error")
IDEMPOTENCY_KEY_CHARS = 128


class AgentRun(Base):
    """One chat turn run as an agent loop. message_id: the assistant reply it writes.
    status: running | done | stopped | budget | interrupted | error. ending: why it ended, for
    people (a budget's limit, a stop, an error). budget_used: JSON {steps, tool_calls, tokens,
    wall_s}. plan: JSON list of the tool names the "planned" policy chose for the turn (stored
    on the first attempt, reused by a retry so its steps keep their indexes; NULL otherwise;
    migration 0013)."""

    __tablename__ = "agent_runs"
    __table_args__ = (CheckConstraint(f"status IN {RUN_STATUSES!r}", name="status"),
                      Index("ix_agent_runs_message_id", "message_id"),
                      Index("ix_agent_runs_status", "status"))

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True, default=new_id)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    message_id: Mapped[str | None] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16))
    ending: Mapped[str | None] = mapped_column(Text)
    budget_used: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    duration_ms: Mapped[float | None] = mapped_column(Float)
    plan: Mapped[str | None] = mapped_column(Text)


class AgentStep(Base):
    """One step of a run: a model call (text: what the model wrote) or the tool step that ran
    its calls (text: the results' summaries). index: 0, 1, 2, ... in the run."""

    __tablename__ = "agent_steps"
    __table_args__ = (UniqueConstraint("run_id", "index"),
                      CheckConstraint(f"kind IN {STEP_KINDS!r}", name="kind"),
                      CheckConstraint(f"status IN {STEP_STATUSES!r}", name="status"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("agent_runs.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(Text, default="")
    tokens: Mapped[int | None] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    duration_ms: Mapped[float | None] = mapped_column(Float)


class AgentToolCall(Base):
    """One tool call of a step. idempotency_key: "{run_id}:{step_index}:{call_index}", unique:
    a retried step finds the stored result instead of running the tool again. arguments: the
    JSON text the model wrote. result: JSON {content, summary, sources, data}. status: running
    (executing, or cut by a crash while executing) | ok | refused | invalid | error."""

    __tablename__ = "agent_tool_calls"
    __table_args__ = (UniqueConstraint("idempotency_key"),
                      CheckConstraint(f"status IN {CALL_STATUSES!r}", name="status"),
                      Index("ix_agent_tool_calls_run_id", "run_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("agent_runs.id", ondelete="CASCADE"))
    step_index: Mapped[int] = mapped_column(Integer)
    call_index: Mapped[int] = mapped_column(Integer)
    idempotency_key: Mapped[str] = mapped_column(String(IDEMPOTENCY_KEY_CHARS))
    tool: Mapped[str] = mapped_column(String(64))
    arguments: Mapped[str] = mapped_column(Text)
    result: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    duration_ms: Mapped[float | None] = mapped_column(Float)
