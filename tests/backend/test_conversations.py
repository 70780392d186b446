from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import func, select, update

from backend.auth import AuthService
from backend.conversations import ConversationService, make_title
from backend.cluster import RedisUnavailable
from backend.errors import NotFound, ValidationFailed
from backend.models import Conversation, Message, utcnow


@pytest.fixture
def users(session_factory, fast_hasher):
    auth = AuthService(session_factory, 3600, fast_hasher)
    return auth.sign_up("alice", "password one"), auth.sign_up("bob", "password two")


@pytest.fixture
def service(session_factory):
    return ConversationService(session_factory)


def add_message(session_factory, conversation_id, user_id, position, role, status, content=""):
    """A message of a one-branch conversation: linked to its neighbours by position (in any order)."""
    with session_factory() as db:
        by_position = {m.position: m for m in db.scalars(select(Message).where(Message.conversation_id == conversation_id))}
        before = by_position.get(position - 1)
        message = Message(
            conversation_id=conversation_id, user_id=user_id, position=position, role=role,
            content=content, html=f"<p>{content}</p>", status=status,
            parent_id=before.id if before is not None else None,
        )  # fmt: skip
        db.add(message)
        db.flush()
        after = by_position.get(position + 1)
        if after is not None:
            after.parent_id = message.id
        db.commit()


def test_list_is_owner_only_and_newest_first(service, users, session_factory):
    alice, bob = users
    older = service.create_conversation(alice.id, "older")
    newer = service.create_conversation(alice.id, "newer")
    service.create_conversation(bob.id, "bob's")
    with session_factory() as db:
        db.execute(
            update(Conversation).where(Conversation.id == older.id).values(updated_at=utcnow() - timedelta(hours=1))
        )
        db.commit()
    assert [c.id for c in service.list_conversations(alice.id)] == [newer.id, older.id]
    assert [c.title for c in service.list_conversations(bob.id)] == ["bob's"]


def test_get_returns_messages_in_order(service, users, session_factory):
    alice, _ = users
    conv = service.create_conversation(alice.id)
    add_message(session_factory, conv.id, alice.id, 1, "assistant", "complete", "hi there")
    add_message(session_factory, conv.id, alice.id, 0, "user", "complete", "hello")
    view = service.get_conversation(alice.id, conv.id)
    assert [(m.role, m.content) for m in view.messages] == [("user", "hello"), ("assistant", "hi there")]
    assert view.messages[1].html == "<p>hi there</p>"
    assert view.messages[0].created_at.tzinfo is not None


def test_other_users_ids_are_not_found_like_missing_ones(service, users):
    alice, bob = users
    conv = service.create_conversation(alice.id)
    for user_id, conversation_id in [(bob.id, conv.id), (alice.id, "0" * 32)]:
        with pytest.raises(NotFound) as err:
            service.get_conversation(user_id, conversation_id)
        assert err.value.code == "not_found"
        with pytest.raises(NotFound):
            service.delete_conversation(user_id, conversation_id)
    assert service.get_conversation(alice.id, conv.id).id == conv.id


def test_delete_removes_messages(service, users, session_factory):
    alice, _ = users
    conv = service.create_conversation(alice.id)
    add_message(session_factory, conv.id, alice.id, 0, "user", "complete", "hello")
    service.delete_conversation(alice.id, conv.id)
    with session_factory() as db:
        assert db.scalar(select(func.count()).select_from(Message)) == 0
    assert service.list_conversations(alice.id) == []


def test_title_validation(service, users):
    with pytest.raises(ValidationFailed):
        service.create_conversation(users[0].id, "x" * 201)


def test_one_process_interrupts_every_unfinished_reply(service, users, session_factory):
    alice, _ = users
    conv = service.create_conversation(alice.id)
    add_message(session_factory, conv.id, alice.id, 0, "user", "complete", "q")
    add_message(session_factory, conv.id, alice.id, 1, "assistant", "streaming", "partial ans")
    add_message(session_factory, conv.id, alice.id, 2, "assistant", "pending")
    add_message(session_factory, conv.id, alice.id, 3, "assistant", "complete", "done")
    assert service.interrupt_orphaned_replies() == 2
    messages = service.get_conversation(alice.id, conv.id).messages
    assert [m.status for m in messages] == ["complete", "interrupted", "interrupted", "complete"]
    assert messages[1].content == "partial ans" and messages[1].finish_reason == "abort"
    assert service.interrupt_orphaned_replies() == 0


def test_several_processes_interrupt_only_replies_no_process_runs(service, users, session_factory):
    """With several processes, a reply is an orphan only when no live process runs it (asked of
    `running_elsewhere`) and its row has settled; a failing check judges nothing."""
    alice, _ = users
    conv = service.create_conversation(alice.id)
    add_message(session_factory, conv.id, alice.id, 0, "user", "complete", "q")
    add_message(session_factory, conv.id, alice.id, 1, "assistant", "streaming", "running on B")
    add_message(session_factory, conv.id, alice.id, 2, "user", "complete", "q2")
    add_message(session_factory, conv.id, alice.id, 3, "assistant", "streaming", "its process died")
    with session_factory() as db:
        rows = {m.content: m for m in db.scalars(select(Message).where(Message.conversation_id == conv.id))}
        running, dead = rows["running on B"].id, rows["its process died"].id
        for message in rows.values():
            message.updated_at = datetime.now(timezone.utc) - timedelta(seconds=60)
        db.commit()
    asked: list[list[str]] = []

    def running_elsewhere(ids: list[str]) -> set[str]:
        asked.append(sorted(ids))
        return {running}

    # Rows written in the last 120 s are not judged yet.
    assert service.interrupt_orphaned_replies(running_elsewhere, settled_s=120) == 0
    assert asked == []

    def redis_down(ids: list[str]) -> set[str]:
        raise RuntimeError("redis down")

    with pytest.raises(RuntimeError):
        service.interrupt_orphaned_replies(redis_down, settled_s=10)
    assert service.interrupt_orphaned_replies(running_elsewhere, settled_s=10) == 1
    assert asked == [sorted([running, dead])]
    statuses = {m.content: m.status for m in service.get_conversation(alice.id, conv.id).messages}
    assert statuses == {"q": "complete", "running on B": "streaming", "q2": "complete",
                        "its process died": "interrupted"}


def test_running_replies_are_those_with_a_relay_stream(redis_url):
    from backend.cluster import RedisLink
    from backend.cluster.relay import reply_key, running_replies

    link = RedisLink(redis_url, "a")
    link.sync.xadd(reply_key(link, "m1"), {"seq": 0})
    assert running_replies(link, ["m1", "m2"]) == {"m1"}
    link.sync.close()
    dead = RedisLink("redis://127.0.0.1:1/0", "a")
    with pytest.raises(RedisUnavailable):
        running_replies(dead, ["m1"])


@pytest.mark.parametrize(
    "text, title",
    [
        ("  Hello\n  world ", "Hello world"),
        ("a" * 60, "a" * 60),
        ("word " * 20, ("word " * 12).strip() + "…"),
        ("x" * 100, "x" * 60 + "…"),
    ],
)
def test_make_title(text, title):
    assert make_title(text) == title


def test_use_documents_is_set_by_the_owner_only(service, users):
    alice, bob = users
    conversation = service.create_conversation(alice.id, "docs")
    assert conversation.use_documents is False
    service.set_use_documents(alice.id, conversation.id, True)
    assert service.get_conversation(alice.id, conversation.id).use_documents is True
    assert [c.use_documents for c in service.list_conversations(alice.id)] == [True]
    with pytest.raises(NotFound):
        service.set_use_documents(bob.id, conversation.id, False)
    with pytest.raises(NotFound):
        service.set_use_documents(alice.id, "no-such-id", False)
    with pytest.raises(ValidationFailed):
        service.set_use_documents(alice.id, conversation.id, "no")  # type: ignore[arg-type]
    assert service.get_conversation(alice.id, conversation.id).use_documents is True
    service.set_use_documents(alice.id, conversation.id, False)
    assert service.get_conversation(alice.id, conversation.id).use_documents is False


def test_stored_sources_come_back_with_the_message(service, users, session_factory):
    alice, _ = users
    conversation = service.create_conversation(alice.id, "cited")
    add_message(session_factory, conversation.id, alice.id, 0, "user", "complete", "q")
    add_message(session_factory, conversation.id, alice.id, 1, "assistant", "complete", "a [1]")
    add_message(session_factory, conversation.id, alice.id, 2, "assistant", "complete", "broken")
    cited = [{"n": 1, "chunk_id": 7, "document_id": "d", "name": "a.md", "version": 2,
              "heading_path": "H", "page": None, "excerpt": "text"}]
    with session_factory() as db:
        db.execute(update(Message).where(Message.position == 1).values(sources=json.dumps(cited)))
        db.execute(update(Message).where(Message.position == 2).values(sources="{not json"))
        db.commit()
    messages = service.get_conversation(alice.id, conversation.id).messages
    assert [m.sources for m in messages] == [[], cited, []]


def test_rename_and_delete_are_owner_only_and_published(session_factory, users):
    from backend.conversations import ConversationChanged

    alice, bob = users
    told: list[tuple[str, ConversationChanged]] = []
    service = ConversationService(session_factory, lambda user_id, event: told.append((user_id, event)))
    summary = service.create_conversation(alice.id, "first")
    assert service.rename_conversation(alice.id, summary.id, "  a   new\tname ").title == "a new name"
    for bad in ("", "   ", "x" * 201, None):
        with pytest.raises(ValidationFailed):
            service.rename_conversation(alice.id, summary.id, bad)
    with pytest.raises(NotFound):
        service.rename_conversation(bob.id, summary.id, "mine now")
    with pytest.raises(NotFound):
        service.delete_conversation(bob.id, summary.id)
    service.delete_conversation(alice.id, summary.id)
    assert told == [(alice.id, ConversationChanged("created", summary.id, "first")),
                    (alice.id, ConversationChanged("renamed", summary.id, "a new name")),
                    (alice.id, ConversationChanged("deleted", summary.id))]


@pytest.mark.parametrize("title", ["ro\x00ot", "bell\x07", "del\x7f", "lone \ud800 surrogate"])
def test_a_title_with_a_control_character_is_refused(service, users, title):
    alice, _ = users
    conversation = service.create_conversation(alice.id, "fine")
    with pytest.raises(ValidationFailed):
        service.rename_conversation(alice.id, conversation.id, title)
    with pytest.raises(ValidationFailed):
        service.create_conversation(alice.id, title)
    assert service.get_conversation(alice.id, conversation.id).title == "fine"
