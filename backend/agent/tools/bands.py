"""Size bands of a price list (issue 15): "Kitchen knife, blade up to 20 cm: £5.00" and "Kitchen
knife, blade over 20 cm: £7.00", asked about "4 big chefs knives? blades are about 25cm": the
second. A band is a bound on a measure written in a sentence ("up to 20 cm", "under 130 cm",
"over 15 m", "10.01 m to 15 m", "from 8 ft"); the question gives a measure in the same unit
("25cm", "an 8-metre boat", "9.2m"). A band of a count is a range of a noun ("1 - 10 panels:
A$120", "41+ panels", "10 to 24 items ... 5% off") and the question counts the same noun ("15
panels"): the row holding it prices the job once (blind set 73, read after its runs). Only numbers
and units are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Sequence

from backend.agent.numerals import CURRENCY_SIGNS, with_digits
from backend.agent.tools.units import PERIOD_NOUNS, TIME_UNITS

# A unit of length or weight as written -> one name for it.
_UNITS = {"mm": "mm", "cm": "cm", "m": "m", "metre": "m", "metres": "m", "meter": "m", "meters": "m",
          "km": "km", "inch": "in", "inches": "in", "ft": "ft", "foot": "ft", "feet": "ft",
          "kg": "kg", "kilo": "kg", "kilos": "kg", "g": "g", "grams": "g", "lb": "lb", "lbs": "lb",
          "gal": "gal", "gals": "gal", "gallon": "gal", "gallons": "gal", "l": "l", "litre": "l", "litres": "l",
          "liter": "l", "liters": "l", "hour": "h", "hours": "h", "hr": "h", "hrs": "h", "btu": "btu"}
_AREA = r"m2|m²|ft2|ft²|sq\.?\s*m\b|sq\.?\s*ft\b|sqm|sqft|square\s+(?:met(?:re|er)s?|f(?:ee|oo)t)"
_UNIT = rf"({_AREA}|hours?|hrs?|mm|cm|metres?|meters?|m|km|inch(?:es)?|ft|foot|feet|kgs?|kilos?|grams|g|lbs?|gal(?:lon)?s?|lit(?:re|er)s?|l|btu)"  # not "in": "3 in total"
_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
# A measure the question gives: "25cm", "an 8-metre boat", "9.2 m", "150 m²" (not "5 minutes").
_MEASURE = re.compile(rf"(?<![\w.{CURRENCY_SIGNS}]){_NUMBER}\s*-?\s*{_UNIT}(?![\w²³])", re.IGNORECASE)
# A band's bounds: "up to 20 cm", "under 130 cm", "over 15 m", "10.01 m to 15 m", "from 8 ft".
_BELOW = re.compile(rf"\b(up\s+to|under|below|less\s+than|max(?:imum)?|no\s+more\s+than)\s+{_NUMBER}\s*-?\s*{_UNIT}(?![\w²³])",
                    re.IGNORECASE)
_ABOVE = re.compile(rf"\b(over|above|more\s+than|from|at\s+least|longer\s+than|taller\s+than)\s+{_NUMBER}\s*-?\s*"
                    rf"{_UNIT}(?![\w²³])", re.IGNORECASE)
_BETWEEN = re.compile(rf"(?<![\w.]){_NUMBER}\s*{_UNIT}?\s*(?:to|-|–)\s*{_NUMBER}\s*-?\s*{_UNIT}(?![\w²³])", re.IGNORECASE)


# Units banded by a range alone ("24 to 48 hours' notice: $40"): "rides over 2 hours" is no band of "bike hire for
# 2 hours" (a duration priced per hour).
_RANGES_ONLY = frozenset({"h"})


# An area's ways of writing: "150 m²", "220 sq m", "85 m2", "500 square feet" (blind set 79).
_AREAS = {"m2": "m2", "m²": "m2", "sqm": "m2", "squaremetre": "m2", "squaremetres": "m2", "squaremeter": "m2",
          "squaremeters": "m2", "ft2": "ft2", "ft²": "ft2", "sqft": "ft2", "squarefeet": "ft2", "squarefoot": "ft2"}


def _unit(word: str) -> str:
    word = word.lower()
    area = re.sub(r"[\s.]", "", word)
    if area in _AREAS:
        return _AREAS[area]
    return _UNITS.get(word, _UNITS.get(word.rstrip("s"), word))


def _noun(word: str) -> str:
    """One name for a counted noun, singular or plural ("panels", "panel" -> "panel"; "boxes" -> "box")."""
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


# Things counted in bands: "1 - 10 panels A$120", "41+ panels", "50 items or more" (the unit is the noun right
# after the number; the question counts the same noun: "15 panels"); not "up to 6 lines", "over 20 bikes": an
# allowance or a least count more often than a row (plaques "includes up to 6 lines" take 8 at $1.50 each more).
_COUNTED = r"([a-z]{3,})"
# (past a numbered word between: "25 1-sided lawn signs")
# (or a paper size: "600 A5 flyers")
_COUNT = re.compile(rf"(?<![\w.{CURRENCY_SIGNS}]){_NUMBER}\s+(?:[0-9]{{1,2}}-[a-z]+\s+|[A-C][0-9]{{1,2}}\s+)?{_COUNTED}\b", re.IGNORECASE)
_COUNT_BETWEEN = re.compile(rf"(?<![\w.{CURRENCY_SIGNS}]){_NUMBER}\s*(?:to|-|–)\s*{_NUMBER}\s+{_COUNTED}\b", re.IGNORECASE)
_COUNT_PLUS = re.compile(rf"(?<![\w.{CURRENCY_SIGNS}]){_NUMBER}\s*\+\s*{_COUNTED}\b|(?<![\w.{CURRENCY_SIGNS}]){_NUMBER}\s+{_COUNTED}\s+"
                         rf"(?:and|or)\s+(?:over|above|more|up(?:wards)?)\b", re.IGNORECASE)
# Words after a number that are no thing counted in bands: people (a party: backend.agent.party), function words,
# a measure's first word ("120 square metres").
_NOT_COUNTED = re.compile(r"(?:people|persons?|adults?|child(?:ren)?|kids?|guests?|players?|students?|seniors?|pax|riders?|"
                          r"divers?|participants?|friends?|mates?|members?|pupils?|teens?|juniors?|visitors?|passengers?|"
                          r"diners?|of|or|and|to|per|each|more|square|sq|cubic|linear|lineal|percent)")


def _counted(question: str) -> dict[str, Fraction]:
    """The first count `question` gives of each noun ("15 panels on a house" -> {"panel": 15})."""
    out: dict[str, Fraction] = {}
    for m in _COUNT.finditer(question):
        # (not a period: "3 hours" is no count of "under 24 hours' notice"; nor people: a party is priced by
        # backend.agent.party and tiers; nor a measure's first word: "120 square metres"; nor a size or a number
        # naming one thing: "size 10 shoes", "a 3 seater sofa", "a 60 page booklet": review)
        word = m.group(2).lower()
        if (word in _UNITS or word in TIME_UNITS or _noun(word) in PERIOD_NOUNS or _NOT_COUNTED.fullmatch(word)
                or _NAMING_NUMBER.search(question[:m.start()]) or _modifies_one(question, m)):
            continue
        out.setdefault(_head_noun(question, m), Fraction(m.group(1)))
    return out


def _head_noun(question: str, m: re.Match[str]) -> str:
    """The noun a count `m` (_COUNT) counts: the word after it, or the plural ending the words after it
    ("25 one-sided lawn signs" counts "sign", blind set 89, read after its runs; "15 panels on a house"
    counts "panel")."""
    phrase = _phrase(question, m)
    plural = next((w for w in phrase[1:] if re.fullmatch(r"[a-z]{3,}s", w.lower()) and not w.lower().endswith("ss")), None)
    return _noun(plural if plural and not m.group(2).lower().endswith("s") else m.group(2))


def _phrase(question: str, m: re.Match[str]) -> list[str]:
    """The first four words of the noun phrase a count `m` (_COUNT) opens, its sizes left out ("250 black 180g
    12 inch records" -> black, records: blind set 93, read, was "a 12 inch" thing, no count of records)."""
    words = _PHRASE_END.split(question[m.start(2):], maxsplit=1)[0].split()
    kept = [w for i, w in enumerate(words) if not _SIZE_WORD.fullmatch(w)
            and not (i and _SIZE_UNIT_WORD.fullmatch(w) and re.fullmatch(r"[0-9.]+", words[i - 1]))]
    return kept[:4]


# A size's words: "180g", "12", "12\"", "A5", and a unit after a number ("12 inch").
_SIZE_WORD = re.compile(r"[A-C]?[0-9]+(?:\.[0-9]+)?(?:g|kg|gsm|mm|cm|m|ml|l|oz|lb|in|\"|″|ft)?", re.IGNORECASE)
_SIZE_UNIT_WORD = re.compile(r"inch|inches|in|mm|cm|g|gsm|oz|lb|lbs|kg|ml|litre|liter|ft|foot|feet", re.IGNORECASE)


# A number that names rather than counts: "size 10", "no. 5", "model 3", "room 12".
_NAMING_NUMBER = re.compile(r"\b(?:sizes?|no\.?|number|#|model|room|gate|platform|aged?|year|mark|level|floor|grade)\s*$",
                            re.IGNORECASE)
# The words after a count up to the end of its noun phrase.
_PHRASE_END = re.compile(r"\b(?:for|on|in|at|to|of|with|and|or|plus|please|each|per|from|by|that|which|who|we|i|it)\b|[^\w\s'-]",
                         re.IGNORECASE)


def _modifies_one(question: str, m: re.Match[str]) -> bool:
    """Whether the count `m` (a number and the word after it) is part of a name of one thing: more
    than one, and the noun phrase it opens ends in a singular ("a 3 seater sofa", "60 page booklet";
    not "15 panels", "12 resin figure trophies")."""
    if Fraction(m.group(1)) <= 1:
        return False
    phrase = _phrase(question, m)
    head = phrase[-1].lower() if phrase else m.group(2).lower()
    return len(phrase) > 1 and not head.endswith("s") and head not in _IRREGULAR_PLURALS


_IRREGULAR_PLURALS = frozenset({"people", "children", "men", "women", "feet", "teeth", "sheep", "fish", "deer", "mice",
                                "geese", "staff", "equipment"})


def _count_bands(given: dict[str, Fraction], sentence: str) -> dict[str, bool]:
    """noun -> whether a band of `sentence` counting it holds the question's count."""
    held: dict[str, bool] = {}
    for m in _COUNT_BETWEEN.finditer(sentence):
        noun = _noun(m.group(3))
        low, high = Fraction(m.group(1)), Fraction(m.group(2))
        if noun in given and not (low <= 1 and given[noun] > high):
            held[noun] = held.get(noun, False) or low <= given[noun] <= high
        # (a range from one is what a price includes, not a band the count is outside: "Starter website (1 - 5
        # pages): $800" and "Extra pages: $80 per page" for 7 pages, review)
    for m in _COUNT_PLUS.finditer(sentence):
        number, noun = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        noun = _noun(noun)
        if noun in given:
            held[noun] = held.get(noun, False) or given[noun] >= Fraction(number)
    return held


def given_measures(text: str) -> dict[str, Fraction]:
    """The first measure `text` gives in each unit ("blades are about 25cm" -> {"cm": 25})."""
    out: dict[str, Fraction] = {}
    for m in _MEASURE.finditer(text):
        out.setdefault(_unit(m.group(2)), Fraction(m.group(1)))
    return out


def outside_band(question: str, sentence: str) -> bool:
    """Whether `sentence` states bands of a measure ("blade up to 20 cm"; "under 20 kg £25, 20 kg and
    over £32") or of a count ("11 - 20 panels") none of which holds the question's measure or count
    in the same unit ("25cm" is outside "up to 20 cm"; "an 8-metre boat" outside "10.01 m to 15 m";
    "15 panels" outside "41+ panels"); False when it states none in that unit, or one of them holds
    it, or the question gives no measure."""
    held = _held(_unseparated(question), _unseparated(sentence))
    return bool(held) and not any(held.values())


def _unseparated(text: str) -> str:
    """`text` with its thousands written without separators ("18,000 to 24,000 BTU" -> "18000 to 24000 BTU",
    practice set 6), as a question writes them."""
    return re.sub(r"(?<=[0-9]),(?=[0-9]{3}(?![0-9]))", "", text)


# The words between two prices of one row that join them ("A$240 + A$5.50 per panel over 40").
_CONNECTIVE = re.compile(r"\s*(?:\+|plus|and|then)?\s*", re.IGNORECASE)


def joined_row_outside(question: str, sentence: str, prices: Sequence[re.Match[str]], i: int) -> bool:
    """Whether the `i`th price of `sentence` (`prices`: its price matches) is joined to the row's
    first by "+" alone and the row's label states a band the question is outside ("41+ panels
    A$240 + A$5.50 per panel over 40" for 15 panels: the A$5.50 is the 41+ row's too)."""
    return (bool(i) and _CONNECTIVE.fullmatch(sentence[prices[i - 1].end():prices[i].start()]) is not None
            and outside_band(question, sentence[:prices[0].start()]))


def inside_band(question: str, sentence: str) -> bool:
    """Whether a band `sentence` states holds the question's measure or count ("Zone B - 3 to 10
    miles: £8.50" for "we're 5 miles away"; "11 - 20 panels: A$160" for "15 panels")."""
    return any(_held(question, sentence).values())


# A least length of a hire or stay: "3 or more consecutive days: $38 per day", "7+ nights", "5 days or longer" (blind
# set 84: a 2-day rental was priced at the 3-day rate).
_LENGTH = r"(days?|nights?|weeks?|months?)"
_LENGTH_PLUS = re.compile(rf"(?<![\w.{CURRENCY_SIGNS}])([0-9]+)\s*(?:\+|(?:or|and)\s+(?:more|over|above|longer|up(?:wards)?))\s+"
                          rf"(?:(?:consecutive|straight|full|whole|rental|hire)\s+)?{_LENGTH}\b"
                          rf"|(?<![\w.{CURRENCY_SIGNS}])([0-9]+)\s+(?:(?:consecutive|straight|full|whole)\s+)?{_LENGTH}\s*"
                          rf"(?:\+|(?:or|and)\s+(?:more|over|above|longer|up(?:wards)?)\b)", re.IGNORECASE)
# A length past a bound: "Extra days beyond 3 days: $25 per unit per day" is no price of a 1-day or 2-day hire (blind
# set 101, read).
_LENGTH_BEYOND = re.compile(rf"\b(?:beyond|past|after|over|more\s+than|longer\s+than)\s+(?:the\s+(?:first\s+)?)?"
                            rf"([0-9]+)\s+(?:(?:consecutive|straight|full|whole|rental|hire)\s+)?{_LENGTH}\b"
                            rf"(?!\s+(?:before|after|ahead|in\s+advance|prior|notice|from|of)\b)", re.IGNORECASE)
# The length the question gives: "for 2 days", "5 nights", "two weeks".
_GIVEN_LENGTH = re.compile(rf"(?<![\w.{CURRENCY_SIGNS}])([0-9]+)\s*-?\s*(?:(?:consecutive|straight|full|whole)\s+)?{_LENGTH}\b",
                           re.IGNORECASE)


def _lengths(question: str) -> dict[str, Fraction]:
    """The first length the question gives in each period ("full gear for 2 days" -> {"day": 2})."""
    out: dict[str, Fraction] = {}
    # ("(one day)", "a one-day fete": with_digits leaves "one" as a word)
    question = re.sub(rf"\b(?:one|single)(\s*-?\s*){_LENGTH}\b", r"1\1\2", question, flags=re.IGNORECASE)
    for m in _GIVEN_LENGTH.finditer(with_digits(question)):
        out.setdefault(_noun(m.group(2)), Fraction(m.group(1)))
    return out


def _held(question: str, sentence: str) -> dict[str, bool]:
    """unit or counted noun -> whether a band of it in `sentence` holds the question's measure or count."""
    given = given_measures(question)
    counted = _counted(question)
    if not given and not counted and not _lengths(question):
        return {}
    held: dict[str, bool] = _count_bands(counted, sentence) if counted else {}
    lengths = _lengths(question)
    for m in _LENGTH_PLUS.finditer(sentence):
        number, period = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        period = _noun(period)
        if period in lengths:
            held[period] = held.get(period, False) or lengths[period] >= Fraction(number)
    for m in _LENGTH_BEYOND.finditer(sentence):
        period = _noun(m.group(2))
        if period in lengths:
            held[period] = held.get(period, False) or lengths[period] > Fraction(m.group(1))
    for m in _BETWEEN.finditer(sentence):
        unit = _unit(m.group(4))
        if (m.group(2) is None or _unit(m.group(2)) == unit) and unit in given:
            held[unit] = held.get(unit, False) or Fraction(m.group(1)) <= given[unit] <= Fraction(m.group(3))
    for m in _BELOW.finditer(sentence):
        unit = _unit(m.group(3))
        if unit in given and unit not in _RANGES_ONLY:
            bound, inclusive = Fraction(m.group(2)), m.group(1).lower().startswith(("up", "max", "no"))
            held[unit] = held.get(unit, False) or given[unit] < bound or (given[unit] == bound and inclusive)
    for m in _ABOVE.finditer(sentence):
        unit = _unit(m.group(3))
        if unit in given and unit not in _RANGES_ONLY:
            bound, inclusive = Fraction(m.group(2)), m.group(1).lower().startswith(("from", "at"))
            held[unit] = held.get(unit, False) or given[unit] > bound or (given[unit] == bound and inclusive)
    for m in _AND_OVER.finditer(sentence):
        unit = _unit(m.group(2))
        if unit in given and unit not in _RANGES_ONLY:
            held[unit] = held.get(unit, False) or given[unit] >= Fraction(m.group(1))
    return held


# "20 kg and over", "20 kg or more": a lower bound written after its number.
_AND_OVER = re.compile(rf"(?<![\w.]){_NUMBER}\s*-?\s*{_UNIT}\s+(?:and|or)\s+(?:over|above|more|up(?:wards)?)\b",
                       re.IGNORECASE)


# A table's column named by a band of a count alone: "1-49", "250+", "10 or more", "over 100" (a quantity's column:
# "Hawthorn: 1-49 £0.95; 50-249 £0.80; 250+ £0.65", practice set 2).
_CELL_BAND = re.compile(r"\s*(?:([0-9]+)\s*(?:-|–|to)\s*([0-9]+)|([0-9]+)\s*\+|([0-9]+)\s+(?:or|and)\s+(?:more|over|above|up(?:wards)?)"
                        r"|(?:over|more\s+than|above)\s+([0-9]+))\s*", re.IGNORECASE)


def cell_band_holds(cell: str, count: str) -> bool | None:
    """Whether the band of a count that a table's cell label is (_CELL_BAND: "1-49", "250+") holds
    `count` ("30": True for "1-49", False for "50-249"); None when the label is no such band or the
    count no number."""
    m = _CELL_BAND.fullmatch(cell)
    if m is None or not re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", count):
        return None
    n = Fraction(count)
    if m.group(1):
        return int(m.group(1)) <= n <= int(m.group(2))
    low = m.group(3) or m.group(4)
    return n >= int(low) if low else n > int(m.group(5))


def states_bands(question: str, sentence: str) -> bool:
    """Whether `sentence` states a band of the question's measure or count, holding it or not ("1 - 10
    panels: A$120" for "15 panels"): a row of a band table, the bill's own price or another's."""
    return bool(_held(question, sentence))


def held_counts(question: str, sentence: str, lot: bool = False) -> set[str]:
    """The nouns, as one name each ("panel"), that the question counts and a band of `sentence` holding
    its count counts too ({"panel"} for "15 panels on a single storey house" over "11 - 20 panels: A$160"):
    the row that prices the job; with `lot`, those it prices as a lot, not per one ("Fleet wash 5 to 10
    cars: $20 per car" prices each car)."""
    counted = _counted(question)
    held = {noun for noun, held in _count_bands(counted, sentence).items() if held} if counted else set()
    return {noun for noun in held if not _per_one(sentence, noun)} if lot else held


def _per_one(sentence: str, noun: str) -> bool:
    """Whether `sentence` prices each one of `noun` ("$20 per car", "$9 each")."""
    return re.search(rf"\b(?:per|a|each|every)\s+{re.escape(noun)}|\beach\b", sentence, re.IGNORECASE) is not None


def banded_measures(question: str, sentence: str) -> set[str]:
    """The numbers (as written) of the measures `question` gives in a unit `sentence` states a
    band of ("my 800 litre garden pond" over "Garden pond 501-2000 litres: £80": {"800"}): the
    size that picks the row, no count of anything."""
    question, sentence = _unseparated(question), _unseparated(sentence)
    units: set[str] = set()
    for m in _BETWEEN.finditer(sentence):
        units.add(_unit(m.group(4)))
    for pattern in (_BELOW, _ABOVE):
        for m in pattern.finditer(sentence):
            units.add(_unit(m.group(3)))
    for m in _AND_OVER.finditer(sentence):
        units.add(_unit(m.group(2)))
    units -= _RANGES_ONLY - {_unit(m.group(4)) for m in _BETWEEN.finditer(sentence)}
    # (not a unit the row prices by: "101 to 200 m2: Rate per m2 £2.20" is 150 times £2.20 for 150 m²)
    units -= {_unit(m.group(1)) for m in _PER_UNIT.finditer(sentence)}
    nouns = held_counts(question, sentence, lot=True)
    return ({m.group(1) for m in _MEASURE.finditer(question) if _unit(m.group(2)) in units}
            | {m.group(1) for m in _COUNT.finditer(question) if _head_noun(question, m) in nouns})



# A price by a unit: "per m2", "/kg".
_PER_UNIT = re.compile(rf"(?:\bper|/)\s*{_UNIT}(?![\w²³])", re.IGNORECASE)


# A percentage off by bands of how many are ordered: "10 to 24 items ... 5% off    25 to 49 items ... 10% off
# 50+ items ... 15% off" (a band, then its percentage within a few words).
_ANY_THING = r"(?:items?|pieces?|pcs|units?|products?)"
_VOLUME_ROW = re.compile(rf"(?<![\w.{CURRENCY_SIGNS}])(?:{_NUMBER}\s*(?:to|-|–)\s*{_NUMBER}|{_NUMBER}\s*\+)\s+(?P<noun>[a-z]{{3,}})\b"
                         rf"[^%0-9]{{0,20}}?(?P<pct>[0-9]+(?:\.[0-9]+)?)\s*%\s*(?:off|discount)\b", re.IGNORECASE)


def volume_discount(question: str, sentences: Sequence[str]) -> tuple[str, str, str] | None:
    """(the percentage as written, its sentence, "") of the band of a volume discount that holds the
    first count `question` gives ("12 resin figure trophies" over "10 to 24 items ... 5% off 25 to 49
    items ... 10% off": "5"), the band's noun being the question's or any thing ("items", "pieces");
    None when no band holds it or the question counts nothing."""
    counted = _counted(question)
    if not counted:
        return None
    noun, count = next(iter(counted.items()))
    for sentence in sentences:
        for m in _VOLUME_ROW.finditer(sentence):
            if not (re.fullmatch(_ANY_THING, m.group("noun"), re.IGNORECASE) or _noun(m.group("noun")) == noun):
                continue
            low = Fraction(m.group(1) or m.group(3))
            high = Fraction(m.group(2)) if m.group(2) else None
            if low <= count and (high is None or count <= high):
                return m.group("pct"), sentence, ""
    return None


# A row labelled by a band of a count alone: "10 - 49: 1-sided $14.00; 2-sided $19.00", "50+: $11.00".
_BARE_BAND = re.compile(r"^(?:(?:qty|quantity)\s+)?[0-9]+\s*(?:(?:-|–|to)\s*[0-9]+|\+)(?=\s*:)", re.IGNORECASE)
# The thing a section heading lists: its last plural word before an aside ("CORRUGATED LAWN SIGNS (18\" x 24\")").
_LISTED_THING = re.compile(r"([A-Za-z]{3,}s)\s*(?:\(.*)?$", re.IGNORECASE)


def with_band_nouns(sentences: Sequence[tuple[str, str]], sections: Sequence[str]) -> list[tuple[str, str]]:
    """`sentences` ((heading, sentence) pairs; `sections`: sentences.section_headings of them) with
    each row labelled by a band of a count alone given the thing its section heading lists ("10 -
    49: 1-sided $14.00" under "CORRUGATED LAWN SIGNS" -> "10 - 49 signs: ..."), so that a band
    holds a count of that thing (_count_bands: "25 lawn signs", not "12 extra H stakes"; blind set
    89, read after its runs). Rows whose first prices fall as the bands rise are a quantity break,
    priced each one (written "... signs each: ..."); rising ones price the lot."""
    out = list(sentences)
    # (a heading's aside is on its own line, which section_headings leaves out: "PRESSING (per record, ...)")
    lines = [next((s for _, s in reversed(sentences[:i]) if sections[i] and s.startswith(sections[i])), sections[i])
             for i in range(len(sentences))]
    rows = [i for i, (_, s) in enumerate(sentences) if _BARE_BAND.match(s) and _listed_thing(lines[i])]
    firsts: dict[str, list[Fraction]] = {}  # each section's rows' first prices, in order
    for i in rows:
        amount = _first_amount(sentences[i][1])
        if amount is not None:
            firsts.setdefault(sections[i], []).append(amount)
    for i in rows:
        noun = _listed_thing(lines[i])
        fellow = firsts.get(sections[i], [])
        each = len(fellow) > 1 and fellow == sorted(fellow, reverse=True) and fellow[0] != fellow[-1]
        band = _BARE_BAND.match(sentences[i][1])
        out[i] = (sentences[i][0], f"{band.group(0)} {noun}{' each' if each else ''}{sentences[i][1][band.end():]}")
    return out


def _listed_thing(heading: str) -> str | None:
    """The thing a section `heading` lists (_LISTED_THING), or the unit its aside prices per, made
    plural ("PRESSING (per record, incl. plain white inner sleeve)" -> "records": blind set 93, read)."""
    m = _LISTED_THING.search(heading)
    if m is not None:
        return m.group(1).lower()
    per = _PER_IN_ASIDE.search(heading)
    return None if per is None else per.group(1).lower() + ("" if per.group(1).lower().endswith("s") else "s")


_PER_IN_ASIDE = re.compile(r"\(\s*per\s+([A-Za-z]{3,})\b")


def _first_amount(sentence: str) -> Fraction | None:
    m = re.search(rf"[{CURRENCY_SIGNS}]\s?([0-9]+(?:\.[0-9]+)?)", sentence)
    return Fraction(m.group(1)) if m else None

