"""A price with an allowance and a rate beyond it (issue 15): "Private hire costs £240 for 3 hours.
Each extra hour is £65", asked "for 5 hours" -> "240 + (5 - 3) * 65"; "free van hire for up to 3
hours; after that the van costs $15 per hour", asked "for 5 hours" -> "(5 - 3) * 15"; "Local
delivery within 5 miles is £6; beyond that, £1.20 per additional mile", asked "12 miles away" ->
"6 + (12 - 5) * 1.20".

The rate beyond is a price per unit named as extra ("each extra hour is £65", "£1.20 per
additional mile", "$1.50 for every mile past the radius") or after the allowance ("after that",
"beyond that", "thereafter"); the allowance is the count of the same unit in its sentence or the
one before ("for 3 hours", "up to 3 hours", "within 5 miles", "a 5-mile radius", "the first 2
hours", "the first stump": one), with its price when one is next to it (none, or "free": only the
rate beyond is charged): "First stump: $160" and "Each additional stump, same visit: $95", asked "3
small stumps" -> "160 + (3 - 1) * 95". The question gives the amount in that unit, or counts it. Only numbers and words are read from the
passages (untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Callable, Sequence

from backend.agent.numerals import CURRENCY_SIGNS, AMOUNT, SIGNED_PRICE, with_digits
from backend.agent.party import group_size
from backend.agent.tools.basket import canonical, counts_of
from backend.agent.tools.sentences import content_words, stems
from backend.agent.tools.units import TIME_UNITS

_UNIT = r"([a-z]+)"
# Units of distance a trade charges travel by ("£1.50 for every mile over 10").
_DISTANCES = frozenset({"mile", "km", "kilometre", "kilometer"})
# A travel rate charged for the way there and the way back: "per mile each way", "both ways (there and back)".
# A travel rate charged one way only: "one way", "return journey free", "not the return trip" (review).
_ONE_WAY = re.compile(r"\bone[\s-]way\b|\b(?:return|round)[\s-](?:trip|journey|distance|mileage)s?\s+(?:is\s+|are\s+)?"
                      r"(?:free|not\s+charged)\b"
                      r"|\b(?:not|no\s+charge\s+for)\s+(?:the\s+)?(?:return|round)\b", re.IGNORECASE)
# ("0.35 per km, counted as the return distance from our office", blind set 97, read)
_BOTH_WAYS_WORDS = (r"\b(?:each\s+way|both\s+ways|there\s+and\s+back|(?:a\s+|the\s+)?round[\s-]trip|"
                    r"return\s+(?:trip|journey|distance|mileage))\b")
_BOTH_WAYS = re.compile(rf"[^.;]{{0,30}}?{_BOTH_WAYS_WORDS}", re.IGNORECASE)
_BOTH_WAYS_ANYWHERE = re.compile(_BOTH_WAYS_WORDS, re.IGNORECASE)


def charged_both_ways(sentence: str) -> bool:
    """Whether `sentence` lays its charge both ways ("counted as the return distance", "each way"),
    not one way only (_ONE_WAY: "return mileage is free")."""
    return _BOTH_WAYS_ANYWHERE.search(sentence) is not None and _ONE_WAY.search(sentence) is None
_EXTRA = r"(?:extra|additional|further|subsequent|more)"
# Words that go on from an allowance in the sentence before: "After that", "Past that", "Further out we charge".
_AFTER_THAT = r"(?:(?:after|beyond|past|outside)\s+(?:that|this)|thereafter|further\s+(?:out|away|afield))"
# The rate beyond: "Each extra hour is £65", "£1.20 per additional mile", "$1.50 for every mile past the radius",
# "after that the van costs $15 per hour".
_RATES = (
    re.compile(rf"\b(?:each|every|per|an?)\s+{_EXTRA}\s+{_UNIT}\b[^.;{CURRENCY_SIGNS}]{{0,30}}?{SIGNED_PRICE}", re.IGNORECASE),
    re.compile(rf"{SIGNED_PRICE}\s*(?:per|for\s+(?:each|every)|an?|each)\s+(?:{_EXTRA}\s+)?{_UNIT}\b"
               rf"(?=[^.;]{{0,40}}\b(?:past|beyond|over|above)\b(?!\s*[0-9]))", re.IGNORECASE),
    re.compile(rf"{SIGNED_PRICE}\s*(?:per|for\s+(?:each|every)|an?|each)\s+{_EXTRA}\s+{_UNIT}\b", re.IGNORECASE),
    re.compile(rf"\b{_AFTER_THAT}\b[^.;]{{0,60}}?{SIGNED_PRICE}\s*"
               rf"(?:per|an?|each|for\s+(?:each|every))\s+{_UNIT}\b", re.IGNORECASE),
    # a block: "after that, labour is charged at £15 per 15 minutes"
    re.compile(rf"\b{_AFTER_THAT}\b[^.;]{{0,60}}?{SIGNED_PRICE}\s*"
               rf"(?:per|for\s+(?:each|every))\s+([0-9]+)\s+{_UNIT}\b", re.IGNORECASE),
    # a block under a label saying extra: "Additional labour: $22.00 per 15 minutes" after "Service call ... and
    # first 30 minutes of labour: $99.00" (blind set 88, read after its runs)
    re.compile(rf"\b{_EXTRA}\s+[a-z]+(?:\s+[a-z]+)?\s*:\s*{SIGNED_PRICE}\s*"
               rf"(?:per|for\s+(?:each|every))\s+([0-9]+)\s+{_UNIT}\b", re.IGNORECASE),
)
_BLOCK_RATES = (_RATES[4], _RATES[5])
# A rate with its allowance after it: "£15 per extra appliance after the first", "£30 per radiator over
# 8", "£1 per mile over the first 15" (the allowance is of the rate's unit; "the first" alone is one).
# (or "¤12 per km for every km beyond 10 km", blind set 95, read)
_RATE_OVER = re.compile(rf"{SIGNED_PRICE}\s*(?:per|for\s+(?:each|every)|an?|each)\s+(?:{_EXTRA}\s+)?{_UNIT}"
                        rf"(?:\s+for\s+(?:each|every)\s+\2(?:\s+of\s+(?:the|a|your)\s+(?:round[\s-]+trip|return\s+journey))?)?\s+"
                        rf"(?:over|above|beyond|past|after)\s+(?:the\s+first(?:\s+{AMOUNT})?|{AMOUNT})(?:\s*\2s?\b)?(?!\s*(?:[%.,]?[0-9]|[a-z]))",
                        re.IGNORECASE)
# Units that are people: "over N" after one is an age unless the rate says extra or "the first N".
_PEOPLE = frozenset({"child", "kid", "person", "people", "guest", "adult", "pupil", "student", "passenger", "rider",
                     "member", "teen", "infant", "baby", "senior", "head"})
# Minutes in the units an amount may be asked in (an hour asked of a rate per 15 minutes).
_MINUTES = {"minute": 1, "min": 1, "hour": 60, "hr": 60}
# "an hour", "a minute", "half an hour": one (or half) of a unit.
_ONE_UNIT = re.compile(r"\b(half\s+an?|an?|one)\s+(hour|minute|day|week|month|mile|metre|meter|kilometre|km)\b", re.IGNORECASE)
# An allowance included in a price named elsewhere: "The first 30 minutes of labour are included in the call-out fee".
_INCLUDED_IN = re.compile(r"\bincluded\s+in\s+(?:the|your|our|its|any)\s+((?:[a-z-]+\s+){0,2}(?:fee|price|charge|cost|rate))\b",
                          re.IGNORECASE)
# The allowance: "for 3 hours", "up to 3 hours", "within 5 miles", "a 5-mile radius", "the first 2 hours".
_ALLOWANCE = re.compile(rf"\b(?:for|up\s+to|within|first|includes?|including|covers?|(beyond|over|past|after))\s+"
                        rf"(?:the\s+first\s+|a\s+|an\s+)?{AMOUNT}[\s-]*{_UNIT}\b"
                        rf"|(?<![\w.,]){AMOUNT}-{_UNIT}\s+(?:radius|limit|allowance|boundary|zone)\b"
                        # one: "First stump (up to 30 cm across): $160", "£15 for the first dog" (blind set 78)
                        rf"|\b(?:the\s+)?first\s+{_UNIT}\b(?!\s*[0-9])"
                        # a length in a priced thing's label: "Live carving demo, 2 hrs incl. 1 block: $950.00" before
                        # "Each extra hour: $275.00" (blind set 94, read), "Party (3 hours): £150", "Hire - 4 hours: $300"
                        rf"|(?:,|\(|\s[-–—])\s*{AMOUNT}[\s-]*{_UNIT}\b(?=[^{CURRENCY_SIGNS}\n;]{{0,40}}:?\s*[{CURRENCY_SIGNS}])",
                        re.IGNORECASE)  # ("Beyond 5 miles we charge £1.50 per mile": 5 free)
_PRICE = re.compile(SIGNED_PRICE)
# A rate after a label's length: "(4 hours minimum): $35 per hour", "2 hrs: $100/hr".
_RATE_AFTER = re.compile(rf"[^{CURRENCY_SIGNS}\n;]{{0,40}}?{SIGNED_PRICE}\s*(?:per|an?|/|each)\s*[a-z]", re.IGNORECASE)
# A rate's second unit right after it: "£15 per night" of "Each additional dog: £15 per night".
_SECOND_UNIT = re.compile(r"\s*(?:per|an?|each|/)\s*(?!ways?\b)([a-z]+)\b", re.IGNORECASE)  # (not "each way")
# ("Call-outs within 15 miles of our Armley workshop carry no mileage", practice set 7)
_FREE = re.compile(r"\b(?:free|no\s+charge|included|at\s+no\s+cost|no\s+(?:mileage|travel(?:\s+(?:fee|charge))?))\b",
                   re.IGNORECASE)
# The amount a question gives: "for 5 hours", "12 miles away", "I live 8 miles from" (not "the 4-hour package").
_ASKED = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}]){AMOUNT}\s*{_UNIT}\b", re.IGNORECASE)
# The best ranked sentences a rate is read from: the question is about its thing.
MAX_RANKED = 3


def _unit(word: str) -> str:
    # "up to 8 kids, then £15 per extra child"; "50 mins" of "per 15 minutes" (blind set 83)
    return TIME_UNITS.get(word.lower()) or _PERSONS.get(word.lower()) or canonical(word.lower())


# Units of any person of a party: the party's size counts them ("6 of us").
_ANYONE = frozenset({"person", "guest", "head"})
# People counted by another word: "up to 4 people" is 4 persons ("Each additional person beyond 4", blind set 102).
_PERSONS = {"people": "person", "persons": "person"}


# An amount the question says is beyond what a price includes: "45 minutes of additional labour", "2 extra hours".
_EXTRA_ASKED = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}]){AMOUNT}\s*[a-z]+\s+(?:of\s+)?{_EXTRA}\b|\b{_EXTRA}\s+{AMOUNT}\s*[a-z]+"
                          # "2 additional hours", "2 extra hours" (review)
                          rf"|(?<![\w.,{CURRENCY_SIGNS}]){AMOUNT}\s+{_EXTRA}\s+[a-z]+", re.IGNORECASE)


def allowance_expressions(question: str, sentences: Sequence[str], ranked: Sequence[str] = (),
                          price_of: Callable[[str, str], str | None] | None = None) -> list[str]:
    """The cost of the amount `question` gives under each allowance of `sentences` (in their
    documents' order: an allowance may be the sentence before its rate) it exceeds (see the
    module docstring): "240 + (5 - 3) * 65", "(5 - 3) * 15"; a rate per block of units is
    charged per block begun ("£15 per 15 minutes" for an hour after the first 30 minutes:
    "ceil((60 - 30) / 15) * 15"); an allowance "included in the call-out fee" adds that fee's
    price (`price_of` the fee's words, when given). Those of the rates best ranked in `ranked`
    first. [] when none applies."""
    asked = _asked_amounts(question)
    if not asked or _EXTRA_ASKED.search(question):
        return []  # ("45 minutes of additional labour" is past the allowance already: the rate alone)
    rank = {s: i for i, s in reversed(list(enumerate(ranked)))}
    out: list[tuple[int, str]] = []
    for sentence in sentences:
        over = _over_allowance(question, sentence)
        if over is not None and not (ranked and rank.get(sentence, MAX_RANKED) >= MAX_RANKED):
            out.append((rank.get(sentence, len(rank)), over))
    for i, sentence in enumerate(sentences):
        if _RATE_OVER.search(sentence):
            continue  # read by _over_allowance
        for pattern in _RATES:
            rate = pattern.search(sentence)
            if rate is None:
                continue
            unit, price = _rate_parts(pattern, rate)
            block = rate.group(2) if pattern in _BLOCK_RATES else None
            # (or a count of it: "3 small stumps", "my 3 dogs")
            amount = asked.get(unit) or next(iter(counts_of(question, unit)), None)
            if amount is None and unit in _ANYONE:  # ("Each additional person beyond 4: EUR 30" for "6 of us", blind set 102)
                amount = group_size(question)  # (not "Each additional child" for an event "for 10 people", blind set 92)
            if amount is None:
                break
            # the sentence before when it is about the same thing ("Private hire ... £240 for 3 hours. Each extra hour")
            # (and always for a sentence opening with its allowance: "Beyond 5 miles, we charge £1.20 per additional mile")
            # (or with "after that": "We hold finished machines free for 30 days. After that, storage is $3 per
            # day", blind set 69)
            opens = re.match(rf"\W*(?:(?:beyond|over|past|after)\s+[0-9]|{_AFTER_THAT}\b)",
                             sentence, re.IGNORECASE) is not None
            before = [sentences[i - 1]] if i and (opens or _shared(sentences[i - 1], sentence, unit)) else []
            # (of the lines before it with an allowance of its unit, the one the question names: "Guided half-day visit:
            # EUR 180 per party of up to 4 people" two lines above "Each additional person beyond 4: EUR 30", blind set 102)
            named = _named_allowance(question, sentences[max(0, i - _LINES_BACK):i], sentence, unit) if before else None
            before = [named] if named is not None else before
            # ranked by itself or by the sentence it goes on from ("Each extra hour: $275.00" under "Live carving demo,
            # 2 hrs incl. 1 block: $950.00", the question naming the demo: blind set 94, read)
            placed = min([rank.get(sentence, MAX_RANKED)] + [rank.get(b, MAX_RANKED) for b in before])
            if ranked and placed >= MAX_RANKED:
                break  # "It's been 4 hours, how much is a day pass?": not about the hire
            context = [sentence[:rate.start()]] + before
            expression = _beyond(context, unit, amount, price, block, question)
            # ("First dog: £25 per night / Each additional dog: £15 per night" for "2 dogs for 3 nights": per night too)
            again = _SECOND_UNIT.match(sentence, rate.end())
            if expression is not None and again is not None and _unit(again.group(1)) != unit:
                times = asked.get(_unit(again.group(1))) or next(iter(counts_of(question, again.group(1))), None)
                expression = f"({expression}) * {times}" if times is not None else None
            included = _INCLUDED_IN.search(sentence[:rate.start()])
            # the fee's price from another sentence (not this one's rate)
            base = price_of(included.group(1), sentence) if included and price_of is not None and expression else None
            if base is not None:  # "... included in the call-out fee": that fee first
                expression = f"{base} + {expression}"
            if (expression is not None and unit in _DISTANCES and _BOTH_WAYS.match(sentence, rate.end())
                    and not _ONE_WAY.search(sentence)):
                # "$2.50 per extra km, both ways (there and back)" (the rate stays the last figure)
                expression = f"2 * ({expression})" if " + " in expression else f"2 * {expression}"
            if expression is not None:
                out.append((min(placed, rank.get(sentence, len(rank))), expression))
            break
    return list(dict.fromkeys(expression for _, expression in sorted(out, key=lambda pair: pair[0])))


def _over_allowance(question: str, sentence: str) -> str | None:
    """The cost of the question's count of a rate's unit (counts_of: "3 gas appliances") under
    a rate whose allowance follows it (_RATE_OVER), with the price before the rate in its
    sentence ("CP12: £70, plus £15 per extra appliance after the first" asked for 3 appliances:
    "70 + (3 - 1) * 15"; "Power flush, up to 8 radiators: £420, then £30 per radiator over 8"
    asked for 11: "420 + (11 - 8) * 30"); that price alone for a count within the allowance;
    None when the question counts none of the unit."""
    rate = _RATE_OVER.search(sentence)
    if rate is None:
        return None
    price, unit = rate.group(1).replace(",", ""), rate.group(2)
    if _unit(unit) in _PEOPLE and not re.search(rf"\b{_EXTRA}\b|\bthe\s+first\b", rate.group(0), re.IGNORECASE):
        return None  # "£5 per child over 3", "£20 per guest over 12": an age, not people included
    counts = counts_of(question, unit)
    if not counts:
        counts = [c for c in [_asked_amounts(question).get(_unit(unit))] if c]
    if not counts:
        return None
    included = next((g for g in rate.groups()[2:] if g), "1").replace(",", "")
    before = [m.group(1).replace(",", "") for m in _PRICE.finditer(sentence[:rate.start()])]
    base = before[-1] if before else None
    # (a round trip's distance, for a customer's one-way one: "EUR 0.60 per km for every km of the round trip over 60
    # km" for "85 km from your Westport office (one way)" is (2 * 85 - 60) * 0.60, blind set 102, read)
    doubled = charged_both_ways(rate.group(0)) and _BOTH_WAYS_ANYWHERE.search(question) is None
    # (the round trip the question states itself: "We're 60 km away, so 120 km round trip", review)
    stated = re.search(rf"(?<![\w.])([0-9]+(?:\.[0-9]+)?)\s*-?\s*{re.escape(unit)}s?\s+(?:of\s+)?(?:a\s+|the\s+)?"
                       rf"{_BOTH_WAYS_WORDS}", question, re.IGNORECASE)
    counts = [stated.group(1)] if stated is not None and charged_both_ways(rate.group(0)) else counts
    if (2 if doubled else 1) * Fraction(counts[0]) <= Fraction(included):
        # (a band's own line for amounts over it: "Over 50 kg £265 plus £4 for every kg over 50 kg" is no price of
        # a 4 kg cat, simple set 72)
        opening = re.match(r"\W*(?:over|above|more\s+than)\s+([0-9][0-9,.]*)", sentence, re.IGNORECASE)
        return None if opening is not None and Fraction(opening.group(1).replace(",", "")) == Fraction(included) else base
    extra = f"({'2 * ' if doubled else ''}{counts[0]} - {included}) * {price}"
    return extra if base is None else f"{base} + {extra}"


def _asked_amounts(question: str) -> dict[str, str]:
    """The amounts `question` gives by unit ("for 5 hours", "12 miles away", "an hour", "half an
    hour" -> {"hour": "5", ...}), an amount in hours also in minutes ("an hour and 20 minutes": 80)."""
    asked: dict[str, str] = {}
    for m in _ASKED.finditer(with_digits(question)):
        asked.setdefault(_unit(m.group(2)), m.group(1).replace(",", ""))
    for m in _ONE_UNIT.finditer(question):  # "an hour", "half an hour"
        asked.setdefault(_unit(m.group(2)), "0.5" if m.group(1).lower().startswith("half") else "1")
    for unit, minutes in _MINUTES.items():  # an hour asked of a rate in minutes: 60; "an hour and 20 minutes": 80
        if unit in asked and minutes > 1:
            total = Fraction(asked[unit]) * minutes + Fraction(asked.get("minute", "0"))
            if total.denominator == 1:
                asked["minute"] = str(total.numerator)
    return asked


# A price per a block of units, no allowance before it: "De-matting is charged at $20 per 15
# minutes", "£2.50 per month for every £1,000 of declared value", "$85 per 20 ft".
_BLOCK = re.compile(rf"{SIGNED_PRICE}\s*(?:[a-z]+\s+){{0,3}}?(?:per|for\s+(?:each|every)|every)\s+"
                    rf"(?:(?:further|additional|extra|subsequent)\s+)?(?:([{CURRENCY_SIGNS}])\s*)?{AMOUNT}(?:[ \t]*([a-z]+))?", re.IGNORECASE)
# The first units of a block rate left free: "After the first 15 minutes we charge ... £10.00 for each further 15
# minutes" (blind set 83), "the first 30 minutes are free".
_FIRST_FREE = re.compile(rf"\b(?:after|beyond|over)\s+(?:the\s+)?first\s+{AMOUNT}\s*([a-z]+)"
                         rf"|\bfirst\s+{AMOUNT}\s*([a-z]+)\s+(?:are\s+|is\s+)?(?:free|included|no\s+charge)", re.IGNORECASE)

# An hourly rate charged in blocks of minutes, each begun charged whole: "£48.00 per hour, charged in 30-minute units",
# "$60.00 / hr, billed in 15-minute blocks".
_HOURLY_BLOCKS = re.compile(rf"{SIGNED_PRICE}\s*(?:/|per|an|a)\s*(?:hr|hour)\b(?:[^.;]|(?<=[0-9])\.(?=[0-9])){{0,40}}?"
                            rf"\b(?:charged|billed)\s+(?:in|by\s+the)\s+{AMOUNT}[\s-]*min(?:ute)?s?\s*(?:units?|blocks?|increments?)",
                            re.IGNORECASE)


def hourly_block_expressions(question: str, ranked: Sequence[str]) -> list[str]:
    """The cost of the time `question` gives at an hourly rate charged in blocks of minutes, each
    begun charged whole, of the best ranked sentences (MAX_RANKED of `ranked`): "1 hr 40 min" at
    "£48.00 per hour, charged in 30-minute units" -> "ceil(100 / 30) * 48.00 * 30 / 60" (4 half
    hours; blind set 90, read after its runs; "$60.00 / hr, billed in 15-minute blocks", blind set
    89). [] when no such rate or no time asked."""
    return list(dict.fromkeys(e for _, e in hourly_block_terms(question, ranked[:MAX_RANKED])))


def hourly_block_terms(question: str, sentences: Sequence[str]) -> list[tuple[str, str]]:
    """(the hourly price as written, the cost of the time `question` gives at it) for each hourly
    rate of `sentences` charged in blocks of minutes (hourly_block_expressions)."""
    minutes = _asked_amounts(question).get("minute")
    out: list[tuple[str, str]] = []
    asked = stems(question)
    for i, sentence in enumerate(sentences if minutes else ()):
        hourly = _HOURLY_BLOCKS.search(sentence)
        if hourly is None:
            continue
        # (the rate of the work asked: all its label's words, "Design time" for "your designer worked ... 1 hour 20
        # min"; not "Remote support: $60.00 / hr, billed in 15-minute blocks" for "2 hours of on-site visit", nor a
        # track's minutes for "mix 3 tracks, each about 4 minutes", review; a rate with no label only ranked first)
        label = stems(re.sub(r"\([^()]*\)", " ", sentence[:hourly.start()])) - _TIME_WORDS
        if not (label <= asked if label else i == 0):
            continue
        price, block = hourly.group(1).replace(",", ""), hourly.group(2).replace(",", "")
        least = _least_minutes(sentence)  # ("30-min minimum", "min 1 hour")
        time = f"max({minutes}, {least})" if least is not None and Fraction(least) > Fraction(minutes) else minutes
        out.append((price, f"ceil({time} / {block}) * {price} * {block} / 60"))
    return out


# Words of a rate's label that name no work: "Design time", "Labour rate".
_TIME_WORDS = frozenset(stems("time rate rates charge charges hourly hour hours per"))
# A least time a rate is charged for: "30-min minimum", "minimum 1 hour", "min 1 hour", "(1 hr minimum)".
_LEAST_TIME = re.compile(r"([0-9]+(?:\.[0-9]+)?)[\s-]*(min(?:ute)?s?|hours?|hrs?)\.?\s+minimum"
                         r"|\bmin(?:imum)?\.?\s+(?:of\s+)?([0-9]+(?:\.[0-9]+)?)\s*(min(?:ute)?s?|hours?|hrs?)\b", re.IGNORECASE)


def _least_minutes(sentence: str) -> str | None:
    m = _LEAST_TIME.search(sentence)
    if m is None:
        return None
    amount, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    value = Fraction(amount) * (60 if unit.lower().startswith("h") else 1)
    return str(value.numerator) if value.denominator == 1 else None


def block_rate_expressions(question: str, ranked: Sequence[str]) -> list[str]:
    """The cost of the amount `question` gives at a price per block of units of the best ranked
    sentences (MAX_RANKED of `ranked`): "$20 per 15 minutes", asked "it took 45 minutes" -> "20 *
    45 / 15"; "£2.50 per month for every £1,000 of declared value", asked "I'm declaring £8,000"
    -> "2.50 * 8000 / 1000"; an amount that is no whole number of blocks is charged per block
    begun ("ceil(50 / 15) * 20"). [] when no such rate or no amount in its unit."""
    asked = _asked_amounts(question)
    money = [m.group(1).replace(",", "") for m in _PRICE.finditer(question)]
    out: list[str] = []
    for sentence in ranked[:MAX_RANKED]:
        for m in _BLOCK.finditer(sentence):
            price, block = m.group(1).replace(",", ""), m.group(3).replace(",", "")
            if Fraction(block) <= 1:
                continue  # "per 1 hour": a plain rate
            if m.group(2):  # "for every £1,000": the question's amount of money
                amounts = [a for a in money if a != price]
            else:
                amounts = [asked[_unit(m.group(4))]] if m.group(4) and _unit(m.group(4)) in asked else []
            free = _FIRST_FREE.search(sentence)
            if free is None and re.search(rf"\b(?:further|additional|extra|subsequent)\s+(?:[{CURRENCY_SIGNS}]\s*)?[0-9]", m.group(0)):
                continue  # "an extra €5 for every additional 100 square metres" beyond a base read elsewhere (review)
            if amounts and free is not None and not m.group(2) and m.group(4) and _unit(free.group(2) or free.group(4)) \
                    == _unit(m.group(4)):
                first = free.group(1) or free.group(3)
                left = Fraction(amounts[0]) - Fraction(first)  # the units past the free ones, charged per block begun
                if left > 0:
                    whole = (left / Fraction(block)).denominator == 1
                    out.append(f"{price} * ({amounts[0]} - {first}) / {block}" if whole
                               else f"ceil(({amounts[0]} - {first}) / {block}) * {price}")
                continue
            if amounts:
                amount = amounts[0]
                whole = (Fraction(amount) / Fraction(block)).denominator == 1
                out.append(f"{price} * {amount} / {block}" if whole else f"ceil({amount} / {block}) * {price}")
    return list(dict.fromkeys(out))


def _rate_parts(pattern: re.Pattern[str], match: re.Match[str]) -> tuple[str, str]:
    """(unit, price) of a rate match: the first pattern names the unit before the price."""
    if pattern is _RATES[0]:
        return _unit(match.group(1)), match.group(2).replace(",", "")
    if pattern in _BLOCK_RATES:  # "£15 per 15 minutes"
        return _unit(match.group(3)), match.group(1).replace(",", "")
    return _unit(match.group(2)), match.group(1).replace(",", "")


# How far from its allowance a price or "free" is read as the allowance's.
NEAR_CHARS = 30


# How many lines above a rate an allowance it goes on from may stand.
_LINES_BACK = 3


def _named_allowance(question: str, lines: Sequence[str], sentence: str, unit: str) -> str | None:
    """Of `lines` (those right above a rate's `sentence`), the one holding an allowance of `unit` that
    the question names by more of its words than the line nearest the rate, when there is one; None
    otherwise (the nearest is taken)."""
    asked = set(content_words(question))
    held = [line for line in lines if _shared(line, sentence, unit) and any(
        _unit(next((g for g in (m.group(3), m.group(5), m.group(8), m.group(6)) if g), "")) == unit
        for m in _ALLOWANCE.finditer(line))]
    if len(held) < 2:
        return None
    best = max(held[::-1], key=lambda line: len(set(content_words(line)) & asked))
    return best if len(set(content_words(best)) & asked) > len(set(content_words(held[-1])) & asked) else None


def _shared(before: str, sentence: str, unit: str) -> bool:
    """Whether `before` names something of `sentence` (a word besides the unit and the rate's
    own), or `sentence` names nothing else (it goes on from `before`), or `before` prices the
    first of its unit."""
    # (not its aside: "Each additional child: $32 (maximum 14 children)" goes on from "Party package: $320 for up to 8
    # children", blind set 92)
    words = {w for w in content_words(re.sub(r"\([^()]*\)", " ", sentence)) if canonical(w) != unit} - _RATE_WORDS
    # ("First stump: $160" before "Each additional stump, same visit: $95": the first of the same unit)
    first = re.search(rf"\bfirst\s+(\w+)", before, re.IGNORECASE)
    return (not words or bool(words & set(content_words(before)))  # "Each extra hour is £65." goes on from it
            or (first is not None and _unit(first.group(1)) == unit))


_RATE_WORDS = frozenset({"each", "extra", "additional", "further", "after", "that", "beyond", "per", "cost", "costs",
                         "charged", "every"})


def _beyond(context: Sequence[str], unit: str, amount: str, rate: str, block: str | None = None,
            question: str = "") -> str | None:
    """The cost of `amount` units at `rate` beyond the allowance of `unit` the `context` (the
    rate's sentence before it, then the sentence before) gives, with its price when next to it;
    None without an allowance or when the amount is within it."""
    opened = None  # an allowance opening the rate's sentence ("Beyond 5 miles we charge ..."): its count
    for text in context:
        for m in _ALLOWANCE.finditer(text):
            count, word = ((m.group(2), m.group(3)) if m.group(2) else (m.group(4), m.group(5)) if m.group(4)
                           else (m.group(7), m.group(8)) if m.group(7) else ("1", m.group(6)))
            if _unit(word) != unit:
                continue
            # (a length in a label only for the thing the question names, priced whole: not "Bartender (4 hours
            # minimum): $35 per hour", nor the DJ's "4 hours: $650" for a photo booth, review)
            if m.group(7) and (_RATE_AFTER.match(text, m.end()) or not (
                    set(content_words(text[:m.start()])) & set(content_words(question)))):
                continue
            included = count.replace(",", "")
            if Fraction(amount) <= Fraction(included):
                return None
            extra = (f"({amount} - {included}) * {rate}" if block in (None, "1")
                     else f"ceil(({amount} - {included}) / {block}) * {rate}")  # per block begun
            if m.group(1):  # ("After 2 hours, each extra hour is £3": the allowance's price may be the sentence before's)
                opened = opened or extra
                continue
            # the allowance's price: the nearest within NEAR_CHARS ("£240 for 3 hours"); "free" next to it: none
            prices = [p for p in _PRICE.finditer(text) if min(abs(p.end() - m.start()), abs(p.start() - m.end()))
                      <= NEAR_CHARS]
            free = _FREE.search(text[max(0, m.start() - NEAR_CHARS):m.end() + NEAR_CHARS])
            if not prices or (free and not prices):
                return extra if free or not prices else None
            base = min(prices, key=lambda p: min(abs(p.end() - m.start()), abs(p.start() - m.end())))
            return f"{base.group(1).replace(',', '')} + {extra}"
    return opened  # "Beyond 5 miles we charge £1.50 per mile" and no priced allowance: the first 5 free



# A travel charge owed again on every visit ("based on the one-way distance and charged per visit").
_PER_VISIT = re.compile(r"\b(?:per|each|every)\s+(?:visit|trip|call[\s-]?out|journey|appointment)\b", re.IGNORECASE)


def travel_charge(question: str, sentences: Sequence[str]) -> tuple[str, str, bool] | None:
    """(the cost of the distance `question` gives beyond a travel allowance of `sentences`, as
    allowance_expressions writes it: "(22 - 10) * 1.50", "6 + (12 - 5) * 1.20"; that distance as
    written: "22"; whether the rate's sentence charges it on every visit) for the first such allowance in a unit of distance (mile, km), whatever its
    rank; None when the question gives no distance or it is within every allowance."""
    asked = _asked_amounts(question)
    distances = {asked[unit] for unit in _DISTANCES if unit in asked}
    for expression in allowance_expressions(question, sentences) if distances else []:
        m = re.search(r"\((?:2 \* )?([0-9.]+) - [0-9.]+\) \* ([0-9.]+)\)?$", expression)
        # (or the round trip the question states: "60 km away, so 120 km round trip", review)
        if m is None or (m.group(1) not in distances and not re.search(
                rf"(?<![\w.]){re.escape(m.group(1))}\s*-?\s*{DISTANCE_UNIT}\s+(?:of\s+)?(?:a\s+|the\s+)?{_BOTH_WAYS_WORDS}",
                question, re.IGNORECASE)):
            continue
        rate = m.group(2)
        per_visit = any(_PER_VISIT.search(s) for s in sentences
                        if any(p.group(1).replace(",", "") == rate for p in _PRICE.finditer(s)))
        return expression, m.group(1), per_visit
    return _whole_distance(question, sentences)


def _whole_distance(question: str, sentences: Sequence[str]) -> tuple[str, str, bool] | None:
    """travel_charge's answer for a travel rate charged on the whole distance where the customer
    is ("18 km outside red deer city limits" over "Travel outside Red Deer city limits: $2.00 per km
    (one way ...)": "18 * 2.00"), when no sentence leaves a distance free; None otherwise."""
    where = FROM_BUSINESS.search(with_digits(question))
    if where is None or any(_FREE_DISTANCE.search(s) for s in sentences):
        return None
    distance, unit = where.group(1), _unit(where.group(2))
    for sentence in sentences:
        rate = _TRAVEL_RATE.search(sentence)
        if rate is not None and _unit(rate.group(2)) == unit:
            both = "2 * " if _BOTH_WAYS.match(sentence, rate.end()) and not _ONE_WAY.search(sentence) else ""
            charge = f"{both}{distance} * {rate.group(1).replace(',', '')}"
            least = _LEAST.search(sentence, rate.end())  # "£2 per mile, minimum charge £10": max(10, ...)
            return (f"max({least.group(1).replace(',', '')}, {charge})" if least else charge, distance,
                    _PER_VISIT.search(sentence) is not None)
    return None


# A distance in the units a trade charges travel by, as written.
DISTANCE_UNIT = r"(miles?|mi|km|kilomet(?:re|er)s?)"
# A distance travelled free: "Visits within 10 miles of our shop ... are free of travel charges", "Beyond 10
# miles we add $1.50 for every mile over 10", "free delivery up to 5 km".
_FREE_DISTANCE = re.compile(rf"\b(?:within|up\s+to|first|beyond|over|more\s+than|outside|past)\s+([0-9]+(?:\.[0-9]+)?)\s*"
                            rf"{DISTANCE_UNIT}\b", re.IGNORECASE)
# A rate for the distance beyond an allowance only: "$1.50 for every mile over 10", "£1 per mile beyond 5 miles" (not
# a band's rate: "Journeys over 30 miles are charged at £2.00 per mile", review).
_RATE_BEYOND = re.compile(r"\b(?:every|each|per|a)\s+(?:additional\s+|extra\s+)?(?:mile|mi|km|kilomet(?:re|er))\s+"
                          r"(?:over|beyond|past|after|above)\b", re.IGNORECASE)
# A travel rate on the whole distance: "Travel outside the city limits: $2.00 per km", "Mileage: £0.45 per mile".
_TRAVEL_RATE = re.compile(rf"\b(?:travel\w*|mileage|delivery|call[\s-]?outs?|journeys?|distance)\b[^.;{CURRENCY_SIGNS}]{{0,60}}?"
                          rf"{SIGNED_PRICE}\s*(?:per|an?|/)\s*{DISTANCE_UNIT}\b", re.IGNORECASE)
# How far the customer is from the business: "18 km outside the city limits", "22 miles from your shop", "4 km
# away" (not "10 miles from the station": review).
# ("It's 23 km each way from your office", blind set 97, read)
FROM_BUSINESS = re.compile(rf"(?<![\w.])([0-9]+(?:\.[0-9]+)?)\s*-?\s*{DISTANCE_UNIT}\s+(?:(?:each|one)\s+way\s+)?(?:away\b|out\b|outside\b|"
                            rf"(?:from|of)\s+(?:you\b|your\b|the\s+(?:shop|store|depot|yard|base|workshop|studio|office|"
                            rf"premises|city|town)\b))", re.IGNORECASE)
# A least travel charge after its rate: "£2 per mile, minimum charge £10".
_LEAST = re.compile(rf"[^.;]{{0,25}}?\bminimum(?:\s+(?:charge|fee))?(?:\s+(?:of|is))?\s*:?\s*{SIGNED_PRICE}", re.IGNORECASE)
# Where the customer is: "6 miles from your shop", "we're 4 km away", "within 10 miles".
_AWAY = re.compile(rf"(?<![\w.])([0-9]+(?:\.[0-9]+)?)\s*-?\s*{DISTANCE_UNIT}\s+(?:away|from|out\b|outside|of\s+(?:you|your|the))"
                   rf"|\bwithin\s+([0-9]+(?:\.[0-9]+)?)\s*-?\s*{DISTANCE_UNIT}\b", re.IGNORECASE)


def where_customer_is(question: str) -> str | None:
    """The words of `question` giving how far the customer is ("we're 3 miles from you" -> "3 miles
    from"), not a distance travelled ("a 30 mile round trip"); None when it gives none."""
    m = _AWAY.search(with_digits(question))
    return m.group(0) if m else None


def charges_beyond(sentence: str) -> bool:
    """Whether `sentence` gives a rate for the distance beyond an allowance only (_RATE_BEYOND: "$1.50 for
    every mile over 10")."""
    return _RATE_BEYOND.search(sentence) is not None


def within_free_distance(question: str, sentences: Sequence[str]) -> str | None:
    """The distance `question` gives, as written ("6"), when it is within the distance a travel
    charge of `sentences` leaves free ("6 miles from your shop" over "Beyond 10 miles we add $1.50
    for every mile over 10": no travel to pay, and no "6 miles" to price: simple set 67); None
    otherwise."""
    # (where the customer is: "6 miles from your shop", "we're 4 km away"; not "use 1 mile = 1.609 km", blind set 25)
    asked = {_unit(m.group(2) or m.group(4)): m.group(1) or m.group(3) for m in _AWAY.finditer(with_digits(question))}
    for sentence in sentences:
        if not _FREE.search(sentence) and not _RATE_BEYOND.search(sentence):
            continue
        for m in _FREE_DISTANCE.finditer(sentence):
            distance = asked.get(_unit(m.group(2)))
            if distance is not None and Fraction(distance) <= Fraction(m.group(1)):
                return distance
    return None

