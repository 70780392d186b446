"""Two ways of paying compared, and a bundle's price per unit (issue 15): "how much do I save
per lesson buying the 10 manual lesson block instead of single lessons" over "A single 1-hour
lesson costs $55 ... A block of 10 manual lessons is sold for $495" -> "55 - 495 / 10"; "what's
the price per hour of the intensive course" over "Intensive one-week courses include 20 hours of
lessons for $1,050" -> "1050 / 20".

Each price of the documents is an offer: the price and its measure, what it buys, read from its
words (back to the price before it, on to the price after it, within its sentence): a period
("per month", "monthly", "a day pass", "for a full year": {"month": 1}), a bundle ("a block of 10
lessons": {"lesson": 10, "item": 10}; "6 sessions of 2 hours each": {"session": 6, "hour": 12};
"a 10-week course, with one 150-minute session each week": 10 weeks, 10 sessions, 1500 minutes),
else one thing ({"item": 1}). The question asks an amount ("for 2 weeks", "12 days a month",
"six bought separately", "per crossing") and the offers its words name most; each offer's cost
of that amount is its price times the amount over its measure, in a unit both have (or convert
between: 7 days a week, 12 months or 52 weeks a year, 60 minutes an hour); a bundle of several
(a set of six, a week of seven days) is bought whole unless a price per unit is asked.

- A comparison ("save", "cheaper", "how much more ... than", "instead of", "vs"): the
  difference of the costs of two offers, the pairs whose words the question names most first,
  pairs of different measures before those of the same (a daily rate against a weekly one).
- A price per unit ("price per hour", "works out to per hour of class time"): an offer's price
  over its measure in that unit, for a bundle (a measure of more than one of it).

Only numbers and words are read from the passages (untrusted data); the expressions go through
the calculator's parser (backend.agent.tools.fact_expressions.valid_expressions) before they are offered.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Sequence

from backend.agent.numerals import CURRENCY_SIGNS, SIGNED_PRICE, with_digits
from backend.agent.operations import asks_difference
from backend.agent.rounding import without_rounding
from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.basket import (OPTIONAL, SET_ASIDE, basket_items, listed_total, naming_words, norm_words,
                                        singular)
from backend.agent.tools.units import PERIODIC, TIME_UNITS

# The most offers read and the most differences offered (each is a candidate of the calculator).
MAX_OFFERS = 24
MAX_COMPARISONS = 4  # pairs of offers (a listed party against one offer comes before them)
_PRICE = re.compile(SIGNED_PRICE)
# A night's price is a day's (units.TIME_UNITS).
_PERIODIC = {word: TIME_UNITS.get(period, period) for word, period in PERIODIC.items()}
# (larger unit, smaller unit, how many of the smaller one the larger holds).
_CONVERSIONS = (("hour", "minute", 60), ("week", "day", 7), ("year", "month", 12), ("year", "week", 52))
_TIME = "|".join(sorted(TIME_UNITS, key=len, reverse=True))
# The units a price is for ("per month", "a full year"): not a day of the week ("a Saturday class").
_PERIOD = "|".join(sorted((w for w in TIME_UNITS if not w.endswith(("day", "days")) or w.startswith("day")),
                          key=len, reverse=True))
# "20 foot-passenger tickets", "6 sessions", "2 hours": a count and up to three words naming what.
_WORD = r"[a-z][a-z'-]*"
_COUNT = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}-])([0-9]+(?:\.[0-9]+)?)(-|\s+)({_WORD}(?:\s+{_WORD}){{0,2}})")
# Words that end a thing's name ("10 manual lessons is sold", "6 sessions of 2 hours").
_NAME_END = re.compile(r"^(?:of|for|at|and|or|is|are|was|were|in|on|with|to|the|a|an|each|per|every|cost|costs|"
                       r"sold|sells|include|includes|get|gets|from|by|run|runs|who|that|which|than|instead|vs|there|here|then|if|so|"
                       r"but|we|i|you|it|they|he|she|my|our|your|their|this|these|those|now|today|am|pm)$")
# "a set of 6." : a count of things the words before it name.
_OF_COUNT = re.compile(r"\bof\s+([0-9]+)(?!\s*[a-z0-9-])", re.IGNORECASE)
# Bundles named in a question ("the 10 manual lesson block", "the set of six"): offers, not amounts.
_BUNDLE_WORDS = r"(?:block|book|set|pack|bundle|box|booklet|package|card|pass|course|carnet|strip)"
_BUNDLE_NAMED = re.compile(rf"\b{_BUNDLE_WORDS}s?\s+of\s+$", re.IGNORECASE)
# "per month", "a day", "each week", "every night" (what one price or one amount is for).
_PER = re.compile(rf"\b(?:per|a|an|each|every)\s+({_PERIOD})\b|\b(?:per|each|every)\s+({_WORD})", re.IGNORECASE)
# "a full year", "one whole month", "a day pass", "single week".
_ONE_PERIOD = re.compile(rf"\b(?:a|an|one|single|full|whole)\s+(?:full\s+|whole\s+|single\s+)?({_PERIOD})\b", re.IGNORECASE)
# "12 days a month": a rate of the asked amount.
_RATE = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}-])([0-9]+(?:\.[0-9]+)?)\s+(?:[a-z]+\s+)?({_TIME}|{_WORD})\s+(?:a|an|per|each|every)\s+"
                   rf"({_TIME})\b", re.IGNORECASE)
# Where a price's words end: ", and a car with driver costs £28" names the next price.
_NEXT_THING = re.compile(r"[,;]?\s(?:and|or|while|whereas|but)\s+(?:a|an|the|\d)\b|,\s+(?:a|an|the)\s|,\s+and\s|;",
                         re.IGNORECASE)
# Where the words of the price before end: "£48 per month or | £480 per year".
_AFTER_PRICE = re.compile(r",?\s(?:or|and|while|whereas|but)\s|[,;]\s", re.IGNORECASE)
_AT = " @price "  # where the price stands between its words (measure_of)
# "or 3 for $24": a count of things bought together.
_N_FOR = re.compile(r"(?<![\w.,])([0-9]+)\s+for\s+@price\b", re.IGNORECASE)
# Words of paying that name no offer ("paying the weekly rate", "how much do I save buying").
_GENERIC = frozenset({"pay", "paying", "paid", "cost", "price", "save", "saving", "buy", "buying", "bought", "rate",
                      "charge", "fee", "total", "much", "instead", "separately", "get", "getting", "spend", "spending"})
# Two prices of one thing: "£48 per month or £480 per year", "$9 each, or 3 for $24".
_OR = re.compile(r"^[^;]{0,30}?\bor\b(?![^;]*\band\b)", re.IGNORECASE)
# "a ten-session punch card": a count as a word before a hyphen.
_HYPHEN_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                  "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "fifty": 50}
_HYPHEN_COUNT = re.compile(rf"\b({'|'.join(_HYPHEN_COUNTS)})-(?=[a-z])", re.IGNORECASE)
_TRIPS = re.compile(r"\bthere\s+and\s+back\b|\bboth\s+ways\b|\bround\s+trips?\b|\breturn\s+journeys?\b", re.IGNORECASE)
# The other way a question weighs a price against (operations.asks_difference), and a price asked per unit.
_ALTERNATIVE = re.compile(r"\b(?:instead\s+of|rather\s+than|than|vs|versus|compared\s+(?:to|with)|over)\b", re.IGNORECASE)
_PER_UNIT_ASKED = re.compile(rf"\b(?:price|cost|rate|charge|pay|paying|much|out\s+(?:to|at|as))\s+(?:\w+\s+)?per\s+"
                             rf"({_TIME}|{_WORD})\b", re.IGNORECASE)


# A count that limits what one price buys, not a count bought ("no more than 6 dogs per walker", "up to 20").
_LIMIT_BEFORE = re.compile(r"\b(?:no\s+more\s+than|not\s+more\s+than|at\s+most|a\s+maximum\s+of|maximum(?:\s+of)?|"
                           r"max\.?|fewer\s+than|less\s+than|minimum(?:\s+of)?|at\s+least|(?!(?:other|rather)\b)[a-z]+er\s+than)\s+$",
                           re.IGNORECASE)  # "taller than 2 metres"
# A size after a measure describes the thing priced, nothing bought: "hedges up to 2 metres tall".
# An area or a volume is one too: "lawns up to 200 square metres". (Not a length of time: "6 weeks
# long" is what a course's price buys.)
_LENGTH_UNIT = r"(?:metres?|meters?|m|cm|mm|km|feet|foot|ft|inches|inch|in|yards?|yd|miles?)"
_SIZE_AFTER = re.compile(rf"{_LENGTH_UNIT}\s+(?:tall|long|wide|high|deep|thick|in\s+(?:height|length|width|diameter))\b"
                         rf"|(?:square|sq\.?|cubic)\s+{_LENGTH_UNIT}\b", re.IGNORECASE)
_LASTS_BEFORE = re.compile(r"\b(?:lasts?|lasting|takes?)\s+(?:about\s+|around\s+)?$", re.IGNORECASE)
# The alternative a comparison names is paying for each one ("10 group walks one by one", "the 3 terms separately").
_SINGLY = re.compile(r"\b(?:one\s+by\s+one|one\s+at\s+a\s+time|separately|individually|singly|each\s+time|"
                     r"pay(?:ing)?\s+as\s+you\s+go|single)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Offer:
    """A price of the documents and what it buys: `measure` maps a unit ("month", "lesson",
    "item") to how many of it the price pays for (exact)."""

    price: str
    measure: dict[str, Fraction]
    words: frozenset[str]
    order: int


def _unit(word: str) -> str:
    """A unit's one name: "weeks" -> "week", "lessons" -> "lesson", "classes" -> "class"."""
    word = word.lower()
    return TIME_UNITS.get(word) or singular(word)


def _thing(words: str) -> str | None:
    """What a count counts, from the words after it ("foot-passenger tickets are" -> "ticket",
    "manual lessons" -> "lesson"): the first plural before a word ending the name, else the
    first word; None when the first word ends a name."""
    found = _thing_at(words)
    return None if found is None else found[0]


def _thing_at(words: str) -> tuple[str, str] | None:
    """(_thing's unit, the words after the word naming it)."""
    split = words.lower().split()
    names = []
    for word in split:
        if _NAME_END.match(word):
            break
        names.append(word)
    if not names:
        return None
    plural = next((i for i, w in enumerate(names) if w.endswith("s") and not w.endswith("ss")), None)
    at = 0 if plural is None else plural
    return _unit(names[at]), " ".join(split[at + 1:])


def _expand(measure: dict[str, Fraction]) -> dict[str, Fraction]:
    """`measure` with the units it converts to (2 weeks -> 14 days; 1500 minutes -> 25 hours)."""
    out = dict(measure)
    for large, small, n in _CONVERSIONS:  # from the measure's own units only: no month -> year -> week
        if large in measure and small not in out:
            out[small] = measure[large] * n
        elif small in measure and large not in out:
            out[large] = measure[small] / n
    return out


# Units of size, weight and length measure a thing, and people are who buy: no thing bought ("$45 for
# dogs under 10 kg", "a maximum of 8 students").
_NOT_BOUGHT = frozenset({"kg", "g", "gram", "kilogram", "kilo", "km", "kilometre", "kilometer", "m", "metre", "meter", "cm",
                    "mm", "litre", "liter", "ml", "lb", "oz", "ounce", "mile", "foot", "feet", "inch", "yard", "percent",
                    "degree", "tonne", "ton", "acre", "hectare", "person", "people", "guest", "seat", "year-old",
                    "student", "pupil", "adult", "child", "children", "member", "visitor", "player", "participant"})


def _digits(text: str) -> str:
    """`text` with its counts as digits (numerals.with_digits), "ten-session" as "10-session"."""
    return with_digits(_HYPHEN_COUNT.sub(lambda m: f"{_HYPHEN_COUNTS[m.group(1).lower()]}-", text))


def measure_of(text: str) -> dict[str, Fraction]:
    """What a price's words `text` say it buys (see the module docstring), the price's place in
    them marked by "@price" ("or 3 for @price": 3 things); {"item": 1} when they name no count
    and no period."""
    text = _digits(text)
    measure: dict[str, Fraction] = {}
    things: list[tuple[str, Fraction, bool]] = []  # (unit, count, after "of")
    lasting = False
    for m in _COUNT.finditer(text):
        n = Fraction(m.group(1))
        if _LIMIT_BEFORE.search(text[max(0, m.start() - 24):m.start()]) or _SIZE_AFTER.match(m.group(3) or ""):
            continue  # "with no more than 6 dogs per walker", "for groups of up to 20": a limit, nothing bought
        if _LASTS_BEFORE.search(text[max(0, m.start() - 12):m.start()]):
            lasting = True  # "Group walks last 60 minutes": one thing that long, not a period paid for
        if m.group(2) == "-":  # "150-minute session", "10-week course", "1-hour lesson"
            unit = _unit(m.group(3).split()[0].split("-")[0])
            rest = " ".join(m.group(3).split()[1:])
            named = _thing_at(rest) if rest else None
            count = Fraction(1)
            # (not who buys it: "a 10-journey adult carnet" buys 10 journeys, not one adult)
            if named is not None and named[0] not in TIME_UNITS.values() and named[0] not in _NOT_BOUGHT:
                # "one 150-minute session each week" of a 10-week course: 10 sessions
                every = re.match(rf"\s*(?:each|every|a|per)\s+({_TIME})\b", named[1] + text[m.end():], re.IGNORECASE)
                if every and _unit(every.group(1)) in measure:
                    count = measure[_unit(every.group(1))]
                measure.setdefault(named[0], count)
                things.append((named[0], count, False))
            if not n:
                continue
            if unit in TIME_UNITS.values():
                measure.setdefault(unit, n * count)
            elif unit not in _NOT_BOUGHT and unit not in measure and n:  # "a 10-session punch card", "the 20-ticket book"
                measure[unit] = n
                things.append((unit, n, False))
            continue
        found = _thing_at(m.group(3))
        if found is None or n == 0:
            continue
        unit, rest = found
        following = rest + text[m.end():]
        if re.match(r"\s*each\b", following) and things:  # "6 sessions of 2 hours each": 12 hours
            n = n * things[-1][1]
        elif unit not in TIME_UNITS.values():
            every = re.match(rf"\s*(?:each|every|a|per)\s+({_TIME})\b", following, re.IGNORECASE)
            if every and _unit(every.group(1)) in measure:  # "2 sessions each week" of 10 weeks
                n = n * measure[_unit(every.group(1))]
        if unit in measure:
            continue
        measure[unit] = n
        if unit not in TIME_UNITS.values() and unit not in _NOT_BOUGHT:
            things.append((unit, n, bool(re.search(r"\bof\s+$", text[max(0, m.start() - 4):m.start()]))))
    for m in _OF_COUNT.finditer(text):  # "$180 for a set of 6."
        if Fraction(m.group(1)) and "item" not in measure:
            things.append(("item", Fraction(m.group(1)), True))
    count_for = _N_FOR.search(text)
    if count_for and not things and Fraction(count_for.group(1)):  # "or 3 for $24"
        things.append(("item", Fraction(count_for.group(1)), True))
    # The period a price is for: the one named nearest it ("£16 per month per pet and covers two
    # check-ups a year": a month), "per month", "a full year", "monthly".
    at = text.find(_AT.strip())
    at = len(text) if at < 0 else at
    periods = [(m.start(), _unit(m.group(1))) for m in _ONE_PERIOD.finditer(text)]
    periods += [(m.start(), _unit(m.group(1))) for m in _PER.finditer(text) if m.group(1)]
    periods += [(m.start(), unit) for word, unit in _PERIODIC.items()
                for m in re.finditer(rf"\b{word}\b", text, re.IGNORECASE)]
    if periods:
        measure.setdefault(min(periods, key=lambda p: abs(p[0] - at))[1], Fraction(1))
    for m in _PER.finditer(text):  # "per session", not "per person"
        if m.group(2) and not _NAME_END.match(m.group(2).lower()) and _unit(m.group(2)) not in _NOT_BOUGHT:
            measure.setdefault(_unit(m.group(2)), Fraction(1))
    if things:  # the things bought: those after "of" ("a block of 10 lessons"), else the first counted
        measure["item"] = next((n for _, n, of in things if of), things[0][1])
    elif lasting or not any(u in TIME_UNITS.values() for u in measure):
        measure["item"] = Fraction(1)
    return measure


def offers_in(sentences: Sequence[str], question: str) -> list[Offer]:
    """Each price of `sentences` as an Offer, its words those of its own (back to the price
    before it, on to the next price or the next thing: ", and a car ...") that the question holds
    too; at most MAX_OFFERS, in order."""
    asked = _stems(question)
    out: list[Offer] = []
    for order, sentence in enumerate(sentences):
        prices = list(_PRICE.finditer(sentence))
        for i, m in enumerate(prices):
            start = prices[i - 1].end() if i else 0
            end = prices[i + 1].start() if i + 1 < len(prices) else len(sentence)
            before = sentence[start:m.start()]
            if i:  # not the price before's own words: "£48 per month or | £480 per year"
                before = _AFTER_PRICE.split(before)[-1]
            after = _NEXT_THING.split(sentence[m.end():end])[0]
            named = (naming_words(sentence, prices, i) | norm_words(before + " " + after)) & asked
            if i and out and out[-1].order == order and _OR.search(sentence[start:m.start()]):
                named |= out[-1].words - {w for w in out[-1].words if w.startswith("@")}  # "£48 per month or £480 per year": one thing
            if re.search(r"\bat\s*$", before):  # "rents out 10 hybrid bikes at £18 per day": each
                before = ""
            measure = measure_of(before + _AT + after)
            periods = {f"@{u}" for u, n in measure.items() if n == 1 and u in TIME_UNITS.values()}
            out.append(Offer(m.group(1).replace(",", ""), measure, frozenset(named | (periods & asked)), order))
            if len(out) == MAX_OFFERS:
                return out
    return out


def _stems(text: str) -> set[str]:
    """The question's words as basket's naming words are compared (plurals and synonyms one),
    without the units of time (they say how much, not what)."""
    text = SET_ASIDE.sub(" ", text)  # "(ignore skate hire)": no offer's name
    periods = {f"@{unit}" for word, unit in _PERIODIC.items() if re.search(rf"\b{word}\b", text, re.IGNORECASE)}
    return (norm_words(text) - set(TIME_UNITS) - set(TIME_UNITS.values()) - set(_PERIODIC) - _GENERIC) | periods


def _score(offer: Offer) -> float:
    """How much the question names `offer`: its words, a period it names ("weekly") half a word."""
    return sum(0.5 if w.startswith("@") else 1.0 for w in offer.words)


def _per_basis(text: str) -> re.Match[str] | None:
    """The unit a price is asked per ("price per hour", "save per lesson", "cheaper per session")."""
    per = _PER_UNIT_ASKED.search(text) or re.search(rf"\b(?:save|saving)\w*\s+per\s+({_TIME}|{_WORD})\b", text, re.I)
    if per is None and asks_difference(text):
        per = re.search(rf"\bper\s+({_TIME}|{_WORD})\b", text, re.I)
    return per


def _counts_unit(text: str, unit: str) -> bool:
    """Whether `text` counts `unit` with a number of its own ("10 shirts" for "shirt"; not "the
    10 manual lesson block", a bundle named)."""
    word = re.escape(singular(unit.lower()))
    return re.search(rf"(?<![\w.,{CURRENCY_SIGNS}-])[0-9]+(?:\s+[a-z]+)?\s+{word}s?\b(?!\s+{_BUNDLE_WORDS})", text,
                     re.IGNORECASE) is not None


def asked_amount(question: str) -> dict[str, Fraction]:
    """The amount `question` asks about: "for 2 weeks" -> {"week": 2}; "12 days a month" ->
    {"day": 12, "month": 1}; "six bought separately" -> {"bought": 6, "item": 6}; "save per crossing"
    -> {"crossing": 1, "item": 1}; "a whole year" -> {"year": 1}. A price per unit asked ("price
    per hour", "save per lesson", "per session" in a comparison) is the whole amount. Bundles the question names ("the 10 manual lesson block",
    "the set of six", "the 20-ticket book") are offers, not amounts."""
    text = with_digits(without_rounding(question))
    per = _per_basis(text)
    paying = r"\b(?:pay|paying|paid|buying|charged)\s+(?:\w+\s+)?"
    if (per is not None and (re.match(paying, per.group(0), re.I) or re.search(paying + "$", text[:per.start()], re.I))
            and _counts_unit(text, per.group(1))):
        per = None  # "10 shirts ... instead of paying per shirt": the 10 shirts, paid one way or the other
    if per is not None:
        unit = _unit(per.group(1))
        return {unit: Fraction(1)} if unit in TIME_UNITS.values() else {unit: Fraction(1), "item": Fraction(1)}
    amount: dict[str, Fraction] = {}
    taken: list[tuple[int, int]] = []
    for m in _RATE.finditer(text):  # "12 days a month"
        if not Fraction(m.group(1)):
            continue
        amount.setdefault(_unit(m.group(2)), Fraction(m.group(1)))
        amount.setdefault(_unit(m.group(3)), Fraction(1))
        taken.append(m.span())
    for m in _COUNT.finditer(text):
        if m.group(2) == "-" or any(a <= m.start() < b for a, b in taken):
            continue  # "the 20-ticket book"
        if _BUNDLE_NAMED.search(text[max(0, m.start() - 20):m.start()]):
            continue  # "the set of 6"
        if (re.search(r"\b(?:a|an|the)\s+(?:[a-z]+\s+)?$", text[max(0, m.start() - 20):m.start()], re.IGNORECASE)
                and not (re.search(r"\bthe\s+$", text[max(0, m.start() - 5):m.start()], re.IGNORECASE)
                         and re.match(r"[a-z]+s\b", m.group(3), re.IGNORECASE) and Fraction(m.group(1)) != 1)):
            continue  # "a large 14 kg wash": which one, not how many; "the 3 terms" are 3
        words = m.group(3).split()
        thing = _thing(m.group(3))
        if thing is None or any(re.fullmatch(_BUNDLE_WORDS + "s?", w, re.I) for w in words[:3]):
            continue  # "the 10 manual lesson block"
        if not Fraction(m.group(1)):
            continue
        amount.setdefault(thing, Fraction(m.group(1)))
        if thing not in TIME_UNITS.values():
            amount.setdefault("item", Fraction(m.group(1)))
    for m in _ONE_PERIOD.finditer(text):  # "a whole year"
        if not any(a <= m.start() < b for a, b in taken):
            amount.setdefault(_unit(m.group(1)), Fraction(1))
    for m in _PER.finditer(text):  # "each month"
        if m.group(1) and not any(a <= m.start() < b for a, b in taken):
            amount.setdefault(_unit(m.group(1)), Fraction(1))
    if _TRIPS.search(text) and "item" not in amount:  # "there and back on 22 days a month": 44 tickets
        days = next((amount[u] for u in ("day", "night", "week", "month") if u in amount), None)
        if days is not None:
            amount["item"] = days * 2
    return amount


def _number(value: Fraction) -> str:
    """`value` as the calculator reads it: "14", "2.5", "(10 / 3)"."""
    if value.denominator == 1:
        return str(value.numerator)
    d = value.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d != 1:
        return f"({value.numerator} / {value.denominator})"
    with localcontext() as context:  # exact: a denominator of 2s and 5s ends
        context.prec = 80
        return format(Decimal(value.numerator) / Decimal(value.denominator), "f")


def _cost(offer: Offer, amount: dict[str, Fraction], whole: bool = False) -> tuple[str, Fraction] | None:
    """(the cost of `amount` at `offer` as an expression: "14 * 18" for 2 weeks at £18 a day,
    "495 / 10" for one lesson of a block of 10; its value), None when they share no unit (an
    offer for one thing, asked an amount of days alone, is bought once a day); `whole`: bundles and periods are bought whole (3 days at a
    weekly rate cost one week; 4 tumblers of sets of six, one set), not asked per unit."""
    price = Fraction(offer.price)
    if not amount:
        return offer.price, price
    asked, measure = _expand(amount), _expand(offer.measure)
    explicit = [u for u in amount if u in measure and u != "item"]
    shared = explicit or [u for u in asked if u in measure and u != "item"] or [u for u in asked if u in measure]
    if shared:
        unit = shared[0]
        if not measure[unit] or not asked[unit]:
            return None
        factor = asked[unit] / measure[unit]
    elif set(offer.measure) == {"item"}:
        days = asked.get("day")  # nights and days of the week are days (TIME_UNITS)
        if days is None:
            return None
        factor = days / offer.measure["item"]
    else:
        return None
    bundle = bool(shared) and measure[shared[0]] != 1  # a set of 6, a week of 7 days; not an hourly rate
    if whole and bundle and factor.denominator != 1:
        factor = Fraction(math.ceil(factor))  # bought whole; 3.5 hours at an hourly rate stay 3.5
    if factor == 1:
        return offer.price, price
    if factor.denominator == 1:
        return f"{factor.numerator} * {offer.price}", price * factor
    if factor.numerator == 1:
        return f"{offer.price} / {_number(1 / factor)}", price * factor
    return f"{_number(factor)} * {offer.price}", price * factor


def _single(offer: Offer, amount: dict[str, Fraction]) -> bool:
    """Whether `offer` buys one of what `amount` counts ("£38 per hour" for 10 hours; not "10 hours
    for £340"), or one thing when it shares no unit with it ("$22 per dog", "$120 per term")."""
    measure = _expand(offer.measure)
    shared = [u for u in _expand(amount) if u in measure and u != "item"]
    if shared:
        return measure[shared[0]] == 1
    return offer.measure.get("item") == 1 and all(n == 1 for u, n in offer.measure.items() if u not in TIME_UNITS.values())


def _whole_period(offer: Offer, question: str, comparing: bool) -> tuple[str, Fraction] | None:
    """(the price, its value) of an offer for one period the question names, bought once ("the full
    choir year upfront" over "$330 for the full year"), in a comparison; else None."""
    if not comparing:
        return None
    periods = [u for u, n in offer.measure.items() if u in TIME_UNITS.values() and n == 1]
    if periods and all(re.search(rf"\b{u}\b", question, re.IGNORECASE) for u in periods):
        return offer.price, Fraction(offer.price)
    return None


def compares_offers(question: str) -> bool:
    """Whether `question` compares two ways of paying ("how much do I save ... instead of",
    "how much more ... than", "weekly rate vs the daily rate")."""
    return asks_difference(question) and _ALTERNATIVE.search(question) is not None


def asks_offers(question: str) -> bool:
    """Whether `question` compares two ways of paying (compares_offers) or asks a price per unit
    ("what's the price per hour of the course")."""
    return compares_offers(question) or _PER_UNIT_ASKED.search(with_digits(question)) is not None


def offer_expressions(question: str, sentences: Sequence[str]) -> list[str]:
    """Differences of two offers' costs for a comparison, or a bundle's price per unit asked
    (see the module docstring), best first; [] for any other question, or when no offer of
    `sentences` (best ranked first) has a cost of the asked amount."""
    comparing = compares_offers(question)
    per = None if comparing else _PER_UNIT_ASKED.search(with_digits(question))
    if not (comparing or per):
        return []
    offers = [o for o in offers_in(sentences, question) if o.words]
    amount = asked_amount(question)
    whole = per is None and _per_basis(with_digits(question)) is None  # "save per lesson": 495 / 10, not one block
    priced = [(o, c) for o in offers if (c := _cost(o, amount, whole) or _whole_period(o, question, comparing)) is not None]
    if per is not None:  # a bundle's price per unit: "1050 / 20"
        unit = _unit(per.group(1))
        bundles = [(o, c) for o, c in priced if _expand(o.measure).get(unit, Fraction(1)) != 1
                   or (unit not in TIME_UNITS.values() and o.measure.get("item", Fraction(1)) != 1)]
        bundles.sort(key=lambda pair: (-_score(pair[0]), pair[0].order))
        return [c for _, (c, _) in bundles[:MAX_COMPARISONS]]
    out: list[str] = []
    # not "the 10 manual lesson block" (a count of one bundle: an offer); "2 child day passes" are things
    items = [(n, thing) for n, thing in basket_items(question)
             if n == OPTIONAL or Fraction(n) == 1 or not re.search(rf"\b{_BUNDLE_WORDS}\b", thing, re.IGNORECASE)]
    distinct = len({_thing(thing) for _, thing in items}) == len(items)  # not "a dozen roses ... 12 single roses"
    listed = listed_total(items, sentences, question) if len(items) >= 2 and distinct else None
    if listed is not None:  # "2 adults and 3 kids: how much cheaper is the family ticket": the basket against it
        value = evaluate(listed).q
        others = sorted((pair for pair in priced if pair[0].price not in re.findall(r"[0-9.]+", listed)),
                        key=lambda pair: (-_score(pair[0]), pair[0].order))
        for offer, _ in others[:1]:  # one of it: "the family ticket"
            price = Fraction(offer.price)
            out.append(f"{listed} - {offer.price}" if value >= price else f"{offer.price} - ({listed})")
    pairs = []
    singly = _SINGLY.search(question) is not None
    for i, (a, cost_a) in enumerate(priced):
        for b, cost_b in priced[i + 1:]:
            if Fraction(a.price) == Fraction(b.price):
                continue
            same = a.measure == b.measure  # two prices of one measure compare two things, not two ways to pay
            # "10 group walks one by one" against a package: a single price and a bundle first
            apart = singly and _single(a, amount) == _single(b, amount)
            # ... the bundle of the amount asked first ("the 10 walk package" over two packages of 5)
            exact = singly and not (cost_a[0] == a.price or cost_b[0] == b.price)
            pairs.append(((apart, exact, -_score(a) - _score(b), same, abs(a.order - b.order), a.order + b.order),
                          cost_a, cost_b))
    pairs.sort(key=lambda p: p[0])
    for _, (a, value_a), (b, value_b) in pairs[:MAX_COMPARISONS]:
        out.append(f"{a} - {b}" if value_a >= value_b else f"{b} - {a}")  # what one saves: never below zero
    return out
