"""Pinning a conversation (ConversationService.set_pinned)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from backend.auth import AuthService
from backend.conversations import ConversationService
from backend.errors import NotFound, ValidationFailed
from backend.models import Conversation, utcnow


@pytest.fixture
def users(session_factory, fast_hasher):
    auth = AuthService(session_factory, 3600, fast_hasher)
    return auth.sign_up("alice", "password one"), auth.sign_up("bob", "password two")


@pytest.fixture
def events():
    return []


@pytest.fixture
def service(session_factory, events):
    return ConversationService(session_factory, lambda user_id, event: events.append((user_id, event)))


def test_pinned_conversations_are_listed_first(service, users, session_factory):
    alice, _ = users
    old = service.create_conversation(alice.id, "old")
    new = service.create_conversation(alice.id, "new")
    with session_factory() as db:
        db.execute(update(Conversation).where(Conversation.id == old.id).values(updated_at=utcnow() - timedelta(days=9)))
        db.commit()
    assert [c.id for c in service.list_conversations(alice.id)] == [new.id, old.id]
    summary = service.set_pinned(alice.id, old.id, True)
    assert summary.pinned is True
    listed = service.list_conversations(alice.id)
    assert [(c.id, c.pinned) for c in listed] == [(old.id, True), (new.id, False)]
    service.set_pinned(alice.id, old.id, False)
    assert [c.id for c in service.list_conversations(alice.id)] == [new.id, old.id]


def test_pinning_keeps_updated_at_and_tells_every_page(service, users, events):
    alice, _ = users
    conv = service.create_conversation(alice.id, "t")
    events.clear()
    before = service.list_conversations(alice.id)[0].updated_at
    service.set_pinned(alice.id, conv.id, True)
    service.set_pinned(alice.id, conv.id, False)
    assert service.list_conversations(alice.id)[0].updated_at == before
    assert [(u, e.kind, e.conversation_id, e.title) for u, e in events] == [
        (alice.id, "pinned", conv.id, "t"), (alice.id, "unpinned", conv.id, "t")]


def test_pin_is_owner_only_and_checked(service, users, events):
    alice, bob = users
    conv = service.create_conversation(alice.id, "t")
    events.clear()
    with pytest.raises(NotFound):
        service.set_pinned(bob.id, conv.id, True)
    with pytest.raises(ValidationFailed):
        service.set_pinned(alice.id, conv.id, "yes")  # type: ignore[arg-type]
    assert events == [] and service.list_conversations(alice.id)[0].pinned is False
