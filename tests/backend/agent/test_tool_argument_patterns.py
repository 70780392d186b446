"""The calculator's and search_documents' argument patterns: the strings they allow must close
(no character that could end the JSON string or spell the block's end), the engine's tool-call
grammar built from the schemas refuses what SmolLM2-135M wrote when it was free to, and every
expression the calculator's pattern allows is made of tokens its parser reads."""

from __future__ import annotations

import json
import random

import llguidance
import pytest

from backend.agent.tools import ToolError, calculator, search_documents
from backend.agent.tools.calculator import EXPRESSION_PATTERN, FUNCTIONS, MAX_ARGUMENT_CHARS, SPEC, evaluate
from backend.output_constraint import TOOL_CALL_BEGIN, TOOL_CALL_END
from engine.structured_output.params import ToolCallGrammar
from engine.structured_output.tool_calls import tool_call_lark
from tests.backend.agent.tool_fixtures import valid

SEARCH = search_documents.PARAMETERS
# Observed 2026-12-02 with tool_choice "required" and the old schema: the string never closed.
UNCLOSED = "12 * 34}}]</tool_call>  # 12 * 34 = 328.000"


class _ByteTokenizer:
    """One token per byte and an end token: what llguidance.TokenizerWrapper reads."""

    eos_token_id = 256
    bos_token_id = None
    tokens = [bytes([i]) for i in range(256)] + [b""]
    special_token_ids = [256]

    def __call__(self, text: bytes) -> list[int]:
        return list(text)


@pytest.fixture(scope="module")
def accepts():
    """accepts(name, arguments_json) -> whether the engine's required tool-call grammar (the
    calculator and search_documents offered) takes the whole block."""
    tokenizer = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()), n_vocab=257, eos_token=256)
    functions = (("calculator", json.dumps(SPEC.parameters)), ("search_documents", json.dumps(SEARCH)))
    grammar = llguidance.LLMatcher.grammar_from_lark(tool_call_lark(ToolCallGrammar(
        begin=TOOL_CALL_BEGIN, end=TOOL_CALL_END, functions=functions, required=True, parallel=False)))
    assert not llguidance.LLMatcher.validate_grammar_with_warnings(grammar)[0]

    def check(name: str, arguments: str) -> bool:
        matcher = llguidance.LLMatcher(tokenizer, grammar, log_level=0)
        block = f'{TOOL_CALL_BEGIN}[{{"name":"{name}","arguments":{arguments}}}]{TOOL_CALL_END}'
        return matcher.consume_tokens(list(block.encode())) and not matcher.is_error() and matcher.is_accepting()

    return check


def test_the_grammar_refuses_an_expression_that_runs_into_the_block_end(accepts):
    assert accepts("calculator", '{"expression":"12 * 34"}')
    assert accepts("calculator", '{"expression":"sqrt(2) + round(7 / 3, 2) ^ 2"}')
    assert not accepts("calculator", json.dumps({"expression": UNCLOSED}, separators=(",", ":")))
    assert not accepts("calculator", '{"expression":"' + "1" * (MAX_ARGUMENT_CHARS + 1) + '"}')


def test_the_grammar_refuses_a_query_with_markup_or_the_tools_name(accepts):
    assert accepts("search_documents", '{"query":"Halvorsen Bridge designer"}')
    assert accepts("search_documents", '{"query":"who designed the bridge?","top_k":3}')
    for bad in ("search_documents", "bridge</tool_call>", "two\nlines", 'say \\"hi\\"', "[1]"):
        assert not accepts("search_documents", json.dumps({"query": bad}, separators=(",", ":"))), bad


@pytest.mark.parametrize("expression", ["12 * 34", "(1 + 2) * 3 ^ 2 / 7", "7 // 2 % 3", "2 ** 10", "-3.5 + .5",
                                        "max(1, 2, 3) - min(4, 5)", "sqrt(16) + abs(-2) + floor(2.5) + ceil(2.5)"])
def test_the_pattern_allows_the_calculators_expressions(expression):
    assert valid(SPEC, {"expression": expression})
    evaluate(expression)


@pytest.mark.parametrize("expression", [UNCLOSED, "12 * 34 = 408", "1\n+ 2", 'x"', "1e3", "two plus two", "{1}"])
def test_the_pattern_refuses_anything_else(expression):
    assert not valid(SPEC, {"expression": expression})


def test_every_string_of_the_patterns_alphabet_is_read_by_the_parser():
    """Whatever the model writes within the pattern gets a value or a syntax error the model
    can read (ToolError), never an unknown name."""
    pieces = list("0123456789 .+-*/%^(),") + [f"{name}(" for name in sorted(FUNCTIONS)]
    rng = random.Random(15)
    for _ in range(2000):
        expression = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert valid(SPEC, {"expression": expression})
        try:
            evaluate(expression)
        except ToolError as exc:
            # A stray "." is the only character the tokenizer may not take ("1 . 2").
            assert "unknown name" not in exc.message, (expression, exc)
            assert "unexpected character" not in exc.message or "'.'" in exc.message, (expression, exc)


def test_search_queries_in_words_are_valid_and_markup_is_not():
    assert valid(search_documents.spec(retriever=None), {"query": "Wie lang ist die Brücke? 2,340 m"})
    for bad in ("search_documents", "a<b", "a\nb", "{x}", 'a"b', "x" * (search_documents.MAX_QUERY_CHARS + 1)):
        assert not valid(search_documents.spec(retriever=None), {"query": bad}), bad


def test_the_calculator_module_keeps_one_pattern():
    assert SPEC.parameters["properties"]["expression"]["pattern"] == EXPRESSION_PATTERN
    assert calculator.MAX_ARGUMENT_CHARS <= calculator.MAX_EXPRESSION_CHARS
