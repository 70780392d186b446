"""What a client's schemas may cost before they are refused: the meta-schema check (jsonschema,
about 0.2 s per 10 kB of nested schema with the GIL held, so the whole server waits) runs only on
schemas within the size limits: an oversized response_format schema, or tools whose parameters
are too large together, is a 400 naming the field without any schema being checked."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from tests.web.test_openai_api import MODEL, keys, post  # noqa: F401 (fixtures)
from web.openai_schema import MAX_SCHEMA_BYTES
from web.openai_tools_request import MAX_TOOLS_SCHEMA_BYTES

HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def checked(monkeypatch) -> list[Any]:
    """The schemas handed to jsonschema's meta-schema check (the 2020-12 validator's
    check_schema: a schema without "$schema"), in order."""
    seen: list[Any] = []
    original = jsonschema.Draft202012Validator.check_schema.__func__

    def recording(cls, schema, *args, **kwargs):
        seen.append(schema)
        return original(cls, schema, *args, **kwargs)

    monkeypatch.setattr(jsonschema.Draft202012Validator, "check_schema", classmethod(recording))
    return seen


def object_schema(size: int) -> dict[str, Any]:
    """A valid object schema whose compact JSON is at least `size` bytes."""
    count = size // 29 + 1  # each property is 29 bytes
    schema = {"type": "object", "properties": {f"p{i:06d}": {"type": "integer"} for i in range(count)}}
    assert len(json.dumps(schema, separators=(",", ":"))) >= size
    return schema


def tool(i: int, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": f"f{i}", "parameters": parameters}}


def test_an_oversized_response_format_schema_is_refused_unchecked(client, keys, fake, checked):
    schema = object_schema(MAX_SCHEMA_BYTES + 1)
    response = post(client, keys, "/v1/chat/completions", {"model": MODEL, "messages": HI, "response_format": {
        "type": "json_schema", "json_schema": {"name": "big", "schema": schema}}})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == "response_format" and str(MAX_SCHEMA_BYTES) in error["message"]
    assert checked == [] and fake.requests == []


def test_tools_too_large_together_are_refused_unchecked(client, keys, fake, checked):
    each = MAX_SCHEMA_BYTES - 1024  # every one alone is within the per-schema limit
    count = MAX_TOOLS_SCHEMA_BYTES // each + 1
    tools = [tool(i, object_schema(each - 100)) for i in range(count)]
    assert all(len(json.dumps(t["function"]["parameters"], separators=(",", ":"))) < MAX_SCHEMA_BYTES
               for t in tools)
    response = post(client, keys, "/v1/chat/completions", {"model": MODEL, "messages": HI, "tools": tools})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == "tools" and str(MAX_TOOLS_SCHEMA_BYTES) in error["message"]
    assert checked == [] and fake.requests == []


def test_tools_within_the_budget_together_are_checked_and_served(client, keys, fake, checked):
    tools = [tool(i, object_schema(MAX_TOOLS_SCHEMA_BYTES // 3)) for i in range(2)]
    response = post(client, keys, "/v1/chat/completions", {"model": MODEL, "messages": HI, "tools": tools,
                                                             "tool_choice": "none"})
    assert response.status_code == 200, response.text
    assert len(checked) == 2 and len(fake.requests) == 1
