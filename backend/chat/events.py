"""What the chat service tells its callers: the events of one reply, and of a user's account.

Reply events, in order: `Ack` (to the sender), then `Delta`..., then `Done` or `ChatFailed`. A
viewer that attaches to a reply already streaming first gets one `Delta` with ``reset=True``: the
text it missed since the sequence number it named, and the whole rendering so far.

Account events go to every open page of the user: `TurnStarted` (a message was sent, maybe from
another tab) and `ConversationChanged` (created, renamed, deleted). web/ws_frames.py turns each
into its wire frame.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from backend.chat.turns import Turn
from backend.conversations import ConversationChanged, ended_by_budget, load_sources
from backend.generator import GenerationDone
from backend.models import Message


@dataclass(frozen=True)
class Ack:
    """The turn is stored; the reply streams into `assistant_message_id`.

    action: send | edit | regenerate | continue. user_message_id: the question the reply answers
    (new for send and edit). parent_id: the message the turn's first new message follows on its
    branch (send, edit: the new user message's parent; regenerate, continue: the question)."""

    client_msg_id: str
    conversation_id: str
    user_message_id: str
    assistant_message_id: str
    duplicate: bool
    title: str
    action: str = "send"
    parent_id: str | None = None


@dataclass(frozen=True)
class Delta:
    """New reply text. seq: 1, 2, ... per reply, the number of the last delta this one holds.

    Applied in this order (backend.markdown_stream.RenderUpdate): code_html: append it inside the
    <code> of the committed part's last element (a code block still open); committed_html:
    append it; tail_html: replace the tail with it. reset: a catch-up after an attach: `text`
    joins the deltas after the viewer's sequence number up to `seq`, committed_html is the
    whole committed rendering (replace, not append), and code_html is ""."""

    message_id: str
    seq: int
    text: str
    committed_html: str
    tail_html: str
    reset: bool = False
    code_html: str = ""


@dataclass(frozen=True)
class Done:
    """The reply ended. status: complete | interrupted | error. html: the whole reply, rendered.

    usage: {"prompt_tokens", "completion_tokens"} (None when unknown, e.g. after an abort).
    timings: {"queue_ms", "ttft_ms", "decode_tokens_per_s", "total_ms"} in ms, ms, tokens/s and ms
    (or None); total_ms: how long the reply took (Message.total_ms, GenerationDone.e2e_ms).
    sources: the citations of the documents the prompt quoted (backend.rag.sources.citation
    dicts); empty when the turn used no documents. seq: the reply's last delta number.
    trace_id: the trace of the turn that made it (backend/tracing.py; the admin's waterfall).
    """

    message_id: str
    finish_reason: str | None
    status: str
    html: str
    usage: dict[str, Any]
    timings: dict[str, Any]
    error: str | None
    sources: list[dict[str, Any]] = field(default_factory=list)
    seq: int = 0
    content: str = ""  # the reply's Markdown source (what Copy copies)
    trace_id: str | None = None

    @property
    def budget_ended(self) -> bool:
        """Whether its agent run's budget ended it (backend.conversations.ended_by_budget)."""
        return ended_by_budget(self.finish_reason, self.status, self.error)


@dataclass(frozen=True)
class ChatFailed:
    """The turn failed. code: a DomainError or GenerationError code ("invalid_input",
    "not_found", "busy", "prompt_too_long", "invalid_params", "unavailable", "generation_error",
    "rate_limited", "overloaded", "queue_timeout"), or "in_progress" for a reply streaming in
    another server process. retry_after_s: whole seconds to wait (rate_limited, overloaded)."""

    code: str
    message: str
    client_msg_id: str | None
    message_id: str | None
    retry_after_s: int | None = None


@dataclass(frozen=True)
class TurnStarted:
    """A turn was stored and its reply started (from any of the user's pages); fields as Ack."""

    conversation_id: str
    title: str
    client_msg_id: str
    user_message_id: str
    user_text: str
    assistant_message_id: str
    new_conversation: bool
    action: str = "send"
    parent_id: str | None = None


ChatEvent = Ack | Delta | Done | ChatFailed
AccountEvent = TurnStarted | ConversationChanged


def ack_of(turn: Turn) -> Ack:
    """The Ack of a stored turn."""
    return Ack(turn.client_msg_id, turn.conversation_id, turn.user_message_id, turn.assistant_message_id,
               turn.duplicate, turn.title, turn.action, turn.parent_id)


# A reply stored with one of these has not ended (a live reply in some process writes it).
UNFINISHED_STATUSES = ("streaming", "pending")


def stored_outcome(row: Message, client_msg_id: str | None = None) -> Done | ChatFailed:
    """The Done of a reply as stored (finished), or ChatFailed("in_progress") for a row still
    streaming that no live reply of this process holds."""
    if row.status in UNFINISHED_STATUSES:
        return ChatFailed("in_progress", "the reply to this message is still being generated", client_msg_id, row.id)
    return Done(
        message_id=row.id,
        finish_reason=row.finish_reason,
        status=row.status,
        html=row.html,
        usage={"prompt_tokens": row.prompt_tokens, "completion_tokens": row.completion_tokens},
        timings={"queue_ms": row.queue_ms, "ttft_ms": row.ttft_ms, "decode_tokens_per_s": row.decode_tokens_per_s,
                 "total_ms": row.total_ms},
        error=row.error,
        sources=load_sources(row.sources),
        content=row.content,
        trace_id=row.trace_id,
    )


def done_of(message_id: str, html: str, finish_reason: str, status: str, error: str | None,
            final: GenerationDone | None, sources: list[dict[str, Any]], seq: int, content: str = "",
            trace_id: str | None = None) -> Done:
    """The Done of a reply that just ended; usage is None without the engine's final event."""
    timing = final or GenerationDone(finish_reason)
    return Done(
        message_id=message_id,
        finish_reason=finish_reason,
        status=status,
        html=html,
        usage={"prompt_tokens": final.prompt_tokens if final else None,
               "completion_tokens": final.completion_tokens if final else None},
        timings={"queue_ms": timing.queue_ms, "ttft_ms": timing.ttft_ms,
                 "decode_tokens_per_s": timing.decode_tokens_per_s, "total_ms": timing.e2e_ms},
        error=error,
        sources=list(sources),
        seq=seq,
        content=content,
        trace_id=trace_id,
    )


def final_to_dict(event: Done | ChatFailed) -> dict[str, Any]:
    """A reply's final event as JSON-ready fields, tagged by "type" (the cross-process relay,
    backend/cluster/relay.py)."""
    return {"type": "done" if isinstance(event, Done) else "failed", **asdict(event)}


def final_from_dict(data: dict[str, Any]) -> Done | ChatFailed:
    """The inverse of :func:`final_to_dict`. Raises ValueError on anything else."""
    fields = dict(data)
    kind = fields.pop("type", None)
    try:
        if kind == "done":
            return Done(**fields)
        if kind == "failed":
            return ChatFailed(**fields)
    except TypeError as exc:
        raise ValueError(f"not a final event: {exc}") from None
    raise ValueError(f"not a final event: type {kind!r}")


def account_event_to_dict(event: AccountEvent) -> dict[str, Any]:
    """An account event as JSON-ready fields, tagged by "type" (sent to the other processes,
    backend/cluster/account_events.py)."""
    return {"type": "turn" if isinstance(event, TurnStarted) else "conversation", **asdict(event)}


def account_event_from_dict(data: dict[str, Any]) -> AccountEvent:
    """The inverse of :func:`account_event_to_dict`. Raises ValueError on anything else."""
    fields = dict(data)
    kind = fields.pop("type", None)
    try:
        if kind == "turn":
            return TurnStarted(**fields)
        if kind == "conversation":
            return ConversationChanged(**fields)
    except TypeError as exc:
        raise ValueError(f"not an account event: {exc}") from None
    raise ValueError(f"not an account event: type {kind!r}")
