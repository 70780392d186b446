"""ToolCallGrammar: outputs parse into the declared shape (required / parallel / auto / named),
on the tiny model (random weights) and on the real SmolLM2 model; JSON Schema on the real model."""

from __future__ import annotations

import json

import jsonschema
import pytest

from engine import (EngineConfig, LLMEngine, SamplingParams, StructuredOutputParams,
                    ToolCallGrammar)

WEATHER = {"type": "object", "properties": {
    "city": {"type": "string", "maxLength": 12},
    "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city", "unit"],
    "additionalProperties": False}
ADD = {"type": "object", "properties": {"a": {"type": "integer", "minimum": -99, "maximum": 99},
                                        "b": {"type": "integer", "minimum": -99, "maximum": 99}},
       "required": ["a", "b"], "additionalProperties": False}
FUNCTIONS = (("get_weather", json.dumps(WEATHER)), ("add", json.dumps(ADD)))
SCHEMAS = {"get_weather": WEATHER, "add": ADD}
BEGIN, END = "<tool_call>", "</tool_call>"


def tools(required: bool, parallel: bool, functions=FUNCTIONS) -> StructuredOutputParams:
    return StructuredOutputParams(tool_calls=ToolCallGrammar(
        begin=BEGIN, end=END, functions=functions, required=required, parallel=parallel))


def parse_block(text: str) -> list[dict]:
    """The calls of a tagged block, each checked against its function's schema."""
    assert text.startswith(BEGIN) and text.endswith(END), text
    calls = json.loads(text[len(BEGIN):-len(END)])
    assert isinstance(calls, list) and calls
    for call in calls:
        assert list(call) == ["name", "arguments"]
        jsonschema.validate(call["arguments"], SCHEMAS[call["name"]])
    return calls


@pytest.fixture(scope="module")
def tiny_engine(tiny_model) -> LLMEngine:
    return LLMEngine(tiny_model, EngineConfig(num_kv_blocks=256, block_size=16, max_model_len=1024))


def sampled(so, seeds=range(6), max_tokens=400, **kw) -> list[SamplingParams]:
    return [SamplingParams(max_tokens=max_tokens, temperature=1.0, seed=s, structured_output=so,
                           **kw) for s in seeds]


@pytest.mark.parametrize("parallel", [False, True])
def test_required(tiny_engine, parallel):
    outs = tiny_engine.generate(["call"] * 6, sampled(tools(required=True, parallel=parallel)))
    counts = []
    for out in outs:
        assert out.finish_reason == "stop"
        calls = parse_block(out.text)
        counts.append(len(calls))
    if not parallel:
        assert counts == [1] * 6


def test_named_function_is_one_function_required(tiny_engine):
    so = tools(required=True, parallel=False, functions=(FUNCTIONS[1],))
    for out in tiny_engine.generate(["call"] * 4, sampled(so, seeds=range(4))):
        assert [c["name"] for c in parse_block(out.text)] == ["add"]


def test_auto_is_text_or_one_block(tiny_engine):
    lt = tiny_engine.tokenizer.encode("<")[0]
    so = tools(required=False, parallel=True)
    # '<' pushed down: the model writes text, which may not start the tag.
    for out in tiny_engine.generate(["hi"] * 4, sampled(so, seeds=range(4), max_tokens=30,
                                                         logit_bias={lt: -100.0})):
        assert out.text and not out.text.startswith("<")
    # '<' pushed up: the reply starts with '<', and text may not become the tag: a block.
    for out in tiny_engine.generate(["hi"] * 4, sampled(so, seeds=range(4), max_tokens=150,
                                                         logit_bias={lt: 100.0})):
        assert out.text.startswith("<")
        if out.text.startswith(BEGIN) and out.finish_reason == "stop":
            parse_block(out.text)


@pytest.mark.parametrize("lead", ["", " ", "\n", " \t\r\n "])
def test_auto_text_never_hides_a_block_after_whitespace(tiny_engine, lead):
    # A reader skips leading whitespace before the tag: the grammar must not let an unchecked
    # block (an undeclared function, arguments against the schema) through as "text".
    forged = lead + '<tool_call>[{"name":"rm_rf","arguments":{"city":123}}]</tool_call>'
    matcher = tiny_engine.grammar_compiler.matcher(tools(required=False, parallel=True))
    assert not all(matcher.consume(t) for t in tiny_engine.tokenizer.encode(forged))
    plain = tiny_engine.grammar_compiler.matcher(tools(required=False, parallel=True))
    assert all(plain.consume(t) for t in tiny_engine.tokenizer.encode(lead + "no call < here"))


def test_tool_call_grammar_text_shape():
    from engine.structured_output.tool_calls import tool_call_lark
    text = tool_call_lark(ToolCallGrammar(BEGIN, END, (('we"ird\\name', "true"),), False, False))
    assert text.splitlines()[0] == "start: block | TEXT"
    assert '"{\\"name\\":\\"we\\\\\\"ird\\\\\\\\name\\",\\"arguments\\":"' in text


# -- the real model ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_engine(loaded_model) -> LLMEngine:
    return LLMEngine(loaded_model, EngineConfig(num_kv_blocks=512, block_size=16,
                                                max_model_len=2048))


def _encode(engine, system: str, user: str) -> list[int]:
    from engine import encode_conversation
    return encode_conversation(engine.chat_template, engine.tokenizer,
                               [{"role": "system", "content": system},
                                {"role": "user", "content": user}])


REAL_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 30},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "pet": {"enum": ["cat", "dog", "none"]},
        "scores": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 10},
                   "minItems": 1, "maxItems": 4},
        "address": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30},
                                                     "zip": {"type": "string",
                                                             "pattern": "^[0-9]{5}$"}},
                    "required": ["city", "zip"], "additionalProperties": False},
    },
    "required": ["name", "age", "pet", "scores", "address"],
    "additionalProperties": False,
}


@pytest.mark.slow
def test_real_model_json_schema(real_engine):
    prompt = _encode(real_engine, "You answer in JSON.", "Describe a person living in Paris.")
    outs = real_engine.generate([prompt] * 5, [
        SamplingParams(max_tokens=150, temperature=0.8, seed=s,
                       structured_output=StructuredOutputParams(json=json.dumps(REAL_SCHEMA)))
        for s in range(5)])
    for out in outs:
        assert out.finish_reason == "stop", out.text
        jsonschema.validate(json.loads(out.text), REAL_SCHEMA)


@pytest.mark.slow
@pytest.mark.parametrize("required, parallel", [(True, False), (True, True)])
def test_real_model_tool_calls(real_engine, required, parallel):
    system = ("You can call functions. To call one, reply with <tool_call>[{\"name\": ..., "
              "\"arguments\": {...}}]</tool_call>. Functions: get_weather(city, unit), add(a, b).")
    prompt = _encode(real_engine, system, "What is the weather in Oslo?")
    outs = real_engine.generate([prompt] * 4, sampled(tools(required, parallel), seeds=range(4),
                                                      max_tokens=120))
    for out in outs:
        assert out.finish_reason == "stop", out.text
        parse_block(out.text)
