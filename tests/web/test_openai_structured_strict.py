"""json_schema.strict (OpenAI's strict mode: objects without additionalProperties are closed),
clearer refusals of a schema that is not an object, of a history reusing a tool call id, and
of a tool whose parameters the engine cannot compile (named tools[i].function.parameters)."""

from __future__ import annotations

import json

import pytest

from backend.output_constraint import OutputConstraint, ToolCallFormat, constraint_param
from tests.web.test_openai_api import HI, MODEL, keys, post  # noqa: F401 (fixtures)
from tests.web.test_openai_tools import CALLED, WEATHER, ToolFake, chat
from web.openai_strict_schema import strict_schema

NESTED = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "pet": {"type": "object", "properties": {"kind": {"type": "string"}}},
        "tags": {"type": "array", "items": {"type": "object", "properties": {"t": {"type": "string"}}}},
        "pair": {"type": "array", "prefixItems": [{"type": "object", "properties": {}}]},
        "either": {"anyOf": [{"type": "object", "properties": {"a": {"type": "integer"}}},
                             {"$ref": "#/$defs/thing"}]},
        "open": {"type": "object", "additionalProperties": True},
        "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {}}},
    },
    "$defs": {"thing": {"type": "object", "properties": {"b": {"type": "boolean"}}}},
}


@pytest.fixture
def fake() -> ToolFake:
    return ToolFake()


def schema_request(client, keys, schema, strict):
    fmt = {"type": "json_schema", "json_schema": {"name": "p", "schema": schema, "strict": strict}}
    return post(client, keys, "/v1/chat/completions", {"model": MODEL, "messages": HI, "response_format": fmt})


def closed(schema) -> list[str]:
    """JSON pointers of every object schema that sets additionalProperties: false."""
    found = []

    def walk(node, at):
        if isinstance(node, dict):
            if node.get("additionalProperties") is False:
                found.append(at)
            for k, v in node.items():
                walk(v, f"{at}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{at}/{i}")

    walk(schema, "")
    return sorted(found)


def test_strict_closes_every_object_schema_that_does_not_say(client, keys, fake):
    assert schema_request(client, keys, NESTED, True).status_code == 200
    (_, _, params), = fake.requests
    sent = json.loads(params.structured_output.json)
    assert closed(sent) == sorted(["", "/properties/pet", "/properties/tags/items",
                                   "/properties/pair/prefixItems/0", "/properties/either/anyOf/0",
                                   "/$defs/thing", "/properties/map/additionalProperties"])
    assert sent["properties"]["open"]["additionalProperties"] is True


def test_without_strict_the_schema_is_sent_as_given(client, keys, fake):
    assert schema_request(client, keys, NESTED, False).status_code == 200
    (_, _, params), = fake.requests
    assert json.loads(params.structured_output.json) == NESTED


def test_strict_leaves_allof_branches_open_but_closes_inside_them():
    schema = {"allOf": [{"type": "object", "properties": {"a": {"type": "object", "properties": {}}}}]}
    out = strict_schema(schema)
    assert "additionalProperties" not in out["allOf"][0]
    assert out["allOf"][0]["properties"]["a"]["additionalProperties"] is False


def test_a_strict_tool_gets_closed_parameters(client, keys, fake):
    tool = {"type": "function", "function": {**WEATHER["function"], "strict": True}}
    tool["function"]["parameters"] = {k: v for k, v in tool["function"]["parameters"].items()
                                      if k != "additionalProperties"}
    assert chat(client, keys, tools=[tool]).status_code == 200
    (_, _, params), = fake.requests
    (_, schema), = params.structured_output.tool_calls.functions
    assert json.loads(schema)["additionalProperties"] is False


@pytest.mark.parametrize("schema", ["hello", 5, [1]])
def test_a_schema_that_is_not_an_object_says_so(client, keys, fake, schema):
    response = schema_request(client, keys, schema, False)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "response_format"
    assert "response_format.json_schema.schema must be a JSON Schema: a JSON object" in error["message"]
    assert "not valid JSON" not in error["message"]


def test_two_history_calls_sharing_an_id_are_refused(client, keys, fake):
    again = {**CALLED, "tool_calls": CALLED["tool_calls"] * 2}
    response = chat(client, keys, messages=[{"role": "user", "content": "hi"}, again])
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "messages[1].tool_calls"
    across = [{"role": "user", "content": "hi"}, CALLED,
              {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}, CALLED]
    response = chat(client, keys, messages=across)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "messages[3].tool_calls"
    assert fake.requests == []


def test_each_tool_function_carries_its_own_param(client, keys, fake):
    other = {"type": "function", "function": {"name": "other"}}
    chat(client, keys, tools=[other, WEATHER], tool_choice={"type": "function", "function": {"name": "get_weather"}})
    (_, _, params), = fake.requests
    assert params.structured_output.tool_calls.params == ("tools[1].function.parameters",)


def test_the_engines_refusal_of_one_function_names_its_field():
    tools = ToolCallFormat(functions=(("a", "{}"), ("b", "{}")), required=True, parallel=True,
                           params=("tools[0].function.parameters", "tools[3].function.parameters"))
    constraint = OutputConstraint(tool_calls=tools, param="tools")
    message = "structured_output.tool_calls.functions[1] (b) arguments allows no output"
    assert constraint_param(constraint, message) == "tools[3].function.parameters"
    assert constraint_param(constraint, "structured_output.tool_calls cannot be compiled: x") == "tools"
