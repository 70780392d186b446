"""Export (JSON, Markdown), import of our JSON, and the whole-account archive
(backend.conversation_export)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from sqlalchemy import select, update

from backend.agent.access import budget_limits
from backend.auth import AuthService
from backend.conversation_export import ConversationTransfer
from backend.conversation_import import MAX_IMPORT_MESSAGES, ImportTooLarge, parse_import
from backend.conversations import ConversationService
from backend.errors import NotFound, ValidationFailed
from backend.models import Conversation, Document, Message
from backend.runtime_settings import RuntimeSettingsStore
from backend.settings import Settings


@pytest.fixture
def users(session_factory, fast_hasher):
    auth = AuthService(session_factory, 3600, fast_hasher)
    return auth.sign_up("alice", "password one"), auth.sign_up("bob", "password two")


@pytest.fixture
def published():
    return []


@pytest.fixture
def transfer(session_factory, published):
    return ConversationTransfer(session_factory, lambda user_id, event: published.append((user_id, event)))


def add(db, conversation_id, user_id, position, role, content, parent_id=None, **extra) -> str:
    message = Message(conversation_id=conversation_id, user_id=user_id, position=position, role=role,
                      content=content, html="", status=extra.pop("status", "complete"), parent_id=parent_id, **extra)
    db.add(message)
    db.flush()
    return message.id


@pytest.fixture
def tree(session_factory, users):
    """q1 -> a1 -> q2 -> {a2 (regenerated away), a2b (active)}; q2' (an edit of q2) -> a3."""
    alice, _ = users
    conv = ConversationService(session_factory).create_conversation(alice.id, "Tree <talk>")
    with session_factory() as db:
        q1 = add(db, conv.id, alice.id, 0, "user", "Hello?")
        a1 = add(db, conv.id, alice.id, 1, "assistant", "Hi! **bold**", q1, finish_reason="stop")
        q2 = add(db, conv.id, alice.id, 2, "user", "Tell me a fact", a1)
        a2 = add(db, conv.id, alice.id, 3, "assistant", "First fact", q2, finish_reason="length")
        q2e = add(db, conv.id, alice.id, 4, "user", "Tell me a joke", a1)
        a3 = add(db, conv.id, alice.id, 5, "assistant", "A joke", q2e, finish_reason="stop")
        a2b = add(db, conv.id, alice.id, 6, "assistant", "Second fact", q2, finish_reason="abort")
        db.execute(update(Conversation).where(Conversation.id == conv.id).values(
            current_message_id=a2b, system_prompt="Be brief.", temperature=0.3, max_tokens=77, pinned=True,
            use_tools=True, agent_steps=12, agent_tokens=30_000))
        db.commit()
    return conv.id, {"q1": q1, "a1": a1, "q2": q2, "a2": a2, "q2e": q2e, "a3": a3, "a2b": a2b}


def test_json_tree_has_every_message_and_the_settings(transfer, users, tree):
    alice, _ = users
    conv_id, ids = tree
    doc = transfer.export_json(alice.id, conv_id, "tree")
    assert doc["format"] == "crescent.conversation" and doc["version"] == 1 and doc["scope"] == "tree"
    meta = doc["conversation"]
    assert meta["current_message_id"] == ids["a2b"] and meta["pinned"] is True
    assert meta["settings"] == {"system_prompt": "Be brief.", "temperature": 0.3, "max_tokens": 77,
                                "use_tools": True, "agent_steps": 12, "agent_tool_calls": None,
                                "agent_tokens": 30_000, "agent_wall_s": None}
    assert [m["id"] for m in doc["messages"]] == [ids[k] for k in ("q1", "a1", "q2", "a2", "q2e", "a3", "a2b")]
    first = doc["messages"][1]
    assert set(first) == {"id", "parent_id", "role", "content", "status", "finish_reason", "created_at"}
    assert (first["parent_id"], first["role"], first["content"], first["finish_reason"]) == \
        (ids["q1"], "assistant", "Hi! **bold**", "stop")
    json.dumps(doc)  # plain JSON values only


def test_json_branch_is_the_path_to_the_active_leaf(transfer, users, tree):
    alice, _ = users
    conv_id, ids = tree
    doc = transfer.export_json(alice.id, conv_id, "branch")
    assert [m["id"] for m in doc["messages"]] == [ids["q1"], ids["a1"], ids["q2"], ids["a2b"]]


def test_markdown_branch_and_tree(transfer, users, tree):
    alice, _ = users
    conv_id, _ = tree
    title, branch = transfer.export_markdown(alice.id, conv_id, "branch")
    assert title == "Tree <talk>" and branch.startswith("# Tree <talk>\n")
    assert "Second fact" in branch and "First fact" not in branch and "A joke" not in branch
    assert "**Assistant** ·" in branch and "stopped" in branch
    _, whole = transfer.export_markdown(alice.id, conv_id, "tree")
    assert "First fact" in whole and "A joke" in whole
    assert "**5. You** · answers 2" in whole  # the edit answers the first reply
    assert "cut at the token limit" in whole


def test_another_users_conversation_is_not_found(transfer, users, tree):
    _, bob = users
    conv_id, _ = tree
    for call in (lambda: transfer.export_json(bob.id, conv_id), lambda: transfer.export_markdown(bob.id, conv_id)):
        with pytest.raises(NotFound):
            call()


def test_unknown_scope_is_refused(transfer, users, tree):
    alice, _ = users
    with pytest.raises(ValidationFailed):
        transfer.export_json(alice.id, tree[0], "everything")


def test_round_trip_keeps_the_tree_and_the_active_branch(transfer, users, tree, session_factory, published):
    alice, bob = users
    conv_id, ids = tree
    original = transfer.export_json(alice.id, conv_id, "tree")
    summary = transfer.import_json(bob.id, json.dumps(original).encode())
    assert summary.id != conv_id and summary.title == "Tree <talk>"
    assert [(u, e.kind, e.conversation_id) for u, e in published] == \
        [(bob.id, "created", summary.id), (bob.id, "pinned", summary.id)]  # the file pins it
    copy = transfer.export_json(bob.id, summary.id, "tree")
    old_ids = [m["id"] for m in original["messages"]]
    new_ids = [m["id"] for m in copy["messages"]]
    assert not set(old_ids) & set(new_ids)  # new ids
    rename = dict(zip(old_ids, new_ids))
    for old, new in zip(original["messages"], copy["messages"]):
        assert new["parent_id"] == (rename[old["parent_id"]] if old["parent_id"] else None)
        for key in ("role", "content", "status", "finish_reason", "created_at"):
            assert new[key] == old[key]
    assert copy["conversation"]["current_message_id"] == rename[ids["a2b"]]
    assert copy["conversation"]["settings"] == original["conversation"]["settings"]
    branch = transfer.export_json(bob.id, summary.id, "branch")
    assert [m["content"] for m in branch["messages"]] == ["Hello?", "Hi! **bold**", "Tell me a fact", "Second fact"]
    with session_factory() as db:  # rendered for the page, owned by the importer
        rows = db.scalars(select(Message).where(Message.conversation_id == summary.id)).all()
        assert {m.user_id for m in rows} == {bob.id}
        assert any("<strong>bold</strong>" in m.html for m in rows)
    # The original is untouched and still alice's.
    assert transfer.export_json(alice.id, conv_id, "tree")["messages"] == original["messages"]


def test_importing_a_branch_export_keeps_that_branch(transfer, users, tree):
    alice, _ = users
    branch = transfer.export_json(alice.id, tree[0], "branch")
    summary = transfer.import_json(alice.id, json.dumps(branch).encode())
    again = transfer.export_json(alice.id, summary.id, "tree")
    assert [m["content"] for m in again["messages"]] == ["Hello?", "Hi! **bold**", "Tell me a fact", "Second fact"]


def test_import_ignores_ids_and_user_ids_of_the_file(transfer, users, tree, session_factory):
    alice, bob = users
    doc = transfer.export_json(alice.id, tree[0], "tree")
    doc["conversation"]["user_id"] = alice.id
    for m in doc["messages"]:
        m["user_id"] = alice.id
    summary = transfer.import_json(bob.id, json.dumps(doc).encode())
    with session_factory() as db:
        conversation = db.get(Conversation, summary.id)
        assert conversation.user_id == bob.id
        assert db.get(Conversation, tree[0]).user_id == alice.id
        assert {m.id for m in db.scalars(select(Message))} >= set(tree[1].values())


def test_a_streaming_message_imports_as_interrupted(transfer, users):
    alice, _ = users
    doc = minimal([{"id": "1", "parent_id": None, "role": "user", "content": "hi"},
                   {"id": "2", "parent_id": "1", "role": "assistant", "content": "par", "status": "streaming"}])
    summary = transfer.import_json(alice.id, json.dumps(doc).encode())
    last = transfer.export_json(alice.id, summary.id)["messages"][-1]
    assert (last["status"], last["finish_reason"]) == ("interrupted", "abort")


def test_a_budget_above_the_importers_maximum_is_stored_at_that_maximum(transfer, users, tree, session_factory):
    """The file's run budget (12 steps, 30000 tokens) on a deployment whose admin allows at most 10
    steps and 64000 tokens: steps are stored capped at 10, tokens as they are, the unset ones stay
    null (the importer's default); tools stay on (the admin's access still decides at run time)."""
    alice, bob = users
    doc = transfer.export_json(alice.id, tree[0], "tree")
    runtime = RuntimeSettingsStore(session_factory, Settings(), context_length=2048)
    limits = budget_limits(runtime.update({"agent_max_steps": 10, "agent_max_tokens": 64_000}, actor_id=None))
    summary = transfer.import_json(bob.id, encode(doc), limits)
    with session_factory() as db:
        imported = db.get(Conversation, summary.id)
        assert (imported.use_tools, imported.agent_steps, imported.agent_tool_calls, imported.agent_tokens,
                imported.agent_wall_s) == (True, 10, None, 30_000, None)


def test_a_file_from_before_the_tools_settings_imports_with_tools_off_and_the_defaults(transfer, users,
                                                                                       session_factory):
    alice, _ = users
    summary = transfer.import_json(alice.id, encode(minimal(GOOD, settings={"max_tokens": 5})))
    settings = transfer.export_json(alice.id, summary.id)["conversation"]["settings"]
    assert settings == {"system_prompt": None, "temperature": None, "max_tokens": 5, "use_tools": False,
                        "agent_steps": None, "agent_tool_calls": None, "agent_tokens": None, "agent_wall_s": None}


def minimal(messages, **conversation):
    return {"format": "crescent.conversation", "version": 1,
            "conversation": {"title": "t", **conversation}, "messages": messages}


def encode(doc) -> bytes:
    return json.dumps(doc).encode()


GOOD = [{"id": "a", "parent_id": None, "role": "user", "content": "hi"}]


@pytest.mark.parametrize("data, words", [
    (b"\xff\xfe", "not UTF-8 JSON"),
    (b"{", "not UTF-8 JSON"),
    (b"[]", "must be an object"),
    (b'{"format": "crescent.conversation", "version": 1, "conversation": {}, "messages": [], "x": NaN}',
     "not UTF-8 JSON"),
    (b"[" * 100_000, "nested deeper than 64 levels"),
    (encode({**minimal(GOOD), "format": "other"}), "not a Crescent conversation"),
    (encode({**minimal(GOOD), "version": 2}), "unsupported version"),
    (encode({**minimal(GOOD), "version": True}), "unsupported version"),
    (encode({**minimal(GOOD), "messages": {}}), "must be a list"),
    (encode(minimal([{**GOOD[0], "role": "tool"}])), "role must be one of"),
    (encode(minimal([GOOD[0], {**GOOD[0], "id": "s", "role": "system"}])),
     "message 2: role must be one of user, assistant, not 'system'"),
    (encode(minimal([{**GOOD[0], "status": "done"}])), "status must be one of"),
    (encode(minimal([{**GOOD[0], "finish_reason": "tired"}])), "finish_reason"),
    (encode(minimal([{**GOOD[0], "content": 5}])), "content must be a string"),
    (encode(minimal([{**GOOD[0], "content": "a\x00b"}])), "NUL, control"),
    (encode(minimal([{**GOOD[0], "content": "a\x1bb"}])), "NUL, control"),
    (b'{"format": "crescent.conversation", "version": 1, "conversation": {"title": "t"}, '
     b'"messages": [{"id": "a", "role": "user", "content": "\\ud800"}]}', "surrogate"),
    (encode(minimal([{**GOOD[0], "content": "x" * 200_001}])), "longer than"),
    (encode(minimal(GOOD, title="x" * 201)), "title is longer"),
    (encode(minimal(GOOD, title="a\x07")), "control"),
    (encode(minimal([{**GOOD[0], "parent_id": "zzz"}])), "parent_id"),
    (encode(minimal([{**GOOD[0], "parent_id": "a"}])), "parent_id"),  # itself
    (encode(minimal([{"id": "b", "parent_id": "a", "role": "user", "content": ""}, GOOD[0]])), "parent_id"),
    (encode(minimal([GOOD[0], GOOD[0]])), "used twice"),
    (encode(minimal([{**GOOD[0], "id": ""}])), "must not be empty"),
    (encode(minimal([{**GOOD[0], "id": 7}])), "id must be a string"),
    (encode(minimal([{**GOOD[0], "created_at": "yesterday"}])), "ISO 8601"),
    (encode(minimal(GOOD, current_message_id="nope")), "current_message_id"),
    (encode(minimal(GOOD, settings={"temperature": 9})), "settings.temperature must be a number in [0, 2] or null"),
    (b'{"format": "crescent.conversation", "version": 1, "conversation": {"settings": {"temperature": 1e999}}, '
     b'"messages": []}', "settings.temperature"),
    (encode(minimal(GOOD, settings={"max_tokens": 1.5})), "settings.max_tokens must be a whole number in [1, "),
    (encode(minimal(GOOD, settings={"system_prompt": "x" * 9000})), "longer than"),
    (encode(minimal(GOOD, pinned="yes")), "pinned"),
    (encode(minimal(GOOD, settings={"use_tools": "yes"})), "settings.use_tools must be true or false"),
    (encode(minimal(GOOD, settings={"agent_steps": 2})), "settings.agent_steps must be a whole number in [3, 50] or null, got 2"),
    (encode(minimal(GOOD, settings={"agent_tool_calls": 51})), "settings.agent_tool_calls"),
    (encode(minimal(GOOD, settings={"agent_tokens": 1.5})), "settings.agent_tokens"),
    (encode(minimal(GOOD, settings={"agent_wall_s": True})), "settings.agent_wall_s"),
    (encode(minimal(["not an object"])), "must be an object"),
])
def test_import_validation_refuses_bad_files(data, words):
    with pytest.raises(ValidationFailed) as info:
        parse_import(data)
    assert words in info.value.message


def test_import_size_and_count_limits(transfer, users, session_factory):
    alice, _ = users
    with pytest.raises(ImportTooLarge):
        parse_import(b" " * (8 * 1024 * 1024 + 1))
    many = [{"id": str(i), "parent_id": str(i - 1) if i else None, "role": "user", "content": ""}
            for i in range(MAX_IMPORT_MESSAGES + 1)]
    with pytest.raises(ValidationFailed, match="limit"):
        transfer.import_json(alice.id, encode(minimal(many)))
    with session_factory() as db:  # nothing stored
        assert db.scalars(select(Conversation)).all() == []


def test_archive_holds_everything_of_the_user_and_no_secrets(transfer, users, tree, session_factory):
    alice, bob = users
    ConversationService(session_factory).create_conversation(bob.id, "bob's own")
    with session_factory() as db:
        for owner, name, version, status in ((alice.id, "notes.txt", 1, "superseded"), (alice.id, "notes.txt", 2, "ready"),
                                             (bob.id, "bobs.txt", 1, "ready")):
            db.add(Document(user_id=owner, name=name, version=version, kind="txt", size_bytes=10, sha256="0" * 64,
                            status=status))
        db.commit()
    out = io.BytesIO()
    transfer.export_archive(alice.id, out)
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as archive:
        names = archive.namelist()
        account = json.loads(archive.read("account.json"))
        assert account["username"] == "alice" and "password_hash" not in account
        raw = b"".join(archive.read(n) for n in names)
        assert b"argon2" not in raw and b"bob's own" not in raw
        documents = json.loads(archive.read("documents.json"))
        assert [(d["name"], d["version"], d["status"]) for d in documents] == [("notes.txt", 2, "ready")]
        conversations = [n for n in names if n.startswith("conversations/")]
        assert len(conversations) == 2
        doc = json.loads(archive.read(next(n for n in conversations if n.endswith(".json"))))
        assert doc["scope"] == "tree" and len(doc["messages"]) == 7
        assert "Tree-talk" in conversations[0]
    # The conversation files import as they are.
    again = transfer.import_json(bob.id, json.dumps(doc).encode())
    assert again.title == "Tree <talk>"
