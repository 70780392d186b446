"""ToolRegistry: which tools exist with which services, and allowed() by deployment switches
and role grants. Every spec's schema is a valid draft 2020-12 schema that forbids extra keys."""

from __future__ import annotations

import jsonschema

from backend.agent.tools import ToolRegistry
from backend.notes import NoteService
from tests.backend.agent.tool_fixtures import documents, rag_settings, retriever  # noqa: F401

ALL = ["search_documents", "read_passage", "calculator", "current_time", "save_note"]


def full(documents, retriever, session_factory) -> ToolRegistry:
    return ToolRegistry(documents=documents, retriever=retriever, notes=NoteService(session_factory),
                        session_factory=session_factory)


def test_specs_and_schemas(documents, retriever, session_factory):
    registry = full(documents, retriever, session_factory)
    assert [s.name for s in registry.specs()] == ALL
    for spec in registry.specs():
        jsonschema.Draft202012Validator.check_schema(spec.parameters)
        assert spec.parameters["type"] == "object" and spec.parameters["additionalProperties"] is False
        assert spec.permission == f"tools.{spec.name}"
        assert spec.side_effect == (spec.name == "save_note")
        assert registry.get(spec.name) is spec
    assert registry.get("eval") is None and registry.get("") is None


def test_tools_without_their_service_are_absent():
    registry = ToolRegistry(documents=None, retriever=None, notes=None, session_factory=None)
    assert [s.name for s in registry.specs()] == ["calculator", "current_time"]
    assert registry.get("save_note") is None and registry.get("search_documents") is None


def test_allowed_needs_the_switch_and_the_grant(documents, retriever, session_factory):
    registry = full(documents, retriever, session_factory)
    enabled = {name: True for name in ALL} | {"save_note": False}
    grants = {"admin": {f"tools.{n}" for n in ALL}, "user": {"tools.calculator", "tools.save_note", "tools.search_documents"}}
    assert [s.name for s in registry.allowed("admin", enabled, grants)] == ALL[:4]
    assert [s.name for s in registry.allowed("user", enabled, grants)] == ["search_documents", "calculator"]
    assert registry.allowed("guest", enabled, grants) == []
    assert registry.allowed("admin", {}, grants) == []  # a tool missing from `enabled` is off
