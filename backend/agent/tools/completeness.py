"""Whether a calculation carries what the question asks of it (issue 15): a candidate that leaves
out something the question names is no answer, and the run then says it could not work the amount
out (backend.agent.answer.UNCALCULATED) rather than state a wrong total as plainly as a right one.

Three checks, each on a question asking an amount to pay over passages that price things:
- a price: at least one figure of the calculation is an amount of money, one the documents write
  as a price or one the question states ("the part is $130"), or a number of the documents that is
  no percentage and not one of the question's own ("Bikes rent for 25 per day");
  "(3 * 4) * (100 - 5) / 100" for "3 ponies at my yard (4 miles) ... whats the total" holds none
  (blind set 83: its 3 and 4 are the question's, its 5 a percentage);
- the tax asked: "total with tax" over "Florida sales tax of 7.5% is added to gear rental" holds
  the 7.5 (taxes.asked_rate), however the tax was (or was not) read into the bill;
- the travel: a question giving the distance to where the customer is ("yard is 15 miles away")
  over passages that price travel by distance ("£1.20 per mile over 10 miles") holds the distance
  or a figure of a sentence pricing it (the caller writes a distance travelled free as "a few
  miles": within_free_distance), and, unless the question asks the travel's own charge, more than
  the travel ("1.50 * 15" is no bill for a pony trim 15 miles away).
Over the program's half of sets 1-84 the three moved 12 wrong first candidates to none and no
right one (docs/BENCHMARKS.md, twenty-ninth session).

Only numbers and words are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Collection, Sequence

from backend.agent.numerals import NUMBER_RE, PERCENT_SIGN, expression_figures, with_digits
from backend.agent.operations import asks_amount, asks_how_many
from backend.agent.tools.allowances import FROM_BUSINESS
from backend.agent.tools.minimums import LEAST_LENGTH
from backend.agent.tools.pricing import PRICE, column_lengths
from backend.agent.tools.taxes import asked_rate


def stated_amounts(question: str) -> set[Fraction]:
    """The amounts of money `question` writes as prices ("my invoice is £480" -> {480})."""
    return {Fraction(next(g for g in m.groups() if g).replace(",", "")) for m in PRICE.finditer(question)}


# A number followed by a percent sign: a share, no price.
_PERCENTAGE = re.compile(rf"\s*{PERCENT_SIGN}", re.IGNORECASE)


# A question asking the charge for travel itself: "what's the delivery charge?", "how much will delivery be", "the
# extra charge for you to come out to me".
ASKS_TRAVEL = re.compile(r"\b(?:delivery|travel|mileage|call[\s-]?out)\s+(?:charge|fee|cost|price|be)\b"
                         r"|\bhow\s+much\s+(?:is|will|would|for)\s+(?:the\s+|your\s+)?(?:delivery|travel|mileage)\b"
                         r"|\b(?:charge|fee|cost)\s+(?:for|of)\s+(?:the\s+)?(?:delivery|travel|mileage)\b"
                         # "what's the extra charge for you to come out to me?" (blind set 86, read after its runs)
                         r"|\b(?:charge|fee|cost)\s+(?:for\s+(?:you|someone|a\s+tech\w*)\s+)?to\s+(?:come|travel|drive|get)\s+"
                         r"(?:out|here|over|to)\b", re.IGNORECASE)

# A unit of distance in a passage.
_DISTANCE_UNIT = re.compile(r"\b(?:miles?|mi|kms?|kilomet(?:re|er)s?)\b", re.IGNORECASE)
# A percentage laid on a bill in a calculation: "(100 - 5) / 100", "(100 + 20) / 100", "* 25 / 100".
_SHARE = re.compile(r"\(\s*100\s*[-+]\s*[0-9.]+\s*\)\s*/\s*100(?![0-9.])|\*\s*[0-9.]+\s*/\s*100(?![0-9.])")


# A length of time to be billed, as the question gives it: "for 3 hours on saturday", "2 hours 45 minutes",
# "about 40 mins in the dryer", "for 6 nights in May", "5 days a week". Not a length naming a thing ("a 90-minute
# session", "the 10 week course": a word other than _AFTER_DURATION follows), nor notice, an age or time gone by
# ("it's 10 days away", "a 3 year old", "tuned 8 months ago", "within 12 months", "in the 6 weeks before").
_TIME_UNIT = r"(?:hours?|hrs?|minutes?|mins?|days?|nights?|weeks?|months?)"
_DURATION = re.compile(rf"(?<![\w.,-])([0-9]+(?:\.[0-9]+)?)\s*(?:-\s*)?(?:(?:full|whole|extra|more)\s+)?({_TIME_UNIT})\b"
                       rf"(?:\s+(?:and\s+)?([0-9]+)\s*(?:minutes?|mins?)\b)?", re.IGNORECASE)
_BEFORE_DURATION = re.compile(r"\b(?:in|within|last|past|every|the|first|over|under|after|than|to|least|most|up|"
                              r"than|per|each|by|next|only\s+(?:in|within))\s+(?:like\s+|about\s+)?$", re.IGNORECASE)
_AFTER_DURATION = re.compile(r"\s*(?:$|[,.;:!?)]|(?:on|at|and|plus|with|of|a|an|in|for|from|then|total|please|pls|"
                             r"but|so|starting|straight|running|in\s+a\s+row|how|what|including|incl\w*|inc|before\s+tax|"
                             r"[0-9])\b)", re.IGNORECASE)
_NOT_BILLED_AFTER = re.compile(r"\s*(?:ago|away|before(?!\s+tax)|notice|old|from\s+now|ahead|in\s+advance|later|early|late|"
                               r"out|prior|till|until|left|'s\s+notice|of\s+notice|in\s+the\s+future)\b", re.IGNORECASE)
# A rate from a day of the hire on: "20% off the full day rate for each day from the 3rd day onwards".
_FROM_A_DAY = re.compile(r"\b(?:from|after)\s+(?:the\s+)?(?:[0-9]+(?:st|nd|rd|th)|first|second|third|fourth)\s+"
                         r"(?:day|night|week)", re.IGNORECASE)
_AN_HOUR_AND = re.compile(r"\b(?:an?|one)\s+(?:hour|hr)\s+(?:and\s+)?$", re.IGNORECASE)
# A passage pricing by a length of time: "£12 per hour", "$45/day", "hourly rate", "per night".
_PRICED_BY_TIME = re.compile(rf"(?:\bper|/|\ban?|\beach|\bevery)\s*(?:extra\s+|additional\s+|further\s+)?"
                             rf"(?:[0-9]+\s*)?({_TIME_UNIT})\b|\b(hour|dai|nigh|week|month)(?:ly|ily)\b", re.IGNORECASE)
# A unit of time by its first three letters, as the family it is priced in: minutes are hours' ("90 minutes" of a
# studio at £25 per hour), nights days'.
_UNIT_FAMILY = {"hou": "hour", "hr": "hour", "hrs": "hour", "min": "hour", "day": "day", "dai": "day", "nig": "day",
                "wee": "week", "mon": "month"}


def billed_durations(question: str, with_units: bool = False, per_minute: bool = True) -> list[Any]:
    """The lengths of time `question` asks to be billed (_DURATION), each as the ways a calculation
    could hold it, any one of which it must hold whole: "3 hours" as {3} or {180} (minutes); "1 hr
    40 min" as {100}, {5/3} or {1, 40}. One unit alone ("for 1 day") needs no figure (nothing).
    with_units: each as (its unit's family, _UNIT_FAMILY: "hour", "day", "week", "month"; ways).
    per_minute: whether a price is per minutes; when not, minutes alone are held as hours only ("90
    minutes" as {3/2} or {90, 60}: "25 * 90" is no bill of 90 minutes at £25 per hour, review)."""
    out = []
    for m in _DURATION.finditer(question):
        if _BEFORE_DURATION.search(question[max(0, m.start() - 20):m.start()]):
            continue
        rest = question[m.end():]
        if _NOT_BILLED_AFTER.match(rest) or not _AFTER_DURATION.match(rest):
            continue
        number, unit, minutes = Fraction(m.group(1)), m.group(2).lower(), m.group(3)
        family = _UNIT_FAMILY[unit[:3]]
        if unit.startswith("min") and _AN_HOUR_AND.search(question[:m.start()]):  # "an hour and 20 minutes": 80
            out.append((family, [{60 + number}, {1 + number / 60}]))
        elif minutes is not None:
            out.append((family, [{number * 60 + Fraction(minutes)}, {number + Fraction(minutes) / 60},
                                 {number, Fraction(minutes)}]))
        elif number != 1:
            out.append((family, [{number}, {number * 60}] if unit.startswith("h")
                        else ([{number}, {number / 60}] if per_minute else [{number / 60}, {number, Fraction(60)}])
                        if unit.startswith("min") else [{number}]))
    return out if with_units else [ways for _, ways in out]


def holds_billed_lengths(expression: str, question: str, sentences: Sequence[str]) -> bool:
    """Whether `expression` holds each length of time `question` asks to be billed
    (billed_durations: "for 3 hours on saturday", "2 hours 45 minutes"), over passages `sentences`
    pricing by time (_PRICED_BY_TIME: "£12 per hour"); True when they price nothing by time. The
    caller asks it of its best candidate only: when that one leaves the length out, the program
    read the question wrong, and another candidate holding the length is no better read (over the
    program's half of sets 1-92 such later candidates were right 0 times of 11)."""
    priced = {_UNIT_FAMILY[(m.group(1) or m.group(2)).lower()[:3]] for s in sentences for m in _PRICED_BY_TIME.finditer(s)}
    if not priced:
        return True
    held = {Fraction(f) for f in expression_figures(expression)}
    # (or as days split between two rates: "4 days in a row" as "50 * 2 + 50 * 2 * (100 - 15) / 100" over "15% off
    # each day from the 3rd day")
    split = any(_FROM_A_DAY.search(s) for s in sentences)
    sums = held | {a + b for a in held for b in held} if split else held
    # (only lengths of a unit the passages price by: "my flight is 8 hours" is no length of a stay priced per day, review)
    per_minute = any(_PER_MINUTES.search(s) for s in sentences)
    # (nor a length a table's column is named by: "a single kayak for 2 hours" over "Single kayak: 2 hours $35; ...")
    columns = {Fraction(n) for s in sentences for n in column_lengths(question, s)}
    # (or the least length the passages charge, above the one asked: "€95.00 per hour, minimum 2 hours" for "an hour and
    # a half" is "95.00 * 2", blind set 97, read)
    # (held as itself, not as a count of the question's: "3 movers" beside "3 hour minimum", blind set 58)
    counts = {Fraction(m.group(1).replace(",", "")) for m in NUMBER_RE.finditer(with_digits(question))}
    least = ({Fraction(m.group(1) or m.group(2)) for s in sentences for m in LEAST_LENGTH.finditer(s)} & held) - counts
    return all(any(way <= held or (len(way) == 1 and (way <= sums or any(next(iter(way)) < n for n in least)))
                   for way in ways)
               for unit, ways in billed_durations(with_digits(question), with_units=True, per_minute=per_minute)
               if unit in priced and not any(way & columns for way in ways))


# A price per minutes: "£1 per minute", "$20 per 15 minutes", "40p/min", "every 30 mins".
_PER_MINUTES = re.compile(r"(?:\bper|/|\bevery|\beach|\ba)\s*(?:[0-9]+\s*-?\s*)?(?:mins?|minutes?)\b", re.IGNORECASE)


# Kinds of people priced apart: "2 adults and 3 kids", "40 adults and 10 children", "me and my 2 kids".
_PEOPLE = {
    "adult": r"adults?|grown[\s-]?ups?",
    "child": r"kids?|child(?:ren)?|juniors?|under[\s-]?1[0-8]s?|youths?|teens?|teenagers?",
    # (priced apart, often free: "Infants (under 2) go free", review)
    "infant": r"infants?|toddlers?|bab(?:y|ies)|under[\s-]?[2-5]s",
    "student": r"students?",
    "senior": r"seniors?|pensioners?|OAPs?|over[\s-]?6[05]s?|retirees?",
}
_KIND_WORD = {kind: re.compile(rf"\b(?:{words})\b", re.IGNORECASE) for kind, words in _PEOPLE.items()}
_COUNTED_KIND = {kind: re.compile(rf"(?<![\w.,-])[0-9]+\s+(?:[a-z]+\s+)?(?:{words})\b", re.IGNORECASE)
                 for kind, words in _PEOPLE.items()}
# "me and my 2 kids", "me + 3 children": an adult beside them
_ME_AND = re.compile(rf"\b(?:me|myself|i)\s*(?:and|\+|&|with)\s+(?:my\s+)?[0-9]+\s+(?:[a-z]+\s+)?(?:{_PEOPLE['child']})\b",
                     re.IGNORECASE)

# A price for several people together.
_TOGETHER = re.compile(r"\b(?:family|families|group|party|parties|package|bundle|pass|passes)\b", re.IGNORECASE)


def _kind_prices(sentences: Sequence[str], prices: Collection[Fraction]) -> dict[str, set[Fraction]]:
    """The prices the passages give each kind of person (_PEOPLE): those of the documents
    (`prices`, by value) a sentence writes between its word for the kind and the next kind's
    ("Adults £12, children £6"; "Adult: Weekday £15. Weekend £25": 15 and 25), or between the
    kind before and its word where the sentence puts its prices first ("£12 per adult, £6 per
    child")."""
    out: dict[str, set[Fraction]] = {}
    for sentence in sentences:
        numbers = [(m.start(), Fraction(m.group(1).replace(",", ""))) for m in NUMBER_RE.finditer(sentence)]
        numbers = [(at, v) for at, v in numbers if v in prices]
        named = sorted((m.start(), kind) for kind, word in _KIND_WORD.items() for m in word.finditer(sentence))
        if not numbers or not named:
            continue
        prices_first = numbers[0][0] < named[0][0]
        bounds = [0] + [at for at, _ in named] + [len(sentence)]
        for i, (at, kind) in enumerate(named):
            start, end = (bounds[i], at) if prices_first else (at, bounds[i + 2])
            out.setdefault(kind, set()).update(v for p, v in numbers if start <= p < end)
    return out


def holds_each_kind_of_person(expression: str, question: str, sentences: Sequence[str],
                              prices: Collection[Fraction]) -> bool:
    """Whether `expression` holds a price of each kind of person `question` counts ("2 adults and 2
    students": the adult's price and the student's), where it counts two kinds or more that the
    passages `sentences` price (_kind_prices); True otherwise. "22 * 4" for "2 adults and 2
    students" over "Adults £22, students £14" holds no student's price. Asked of the best candidate
    only (as holds_billed_lengths)."""
    question = with_digits(question)
    counted = {kind for kind, pattern in _COUNTED_KIND.items() if pattern.search(question)}
    if _ME_AND.search(question):
        counted.add("adult")
    if len(counted) < 2:
        return True
    priced = _kind_prices(sentences, set(prices))
    asked = [priced[kind] for kind in counted if priced.get(kind)]
    if len(asked) < 2:
        return True
    held = {Fraction(f) for f in expression_figures(expression)}
    # (or a price for them all together: "Family ticket (2 adults + 2 children): £60")
    together = {Fraction(m.group(1).replace(",", "")) for sentence in sentences if _TOGETHER.search(sentence)
                for m in NUMBER_RE.finditer(sentence)}
    return bool(held & together & set(prices)) or all(values & held for values in asked)


def kind_counts(question: str) -> dict[str, int]:
    """How many of each kind of person `question` counts ("40 adults and 10 children (all under 12)":
    {"adult": 40, "child": 10}), by their first count each; {} when it counts none."""
    question = with_digits(question)
    out: dict[str, int] = {}
    for kind, pattern in _COUNTED_KIND.items():
        m = pattern.search(question)
        if m is not None:
            out[kind] = int(re.match(r"[0-9]+", m.group(0)).group(0))
    return out


def kind_named(words: str) -> str | None:
    """The kind of person `words` name first ("Children under 12 are charged " -> "child"), or None."""
    found = [(m.start(), kind) for kind, pattern in _KIND_WORD.items() for m in [pattern.search(words)] if m is not None]
    return min(found)[1] if found else None


def _plain_numbers(sentences: Sequence[str]) -> set[Fraction]:
    """The numbers of `sentences` that are no percentage ("25 per day" -> 25; not "10% off")."""
    return {Fraction(m.group(1).replace(",", "")) for sentence in sentences for m in NUMBER_RE.finditer(sentence)
            if not _PERCENTAGE.match(sentence, m.end())}


def complete(expression: str, question: str, sentences: Sequence[str], prices: Collection[Fraction]) -> bool:
    """Whether `expression` (a candidate of backend.agent.tools.expressions) holds what `question`
    asks of it, over the passages' `sentences` whose prices (by value) are `prices`: True when the
    question asks no amount to pay (asks_amount; not asks_how_many) or the documents write no price;
    else a price of the documents or of the question among its figures, the rate of a tax the
    question asks with (taxes.asked_rate) among them too, and the distance the question gives or a
    figure of a sentence pricing travel by distance, when the passages hold one."""
    if not prices or not asks_amount(question) or asks_how_many(question):
        return True
    held = {Fraction(f) for f in expression_figures(expression)}
    amounts = {Fraction(f) for f in expression_figures(_SHARE.sub(" ", expression))}  # (not "(100 - 5) / 100"'s 5)
    if not amounts & (set(prices) | stated_amounts(question)):
        own = {Fraction(m.group(1).replace(",", "")) for m in NUMBER_RE.finditer(with_digits(question))}
        if not amounts & (_plain_numbers(sentences) - own):
            return False
    rate = asked_rate(question, sentences)
    if rate is not None and Fraction(rate) not in held:
        return False
    # (where the customer is: "15 miles away", "25 km from your depot"; not "a 20 mile taxi ride", "10 miles from
    # the station": allowances.FROM_BUSINESS)
    distance = FROM_BUSINESS.search(with_digits(question))
    travel = [s for s in sentences if _DISTANCE_UNIT.search(s) and PRICE.search(s)]
    if distance is None or not travel:
        return True
    charged = _plain_numbers(travel)
    if not held & ({Fraction(distance.group(1))} | charged):
        return False
    # nor the travel alone as the bill: "how much for a pony trim, yard is 15 miles away?" is no "1.50 * 15"
    return bool(ASKS_TRAVEL.search(question) or amounts - charged - {Fraction(distance.group(1))})
