"""Conversions a question about the documents implies (issue 15): the unit it asks for against
the unit a passage gives ("what's the weight of the biggest pipe in grams" over "weighs 212
kilograms" -> "212 * 1000"; "how many days long is the tour" over "tours for 11 weeks" ->
"11 * 7"), and the period it asks about against a rate's ("how many grams does a hawk eat in a
week" over "140 grams of meat a day" -> "140 * 7"; "a monthly pass every month for a full year"
-> "38 * 12").

Only exact factors: metric mass, length and volume, the international yard and pound (1959:
a yard is 0.9144 m, a pound 0.45359237 kg, read as "lb" only: "pounds" is money too) and the nautical mile (1852 m), seconds to weeks,
months to years (a month is no whole number of days); and degrees Celsius to Fahrenheit and
back. A rate given as an interval ("flashes every 15 seconds") counts its events over the period
asked ("in one hour" -> "3600 / 15"). The passage is untrusted data: only its numbers and unit
words are read.
"""

from __future__ import annotations

import re
from fractions import Fraction

# unit word -> (dimension, size in the dimension's base unit)
_UNITS: dict[str, tuple[str, Fraction]] = {}


def _add(dimension: str, size: Fraction | int, *words: str) -> None:
    for word in words:
        _UNITS[word] = (dimension, Fraction(size))


_add("mass", 1, "g", "gram", "grams", "gramme", "grammes")
_add("mass", 1000, "kg", "kilo", "kilos", "kilogram", "kilograms", "kilogramme", "kilogrammes")
_add("mass", 1_000_000, "tonne", "tonnes")
_add("length", Fraction(1, 1000), "mm", "millimetre", "millimetres", "millimeter", "millimeters")
_add("length", Fraction(1, 100), "cm", "centimetre", "centimetres", "centimeter", "centimeters")
_add("length", 1, "m", "metre", "metres", "meter", "meters")
_add("length", 1000, "km", "kilometre", "kilometres", "kilometer", "kilometers")
_add("length", Fraction(254, 10000), "inch", "inches")
_add("length", Fraction(3048, 10000), "foot", "feet", "ft")
_add("length", Fraction(9144, 10000), "yard", "yards", "yd")
_add("length", Fraction(1609344, 1000), "mile", "miles")
_add("length", 1852, "nautical mile", "nautical miles")
_add("mass", Fraction(28349523125, 10 ** 9), "ounce", "ounces", "oz")
_add("mass", Fraction(45359237, 10 ** 5), "lb", "lbs")  # not "pounds": a currency too
_add("volume", 1, "ml", "millilitre", "millilitres", "milliliter", "milliliters")
_add("volume", 1000, "l", "litre", "litres", "liter", "liters")
_add("volume", 100_000, "hectolitre", "hectolitres", "hectoliter", "hectoliters")
_add("volume", 1_000_000, "cubic metre", "cubic metres", "cubic meter", "cubic meters")
_add("time", 1, "second", "seconds")
_add("time", 60, "minute", "minutes")
_add("time", 3600, "hour", "hours")
_add("time", 86400, "day", "days", "night", "nights")
_add("time", 604800, "week", "weeks")
_add("calendar", 1, "month", "months")
_add("calendar", 12, "year", "years")

_UNIT_WORDS = "|".join(sorted((re.escape(w) for w in _UNITS), key=len, reverse=True))
_NUMBER = r"(?<![\w.,])([0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?)"
# A quantity of a passage: "212 kilograms", "9.6-metre", "11 weeks".
_QUANTITY = re.compile(rf"{_NUMBER}[\s-]*({_UNIT_WORDS})\b", re.IGNORECASE)
# The unit a question asks for: "how many grams", "how many cubic metres", "... in grams?".
# "in kilometres? One decimal is fine." asks it too: the unit ends its clause.
_ASKED = re.compile(rf"\bhow\s+many\s+({_UNIT_WORDS})\b|\bin\s+({_UNIT_WORDS})\s*(?:[?.!,;]|$)", re.IGNORECASE)
# Degrees: "1,150 degrees Celsius", "1150 °C", "-4 °F"; asked: "in Fahrenheit", "how many degrees Celsius".
_DEGREES = re.compile(r"(?<![\w.,])(-?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|-?[0-9]+(?:\.[0-9]+)?)\s*"
                      r"(?:degrees?\s+|°\s*)(celsius|centigrade|fahrenheit|c|f)\b", re.IGNORECASE)
_ASKED_SCALE = re.compile(r"\b(?:in|to)\s+(?:degrees\s+)?(celsius|centigrade|fahrenheit)\b"
                          r"|\bhow\s+many\s+degrees\s+(celsius|centigrade|fahrenheit)\b", re.IGNORECASE)
_CHANGE = re.compile(r"\b(?:by\s+how\s+much|how\s+much\s+(?:warmer|colder|hotter|cooler|higher|lower)|difference|"
                     r"rise|rose|fall|fell|drop|dropped|increase|decrease)\b", re.IGNORECASE)
# A rate as an interval: "every 15 seconds", "every 12 minutes".
_SERVICE_HOURS = re.compile(r"\b(?:from|between)\b[^.;]{0,40}\b(?:to|until|till|and)\b|\b\d{1,2}[:.]\d{2}\b"
                            r"|\b\d{1,2}\s*(?:am|pm)\b", re.IGNORECASE)
_EVERY = re.compile(rf"\bevery\s+{_NUMBER}\s+(second|minute|hour|day|week)s?\b", re.IGNORECASE)
# A rate's period: "140 grams of meat a day", "per week", "each night"; "monthly", "daily".
_PERIODS = {"daily": "day", "nightly": "night", "weekly": "week", "monthly": "month", "yearly": "year",
            "annual": "year", "annually": "year", "hourly": "hour"}
_PERIOD = "second|minute|hour|day|night|week|month|year"
_RATE = re.compile(rf"\b(?:a|an|per|each|every)\s+({_PERIOD})\b|\b({'|'.join(_PERIODS)})\b", re.IGNORECASE)
# The period a question asks about: "in a week", "for a full year", "over one month", "a week".
_ASKED_PERIOD = re.compile(rf"\b(?:in|for|over|during|across|within)\s+(?:a|an|one)\s+(?:full\s+|whole\s+|single\s+)?"
                           rf"({_PERIOD})\b|\b(?:a|per|each|every)\s+({_PERIOD})\s*[?.!]*\s*$", re.IGNORECASE)


def _unit(word: str) -> tuple[str, Fraction] | None:
    return _UNITS.get(" ".join(word.lower().split()))


def asked_unit(question: str) -> str | None:
    """The unit `question` asks its answer in ("how many grams ...", "... in kilometres?"), or None."""
    match = _ASKED.search(question)
    return None if match is None else (match.group(1) or match.group(2)).lower()


def asked_period(question: str) -> str | None:
    """The period `question` asks a total over ("in a week", "for a full year"), or None."""
    match = _ASKED_PERIOD.search(question)
    return None if match is None else (match.group(1) or match.group(2)).lower()


def conversions(question: str, sentence: str) -> list[str]:
    """Expressions over the quantities of `sentence` that convert them to what `question` asks:
    to its unit (a quantity of the same dimension in another unit: "212 * 1000" for grams from
    kilograms), and for a rate of that sentence ("140 grams a day", "a monthly pass costs 38")
    to a total over the period the question asks about ("in a week": "140 * 7"), both at once
    when both differ; [] when none applies."""
    out: list[str] = []
    unit = asked_unit(question)
    wanted = _unit(unit) if unit else None
    period = asked_period(question)
    for match in _QUANTITY.finditer(sentence):
        number, given = match.group(1).replace(",", ""), _unit(match.group(2))
        if given is None or (wanted is not None and given[0] != wanted[0]):
            continue
        factor = given[1] / wanted[1] if wanted is not None else Fraction(1)
        rate = _RATE.search(sentence, match.end(), match.end() + 40)
        if period is not None and rate is not None:
            over = _over(rate.group(1) or _PERIODS[rate.group(2).lower()], period)
            if over is None:
                continue  # a rate over another kind of period, or a longer one
            factor *= over
        if factor != 1:
            out.append(_scaled(number, factor))
    if period is not None and wanted is None:
        # "every 15 seconds", asked "in one hour": 3600 / 15 (whole events: floor). Not over a day
        # or more when the sentence gives service hours ("every 40 minutes from 8am to 6pm").
        hours = _SERVICE_HOURS.search(sentence) is not None
        for every in _EVERY.finditer(sentence):
            over = _over(every.group(2).lower(), period)
            if over is not None and not (hours and _UNITS[period][1] >= _UNITS["day"][1]):
                interval = every.group(1).replace(",", "")
                exact = Fraction(over) / Fraction(interval)
                out.append(f"{over} / {interval}" if exact.denominator == 1 else f"floor({over} / {interval})")
        for rate in _RATE.finditer(sentence):  # "a monthly pass costs 38 florins": the rate's word before its number
            if rate.group(2) is None:
                continue
            after = re.search(_NUMBER, sentence[rate.end():rate.end() + 60])
            over = _over(_PERIODS[rate.group(2).lower()], period)
            if after is not None and over is not None and over != 1:
                out.append(_scaled(after.group(1).replace(",", ""), over))
    return list(dict.fromkeys(out))


def asked_scale(question: str) -> str | None:
    """The temperature scale `question` asks its answer in ("in Fahrenheit" -> "f"), or None."""
    match = _ASKED_SCALE.search(question)
    return None if match is None else (match.group(1) or match.group(2))[0].lower()


def temperature_conversions(question: str, sentence: str) -> list[str]:
    """Expressions converting the temperatures of `sentence` to the scale `question` asks for
    ("1,150 degrees Celsius", asked in Fahrenheit -> "1150 * 9 / 5 + 32"); [] when it asks for
    none or they are in it already."""
    scale = asked_scale(question)
    out = []
    for match in _DEGREES.finditer(sentence) if scale else ():
        given = "f" if match.group(2).lower().startswith("f") else "c"
        number = match.group(1).replace(",", "")
        # A change of temperature ("rose by 40 degrees", "how much warmer"): the factor only.
        change = (_CHANGE.search(question) is not None
                  or re.search(r"\bby\s+$", sentence[max(0, match.start() - 6):match.start()]) is not None)
        if given == "c" and scale == "f":
            out.append(f"{number} * 9 / 5" if change else f"{number} * 9 / 5 + 32")
        elif given == "f" and scale == "c":
            out.append(f"{number} * 5 / 9" if change else f"({number} - 32) * 5 / 9")
    return out


def _over(per: str, period: str) -> Fraction | None:
    """How many `per` make one `period` (day, week -> 7); None when `period` is shorter or of
    another kind (months and days)."""
    a, b = _UNITS[per], _UNITS[period]
    if a[0] != b[0] or b[1] < a[1]:
        return None
    return b[1] / a[1]


def _scaled(number: str, factor: Fraction) -> str:
    if factor.denominator == 1:
        return f"{number} * {factor.numerator}"
    if factor.numerator == 1:
        return f"{number} / {factor.denominator}"
    return f"{number} * {factor.numerator} / {factor.denominator}"


def has_unit(sentence: str, unit: str) -> bool:
    """Whether `sentence` gives a quantity in `unit` (any spelling of it: "kg", "kilograms")."""
    size = _unit(unit)
    return any(_unit(m.group(2)) == size for m in _QUANTITY.finditer(sentence))


def quantities(sentence: str) -> bool:
    """Whether `sentence` gives a quantity with a unit this module converts, or a rate as an
    interval ("every 15 seconds")."""
    return _QUANTITY.search(sentence) is not None or _EVERY.search(sentence) is not None


# The most sentences with a quantity read for a conversion, best ranked first.
MAX_TRIED = 3


def implied_conversions(question: str, ranked: list[str]) -> list[str]:
    """conversions(question, s) for the first MAX_TRIED of the `ranked` sentences (best first)
    that give a quantity with a unit, best first (the model chooses among them), or the
    temperature_conversions of the first with a temperature when a scale is asked; [] when the
    first already gives the asked unit with no rate to scale (the question is a lookup: "How
    many days does the season last?" over "lasts 42 days")."""
    if asked_scale(question) is not None:
        for sentence in ranked:
            if _DEGREES.search(sentence):
                return temperature_conversions(question, sentence)
        return []
    unit, period = asked_unit(question), asked_period(question)
    if unit is None and period is None:
        return []
    out: list[str] = []
    tried = 0
    for sentence in ranked:  # the first MAX_TRIED with a quantity, best first
        if quantities(sentence):
            if tried == 0 and period is None and unit is not None and has_unit(sentence, unit):
                return []
            out.extend(conversions(question, sentence))
            tried += 1
            if tried == MAX_TRIED:
                break
    return list(dict.fromkeys(out))
