"""Fixtures for agent-run tests: the run tables, a user with a conversation and a reply row,
fake tools (one with a side effect, idempotent on its key), and a runner factory."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest

from backend.agent.budget import Budget
from backend.agent.tools.save_note import INTENT_WORDS as SAVE_NOTE_INTENT
from backend.agent.records import RunRecords
from backend.agent.runs import AgentRunner
from backend.errors import DomainError
from backend.models import Conversation, Message, User, new_id, utcnow


@dataclass(frozen=True)
class FakeContext:
    user_id: str
    conversation_id: str
    run_id: str
    idempotency_key: str


@dataclass(frozen=True)
class FakeResult:
    content: str
    summary: str
    sources: tuple = ()
    data: dict | None = None


@dataclass
class FakeSpec:
    name: str
    description: str
    parameters: dict
    permission: str
    side_effect: bool
    run: Callable[[Any, dict], Any]
    intent_words: tuple[str, ...] = ()
    relevant: Callable[[str, str], bool] | None = None  # (user id, message): the "planned" policy
    planned_arguments: Callable[[str], dict | None] | None = None
    answer_quote: Callable[[str, str], tuple[int, str] | None] | None = None  # (question, result)


class FakeToolError(DomainError):
    code = "tool_error"


@dataclass
class Tools:
    """The fake tools and what they did. notes: the side effect, by idempotency key (as
    save_note); executions: every (tool, key) run, in order."""

    notes: dict[str, str] = field(default_factory=dict)
    executions: list[tuple[str, str]] = field(default_factory=list)
    injected: str = ""
    gate: threading.Event = field(default_factory=threading.Event)
    entered: threading.Event = field(default_factory=threading.Event)

    def specs(self) -> list[FakeSpec]:
        numbers = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                   "required": ["a", "b"], "additionalProperties": False}

        def add(ctx, args):
            self.executions.append(("add", ctx.idempotency_key))
            total = args["a"] + args["b"]
            return FakeResult(f"{total:g}", f"Calculated — {total:g}")

        def save_note(ctx, args):
            self.executions.append(("save_note", ctx.idempotency_key))
            self.notes.setdefault(ctx.idempotency_key, args["text"])  # one note per key
            return FakeResult("saved", "Saved a note")

        def search(ctx, args):
            self.executions.append(("search_documents", ctx.idempotency_key))
            return FakeResult("[1] " + self.injected, "Searched your documents — 1 passage",
                              sources=({"n": 1, "document": "d.txt"},))

        def slow(ctx, args):
            self.executions.append(("slow", ctx.idempotency_key))
            self.entered.set()
            self.gate.wait(10)
            return FakeResult("slow done", "Waited")

        def failing(ctx, args):
            raise FakeToolError("the passage does not exist")

        text = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        query = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
        empty = {"type": "object", "properties": {}}
        # Planned ("planned" policy) by words of the message: "+" adds, "bridge" searches.
        return [FakeSpec("add", "adds", numbers, "tools.basic", False, add, relevant=lambda u, t: "+" in t),
                FakeSpec("save_note", "saves a note", text, "tools.notes", True, save_note, SAVE_NOTE_INTENT,
                         relevant=lambda u, t: True),
                FakeSpec("search_documents", "searches", query, "tools.basic", False, search,
                         relevant=lambda u, t: "bridge" in t.lower()),
                FakeSpec("slow", "waits", empty, "tools.basic", False, slow),
                FakeSpec("failing", "fails", empty, "tools.basic", False, failing),
                FakeSpec("secret", "admins only", empty, "tools.admin", False,
                         lambda ctx, args: self.executions.append(("secret", ctx.idempotency_key)))]


@pytest.fixture
def records(session_factory) -> RunRecords:
    return RunRecords(session_factory)


@dataclass
class Turn:
    user_id: str
    conversation_id: str
    message_id: str


@pytest.fixture
def turn(session_factory) -> Turn:
    with session_factory() as db:
        user = User(id=new_id(), username="ann", username_key="ann-" + new_id()[:8], password_hash="x")
        db.add(user)
        db.flush()
        conversation = Conversation(id=new_id(), user_id=user.id, title="t")
        db.add(conversation)
        db.flush()
        now = utcnow()
        question = Message(id=new_id(), conversation_id=conversation.id, user_id=user.id, position=0, role="user",
                           content="q", status="complete", created_at=now, updated_at=now)
        db.add(question)
        db.flush()
        reply = Message(id=new_id(), conversation_id=conversation.id, user_id=user.id, position=1,
                        role="assistant", content="", status="streaming", parent_id=question.id,
                        created_at=now, updated_at=now)
        db.add(reply)
        db.commit()
        return Turn(user.id, conversation.id, reply.id)


@pytest.fixture
def tools() -> Tools:
    tools = Tools()
    yield tools
    tools.gate.set()


@pytest.fixture
def make_runner(records, tools):
    def make(generator, budget: Budget = Budget(), allowed=("add", "save_note", "search_documents", "slow", "failing"),
             **kwargs) -> AgentRunner:
        return AgentRunner(generator, tools.specs(), allowed, records, budget,
                           make_context=lambda u, c, r, k: FakeContext(u, c, r, k), **kwargs)
    return make


@pytest.fixture
def stop() -> asyncio.Event:
    return asyncio.Event()
