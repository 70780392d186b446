"""Size bands of a price list (issue 15): "Kitchen knife, blade up to 20 cm: £5.00" and "Kitchen
knife, blade over 20 cm: £7.00", asked about "4 big chefs knives? blades are about 25cm": the
second. A band is a bound on a measure written in a sentence ("up to 20 cm", "under 130 cm",
"over 15 m", "10.01 m to 15 m", "from 8 ft"); the question gives a measure in the same unit
("25cm", "an 8-metre boat", "9.2m"). Only numbers and units are read from the passages
(untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction

# A unit of length or weight as written -> one name for it.
_UNITS = {"mm": "mm", "cm": "cm", "m": "m", "metre": "m", "metres": "m", "meter": "m", "meters": "m",
          "km": "km", "in": "in", "inch": "in", "inches": "in", "ft": "ft", "foot": "ft", "feet": "ft",
          "kg": "kg", "kilo": "kg", "kilos": "kg", "g": "g", "grams": "g", "lb": "lb", "lbs": "lb"}
_UNIT = r"(mm|cm|metres?|meters?|m|km|inch(?:es)?|in|ft|foot|feet|kgs?|kilos?|grams|g|lbs?)"
_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
# A measure the question gives: "25cm", "an 8-metre boat", "9.2 m" (not "5 minutes", "3 m²").
_MEASURE = re.compile(rf"(?<![\w.$€£¥]){_NUMBER}\s*-?\s*{_UNIT}(?![\w²³])", re.IGNORECASE)
# A band's bounds: "up to 20 cm", "under 130 cm", "over 15 m", "10.01 m to 15 m", "from 8 ft".
_BELOW = re.compile(rf"\b(up\s+to|under|below|less\s+than|max(?:imum)?|no\s+more\s+than)\s+{_NUMBER}\s*-?\s*{_UNIT}(?![\w²³])",
                    re.IGNORECASE)
_ABOVE = re.compile(rf"\b(over|above|more\s+than|from|at\s+least|longer\s+than|taller\s+than)\s+{_NUMBER}\s*-?\s*"
                    rf"{_UNIT}(?![\w²³])", re.IGNORECASE)
_BETWEEN = re.compile(rf"(?<![\w.]){_NUMBER}\s*{_UNIT}?\s*(?:to|-|–)\s*{_NUMBER}\s*-?\s*{_UNIT}(?![\w²³])", re.IGNORECASE)


def _unit(word: str) -> str:
    word = word.lower()
    return _UNITS.get(word, _UNITS.get(word.rstrip("s"), word))


def measures(text: str) -> dict[str, Fraction]:
    """The first measure `text` gives in each unit ("blades are about 25cm" -> {"cm": 25})."""
    out: dict[str, Fraction] = {}
    for m in _MEASURE.finditer(text):
        out.setdefault(_unit(m.group(2)), Fraction(m.group(1)))
    return out


def outside_band(question: str, sentence: str) -> bool:
    """Whether `sentence` states a band that the question's measure in the same unit lies outside
    ("blade up to 20 cm" for "25cm"; "10.01 m to 15 m" for "an 8-metre boat"); False when it
    states none, or the question gives no measure in its unit."""
    given = measures(question)
    if not given:
        return False
    for m in _BETWEEN.finditer(sentence):
        unit = _unit(m.group(4))
        if (m.group(2) is None or _unit(m.group(2)) == unit) and unit in given:
            low, high = Fraction(m.group(1)), Fraction(m.group(3))
            if not low <= given[unit] <= high:
                return True
    for m in _BELOW.finditer(sentence):
        unit = _unit(m.group(3))
        if unit in given:
            bound = Fraction(m.group(2))
            inclusive = m.group(1).lower().startswith(("up", "max", "no"))
            if given[unit] > bound or (given[unit] == bound and not inclusive):
                return True
    for m in _ABOVE.finditer(sentence):
        unit = _unit(m.group(3))
        if unit in given:
            bound = Fraction(m.group(2))
            inclusive = m.group(1).lower().startswith(("from", "at"))
            if given[unit] < bound or (given[unit] == bound and not inclusive):
                return True
    return False
