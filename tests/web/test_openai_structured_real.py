"""Structured output and tool calls from the real model (SmolLM2-135M-Instruct) through the
official `openai` client (slow: loads the model). The grammar makes even this small model's
replies valid every time: JSON that follows a schema, calls to declared functions with valid
arguments; streamed deltas join to the non-streamed reply; the client's `parse` helper and a
tool round trip work; a schema that cannot be satisfied or is malformed is a 400 naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterator, Literal

import jsonschema
import openai
import pydantic
import pytest
from starlette.testclient import TestClient

from backend.settings import Settings
from web.app import create_app

from .conftest import app_state, sign_up, user_id, use_session

pytestmark = pytest.mark.slow

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 24},
        "age": {"type": "integer", "minimum": 18, "maximum": 99},
        "role": {"enum": ["admin", "editor", "viewer"]},
        "score": {"type": "number", "minimum": 0, "maximum": 10},
        "address": {"type": "object", "properties": {
            "city": {"type": "string", "minLength": 1, "maxLength": 24},
            "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
            "required": ["city", "zip"], "additionalProperties": False},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 12}, "minItems": 1, "maxItems": 3},
    },
    "required": ["name", "age", "role", "score", "address", "tags"],
    "additionalProperties": False,
}
WEATHER_PARAMETERS = {"type": "object", "properties": {
    "city": {"type": "string", "minLength": 1, "maxLength": 40},
    "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city", "unit"], "additionalProperties": False}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "The current weather of a city.",
                                      "parameters": WEATHER_PARAMETERS}},
    {"type": "function", "function": {"name": "get_time", "description": "The local time in a time zone.",
                                      "parameters": {"type": "object", "properties": {
                                          "zone": {"type": "string", "minLength": 1, "maxLength": 40}},
                                          "required": ["zone"], "additionalProperties": False}}},
]
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
CITIES = ["Paris", "Rome", "Oslo", "Lima", "Tokyo", "Cairo", "Quito", "Perth", "Bern", "Dakar"]


@pytest.fixture(scope="module")
def api(real_generator: Any, sqlite_template: Path, tmp_path_factory) -> Iterator[openai.OpenAI]:
    """One app and one API key for the module, on a copy of the migrated SQLite template (the
    database is not what these tests are about)."""
    database = tmp_path_factory.mktemp("db") / "api.sqlite3"
    shutil.copy(sqlite_template, database)
    settings = Settings(database_url=f"sqlite:///{database}", max_tokens=256, temperature=0.0,
                        data_dir=str(database.parent))
    with TestClient(create_app(settings, generator=real_generator), follow_redirects=False) as client:
        uid = user_id(client, sign_up(client, "alice"))
        _, secret = app_state(client).api_keys.create_key(uid, "tests")
        use_session(client, None)
        yield openai.OpenAI(base_url="http://testserver/v1", api_key=secret, http_client=client,
                            max_retries=0, timeout=300)


def test_twenty_json_schema_replies_parse_and_validate(api):
    for i in range(20):
        reply = api.chat.completions.create(
            model=api.models.list().data[0].id, seed=i, temperature=0.8, max_tokens=200,
            messages=[{"role": "user", "content": f"Invent a user of our app who lives in {CITIES[i % 10]}."}],
            response_format={"type": "json_schema", "json_schema": {"name": "user", "schema": PERSON, "strict": True}})
        choice = reply.choices[0]
        assert choice.finish_reason == "stop", choice.message.content
        jsonschema.validate(json.loads(choice.message.content), PERSON)


def test_a_json_object_reply_is_an_object(api):
    # Greedy: sampled free-form JSON from this model can run on past any max_tokens.
    reply = api.chat.completions.create(model=api.models.list().data[0].id, temperature=0, max_tokens=200,
                                        response_format={"type": "json_object"},
                                        messages=[{"role": "user", "content": "Give the name and the age of a cat."}])
    choice = reply.choices[0]
    assert choice.finish_reason == "stop" and isinstance(json.loads(choice.message.content), dict)


def test_twenty_required_tool_calls_name_a_declared_function_with_valid_arguments(api):
    model = api.models.list().data[0].id
    for i in range(20):
        question = (f"What is the weather in {CITIES[i % 10]}?" if i % 2 == 0
                    else f"What time is it in {CITIES[i % 10]}?")
        reply = api.chat.completions.create(model=model, seed=i, temperature=0.8, max_tokens=200, tools=TOOLS,
                                            tool_choice="required", messages=[{"role": "user", "content": question}])
        choice = reply.choices[0]
        assert choice.finish_reason == "tool_calls" and choice.message.content is None
        assert choice.message.tool_calls, choice
        for call in choice.message.tool_calls:
            assert call.type == "function" and call.id.startswith("call_")
            jsonschema.validate(json.loads(call.function.arguments), SCHEMAS[call.function.name])


def test_a_named_tool_choice_calls_that_function_once(api):
    reply = api.chat.completions.create(
        model=api.models.list().data[0].id, tools=TOOLS, messages=[{"role": "user", "content": "Hello!"}],
        tool_choice={"type": "function", "function": {"name": "get_time"}})
    call, = reply.choices[0].message.tool_calls
    assert call.function.name == "get_time"
    jsonschema.validate(json.loads(call.function.arguments), SCHEMAS["get_time"])


def test_auto_answers_a_question_that_needs_no_tool_in_text(api):
    reply = api.chat.completions.create(model=api.models.list().data[0].id, tools=TOOLS, tool_choice="auto",
                                        messages=[{"role": "user", "content": "What is the capital of France?"}])
    choice = reply.choices[0]
    assert choice.finish_reason == "stop" and not choice.message.tool_calls
    assert "Paris" in choice.message.content


def test_streamed_tool_call_deltas_join_to_the_non_streamed_reply(api):
    body = dict(model=api.models.list().data[0].id, tools=TOOLS, tool_choice="required", temperature=0,
                parallel_tool_calls=True, messages=[{"role": "user", "content": "Weather in Paris and in Rome?"}])
    plain = api.chat.completions.create(**body).choices[0]
    chunks = list(api.chat.completions.create(**body, stream=True))
    calls: dict[int, dict[str, str]] = {}
    content = ""
    for chunk in chunks:
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                slot = calls.setdefault(delta.index, {"name": "", "arguments": ""})
                if delta.function.name:
                    slot["name"] += delta.function.name
                slot["arguments"] += delta.function.arguments or ""
    assert content == "" and plain.message.content is None
    assert [calls[i] for i in sorted(calls)] == [
        {"name": c.function.name, "arguments": c.function.arguments} for c in plain.message.tool_calls]
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == plain.finish_reason == "tool_calls"


@pytest.mark.parametrize("schema", [
    {"type": "integer", "minimum": 5, "maximum": 1},  # valid JSON Schema, no value satisfies it
    {"type": "object", "properties": {"a": {"type": "strng"}}},  # not a JSON Schema
])
def test_an_impossible_or_malformed_schema_is_a_400_naming_the_param(api, schema):
    with pytest.raises(openai.BadRequestError) as caught:
        api.chat.completions.create(model=api.models.list().data[0].id, messages=[{"role": "user", "content": "hi"}],
                                    response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}})
    assert caught.value.param == "response_format"
    bad_tool = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"n": schema}, "required": ["n"]}}}]
    with pytest.raises(openai.BadRequestError) as caught:
        api.chat.completions.create(model=api.models.list().data[0].id, tools=bad_tool,
                                    messages=[{"role": "user", "content": "hi"}])
    assert caught.value.param.startswith("tools")


class Address(pydantic.BaseModel):
    city: str = pydantic.Field(max_length=24)
    country: str = pydantic.Field(max_length=24)


class Person(pydantic.BaseModel):
    name: str = pydantic.Field(max_length=24)
    age: int = pydantic.Field(ge=0, le=120)
    role: Literal["admin", "editor", "viewer"]
    address: Address


def test_the_clients_parse_helper_returns_the_pydantic_object(api):
    reply = api.chat.completions.parse(model=api.models.list().data[0].id, response_format=Person, max_tokens=200,
                                       messages=[{"role": "user", "content": "Invent a person who lives in Rome."}])
    parsed = reply.choices[0].message.parsed
    assert isinstance(parsed, Person) and isinstance(parsed.address, Address)


def test_a_tool_round_trip(api):
    model = api.models.list().data[0].id
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris, in celsius?"}]
    first = api.chat.completions.create(model=model, tools=TOOLS, tool_choice="required", messages=messages)
    call = first.choices[0].message.tool_calls[0]
    messages.append(first.choices[0].message)  # the SDK's message object, as programs send it back
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "Sunny, 24 degrees celsius."})
    final = api.chat.completions.create(model=model, tools=TOOLS, tool_choice="auto", messages=messages,
                                        max_tokens=64)
    choice = final.choices[0]
    assert not choice.message.tool_calls and choice.message.content and choice.finish_reason in ("stop", "length")


def test_completions_take_vllms_constraints(api):
    model = api.models.list().data[0].id
    prompt = "<|im_start|>user\nIs the sky blue? Answer yes or no.<|im_end|>\n<|im_start|>assistant\n"
    choice = api.completions.create(model=model, prompt=prompt, max_tokens=8, temperature=1.0, seed=3,
                                    extra_body={"guided_choice": ["maybe", "never"]}).choices[0]
    assert choice.text in ("maybe", "never") and choice.finish_reason == "stop"
    digits = api.completions.create(model=model, prompt="My PIN is ", max_tokens=10,
                                    extra_body={"structured_outputs": {"regex": "[0-9]{4}"}}).choices[0]
    assert len(digits.text) == 4 and digits.text.isdigit()
    person = api.completions.create(model=model, prompt="A user as JSON: ", max_tokens=200,
                                    extra_body={"guided_json": PERSON}).choices[0]
    jsonschema.validate(json.loads(person.text), PERSON)


README_USER = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
               "required": ["name", "age"]}


@pytest.mark.parametrize("seed", range(5))
def test_the_readme_strict_example_returns_only_the_declared_keys(api, seed):
    # README /v1: no additionalProperties in the schema; strict closes it (the model once
    # added a "required" key without it).
    reply = api.chat.completions.create(
        model=api.models.list().data[0].id, seed=seed, max_tokens=200,
        messages=[{"role": "user", "content": "Invent a user."}],
        response_format={"type": "json_schema", "json_schema": {"name": "user", "schema": README_USER,
                                                                "strict": True}})
    user = json.loads(reply.choices[0].message.content)
    assert set(user) == {"name", "age"}
