"""The rounding a question asks for its answer, read from its words (issue 15): decimal places
("round to 2 decimals" -> 2, "One decimal is fine" -> 1, "nearest whole metre" -> 0, "to the
nearest tenth" -> 1: asked_rounding), a direction ("round up to the nearest whole number" ->
"up": asked_rounding_direction), and the question without those phrases, whose numbers are no
operands (without_rounding). The calculator's candidates (backend.agent.tools.expressions) and
the price tools read them; like every cue, at most MAX_CUE_CHARS of the message
(backend.agent.numerals.cue_text).
"""

from __future__ import annotations

import re

from backend.agent.numerals import cue_text

_FLAGS = re.IGNORECASE

_DIGIT_WORDS = {"zero": 0, "one": 1, "a single": 1, "two": 2, "three": 3, "four": 4}
_DIGITS = r"([0-4]|zero|one|a\s+single|two|three|four)"
# The rounding a question asks for: "round to 2 decimals", "to two decimal places", "One decimal
# is fine", "nearest whole metre", "to the nearest tenth".
_ROUND_DECIMALS = re.compile(rf"\b{_DIGITS}\s+(?:decimal|dp\b|digits?\s+after)", _FLAGS)
# "nearest" what is no unit of the answer ("the nearest five", "nearest hour", "nearest million"):
# no rounding read.
_NOT_UNIT = (r"(?!(?:tenth|hundredth|thousandth|\d+|ten|five|fifty|twenty|hundred|thousand|million|billion|dozen|"
             r"hour|minute|second|day|week|month|year|quarter|half|station|stop|town|city)s?\b)")
_ROUND_WHOLE = re.compile(rf"\bnearest\s+(?:whole|full|integer\b|unit\b)|\b(?:as|to|in)\s+(?:a\s+)?whole\s+number\b"
                          rf"|\bround(?:ed)?\s+(?:it\s+|that\s+|this\s+|the\s+\w+\s+)?(?:up\s+|down\s+)?to\s+the\s+"
                          rf"nearest\s+{_NOT_UNIT}|\bno\s+decimals\b", _FLAGS)
_ROUND_DIRECTION = re.compile(r"\bround(?:ed|ing)?\s+(?:it\s+|that\s+|this\s+|the\s+\w+\s+)?(up|down)\b", _FLAGS)
_ROUND_PLACE = re.compile(r"\bnearest\s+(tenth|hundredth|thousandth|cent|penny|pence)\b", _FLAGS)
_PLACES = {"tenth": 1, "hundredth": 2, "thousandth": 3, "cent": 2, "penny": 2, "pence": 2}


def asked_rounding(text: str) -> int | None:
    """The decimal places `text` asks its answer rounded to ("round to 2 decimals" -> 2, "One
    decimal is fine" -> 1, "nearest whole metre" -> 0, "to the nearest tenth" -> 1), or None."""
    text = cue_text(text)
    match = _ROUND_DECIMALS.search(text)
    if match is not None:
        word = " ".join(match.group(1).lower().split())
        return int(word) if word.isdigit() else _DIGIT_WORDS[word]
    match = _ROUND_PLACE.search(text)
    if match is not None:
        return _PLACES[match.group(1).lower()]
    return 0 if _ROUND_WHOLE.search(text) else None


def asked_rounding_direction(text: str) -> str | None:
    """"up" or "down" when `text` asks to round up or down ("round up to the nearest whole
    number"), else None (to the nearest, half away from zero)."""
    match = _ROUND_DIRECTION.search(cue_text(text))
    return None if match is None else match.group(1).lower()


def without_rounding(text: str) -> str:
    """`text` without the phrases asking for rounding ("round to 2 decimals"): their numbers are
    no operands."""
    for pattern in (_ROUND_DECIMALS, _ROUND_PLACE, _ROUND_WHOLE, _ROUND_DIRECTION):
        text = pattern.sub(" ", text)
    return text
