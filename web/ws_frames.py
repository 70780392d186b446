"""The chat WebSocket's server frames, built field by field (docs/INTERFACES.md section 4).

Each builder names every field it sends, so a renamed backend field fails here (and in the
tests) instead of silently changing the wire format.
"""

from __future__ import annotations

from typing import Any

from backend.agent.events import AgentStepEvent
from backend.chat import Ack, ChatFailed, ConversationChanged, Delta, Done, TurnStarted
from web.errors import error_frame


def ack_frame(ack: Ack) -> dict[str, Any]:
    return {"type": "ack", "client_msg_id": ack.client_msg_id, "conversation_id": ack.conversation_id,
            "user_message_id": ack.user_message_id, "assistant_message_id": ack.assistant_message_id,
            "duplicate": ack.duplicate, "title": ack.title, "action": ack.action, "parent_id": ack.parent_id}


def delta_frame(delta: Delta) -> dict[str, Any]:
    """code_html goes inside the open code block, then committed_html is appended, then
    tail_html replaces the tail. reset: a catch-up after an attach (committed_html replaces
    instead of appending)."""
    frame = {"type": "delta", "message_id": delta.message_id, "seq": delta.seq, "text": delta.text,
             "code_html": delta.code_html, "committed_html": delta.committed_html,
             "tail_html": delta.tail_html}
    if delta.reset:
        frame["reset"] = True
    return frame


def done_frame(done: Done) -> dict[str, Any]:
    return {"type": "done", "message_id": done.message_id, "seq": done.seq, "finish_reason": done.finish_reason,
            "status": done.status, "html": done.html,
            "usage": {"prompt_tokens": done.usage.get("prompt_tokens"),
                      "completion_tokens": done.usage.get("completion_tokens")},
            "timings": {"queue_ms": done.timings.get("queue_ms"), "ttft_ms": done.timings.get("ttft_ms"),
                        "decode_tokens_per_s": done.timings.get("decode_tokens_per_s"),
                        "total_ms": done.timings.get("total_ms")},
            "error": done.error, "sources": list(done.sources), "content": done.content,
            "trace_id": done.trace_id, "budget_ended": done.budget_ended}


def failed_frame(failed: ChatFailed) -> dict[str, Any]:
    """An ``error`` frame, with ``retry_after_s`` (whole seconds) for a send refused by a limit
    (``rate_limited``) or a full queue (``overloaded``)."""
    frame = error_frame(failed.code, failed.message, client_msg_id=failed.client_msg_id,
                        message_id=failed.message_id)
    if failed.retry_after_s is not None:
        frame["retry_after_s"] = failed.retry_after_s
    return frame


def turn_frame(turn: TurnStarted) -> dict[str, Any]:
    """A message was sent from one of the user's pages; the others show it and attach."""
    return {"type": "turn", "conversation_id": turn.conversation_id, "title": turn.title,
            "client_msg_id": turn.client_msg_id, "user_message_id": turn.user_message_id,
            "user_text": turn.user_text, "assistant_message_id": turn.assistant_message_id,
            "new_conversation": turn.new_conversation, "action": turn.action, "parent_id": turn.parent_id}


def conversation_frame(change: ConversationChanged) -> dict[str, Any]:
    return {"type": "conversation", "event": change.kind, "conversation_id": change.conversation_id,
            "title": change.title}


def agent_step_frame(step: AgentStepEvent) -> dict[str, Any]:
    """An agent run's step started or ended (docs/INTERFACES.md section 4): its index, kind
    (model | tool), status, text (a model step's output) and, for a tool step, its calls (tool,
    arguments as JSON text, status ok | refused | invalid | error | running, the one-line
    summary, the result's content). All text for the page to escape."""
    return {"type": "agent_step", "message_id": step.message_id, "run_id": step.run_id, "index": step.index,
            "kind": step.kind, "status": step.status, "text": step.text,
            "calls": [{"tool": c.tool, "arguments": c.arguments, "status": c.status, "summary": c.summary,
                       "content": c.content} for c in step.calls]}


def event_frame(event: object) -> dict[str, Any]:
    """Any chat or account event -> its frame. Raises TypeError for anything else."""
    if isinstance(event, Delta):
        return delta_frame(event)
    if isinstance(event, Ack):
        return ack_frame(event)
    if isinstance(event, Done):
        return done_frame(event)
    if isinstance(event, ChatFailed):
        return failed_frame(event)
    if isinstance(event, TurnStarted):
        return turn_frame(event)
    if isinstance(event, ConversationChanged):
        return conversation_frame(event)
    if isinstance(event, AgentStepEvent):
        return agent_step_frame(event)
    raise TypeError(f"unexpected chat event {type(event).__name__}")
