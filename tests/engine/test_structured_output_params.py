"""StructuredOutputParams / ToolCallGrammar validation, and InvalidStructuredOutputError raised by
LLMEngine.add_request before anything is queued."""

from __future__ import annotations

import json
import re

import pytest

from engine import (EngineConfig, InvalidSamplingParamsError, InvalidStructuredOutputError,
                    LLMEngine, SamplingParams, StructuredOutputParams, ToolCallGrammar)

OBJ = json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]})


def tools(**kw) -> ToolCallGrammar:
    args = dict(begin="<tool_call>", end="</tool_call>", functions=(("f", OBJ),),
                required=True, parallel=False)
    args.update(kw)
    return ToolCallGrammar(**args)


@pytest.mark.parametrize("params, field", [
    (StructuredOutputParams(), "exactly one"),
    (StructuredOutputParams(json=OBJ, regex="a"), "exactly one"),
    (StructuredOutputParams(json="{not json"), "structured_output.json is not valid JSON"),
    (StructuredOutputParams(json="[1, 2]"), "structured_output.json must be a JSON Schema"),
    (StructuredOutputParams(regex=""), "structured_output.regex"),
    (StructuredOutputParams(choice=()), "structured_output.choice"),
    (StructuredOutputParams(choice=("a", 3)), "structured_output.choice[1]"),
    (StructuredOutputParams(choice=["a"]), "structured_output.choice"),
    (StructuredOutputParams(grammar=5), "structured_output.grammar"),
    (StructuredOutputParams(json_object="yes"), "json_object must be a bool"),
    (StructuredOutputParams(tool_calls=tools(begin="")), "tool_calls.begin"),
    (StructuredOutputParams(tool_calls=tools(functions=())), "tool_calls.functions"),
    (StructuredOutputParams(tool_calls=tools(functions=(("f", OBJ), ("f", OBJ)))),
     "declared twice"),
    (StructuredOutputParams(tool_calls=tools(functions=(("f", "{"),))), "functions[0] (f)"),
    (StructuredOutputParams(tool_calls=tools(required="yes")), "tool_calls.required"),
])
def test_validate_names_the_field(params, field):
    with pytest.raises(InvalidStructuredOutputError, match=re.escape(field)):
        params.validate()
    with pytest.raises(InvalidSamplingParamsError):  # the parent type, through SamplingParams
        SamplingParams(structured_output=params).validate(100)


def test_valid_params_pass_and_are_hashable():
    for p in (StructuredOutputParams(json=OBJ), StructuredOutputParams(json_object=True),
              StructuredOutputParams(regex="[a-z]+"), StructuredOutputParams(choice=("x", "y")),
              StructuredOutputParams(grammar='start: "a"+'),
              StructuredOutputParams(tool_calls=tools())):
        p.validate()
        SamplingParams(structured_output=p).validate(100)
        assert hash(p) == hash(StructuredOutputParams(**p.__dict__))
    with pytest.raises(InvalidStructuredOutputError, match="must be a StructuredOutputParams"):
        SamplingParams(structured_output={"json": OBJ}).validate(100)


@pytest.fixture(scope="module")
def engine(tiny_model) -> LLMEngine:
    return LLMEngine(tiny_model, EngineConfig(num_kv_blocks=64, block_size=16, max_model_len=512))


@pytest.mark.parametrize("params, reason", [
    (StructuredOutputParams(json=json.dumps({"type": "integer", "minimum": 5, "maximum": 3})),
     "structured_output.json cannot be compiled"),
    (StructuredOutputParams(json=json.dumps({"type": "object", "required": ["a"],
                                             "properties": {"a": False}})),
     "structured_output.json cannot be compiled"),
    (StructuredOutputParams(regex="a(b"), "structured_output.regex cannot be compiled: .*unclosed"),
    (StructuredOutputParams(grammar="start: undefined_rule"),
     "structured_output.grammar cannot be compiled: .*undefined_rule"),
    (StructuredOutputParams(tool_calls=tools(functions=(
        ("f", json.dumps({"type": "string", "minLength": 3, "maxLength": 1})),))),
     r"structured_output.tool_calls.functions\[0\] \(f\) arguments cannot be compiled"),
    (StructuredOutputParams(json="{"), "structured_output.json is not valid JSON"),
])
def test_add_request_raises_before_queueing(engine, params, reason):
    with pytest.raises(InvalidStructuredOutputError, match=reason):
        engine.add_request("bad", "hello", SamplingParams(structured_output=params, n=2))
    assert not engine.has_unfinished_requests()
    assert engine.stats().num_waiting == 0
    # The id is free: a valid request with it is accepted.
    engine.add_request("bad", "hello", SamplingParams(max_tokens=1))
    engine.abort_request("bad")
    while engine.has_unfinished_requests():
        engine.step()


def test_compiled_once_per_distinct_constraint(engine):
    compiler = engine.grammar_compiler
    so = StructuredOutputParams(json=json.dumps({"type": "object", "properties": {
        "k": {"enum": ["x", "y"]}}, "required": ["k"]}))
    before = compiler.num_compiles
    for i in range(3):
        engine.add_request(f"c{i}", "hello", SamplingParams(max_tokens=4, structured_output=so))
    engine.add_request("c3", "hello", SamplingParams(
        max_tokens=4, structured_output=StructuredOutputParams(json=so.json)))  # equal value
    assert compiler.num_compiles == before + 1
    engine.abort_all_requests()
    while engine.has_unfinished_requests():
        engine.step()
