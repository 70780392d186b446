"""web.ws_frames: every server frame has exactly the fields of docs/INTERFACES.md section 4."""

from __future__ import annotations

import pytest

from backend.chat import Ack, ChatFailed, ConversationChanged, Delta, Done, TurnStarted
from web.ws_frames import event_frame


def test_each_frame_has_exactly_its_documented_fields() -> None:
    ack = event_frame(Ack("c", "conv", "u", "a", False, "Title", "regenerate", "u"))
    assert ack == {"type": "ack", "client_msg_id": "c", "conversation_id": "conv", "user_message_id": "u",
                   "assistant_message_id": "a", "duplicate": False, "title": "Title", "action": "regenerate",
                   "parent_id": "u"}
    assert event_frame(Delta("a", 3, "x", "<p>c</p>", "<p>t</p>", code_html="y\n")) == {
        "type": "delta", "message_id": "a", "seq": 3, "text": "x", "code_html": "y\n",
        "committed_html": "<p>c</p>", "tail_html": "<p>t</p>"}
    assert event_frame(Delta("a", 3, "x", "", "", reset=True))["reset"] is True
    done = event_frame(Done("a", "stop", "complete", "<p>x</p>", {"prompt_tokens": 3, "completion_tokens": 1},
                            {"queue_ms": 1.0, "ttft_ms": 2.0, "decode_tokens_per_s": 9.0, "total_ms": 1234.5}, None, [],
                            seq=1))
    assert done == {"type": "done", "message_id": "a", "seq": 1, "finish_reason": "stop", "status": "complete",
                    "html": "<p>x</p>", "usage": {"prompt_tokens": 3, "completion_tokens": 1},
                    "timings": {"queue_ms": 1.0, "ttft_ms": 2.0, "decode_tokens_per_s": 9.0, "total_ms": 1234.5},
                    "error": None,
                    "sources": [], "content": "", "trace_id": None, "budget_ended": False}
    assert event_frame(ChatFailed("rate_limited", "wait", "c", None, 7)) == {
        "type": "error", "code": "rate_limited", "message": "wait", "client_msg_id": "c", "retry_after_s": 7}
    assert event_frame(ChatFailed("not_found", "no", None, "a")) == {
        "type": "error", "code": "not_found", "message": "no", "message_id": "a"}
    assert set(event_frame(TurnStarted("conv", "T", "c", "u", "hi", "a", True))) == {
        "type", "conversation_id", "title", "client_msg_id", "user_message_id", "user_text",
        "assistant_message_id", "new_conversation", "action", "parent_id"}
    assert event_frame(ConversationChanged("deleted", "conv")) == {
        "type": "conversation", "event": "deleted", "conversation_id": "conv", "title": ""}


def test_anything_else_is_refused() -> None:
    with pytest.raises(TypeError):
        event_frame({"type": "ack"})
