"""response_format and vLLM's structured_outputs / guided_* on /v1 with a scripted generator:
validation (400 naming the field), the constraint and prompt instructions that reach the
generator, and a constraint the engine refuses mapped to a 400 naming the field."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from backend.generator import ChatMessage, InvalidOutputConstraint
from backend.output_constraint import OutputConstraint
from backend.schema_prompt import OBJECT_INSTRUCTIONS
from tests.web.test_openai_api import HI, MODEL, api, keys, post  # noqa: F401 (fixtures)
from tests.web.test_openai_tools import ToolFake

PERSON = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
          "required": ["name", "age"], "additionalProperties": False}
SCHEMA_FORMAT = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}}


@pytest.fixture
def fake() -> ToolFake:
    return ToolFake()


def request(client, keys, path: str = "/v1/chat/completions", **body: Any):
    base = {"model": MODEL, **({"messages": HI} if "chat" in path else {"prompt": "hi"})}
    return post(client, keys, path, {**base, **body})


@pytest.mark.parametrize("path, change, param", [
    ("/v1/chat/completions", {"response_format": "json"}, "response_format"),
    ("/v1/chat/completions", {"response_format": {"type": "yaml"}}, "response_format"),
    ("/v1/chat/completions", {"response_format": {"type": "json_schema"}}, "response_format"),
    ("/v1/chat/completions", {"response_format": {"type": "json_schema", "json_schema": {"schema": PERSON}}},
     "response_format"),
    ("/v1/chat/completions", {"response_format": {"type": "json_schema", "json_schema": {
        "name": "p", "schema": {"type": "object", "properties": {"a": {"type": "integr"}}}}}}, "response_format"),
    ("/v1/chat/completions", {"response_format": {"type": "json_schema", "json_schema": {
        "name": "p", "schema": {"type": "array", "minItems": -1}}}}, "response_format"),
    ("/v1/chat/completions", {"response_format": {"type": "json_schema", "json_schema": {
        "name": "p", "schema": [1]}}}, "response_format"),
    ("/v1/chat/completions", {"response_format": {"type": "json_schema", "json_schema": {
        "name": "p", "schema": PERSON, "strict": "yes"}}}, "response_format"),
    ("/v1/completions", {"structured_outputs": {"regex": "a+", "choice": ["a"]}}, "structured_outputs"),
    ("/v1/completions", {"structured_outputs": {}}, "structured_outputs"),
    ("/v1/completions", {"structured_outputs": {"json": {"type": 5}}}, "structured_outputs"),
    ("/v1/completions", {"structured_outputs": {"choice": []}}, "structured_outputs"),
    ("/v1/completions", {"guided_json": "{not json"}, "guided_json"),
    ("/v1/completions", {"guided_choice": "yes"}, "guided_choice"),
    ("/v1/completions", {"guided_regex": ""}, "guided_regex"),
    ("/v1/completions", {"guided_regex": "a+", "guided_choice": ["a"]}, "guided_choice"),
    ("/v1/completions", {"response_format": {"type": "json_object"}, "guided_regex": "a"}, "guided_regex"),
    ("/v1/completions", {"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
])
def test_bad_constraints_are_400_naming_the_field(client, keys, fake, path, change, param):
    response = request(client, keys, path, **change)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param and error["message"]
    assert fake.requests == []


def test_a_malformed_schema_through_the_client(api, fake):
    with pytest.raises(openai.BadRequestError) as caught:
        api.chat.completions.create(model=MODEL, messages=HI, response_format={
            "type": "json_schema", "json_schema": {"name": "p", "schema": {"type": "object", "required": 3}}})
    assert caught.value.param == "response_format" and "JSON Schema" in caught.value.message
    assert fake.requests == []


def test_json_schema_constrains_and_is_told_in_the_prompt(client, keys, fake):
    assert request(client, keys, response_format=SCHEMA_FORMAT).status_code == 200
    (_, messages, params), = fake.requests
    constraint = params.structured_output
    assert constraint == OutputConstraint(json=constraint.json, param="response_format")
    assert json.loads(constraint.json) == PERSON
    system, user = messages
    assert system.role == "system" and json.loads(system.content.split("\n", 1)[1]) == PERSON
    assert user == ChatMessage("user", "hi there")


def test_the_instructions_go_before_the_clients_system_prompt(client, keys, fake):
    messages = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "hi"}]
    request(client, keys, messages=messages, response_format={"type": "json_object"})
    (_, sent, params), = fake.requests
    assert params.structured_output == OutputConstraint(json_object=True, param="response_format")
    assert sent == [ChatMessage("system", f"{OBJECT_INSTRUCTIONS}\n\nBe terse."), ChatMessage("user", "hi")]


def test_text_response_format_changes_nothing(client, keys, fake):
    request(client, keys, response_format={"type": "text"})
    (_, messages, params), = fake.requests
    assert params.structured_output is None and messages == [ChatMessage("user", "hi there")]


@pytest.mark.parametrize("change, expected", [
    ({"structured_outputs": {"regex": "[0-9]+"}}, OutputConstraint(regex="[0-9]+", param="structured_outputs")),
    ({"structured_outputs": {"choice": ["yes", "no"]}},
     OutputConstraint(choice=("yes", "no"), param="structured_outputs")),
    ({"structured_outputs": {"grammar": 'start: "a"'}}, OutputConstraint(grammar='start: "a"', param="structured_outputs")),
    ({"structured_outputs": {"json_object": True}}, OutputConstraint(json_object=True, param="structured_outputs")),
    ({"structured_outputs": {"json": '{"type":"integer"}'}},
     OutputConstraint(json='{"type":"integer"}', param="structured_outputs")),
    ({"guided_json": {"type": "integer"}}, OutputConstraint(json='{"type":"integer"}', param="guided_json")),
    ({"guided_regex": "a|b"}, OutputConstraint(regex="a|b", param="guided_regex")),
    ({"guided_choice": ["x"]}, OutputConstraint(choice=("x",), param="guided_choice")),
    ({"guided_grammar": "start: x"}, OutputConstraint(grammar="start: x", param="guided_grammar")),
    ({"response_format": {"type": "json_object"}}, OutputConstraint(json_object=True, param="response_format")),
])
def test_completions_take_vllms_extension_fields(client, keys, fake, change, expected):
    assert request(client, keys, "/v1/completions", **change).status_code == 200
    (_, messages, params), = fake.requests
    assert params.structured_output == expected
    assert messages == [ChatMessage("prompt", "hi")]  # a raw prompt is left alone


def test_chat_takes_the_extension_fields_without_prompt_instructions(client, keys, fake):
    request(client, keys, structured_outputs={"choice": ["yes", "no"]})
    (_, messages, params), = fake.requests
    assert params.structured_output.choice == ("yes", "no") and messages == [ChatMessage("user", "hi there")]


def refusing(method):
    """`method` (the fake's stream or stream_prompt), refusing every constraint as the engine
    refuses one it cannot compile."""

    def stream(request_id, text_or_messages, params):
        if params.structured_output is not None:
            raise InvalidOutputConstraint(f"{params.structured_output.param}: unsatisfiable schema",
                                          params.structured_output.param)
        return method(request_id, text_or_messages, params)

    return stream


@pytest.mark.parametrize("path, change, param", [
    ("/v1/chat/completions", {"response_format": SCHEMA_FORMAT}, "response_format"),
    ("/v1/chat/completions", {"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
    ("/v1/completions", {"guided_regex": "(("}, "guided_regex"),
])
def test_a_constraint_the_engine_refuses_is_400_naming_the_field(client, keys, fake, path, change, param):
    fake.stream, fake.stream_prompt = refusing(fake.stream), refusing(fake.stream_prompt)
    response = request(client, keys, path, **change)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == param and "unsatisfiable" in error["message"]
    assert error["code"] == "invalid_output_constraint"
    # Nothing was held: the next request goes through.
    assert request(client, keys, path).status_code == 200
