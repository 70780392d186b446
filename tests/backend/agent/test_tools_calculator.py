"""The calculator tool: its schema, an oracle over random expression trees (Python's Fraction
arithmetic, computed from the tree, never from the text), precedence, and hostile inputs."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from backend.agent.tools import ToolError
from backend.agent.tools.calculator import MAX_BITS, SPEC, evaluate, format_value
from backend.agent.tools.arithmetic import addends
from tests.backend.agent.tool_fixtures import context, valid


def test_schema_accepts_an_expression_and_rejects_everything_else():
    assert valid(SPEC, {"expression": "1 + 2"})
    for bad in ({}, {"expression": ""}, {"expression": 3}, {"expression": "1" * 501},
                {"expression": "1", "extra": 1}, ["1"]):
        assert not valid(SPEC, bad), bad


# --- oracle ----------------------------------------------------------------------------------

OPS = ("+", "-", "*", "/", "//", "%", "^")


def _number(rng: random.Random) -> tuple[str, Fraction]:
    kind = rng.randrange(3)
    if kind == 0:
        n = rng.randrange(0, 1000)
        return str(n), Fraction(n)
    if kind == 1:
        whole, frac = rng.randrange(0, 100), rng.randrange(0, 1000)
        return f"{whole}.{frac:03d}", Fraction(whole) + Fraction(frac, 1000)
    mantissa, exponent = rng.randrange(1, 100), rng.randrange(-4, 5)
    return f"{mantissa}e{exponent}", Fraction(mantissa) * Fraction(10) ** exponent


def _tree(rng: random.Random, depth: int) -> tuple[str, Fraction]:
    """(text, value) of a random expression; ZeroDivisionError when the value is undefined."""
    if depth == 0 or rng.random() < 0.25:
        return _number(rng)
    if rng.random() < 0.15:
        text, value = _tree(rng, depth - 1)
        return f"-({text})", -value
    op = rng.choice(OPS)
    left_text, left = _tree(rng, depth - 1)
    if op == "^":
        exponent = rng.randrange(-3, 4)
        if left == 0 and exponent < 0:
            raise ZeroDivisionError
        return f"({left_text}) ^ ({exponent})", left**exponent
    right_text, right = _tree(rng, depth - 1)
    value = {"+": lambda: left + right, "-": lambda: left - right, "*": lambda: left * right,
             "/": lambda: left / right, "//": lambda: Fraction(left // right), "%": lambda: left % right}[op]()
    return f"({left_text}) {op} ({right_text})", value


def test_random_expressions_match_fraction_arithmetic():
    rng = random.Random(20261202)
    checked = 0
    while checked < 400:
        try:
            text, expected = _tree(rng, 4)
        except ZeroDivisionError:
            continue
        if max(abs(expected.numerator).bit_length(), expected.denominator.bit_length()) > MAX_BITS:
            continue
        value = evaluate(text)
        assert value.exact, text
        assert value.q == expected, text
        checked += 1


def test_division_by_zero_inside_a_random_tree_is_a_tool_error():
    for text in ("1/(2-2)", "5 // (0.5 - 1/2)", "3 % 0", "0 ^ -1", "(1 - 1) ^ (-2)"):
        with pytest.raises(ToolError, match="division by zero"):
            evaluate(text)


@pytest.mark.parametrize("text, expected", [
    ("2 + 3 * 4", 14), ("7 - 2 - 1", 4), ("8 / 2 / 2", 2), ("2 ^ 3 ^ 2", 512), ("2 ** 3 ** 2", 512),
    ("-2 ^ 2", -4), ("(-2) ^ 2", 4), ("2 ^ -1", Fraction(1, 2)), ("-7 // 2", -4), ("-7 % 3", 2),
    ("7 // 2 * 2", 6), ("--3", 3), ("+-3", -3), ("1.5e2", 150), (".5", Fraction(1, 2)), ("3.", 3),
    ("0.1 + 0.2", Fraction(3, 10)), ("sqrt(16/9)", Fraction(4, 3)), ("abs(-2.5)", Fraction(5, 2)),
    ("round(2.5)", 3), ("round(3.5)", 4), ("round(-2.5)", -3), ("round(0.125, 2)", Fraction(13, 100)),
    ("round(2.675, 2)", Fraction(268, 100)), ("round(1250, -2)", 1300), ("min(3, 1, 2)", 1),
    ("max(3, 1, 2)", 3), ("floor(-1.5)", -2), ("ceil(-1.5)", -1), ("8 ^ (1/3)", 2), ("(4/9) ^ 0.5", Fraction(2, 3)),
    ("  1 +\t2  ", 3), ("SQRT(4)", 2), ("0 ^ 0", 1), ("(1 - 1) ^ 0", 1),
])
def test_precedence_and_functions(text, expected):
    value = evaluate(text)
    assert value.exact
    assert value.q == expected


def test_irrational_results_are_marked_inexact_and_close():
    value = evaluate("sqrt(2)")
    assert not value.exact
    assert abs(value.q * value.q - 2) < Fraction(1, 10**45)
    assert format_value(value).startswith("≈ 1.41421356237309504880")
    assert not evaluate("2 ^ 0.5 + 1").exact


def test_formatting_and_the_tool_result():
    assert format_value(evaluate("1/3")) == "1/3 (≈ 0.333333333333333333333333333333)"
    assert format_value(evaluate("2^100")) == str(2**100)
    # A fraction with a finite decimal expansion is that decimal, exactly (7.2 + 1.05 was "33/4 (≈ 8.25)").
    assert format_value(evaluate("7.2 + 1.05")) == "8.25"
    assert format_value(evaluate("96.40 * 3")) == "289.2"
    assert format_value(evaluate("1 / 1024")) == "0.0009765625"
    assert format_value(evaluate("1 / 2^120")).startswith(f"1/{2**120} (≈ ")  # more digits than shown
    result = SPEC.run(context(), {"expression": "10 / 4"})
    assert result.content == "10 / 4 = 2.5"
    assert result.data == {"expression": "10 / 4", "result": "2.5", "exact": True,
                           "numerator": "5", "denominator": "2"}
    assert "10 / 4" in result.summary and result.sources == ()


@pytest.mark.parametrize("expression, shown", [
    ("16.50 * 5", "82.50"),  # money written in cents is answered in cents, as a price list writes it
    ("(28 * 12) * 0.90", "302.40"),
    ("16.50 * 2", "33"),  # a whole amount stays whole
    ("2.5 * 1.25", "3.125"),  # more decimals than cents are kept
    ("1.5 * 3", "4.5"),  # no amount in cents: as computed
    ("1/3 + 0.25", "7/12 (≈ 0.583333333333333333333333333333)"),
])
def test_a_result_of_amounts_in_cents_is_written_in_cents(expression, shown):
    result = SPEC.run(context(), {"expression": expression})
    assert result.data["result"] == shown and result.content == f"{expression} = {shown}"


# --- hostile inputs: each a clear ToolError, quickly (the limits are checked before work) ------

@pytest.mark.parametrize("text, message", [
    ("9^9^9^9", "too large"),
    ("2^100000", "too large"),
    ("10^5000", "too large"),
    ("(10^1000)^(10^1000)", "too large"),
    ("2^(10^10)", "too large"),
    ("1e999999999", "exponent"),
    ("1e-999999999", "exponent"),
    ("9" * 400 + "e1000", "too large"),
    ("0.5^100000", "too large"),
    ("2^0.5^-100000", "too large"),
    ("10 ^ 1300.5", "too large"),
    ("(" * 60 + "1" + ")" * 60, "nested too deeply"),
    ("-" * 60 + "1", "nested too deeply"),
    ("sqrt(" * 60 + "1" + ")" * 60, "nested too deeply"),
    ("1" * 501, "longer than 500"),
    ("", "empty"),
    ("   ", "empty"),
    ("__import__('os')", "unexpected character \"'\""),
    ("__import__(1)", "unknown name '__import__'"),
    ("x + 1", "unknown name"),
    ("1 + ", "end of the expression"),
    ("(1 + 2", "expected ')'"),
    ("1 2", "unexpected '2'"),
    ("2(3)", "unexpected '('"),
    ("1 & 2", "unexpected character '&'"),
    ("1; 2", "unexpected character ';'"),
    ("sqrt(-1)", "not a real number"),
    ("(-8) ^ (1/3)", "not a real number"),
    ("sqrt()", "unexpected ')'"),
    ("sqrt(1, 2)", "takes 1 argument"),
    ("round(1, 2, 3)", "takes 1 or 2 arguments"),
    ("round(1, 0.5)", "whole number"),
    ("round(1, 10^9)", "whole number"),
    ("1 // 0", "division by zero"),
    ("max", "expected '('"),
])
def test_hostile_inputs_give_clear_tool_errors(text, message):
    with pytest.raises(ToolError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evaluate(text)


def test_ones_and_zeros_to_huge_powers_are_cheap_and_exact():
    assert evaluate("1 ^ (10^1000)").q == 1
    assert evaluate("(-1) ^ (10^1000 + 1)").q == -1
    assert evaluate("0 ^ (10^1000)").q == 0


def test_results_just_inside_the_limit_are_computed():
    assert evaluate("2 ^ 4000").q == 2**4000
    with pytest.raises(ToolError, match="too large"):
        evaluate("2 ^ 4000 * 2 ^ 100")


def test_random_token_soup_gives_a_value_or_a_tool_error_never_another_exception():
    rng = random.Random(15)
    alphabet = ["1", "0", "9", ".", "e", "-", "+", "*", "/", "//", "%", "^", "**", "(", ")", ",", " ",
                "sqrt(", "round(", "min(", "max(", "floor(", "abs(", "ceil(", "1e3", "0.5", "7"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 25)))
        try:
            value = evaluate(text)
        except ToolError:
            continue
        assert isinstance(value.q, Fraction)
        format_value(value)


@pytest.mark.parametrize("expression, terms", [
    ("12 * 4.50 + (6 - 1) + 3", ["12 * 4.50", "(6 - 1)", "3"]),
    ("round(1 + 2, 2) + 5", ["round(1 + 2, 2)", "5"]),  # a sum inside a call is the call's
    ("2 * +3", ["2 * +3"]),  # a sign, not an addition
    ("+3 + 4", ["+3", "4"]),
    ("10 - 2", ["10 - 2"]),
])
def test_addends_are_the_top_level_terms_of_a_sum(expression, terms):
    # (a bill's terms, read by the free-over-an-amount rule: a split on " + " cut "(6 + 1)" in half)
    assert addends(expression) == terms
    assert sum(evaluate(t).q for t in terms) == evaluate(expression).q
