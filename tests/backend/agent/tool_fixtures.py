"""Shared pieces of the agent tool tests: a context, schema checks, users and documents.
Test modules import the fixtures they use (`from tests.backend.agent.tool_fixtures import ...`)."""

from __future__ import annotations

from datetime import datetime, timezone

import jsonschema
import pytest

from backend.agent.tools import ToolContext, ToolSpec
from backend.models import Conversation, User
from backend.rag import DocumentService, HashingEmbedder, RagSettings, Retriever

NOW = datetime(2026, 3, 29, 0, 30, 0, tzinfo=timezone.utc)


def context(user_id: str = "alice", key: str = "run1:0:0", conversation_id: str = "") -> ToolContext:
    return ToolContext(user_id=user_id, conversation_id=conversation_id, run_id=key.split(":")[0],
                       idempotency_key=key, now=NOW)


def valid(spec: ToolSpec, arguments: object) -> bool:
    """Whether the loop's validation (jsonschema, draft 2020-12) accepts `arguments`."""
    jsonschema.Draft202012Validator.check_schema(spec.parameters)
    return jsonschema.Draft202012Validator(spec.parameters).is_valid(arguments)


@pytest.fixture
def users(session_factory):
    """alice and bob (role user), root (admin), each with one conversation "<name>-c"."""
    with session_factory.begin() as session:
        for name, role in (("alice", "user"), ("bob", "user"), ("root", "admin")):
            session.add(User(id=name, username=name, username_key=name, password_hash="x", role=role))
        session.flush()
        for name in ("alice", "bob", "root"):
            session.add(Conversation(id=f"{name}-c", user_id=name))
    return {"alice": "alice", "bob": "bob", "root": "root"}


@pytest.fixture
def rag_settings():
    return RagSettings(max_upload_bytes=20_000, chunk_tokens=60, chunk_overlap=10, min_similarity=-1.0, embed_batch=4)


@pytest.fixture
def documents(session_factory, rag_settings):
    return DocumentService(session_factory, HashingEmbedder(), rag_settings)


@pytest.fixture
def retriever(session_factory, rag_settings):
    return Retriever(session_factory, HashingEmbedder(), rag_settings)


@pytest.fixture
def add(documents, users):
    """add(user, name, text, shared=None) -> the ready DocumentView."""

    def _add(user: str, name: str, text: str, shared: bool | None = None):
        data = text.encode()
        view = documents.upload(user, name, data, shared=shared)
        return documents.ingest(view.id, data)

    return _add
