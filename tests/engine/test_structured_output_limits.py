"""Constraints that cannot be used are refused at compile time (InvalidStructuredOutputError,
short message naming the field), and a grammar failure mid-decode ends that request alone."""

from __future__ import annotations

import json

import pytest

from engine import EngineConfig, LLMEngine, SamplingParams, StructuredOutputParams
from engine.errors import InvalidStructuredOutputError
from engine.structured_output.compiler import GrammarCompiler
from engine.structured_output.matcher import GrammarMatcher

EMPTY = [
    StructuredOutputParams(json=json.dumps({"$ref": "#"})),
    StructuredOutputParams(json=json.dumps({"$defs": {"a": {"$ref": "#/$defs/b"},
                                                      "b": {"$ref": "#/$defs/a"}},
                                            "$ref": "#/$defs/a"})),
    StructuredOutputParams(json=json.dumps({"anyOf": [{"$ref": "#"}]})),
    StructuredOutputParams(regex="[^\\x00-\\U0010FFFF]"),
    StructuredOutputParams(grammar='root ::= root "a"'),
]
TOO_BIG = [
    StructuredOutputParams(regex="a{1000000}"),
    StructuredOutputParams(json=json.dumps(
        {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(2000)}})),
    StructuredOutputParams(json=json.dumps(
        {"type": "object", "properties": {"x": {"$ref": "#"}}, "required": ["x"]})),
]


@pytest.fixture(scope="module")
def compiler(tiny_model) -> GrammarCompiler:
    return GrammarCompiler(tiny_model.tokenizer, tiny_model.config.vocab_size)


@pytest.mark.parametrize("params", EMPTY, ids=lambda p: p.kind)
def test_an_empty_language_is_refused(compiler, params):
    with pytest.raises(InvalidStructuredOutputError, match=rf"structured_output\.{params.kind} allows no output"):
        compiler.matcher(params)


@pytest.mark.parametrize("params", TOO_BIG, ids=lambda p: p.kind)
def test_a_build_limit_is_refused_at_compile_time_with_a_short_message(compiler, params):
    with pytest.raises(InvalidStructuredOutputError) as info:
        compiler.matcher(params)
    message = str(info.value)
    assert message.startswith(f"structured_output.{params.kind} is too complex: ")
    assert "<state>" not in message and "\n" not in message and len(message) < 300


def test_an_empty_output_grammar_that_accepts_it_still_compiles(compiler):
    compiler.matcher(StructuredOutputParams(choice=("yes", "no")))
    compiler.matcher(StructuredOutputParams(regex="ab+"))


def test_a_grammar_failing_mid_decode_ends_that_request_alone(tiny_model, monkeypatch):
    engine = LLMEngine(tiny_model, EngineConfig(num_kv_blocks=64, block_size=16, max_model_len=512))
    failing = StructuredOutputParams(regex="[a-z]+")
    plain = SamplingParams(max_tokens=8, temperature=0)
    alone = engine.generate("Hello", plain)[0]
    real_consume = GrammarMatcher.consume

    def consume(self, token_id):  # the library hits a limit on the 2nd token
        if self.num_consumed == 1:
            self.fail("Parser Error: Too many items\n<state>\nTokens: secret grammar text")
            return False
        return real_consume(self, token_id)

    monkeypatch.setattr(GrammarMatcher, "consume", consume)
    bad, good = engine.generate(["Hello", "Hello"], [
        SamplingParams(max_tokens=8, temperature=0, structured_output=failing), plain])
    assert bad.finish_reason == "error"
    assert bad.error.startswith("structured output failed at output token 2: Parser Error")
    assert "<state>" not in bad.error and "secret" not in bad.error
    assert (good.finish_reason, good.new_token_ids) == (alone.finish_reason, alone.new_token_ids)
    assert good.error is None
    assert not engine.has_unfinished_requests()


def test_a_tool_function_whose_arguments_fail_is_named(compiler):
    from engine import ToolCallGrammar
    tools = ToolCallGrammar(begin="<tool_call>", end="</tool_call>", required=True, parallel=True,
                            functions=(("ok", json.dumps({"type": "object"})),
                                       ("loop", json.dumps({"$ref": "#"}))))
    with pytest.raises(InvalidStructuredOutputError) as info:
        compiler.matcher(StructuredOutputParams(tool_calls=tools))
    assert str(info.value).startswith(
        "structured_output.tool_calls.functions[1] (loop) arguments allows no output")
