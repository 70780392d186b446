"""Chat: turns stored as rows, replies that run in their own task, pages that watch them.

- service.py: ChatService (send, attach, stop, the reply's run, shutdown);
- turns.py: the stored turn (send, edit, regenerate or continue on a branch of the message tree,
  backend/message_tree.py; the rows flushed as the reply grows);
- replies.py: LiveReply and its viewers (attach from a sequence number, the unwatched policy);
- events.py: what callers receive (Ack, Delta, Done, ChatFailed; TurnStarted, ConversationChanged);
- channels.py: account events to every open page of a user.
"""

from backend.chat.channels import Channel, UserChannels
from backend.chat.events import (AccountEvent, Ack, ChatEvent, ChatFailed, ConversationChanged, Delta, Done,
                                 TurnStarted)
from backend.chat.replies import REASON_CONNECTION_CLOSED, LiveReply, Viewer
from backend.chat.service import (REASON_QUEUE_TIMEOUT, REASON_SERVER_ABORTED, REASON_SHUTDOWN, ChatService,
                                  FixedSettings)
from backend.chat.turns import MAX_CLIENT_MSG_ID_CHARS, MAX_TEXT_CHARS, TurnRequest

__all__ = [
    "AccountEvent", "Ack", "Channel", "ChatEvent", "ChatFailed", "ChatService", "ConversationChanged", "Delta",
    "Done", "FixedSettings", "LiveReply", "MAX_CLIENT_MSG_ID_CHARS", "MAX_TEXT_CHARS", "REASON_CONNECTION_CLOSED",
    "REASON_QUEUE_TIMEOUT", "REASON_SERVER_ABORTED", "REASON_SHUTDOWN", "TurnRequest", "TurnStarted", "UserChannels", "Viewer",
]
