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
from typing import Sequence

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
# The words of time a price or a rate is for, one home for the tools (offers, discounts,
# conditions). A day's parts and the days of the week are days: "£3 a night" for "25 Wednesdays a year".
DAY_PARTS = ("day", "night", "evening")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
TIME_UNITS = {"minute": "minute", "minutes": "minute", "min": "minute", "mins": "minute", "hour": "hour",
              "hours": "hour", "hr": "hour", "hrs": "hour", "week": "week", "weeks": "week", "month": "month",
              "months": "month", "year": "year", "years": "year", "season": "season", "seasons": "season"}
TIME_UNITS.update({f"{day}{s}": "day" for day in DAY_PARTS + WEEKDAYS for s in ("", "s")})
# Adverbs of a period: "daily", "weekly", "annual".
PERIODIC = {"hourly": "hour", "daily": "day", "nightly": "night", "weekly": "week", "monthly": "month", "yearly": "year",
            "annual": "year", "annually": "year", "seasonal": "season"}
# The periods as nouns ("in a week" names no "Weekly pass holders": discounts).
PERIOD_NOUNS = frozenset(TIME_UNITS.values()) | {"night", "weekend"}
# A rate's period: "140 grams of meat a day", "per week", "each night"; "monthly", "daily".
_PERIODS = {word: period for word, period in PERIODIC.items() if period in _UNITS}
_PERIOD = "second|minute|hour|day|night|week|month|year"
_RATE = re.compile(rf"\b(?:a|an|per|each|every)\s+({_PERIOD})\b|\b({'|'.join(_PERIODS)})\b", re.IGNORECASE)
# The period a question asks about: "in a week", "for a full year", "over one month", "a week".
_ASKED_PERIOD = re.compile(rf"\b(?:in|for|over|during|across|within)\s+(?:a|an|one)\s+(?:full\s+|whole\s+|single\s+)?"
                           rf"({_PERIOD})\b|\b(?:a|per|each|every)\s+({_PERIOD})\s*[?.!]*\s*$", re.IGNORECASE)


def _unit(word: str) -> tuple[str, Fraction] | None:
    return _UNITS.get(" ".join(word.lower().split()))


def is_unit(word: str) -> bool:
    """Whether `word` is a unit of measure this module knows ("metre", "hours", "kg")."""
    return _unit(word) is not None


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


# A conversion the question states, used instead of an exact factor of ours (the person's rounding
# is the one asked): "use 1 metre = 3.28 feet", "1 km = 0.621 miles", "1 square metre = 10.764 sq
# ft", "assume 3.28 feet per metre", "at 3.28 feet to the metre".
_UNIT_PHRASE = r"(?:(?:square|sq\.?|cubic)\s+)?[a-z]+(?:\s+miles?)?"
_STATED = re.compile(rf"(?<![\w.,])(?:1|one|a|an)\s+({_UNIT_PHRASE})\s*(?:=|≈|~|is|equals|is\s+equal\s+to|is\s+about|"
                     rf"is\s+roughly|makes|to)\s*{_NUMBER}\s*({_UNIT_PHRASE})", re.IGNORECASE)
_STATED_PER = re.compile(rf"{_NUMBER}\s*({_UNIT_PHRASE})\s+(?:per|to\s+(?:a|an|the|one|1|each))\s+({_UNIT_PHRASE})",
                         re.IGNORECASE)
_PREFIXES = {"square": "square", "sq": "square", "sq.": "square", "cubic": "cubic"}


def _unit_key(phrase: str) -> tuple[str, object] | None:
    """A unit phrase as a comparable key: ("square", ("length", 1)) for "sq m", "square metres";
    ("", "hand") for a unit this module does not know ("hands"); None for no unit word."""
    words = phrase.lower().split()
    prefix = ""
    if len(words) > 1 and words[0] in _PREFIXES:
        prefix, words = _PREFIXES[words[0]], words[1:]
    if not words:
        return None
    known = _unit(" ".join(words))
    if known is not None:
        return prefix, known
    if len(words) > 1 or not words[0].isalpha() or len(words[0]) < 2:
        return None
    return prefix, words[0][:-1] if words[0].endswith("s") and len(words[0]) > 3 else words[0]


def stated_conversion(question: str) -> tuple[tuple[str, object], str, tuple[str, object]] | None:
    """(unit, factor, unit) of a conversion `question` states ("use 1 km = 0.621 miles" ->
    (km's key, "0.621", mile's key); "3.28 feet per metre" -> (metre's, "3.28", foot's)), or None."""
    for pattern, per in ((_STATED, False), (_STATED_PER, True)):
        for match in pattern.finditer(question):
            if per:
                factor, to, of = match.group(1), match.group(2), match.group(3)
            else:
                of, factor, to = match.group(1), match.group(2), match.group(3)
            a, b = _unit_key(of), _unit_key(to)
            # (two words of no known unit joined by "to the" are no conversion: "bring 4 boxes to the Community
            # Shred Day", blind set 98, read)
            if per and a is not None and b is not None and isinstance(a[1], str) and isinstance(b[1], str) and (
                    not re.search(r"\sper\s", match.group(0), re.IGNORECASE)):
                continue
            if a is not None and b is not None and a != b and Fraction(factor.replace(",", "")) != 0:
                return a, factor.replace(",", ""), b
    return None


# A number and the unit words after it: "850 square metres", "11 km away", "18 miles".
_NUMBER_THEN_WORDS = re.compile(rf"{_NUMBER}[\s-]*((?:square|sq\.?|cubic)\s+)?([a-z]+)(?:\s+([a-z]+))?",
                                re.IGNORECASE)


def _quantities_in(sentence: str, key: tuple[str, object]) -> list[str]:
    """The numbers of `sentence` given in the unit `key` (_unit_key), in order."""
    out = []
    for match in _NUMBER_THEN_WORDS.finditer(sentence):
        prefix = match.group(2) or ""
        for words in ((match.group(3), match.group(4)), (match.group(3),)):
            if None in words:
                continue
            if _unit_key(prefix + " ".join(words)) == key:
                out.append(match.group(1).replace(",", ""))
                break
    return list(dict.fromkeys(out))


def stated_conversions(question: str, ranked: list[str]) -> list[str]:
    """For a question stating a conversion (stated_conversion), the quantities of the `ranked`
    sentences (best first) in either of its units converted by its factor: "11 * 0.621" for "11
    km" with "1 km = 0.621 miles"; "18 / 1.609" for "18 km" with "1 mile = 1.609 km"; the
    quantities of the other unit than the one asked first. [] when it states none."""
    stated = stated_conversion(question)
    if stated is None:
        return []
    of, factor, to = stated
    rest = question
    for pattern in (_STATED, _STATED_PER):
        rest = pattern.sub(" ", rest)
    asked = asked_unit(rest) or _asked_area_unit(rest)
    asked_key = _unit_key(asked) if asked else None
    forward = [f"{n} * {factor}" for s in ranked for n in _quantities_in(s, of)]
    backward = [f"{n} / {factor}" for s in ranked for n in _quantities_in(s, to)]
    return list(dict.fromkeys(backward + forward if asked_key == of else forward + backward))


# An area asked: "how big is the floor in square metres", "the area of the hall", "how many sq ft".
_ASKS_AREA = re.compile(r"\b(?:(?:the|its|total|floor|surface)\s+area\s+of|what(?:'s|s|\s+is)\s+the\s+(?:\w+\s+)?area"
                        r"(?!\s+(?:code|manager|of\s+(?:expertise|work)))|"
                        r"how\s+(?:big|large)\s+(?:is|are)|(?:in|how\s+many)\s+(?:square|sq\.?)\s+[a-z]+|floor\s+space)\b|\barea\s*\?",
                        re.IGNORECASE)
_AREA_UNIT = re.compile(rf"\b(?:in|how\s+many)\s+((?:square|sq\.?)\s+(?:{_UNIT_WORDS}))\b", re.IGNORECASE)
# Two lengths of one thing: "measures 60 metres by 25 metres", "a 12 x 8 m hall", "40m by 20m".
_BY = re.compile(rf"{_NUMBER}\s*({_UNIT_WORDS})?\s*(?:by|x|×)\s*{_NUMBER}\s*({_UNIT_WORDS})\b", re.IGNORECASE)


_LAND = re.compile(r"\b(?:acres?|hectares?)\b", re.IGNORECASE)


def _asked_area_unit(question: str) -> str | None:
    match = _AREA_UNIT.search(question)
    return None if match is None else match.group(1)


def asks_area(question: str) -> bool:
    """Whether `question` asks an area ("in square metres", "the area of", "how many sq ft")."""
    return _ASKS_AREA.search(question) is not None


def areas(question: str, ranked: list[str]) -> list[str]:
    """For a question asking an area (asks_area), the product of each pair of lengths "N by M"
    of the `ranked` sentences (best first): "60 * 25" for "measures 60 metres by 25 metres",
    converted to the square unit asked when it is another ("in square feet": each length's
    factor squared). [] for any other question."""
    if not asks_area(question) or _LAND.search(question):
        return []  # "How big is the orchard in acres?": a lookup of an area given so
    asked = _asked_area_unit(question)
    wanted = _unit(asked.split(None, 1)[1]) if asked else None
    out = []
    for sentence in ranked:
        for match in _BY.finditer(sentence):
            given = _unit(match.group(4))
            if given is None or given[0] != "length" or (match.group(2) and _unit(match.group(2)) != given):
                continue
            product = f"{match.group(1).replace(',', '')} * {match.group(3).replace(',', '')}"
            if wanted is not None and wanted[0] == "length" and wanted != given:
                factor = (given[1] / wanted[1]) ** 2
                product = f"{product} * {factor.numerator}" + (f" / {factor.denominator}" if factor.denominator != 1 else "")
            out.append(product)
    return list(dict.fromkeys(out))


# A duration written in two units: "38 minutes and 12 seconds", "2 hours 15 minutes", "1 h, 30 min".
_COMPOUND = re.compile(rf"{_NUMBER}\s*({_UNIT_WORDS})\s*(?:,\s*|and\s+|,\s*and\s+)?{_NUMBER}\s*({_UNIT_WORDS})\b",
                       re.IGNORECASE)


def compound_conversions(question: str, sentence: str) -> list[str]:
    """A quantity of `sentence` written in two units of one dimension, the larger first ("38
    minutes and 12 seconds"), in the unit `question` asks ("in seconds": "38 * 60 + 12"); []
    when none, or when the asked unit is another dimension."""
    unit = asked_unit(question)
    wanted = _unit(unit) if unit else None
    if wanted is None:
        return []
    out = []
    for match in _COMPOUND.finditer(sentence):
        big, small = _unit(match.group(2)), _unit(match.group(4))
        if big is None or small is None or big[0] != small[0] or big[0] != wanted[0] or big[1] <= small[1]:
            continue
        if Fraction(match.group(3).replace(",", "")) * small[1] >= big[1]:
            continue  # "7 days, 24 hours": two facts, not one duration (its second part is under one of the first)
        first = _scaled(match.group(1).replace(",", ""), big[1] / wanted[1])
        second = _scaled(match.group(3).replace(",", ""), small[1] / wanted[1])
        first = first if big[1] != wanted[1] else match.group(1).replace(",", "")
        second = second if small[1] != wanted[1] else match.group(3).replace(",", "")
        out.append(f"{first} + {second}")
    return out


# The most sentences with a quantity read for a conversion, best ranked first.
MAX_TRIED = 3


def implied_conversions(question: str, ranked: list[str]) -> list[str]:
    """conversions(question, s) for the first MAX_TRIED of the `ranked` sentences (best first)
    that give a quantity with a unit, best first (the model chooses among them), or the
    temperature_conversions of the first with a temperature when a scale is asked; [] when the
    first already gives the asked unit with no rate to scale (the question is a lookup: "How
    many days does the season last?" over "lasts 42 days")."""
    stated = stated_conversions(question, ranked) or areas(question, ranked)
    if stated:  # "use 1 km = 0.621 miles", "how big is the floor in square metres"
        return stated
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
            out.extend(compound_conversions(question, sentence))  # "38 minutes and 12 seconds" in seconds
            if tried == 0 and period is None and unit is not None and has_unit(sentence, unit) and not out:
                return []
            out.extend(conversions(question, sentence))
            tried += 1
            if tried == MAX_TRIED:
                break
    return list(dict.fromkeys(out))


# A price per a square unit: "Per square foot ... $6.50", "$9.00 / sq ft", "£1.90 per m2", "per sq m".
_PER_SQUARE = re.compile(r"\b(?:per|/)\s*(?:(?:square|sq\.?)\s*(f(?:oo|ee)t|ft|met(?:re|er)s?|m)\b|(ft|m)(?:2|²)(?![\w²]))",
                         re.IGNORECASE)
# A price per a length: "£4.50 per metre", "$3 / linear ft", "per m" (not "per m2", "per square metre").
_PER_LENGTH = re.compile(r"\b(?:per|/)\s*(?:linear\s+|lineal\s+|running\s+)?(?:met(?:re|er)|m|f(?:oo|ee)t|ft)\b(?![2²])",
                         re.IGNORECASE)
# The documents rounding an area up: "(Square footage is rounded UP to the next whole sq ft, per banner.)".
_AREA_ROUNDED_UP = re.compile(r"\b(?:square\s+footage|footage|areas?|sq\.?\s*(?:ft|m)|square\s+met(?:re|er)s?)\b[^.;]{0,30}?"
                              r"\brounded\s+up\b", re.IGNORECASE)
# Two lengths of one thing as a question writes them: "3 ft by 8 ft", "2ft x 3ft", "3x8 ft", "2.5 ft x 7 ft"; a count of
# such things before them ("two 4ft x 10ft banners").
_SIDES = re.compile(r"(?<![\w.,])((?:[0-9]+|two|three|four|five|six|seven|eight|nine|ten|twelve)\s+(?=[0-9]))?"
                    r"([0-9]+(?:\.[0-9]+)?)\s*(ft|feet|foot|m|metres?|meters?)?\s*(?:x|×|by)\s*"
                    r"([0-9]+(?:\.[0-9]+)?)\s*(ft|feet|foot|m|metres?|meters?)\b", re.IGNORECASE)


def with_areas(question: str, sentences: Sequence[str]) -> str:
    """`question` with each pair of lengths of one thing written as its area in the square unit the
    documents price by ("Need a banner 3 ft by 8 ft" over "Per square foot ... $6.50" -> "Need a
    banner 24 sq ft"; "4 x 2.5 m" over "£1.90 per m2" -> "10 m2"), rounded up to a whole unit when
    the documents say an area is ("rounded UP to the next whole sq ft": 2.5 ft x 7 ft is 18 sq ft;
    blind set 89, read after its runs). The question as it is when they price by no square unit, or
    its lengths are in another unit."""
    priced = {_unit(m.group(1) or m.group(2)) for s in sentences for m in _PER_SQUARE.finditer(s)}
    if not priced:
        return question
    rounded = any(_AREA_ROUNDED_UP.search(s) for s in sentences)
    # (documents pricing by length too: "2 x 6 m of edging" may be two 6 m lengths, so a side needs its unit, or "by")
    linear = any(_PER_LENGTH.search(s) for s in sentences)

    def area(match: re.Match[str]) -> str:
        given = _unit(match.group(5))
        if given not in priced or (match.group(3) and _unit(match.group(3)) != given):
            return match.group(0)
        if linear and not match.group(3) and not re.search(r"\bby\b", match.group(0), re.IGNORECASE):
            return match.group(0)
        value = Fraction(match.group(2)) * Fraction(match.group(4))
        if rounded:  # (each thing's)
            value = Fraction(-(-value.numerator // value.denominator))
        # so many things of that size: their area together ("two 4ft x 10ft banners" -> "80 sq ft of banners")
        count = match.group(1) and _COUNTS.get(match.group(1).lower().strip(), match.group(1).strip())
        value *= int(count) if count else 1
        written = str(value.numerator) if value.denominator == 1 else str(float(value))
        return (f"{written} sq ft" if given == _unit("ft") else f"{written} m2") + (" of" if count else "")
    return _SIDES.sub(area, question)


_COUNTS = {"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
           "ten": "10", "twelve": "12"}
