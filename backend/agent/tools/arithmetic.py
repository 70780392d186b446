"""Exact arithmetic over a small expression grammar: the `calculator` tool's evaluator.

Never Python's eval: a recursive-descent parser over this grammar (precedence low to high)::

    expr   := term (("+" | "-") term)*
    term   := unary (("*" | "/" | "//" | "%") unary)*
    unary  := ("-" | "+") unary | power
    power  := atom (("^" | "**") unary)?          # right-associative: 2^3^2 = 2^9
    atom   := number | name "(" expr ("," expr)* ")" | "(" expr ")"
    number := digits ["." digits] [("e" | "E") ["+" | "-"] digits]   (or "." digits ...)

So -2^2 = -4 and 2^-1 = 1/2, as in Python with "**". "//" and "%" are floor division and its
remainder (Python's). Functions: sqrt, abs, round(x[, ndigits]) (half away from zero), min, max,
floor, ceil. Values are fractions.Fraction, so + - * / // % and integer powers are exact;
sqrt of a non-square and non-integer powers are computed with decimal to 50 significant
digits and the result is marked inexact.

Limits (ToolError with a clear message): 500 characters, nesting depth 50, literal exponents
|e| <= 1000, integer exponents |n| <= 100000, and every value's numerator and denominator
within MAX_BITS bits (about 1230 decimal digits), checked before a power is computed.
"""

from __future__ import annotations

import decimal
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from backend.agent.tools import ToolError

MAX_EXPRESSION_CHARS = 500
MAX_DEPTH = 50
MAX_BITS = 4096
MAX_LITERAL_EXPONENT = 1000
MAX_POWER_EXPONENT = 100_000
MAX_ROUND_DIGITS = 1000
INEXACT_DIGITS = 50
SHOWN_DIGITS = 30

_TOKEN = re.compile(
    r"\s*(?:(?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_]\w*)"
    r"|(?P<op>\*\*|//|[-+*/%^(),]))"
)
_NUMBER = re.compile(r"(?P<int>\d*)(?:\.(?P<frac>\d*))?(?:[eE](?P<exp>[+-]?\d+))?")


class CalculationError(ToolError):
    """An expression that reads well but has no value here: a division by zero, a result or an
    exponent too large, a number that is not real (a syntax error is a plain ToolError). Its
    messages begin as NO_VALUE_MESSAGES do."""


# How each CalculationError's message begins: a tool result "error: ..." read back (the agent's
# answer says such an error plainly; a syntax error is the model's to mend).
NO_VALUE_MESSAGES = ("division by zero", "the result is too large", "the exponent ", "the number ",
                     "a negative number to a non-integer power", "sqrt of a negative number")


def names_no_value(message: str) -> bool:
    """Whether `message` (a ToolError's) is a CalculationError's (NO_VALUE_MESSAGES)."""
    return message.startswith(NO_VALUE_MESSAGES)


@dataclass(frozen=True)
class Value:
    """A number and whether it is exact (False once a sqrt or fractional power rounded)."""

    q: Fraction
    exact: bool = True


def _check_size(value: Value) -> Value:
    if max(value.q.numerator.bit_length(), value.q.denominator.bit_length()) > MAX_BITS:
        raise CalculationError(f"the result is too large (more than {MAX_BITS} bits)")
    return value


def _literal(text: str) -> Fraction:
    m = _NUMBER.fullmatch(text)
    assert m is not None  # the tokenizer only yields numbers this pattern matches
    exponent = int(m.group("exp") or 0)
    if abs(exponent) > MAX_LITERAL_EXPONENT:
        raise CalculationError(f"the number {text[:40]} has an exponent beyond ±{MAX_LITERAL_EXPONENT}")
    frac = m.group("frac") or ""
    mantissa = int((m.group("int") or "") + frac or "0")
    return _check_size(Value(Fraction(mantissa) * Fraction(10) ** (exponent - len(frac)))).q


def _to_decimal(q: Fraction) -> decimal.Decimal:
    return decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)


def _context() -> decimal.Context:
    return decimal.Context(prec=INEXACT_DIGITS, Emax=MAX_BITS, Emin=-MAX_BITS)


def _exact_root(n: int, k: int) -> int | None:
    """The integer k-th root of n >= 0 if n is a perfect k-th power, else None."""
    if n < 2:
        return n
    r = _iroot(n, k)
    return r if r**k == n else None


def _iroot(n: int, k: int) -> int:
    """floor(n ** (1/k)) by Newton's method on integers."""
    x = 1 << -(-n.bit_length() // k)
    while True:
        y = ((k - 1) * x + n // x ** (k - 1)) // k
        if y >= x:
            return x
        x = y


def _log2_abs(q: Fraction) -> int:
    """An estimate of log2|q| within ±1 (q != 0)."""
    return abs(q.numerator).bit_length() - q.denominator.bit_length()


def _power(base: Value, exponent: Value) -> Value:
    b, e = base.q, exponent.q
    exact = base.exact and exponent.exact
    if b == 0 and e < 0:
        raise CalculationError("division by zero (zero to a negative power)")
    if e.denominator == 1:
        n = e.numerator
        if n == 0:
            return Value(Fraction(1), exact)  # 0^0 = 1, as Fraction and Python's int do
        if b in (0, 1):
            return Value(b, exact)
        if b == -1:
            return Value(Fraction(-1 if n % 2 else 1), exact)
        if abs(n) > MAX_POWER_EXPONENT:
            raise CalculationError(f"the exponent {n} is too large (at most {MAX_POWER_EXPONENT} in magnitude)")
        bits = max(abs(b.numerator).bit_length(), b.denominator.bit_length()) - 1
        if bits * abs(n) > MAX_BITS:
            raise CalculationError(f"the result is too large (more than {MAX_BITS} bits)")
        return _check_size(Value(b**n, exact))
    if b < 0:
        raise CalculationError("a negative number to a non-integer power is not a real number")
    if b == 0:
        return Value(Fraction(0), exact)
    if abs(e) * abs(_log2_abs(b)) > MAX_BITS:
        raise CalculationError(f"the result is too large (more than {MAX_BITS} bits)")
    # Exact when the base is a perfect power: (p/q)^(m/k) with k-th roots of p and q.
    k = e.denominator
    if k <= 64:
        num, den = _exact_root(b.numerator, k), _exact_root(b.denominator, k)
        if num is not None and den is not None:
            return _power(Value(Fraction(num, den), base.exact), Value(Fraction(e.numerator), exponent.exact))
    try:
        with decimal.localcontext(_context()):
            result = _to_decimal(b) ** _to_decimal(e)
    except decimal.DecimalException:  # over- or underflow the size pre-check let through
        raise CalculationError(f"the result is too large (more than {MAX_BITS} bits)") from None
    return _check_size(Value(Fraction(result), False))


def _sqrt(x: Value) -> Value:
    if x.q < 0:
        raise CalculationError("sqrt of a negative number is not a real number")
    num, den = math.isqrt(x.q.numerator), math.isqrt(x.q.denominator)
    if num * num == x.q.numerator and den * den == x.q.denominator:
        return Value(Fraction(num, den), x.exact)
    with decimal.localcontext(_context()):
        return _check_size(Value(Fraction(_to_decimal(x.q).sqrt()), False))


def _round(x: Value, digits: Value | None = None) -> Value:
    """Half away from zero, as a spreadsheet's ROUND and a person do (2.5 -> 3, 0.125 -> 0.13 at
    2 digits), not Python's half to even."""
    if digits is not None and (digits.q.denominator != 1 or abs(digits.q) > MAX_ROUND_DIGITS):
        raise ToolError(f"round's second argument must be a whole number within ±{MAX_ROUND_DIGITS}")
    scale = Fraction(10) ** (0 if digits is None else int(digits.q))
    scaled = abs(x.q) * scale
    rounded = math.floor(scaled + Fraction(1, 2)) * (1 if x.q >= 0 else -1)
    return _check_size(Value(Fraction(rounded) / scale, x.exact and (digits is None or digits.exact)))


def _all_exact(*values: Value) -> bool:
    return all(v.exact for v in values)


# name -> (min arguments, max arguments or None, function)
FUNCTIONS: dict[str, tuple[int, int | None, Callable[..., Value]]] = {
    "sqrt": (1, 1, _sqrt),
    "abs": (1, 1, lambda x: Value(abs(x.q), x.exact)),
    "round": (1, 2, _round),
    "floor": (1, 1, lambda x: Value(Fraction(math.floor(x.q)), x.exact)),
    "ceil": (1, 1, lambda x: Value(Fraction(math.ceil(x.q)), x.exact)),
    "min": (1, None, lambda *xs: Value(min(x.q for x in xs), _all_exact(*xs))),
    "max": (1, None, lambda *xs: Value(max(x.q for x in xs), _all_exact(*xs))),
}


def _tokens(expression: str) -> list[tuple[str, str, int]]:
    """(kind, text, position) tokens, then ("end", "", len). Raises ToolError on a stray
    character."""
    tokens: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(expression):
        if expression[pos:].strip() == "":
            break
        m = _TOKEN.match(expression, pos)
        if m is None:
            char = expression[pos:].lstrip()[:1]
            raise ToolError(f"unexpected character {char!r} at position {len(expression) - len(expression[pos:].lstrip()) + 1}")
        kind = m.lastgroup or "op"
        tokens.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    tokens.append(("end", "", len(expression)))
    return tokens


def addends(expression: str) -> list[str]:
    """The terms `expression` adds at its top level, as written: "12 * 4.50 + (6 - 1) + 3" ->
    ["12 * 4.50", "(6 - 1)", "3"] (a sign after an operator or "(" is no addition: "2 * +3" is one
    term; "a - b" is one term too). Raises ToolError on a stray character."""
    tokens = _tokens(expression)
    terms: list[str] = []
    depth, start, previous = 0, 0, ("op", "(", 0)
    for kind, text, pos in tokens:
        if kind == "op" and text == "(":
            depth += 1
        elif kind == "op" and text == ")":
            depth -= 1
        elif kind == "end" or (kind == "op" and text == "+" and depth == 0
                               and (previous[0] != "op" or previous[1] == ")")):
            terms.append(expression[start:pos].strip())
            start = pos + 1
        previous = (kind, text, pos)
    return terms


class _Parser:
    def __init__(self, expression: str) -> None:
        self.tokens = _tokens(expression)
        self.i = 0
        self.depth = 0

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i]

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def expect(self, text: str) -> None:
        kind, got, pos = self.take()
        if got != text or kind != "op":
            raise ToolError(f"expected {text!r} at position {pos + 1}, found {_describe(kind, got)}")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ToolError(f"the expression is nested too deeply (more than {MAX_DEPTH} levels)")

    def parse(self) -> Value:
        value = self.expr()
        kind, got, pos = self.peek()
        if kind != "end":
            raise ToolError(f"unexpected {_describe(kind, got)} at position {pos + 1}")
        return value

    def expr(self) -> Value:
        value = self.term()
        while self.peek()[1] in ("+", "-") and self.peek()[0] == "op":
            op = self.take()[1]
            right = self.term()
            q = value.q + right.q if op == "+" else value.q - right.q
            value = _check_size(Value(q, value.exact and right.exact))
        return value

    def term(self) -> Value:
        value = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("*", "/", "//", "%"):
            op = self.take()[1]
            right = self.unary()
            if op != "*" and right.q == 0:
                raise CalculationError("division by zero")
            if op == "*":
                q = value.q * right.q
            elif op == "/":
                q = value.q / right.q
            elif op == "//":
                q = Fraction(value.q // right.q)
            else:
                q = value.q % right.q
            value = _check_size(Value(q, value.exact and right.exact))
        return value

    def unary(self) -> Value:
        if self.peek()[0] == "op" and self.peek()[1] in ("-", "+"):
            op = self.take()[1]
            self.enter()
            operand = self.unary()
            self.depth -= 1
            return Value(-operand.q, operand.exact) if op == "-" else operand
        return self.power()

    def power(self) -> Value:
        base = self.atom()
        if self.peek()[0] == "op" and self.peek()[1] in ("^", "**"):
            self.take()
            self.enter()
            exponent = self.unary()
            self.depth -= 1
            return _power(base, exponent)
        return base

    def atom(self) -> Value:
        kind, text, pos = self.take()
        if kind == "number":
            return Value(_literal(text))
        if kind == "name":
            spec = FUNCTIONS.get(text.lower())
            if spec is None:
                known = ", ".join(sorted(FUNCTIONS))
                raise ToolError(f"unknown name {text[:40]!r} at position {pos + 1} (functions: {known})")
            self.expect("(")
            self.enter()
            args = [self.expr()]
            while self.peek()[:2] == ("op", ","):
                self.take()
                args.append(self.expr())
            self.depth -= 1
            self.expect(")")
            low, high, function = spec
            if len(args) < low or (high is not None and len(args) > high):
                wanted = str(low) if low == high else f"{low} or {high}" if high else f"at least {low}"
                raise ToolError(f"{text}() takes {wanted} argument{'s' if wanted != '1' else ''}, got {len(args)}")
            return function(*args)
        if (kind, text) == ("op", "("):
            self.enter()
            value = self.expr()
            self.depth -= 1
            self.expect(")")
            return value
        raise ToolError(f"unexpected {_describe(kind, text)} at position {pos + 1}")


def _describe(kind: str, text: str) -> str:
    return "the end of the expression" if kind == "end" else repr(text[:40])


def evaluate(expression: str) -> Value:
    """The value of `expression` (grammar and limits: the module docstring).

    Raises:
        ToolError: a syntax error (with its 1-based position), division by zero, a value
            outside the limits, or a function given the wrong number of arguments.
    """
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ToolError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    if not expression.strip():
        raise ToolError("the expression is empty")
    return _Parser(expression).parse()


def format_value(value: Value, places: int = 0) -> str:
    """An integer as is; an exact fraction with a finite decimal expansion (of at most
    SHOWN_DIGITS significant digits) as that decimal ("8.25"), written to at least `places`
    decimals ("82.5" -> "82.50" for places=2: money written in cents), any other as "p/q (≈
    decimal)"; an inexact value as "≈ decimal" (SHOWN_DIGITS significant digits)."""
    q = value.q
    with decimal.localcontext(decimal.Context(prec=SHOWN_DIGITS, Emax=MAX_BITS * 2, Emin=-MAX_BITS * 2)):
        approx = _to_decimal(q).normalize()
    shown = f"{approx:f}" if abs(approx.adjusted()) < SHOWN_DIGITS else str(approx)
    if not value.exact:
        return f"≈ {shown}"
    if q.denominator == 1:
        return str(q.numerator)
    if _terminates(q.denominator) and "e" not in shown.lower() and Fraction(shown) == q:
        decimals = len(shown.partition(".")[2])
        return shown + "0" * (places - decimals) if 0 < decimals < places else shown  # 7.2 + 1.05 = 8.25, exactly
    return f"{q.numerator}/{q.denominator} (≈ {shown})"


def _terminates(denominator: int) -> bool:
    """Whether 1/denominator has a finite decimal expansion (no prime factor but 2 and 5)."""
    for p in (2, 5):
        while denominator % p == 0:
            denominator //= p
    return denominator == 1
