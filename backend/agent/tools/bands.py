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
          "km": "km", "inch": "in", "inches": "in", "ft": "ft", "foot": "ft", "feet": "ft",
          "kg": "kg", "kilo": "kg", "kilos": "kg", "g": "g", "grams": "g", "lb": "lb", "lbs": "lb",
          "gal": "gal", "gals": "gal", "gallon": "gal", "gallons": "gal", "l": "l", "litre": "l", "litres": "l",
          "liter": "l", "liters": "l"}
_UNIT = r"(mm|cm|metres?|meters?|m|km|inch(?:es)?|ft|foot|feet|kgs?|kilos?|grams|g|lbs?|gal(?:lon)?s?|lit(?:re|er)s?|l)"  # not "in": "3 in total"
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


def given_measures(text: str) -> dict[str, Fraction]:
    """The first measure `text` gives in each unit ("blades are about 25cm" -> {"cm": 25})."""
    out: dict[str, Fraction] = {}
    for m in _MEASURE.finditer(text):
        out.setdefault(_unit(m.group(2)), Fraction(m.group(1)))
    return out


def outside_band(question: str, sentence: str) -> bool:
    """Whether `sentence` states bands of a measure ("blade up to 20 cm"; "under 20 kg £25, 20 kg and
    over £32") none of which holds the question's measure in the same unit ("25cm" is outside
    "up to 20 cm"; "an 8-metre boat" outside "10.01 m to 15 m"); False when it states none in
    that unit, or one of them holds it, or the question gives no measure."""
    given = given_measures(question)
    if not given:
        return False
    held: dict[str, bool] = {}  # unit -> whether a band of it holds the question's measure
    for m in _BETWEEN.finditer(sentence):
        unit = _unit(m.group(4))
        if (m.group(2) is None or _unit(m.group(2)) == unit) and unit in given:
            held[unit] = held.get(unit, False) or Fraction(m.group(1)) <= given[unit] <= Fraction(m.group(3))
    for m in _BELOW.finditer(sentence):
        unit = _unit(m.group(3))
        if unit in given:
            bound, inclusive = Fraction(m.group(2)), m.group(1).lower().startswith(("up", "max", "no"))
            held[unit] = held.get(unit, False) or given[unit] < bound or (given[unit] == bound and inclusive)
    for m in _ABOVE.finditer(sentence):
        unit = _unit(m.group(3))
        if unit in given:
            bound, inclusive = Fraction(m.group(2)), m.group(1).lower().startswith(("from", "at"))
            held[unit] = held.get(unit, False) or given[unit] > bound or (given[unit] == bound and inclusive)
    for m in _AND_OVER.finditer(sentence):
        unit = _unit(m.group(2))
        if unit in given:
            held[unit] = held.get(unit, False) or given[unit] >= Fraction(m.group(1))
    return bool(held) and not any(held.values())


# "20 kg and over", "20 kg or more": a lower bound written after its number.
_AND_OVER = re.compile(rf"(?<![\w.]){_NUMBER}\s*-?\s*{_UNIT}\s+(?:and|or)\s+(?:over|above|more|up(?:wards)?)\b",
                       re.IGNORECASE)


def banded_measures(question: str, sentence: str) -> set[str]:
    """The numbers (as written) of the measures `question` gives in a unit `sentence` states a
    band of ("my 800 litre garden pond" over "Garden pond 501-2000 litres: £80": {"800"}): the
    size that picks the row, no count of anything."""
    units: set[str] = set()
    for m in _BETWEEN.finditer(sentence):
        units.add(_unit(m.group(4)))
    for pattern in (_BELOW, _ABOVE):
        for m in pattern.finditer(sentence):
            units.add(_unit(m.group(3)))
    for m in _AND_OVER.finditer(sentence):
        units.add(_unit(m.group(2)))
    return {m.group(1) for m in _MEASURE.finditer(question) if _unit(m.group(2)) in units}

