"""Arithmetic a message asks in words, written as the calculator's expression (issue 15): "what's
the square root of 144 plus 2 cubed?" -> "sqrt(144) + 2^3", "2 to the power of 10" -> "2^10",
"3 squared plus 4 squared" -> "3^2 + 4^2", "17% of 240 plus 12" -> "(240 * 17 / 100) + 12". A message is read only when all of it, but a lead-in
("what is", "calculate", "can you work out") and a closing "?" or "please", is numbers and these
words (the grammar of backend.agent.tools.arithmetic): anything else, a price list's question, is
none of it. The 135M model read such messages as "144 + 2" (a new user's run).
"""

from __future__ import annotations

import re

from backend.agent.numerals import with_digits

# What may open and close the arithmetic asked ("what's ... ?", "calculate ... please").
_LEAD_IN = re.compile(r"^\W*(?:(?:hi|hey|ok|so)\W+)?(?:(?:can|could)\s+you\s+)?(?:please\s+)?"
                      r"(?:what(?:'s|s|\s+is|\s+are)|calculate|compute|work\s+out|tell\s+me|how\s+much\s+is|evaluate)?\s*",
                      re.IGNORECASE)
_CLOSING = re.compile(r"\s*(?:,?\s*(?:please|pls|thanks|thank\s+you))?\s*[?.!=]*\s*$", re.IGNORECASE)
# Each word or phrase and what it writes; a number as written.
_WORDS = [
    (re.compile(r"the\s+square\s+root\s+of\b|square\s+root\s+of\b|sqrt\s+of\b", re.IGNORECASE), "sqrt "),
    (re.compile(r"\bsquared\b", re.IGNORECASE), "^2"),
    (re.compile(r"\bcubed\b", re.IGNORECASE), "^3"),
    (re.compile(r"\bto\s+the\s+power\s+of\b|\bto\s+the\b(?=\s+[0-9]+(?:st|nd|rd|th)\s+power\b)|\braised\s+to\b",
                re.IGNORECASE), "^"),
    (re.compile(r"(?<=[0-9])(?:st|nd|rd|th)\s+power\b", re.IGNORECASE), ""),
    (re.compile(r"\bplus\b|\badded\s+to\b", re.IGNORECASE), "+"),
    (re.compile(r"\bminus\b|\btake\s+away\b", re.IGNORECASE), "-"),
    (re.compile(r"\btimes\b|\bmultiplied\s+by\b", re.IGNORECASE), "*"),
    (re.compile(r"\bdivided\s+by\b|\bover\b", re.IGNORECASE), "/"),
]  # (not "and": "what is 144 and 12?" names no operation)
_NUMBER = r"[0-9]+(?:\.[0-9]+)?"
# A percentage of a number: "17% of 240", "17 percent of 240".
_PERCENT_OF = re.compile(rf"({_NUMBER})\s*(?:%|\s(?:per\s*cent|percent))\s+of\s+({_NUMBER})", re.IGNORECASE)
# What is left once the words are written: numbers, operators, brackets and "sqrt " before a number.
_EXPRESSION = re.compile(rf"(?:\s*(?:sqrt\s+)?(?:{_NUMBER}|[-+*/^()])\s*)+")
_SQRT = re.compile(rf"sqrt\s+({_NUMBER}(?:\^{_NUMBER})?)")


def spoken_expression(text: str) -> str | None:
    """The calculator's expression for arithmetic asked in words (module docstring), with at least
    one word of it (a root, a power, "plus", ...) and two numbers, or one and a root or power;
    None for any other message."""
    body = _CLOSING.sub("", _LEAD_IN.sub("", with_digits(text).strip(), count=1))
    written = body.replace(",", "")
    # "17% of 240 plus 12": the percentage of its number, bracketed, before the other words are read
    written, percents = _PERCENT_OF.subn(lambda m: f"({m.group(2)} * {m.group(1)} / 100)", written)
    worded = False  # (a percentage alone, "15% of 80", is the calculator's own candidate)
    for pattern, symbol in _WORDS:
        written, n = pattern.subn(f" {symbol} " if symbol not in ("^2", "^3", "") else symbol, written)
        worded = worded or n > 0
    worded = worded or (percents > 0 and bool(re.search(r"\)\s*[-+*/^]|[-+*/^]\s*\(", written)))
    written = re.sub(r"\s*\^\s*", "^", written)
    numbers = re.findall(_NUMBER, written)
    if not worded or not written.strip() or not _EXPRESSION.fullmatch(written):
        return None
    if len(numbers) < 2 and "sqrt" not in written and "^" not in written:
        return None
    expression = _SQRT.sub(r"sqrt(\1)", written)
    if "sqrt " in expression:
        return None  # a root of something other than a number
    return " ".join(expression.split()).replace("^", " ^ ").replace("  ", " ").replace("( ", "(").replace(" )", ")")
