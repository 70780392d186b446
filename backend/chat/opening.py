"""Storing a chat turn: the checks, the gates and the writes before its reply starts.

:class:`TurnOpener` runs on worker threads (the chat service calls it through
``asyncio.to_thread``). It also holds "one reply per conversation": in this process a
conversation with a reply streaming here is claimed until the reply ends (:meth:`release`);
across processes sharing the database, the transaction that stores a turn in an existing
conversation first takes the conversation's write lock (backend.db.lock_for_write) and refuses
when a reply of it is stored as streaming or pending, so two pages on two processes cannot start
two replies in one conversation at the same moment.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Callable

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from backend import tracing
from backend.agent.access import BUDGET_FIELDS, tools_enabled
from backend.chat import turns
from backend.chat.planning import TurnPlanner, effective_settings
from backend.chat.turns import Turn, TurnRequest
from backend.conversations import make_title
from backend.db import lock_for_write
from backend.errors import ConversationBusy
from backend.generation import Generation, Generations
from backend.generator import GenerationParams
from backend.models import Conversation, Message, User
from backend.agent.tools.passages import format_passages
from backend.rag.sources import citation
from backend.runtime_settings import RuntimeSettings


def hold_conversation(db: Session, conversation_id: str) -> None:
    """Make `db`'s transaction the only one storing a turn in `conversation_id` until it commits,
    then check that no reply of the conversation is streaming (in any process).

    Call it before the transaction's first write. Raises ConversationBusy."""
    lock_for_write(db, f"conversation:{conversation_id}")
    busy = db.scalar(select(Message.id).where(Message.conversation_id == conversation_id,
                                             Message.status.in_(("streaming", "pending"))).limit(1))
    if busy is not None:
        raise ConversationBusy()


class TurnOpener:
    """Args: session_factory: SQLAlchemy sessionmaker (sync). planner: searches and builds the
    prompt. generations: admits the reply's generation (limits, queue). params: the sampling
    parameters of a user's turn under given runtime settings."""

    def __init__(self, session_factory: sessionmaker[Session], planner: TurnPlanner, generations: Generations,
                 params: Callable[[str, RuntimeSettings], GenerationParams]) -> None:
        self._sessions = session_factory
        self._planner = planner
        self._generations = generations
        self._params = params
        self._busy: set[str] = set()  # conversations with a reply streaming
        self._busy_lock = threading.Lock()  # begin() runs on worker threads

    def begin(self, user_id: str, request: TurnRequest, settings: RuntimeSettings
               ) -> tuple[Turn, Generation | None]:
        """Store a new turn (or find it stored). Order: a stored id answers at once; the
        conversation is checked and claimed; the branch is read; the documents are searched
        (when the conversation uses them); the prompt is built; the limits and the queue are
        passed; only then is anything written. Raises DomainError (nothing stored, nothing held)."""
        with self._sessions() as db:
            with tracing.span("persistence.read", what="stored turn"):
                stored = turns.stored_turn(db, user_id, request.client_msg_id)
            if stored is not None:
                return stored, None
            claimed: str | None = None
            generation: Generation | None = None
            try:
                with tracing.span("persistence.read", what="branch", action=request.action):
                    plan = turns.locate(db, user_id, request)
                conversation = plan.conversation
                if plan.streaming is not None:  # continue of a reply streaming now: watch it
                    return turns.streaming_turn(plan.streaming, conversation, request.client_msg_id), None
                if conversation is not None:
                    claimed = self._claim(conversation.id)
                    settings = effective_settings(settings, conversation)
                use_documents = request.use_documents
                history, continuing = plan.history, None
                if request.action == "continue":
                    # The reply searched the documents: its question quotes the same search again.
                    history, continuing = plan.history[:-1], plan.history[-1]
                    searching = plan.target is not None and plan.target.sources is not None
                else:
                    searching = (use_documents if use_documents is not None
                                 else bool(conversation and conversation.use_documents))
                    # A turn that is an agent run searches the documents as a step when it needs them
                    # (search_documents, with its quotes and citations): its prompt holds no passages.
                    # New-user pass: with both on, the run could not quote (the passages were in the
                    # prompt, no search step ran) and "what time do you close on Saturday?" was wrong 3/3.
                    tools_on = (request.use_tools if request.use_tools is not None
                                else bool(conversation and conversation.use_tools))
                    if searching and tools_on and tools_enabled(
                            settings, db.scalar(select(User.role).where(User.id == user_id)) or "user"):
                        searching = False
                with tracing.span("retrieval", searched=bool(searching)) as span:
                    found = self._planner.retrieve(user_id, plan.query, settings) if searching else None
                    span.set_attribute("sources", len(found or ()))
                with tracing.span("prompt.assemble") as span:
                    messages, prompt_tokens, prompt_error, used = self._planner.prompt(settings, history, found or (), continuing)
                    span.set_attribute("prompt_tokens", prompt_tokens)
                if continuing is not None and prompt_error is not None:
                    raise prompt_error  # refused before the reply is touched: it stays continuable
                # NULL: no search ran; "[]": it ran and no source was found or fitted.
                citations = [citation(n, s) for n, s in enumerate(used, start=1)] if found is not None else None
                if prompt_error is None:
                    generation = self._generations.admit(user_id, "chat", prompt_tokens)
                if conversation is not None:
                    hold_conversation(db, conversation.id)
                new_conversation = conversation is None
                if conversation is None:
                    conversation = Conversation(user_id=user_id, title=make_title(request.text),
                                                use_documents=bool(use_documents),
                                                use_tools=bool(request.use_tools))
                    db.add(conversation)
                    db.flush()
                    claimed = self._claim(conversation.id)
                else:  # committed with the turn
                    if use_documents is not None:
                        conversation.use_documents = use_documents
                    if request.use_tools is not None:
                        conversation.use_tools = request.use_tools
                with tracing.span("persistence.store_question", action=request.action):
                    if request.action == "regenerate":
                        assert plan.answering is not None
                        turn = turns.insert_reply(db, conversation, plan.answering, user_id, request.client_msg_id,
                                                  citations)
                    elif request.action == "continue":
                        assert plan.target is not None
                        turn = turns.reopen_reply(db, conversation, plan.target, request.client_msg_id, citations)
                    else:
                        turn = turns.insert_turn(db, conversation, plan.parent_id, user_id, request.client_msg_id,
                                                 request.text, citations, request.action)
            except IntegrityError:
                self._undo(claimed, generation)
                db.rollback()
                stored = turns.stored_turn(db, user_id, request.client_msg_id)  # stored concurrently: a retry
                if stored is None:
                    raise
                return stored, None
            except BaseException:
                self._undo(claimed, generation)
                raise
        turn.new_conversation = new_conversation
        turn.messages, turn.prompt_tokens, turn.prompt_error = messages, prompt_tokens, prompt_error
        params = self._params(user_id, settings)
        turn.params = replace(params, continue_final_message=True) if request.action == "continue" else params
        turn.sources = citations if citations is not None else (plan.target_sources or [])
        turn.prompt_passages = format_passages(used) if found else None
        turn.unwatched_s = settings.unwatched_reply_s
        turn.use_tools = bool(conversation.use_tools)
        turn.timezone = request.timezone
        turn.agent_budget = {name: getattr(conversation, name) for name in BUDGET_FIELDS}
        return turn, generation

    def _claim(self, conversation_id: str) -> str:
        with self._busy_lock:
            if conversation_id in self._busy:
                raise ConversationBusy()
            self._busy.add(conversation_id)
        return conversation_id

    def _undo(self, claimed: str | None, generation: Generation | None) -> None:
        if generation is not None:
            generation.discard()
        if claimed is not None:
            self.release(claimed)

    def release(self, conversation_id: str) -> None:
        """The conversation's reply has ended: it may take a new turn."""
        with self._busy_lock:
            self._busy.discard(conversation_id)
