"""The candidate expressions of one fact sentence (issue 15): the numbers of a sentence the
question is about (operands_of), the sentences ranked for a question asking an amount
(document_candidates: the embedder's order, then keys putting a line whose label the question
says all of before one priced per a unit it counts, a tax's rate alone or a least charge alone
last, a deposit's line first only when the deposit is asked), and each operand under the
operations the question names (backend.agent.operations.named_operations; every operand with
every number of the question by * / - + when it names none, _GENERIC_ORDER). The bill a
question asks is put together from these by backend.agent.tools.expressions.candidate_expressions
(its baskets, adjustments, travel, minimums, deposits and tax).

Only numbers and words are read from the passages (untrusted data), and every expression is
checked by the calculator's own parser (valid_expressions) before it is offered.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Sequence

from backend.agent.numerals import CURRENCY_SIGNS, AMOUNT, NUMBER_RE, with_digits
from backend.agent.operations import (asks_age, asks_amount, asks_cost, asks_difference, asks_money, asks_how_many,
                                      asks_saving, asks_total, named_operations, names_a_length, names_a_size,
                                      names_an_edition, sizes, sizes_alone)
from backend.agent.party import asks_share_per_person, given_ages, group_size, without_ages
from backend.agent.tools.allowances import allowance_expressions, block_rate_expressions, hourly_block_expressions
from backend.agent.tools.bands import banded_measures, held_counts, outside_band
from backend.agent.tools.discounts import least_count_met
from backend.agent.tools.headings import fully_named, under_named_heading, unnamed_labels, wider_names
from backend.agent.tools.basket import DEPOSIT_WORDS, TABLE_ROW, counts_of, is_deposit, norm_words, set_aside_words, thing_words
from backend.agent.tools.conditions import applies, out_of_season
from backend.agent.tools.deposits import ASKS_DEPOSIT
from backend.agent.tools.mentions import names_extra
from backend.agent.tools.offers import offer_expressions
from backend.agent.tools.plausible import hour_of_day, plausible
from backend.agent.tools.relations import MAX_NUMBERS, beginning, numbers_in, relations, years_in
from backend.agent.tools.pricing import (MAX_RATE_SENTENCES, PER_HEAD_AFTER, column_band_expressions, counted_cell_expressions, column_lengths, count_per, PEOPLE_STEMS, PRICE,
                                         minutes_spent, named_lengths, priced_per_count, names_asked_length, price_named, prices_first,
                                         two_rates)
from backend.agent.tools.minimums import PER_HOUR, least_term_expressions, minimum_only
from backend.agent.tools.segmentation import passage_sentences
from backend.agent.tools.sentences import content_words, is_heading, rank_sentences, stems
from backend.agent.tools.taxes import TAX_WORD, names_tax
from backend.agent.tools.tiers import tier_expressions
from backend.agent.tools.units import areas, implied_conversions, stated_conversions

# The most candidates one question gets: each is two scored requests of the engine, side by side
# (the engine runs 32 sequences at a time by default).
MAX_CANDIDATES = 8


# A price: a currency word after the number or a currency sign before it.
_AMOUNT = AMOUNT
# A price in a sentence with no currency: after a verb of paying ("each paid 96 florins a day",
# "sold for 72 marks": a currency the list lacks).
_PRICE_PAID = re.compile(rf"\b(?:costs?|paid|pays?|priced\s+at|sells?\s+for|sold\s+for|fee\s+of|price\s+of)\s+"
                         rf"{_AMOUNT}(?=\s+(?!times\b)[a-z])", re.IGNORECASE)


# A number joined to the noun it counts by a hyphen: "5-pack", "10-visit pass", "2-person tent"; not to a
# measure ("12.5-kilogram bags at €19 a bag": 50 kilos are 50 / 12.5 bags, blind set 16).
_NAMING_NUMBER = re.compile(r"-(?!(?:kilo|gram|pound|ounce|litre|liter|gallon|met(?:re|er)|centi|milli|inch|foot|feet|yard|mile|"
                            r"second|minute|hour|day|week|month|year|acre|square|cubic|degree)s?)[a-z]{3,}\b(?!-)", re.IGNORECASE)


def operands_of(sentence: str, question: str, heading: str = "") -> list[str]:
    """The numbers of `sentence` the question may be about: those with the most words of the
    question (the heading's words left out: the subject's name is everywhere) among the two
    words before them and the three after ("84 member farms and employs 230 people", asked about
    member farms -> ["84"]); all of them when none has one."""
    asked = stems(question) - stems(heading)
    scored: list[tuple[int, str]] = []
    matches = list(NUMBER_RE.finditer(sentence))
    # a number joined to its noun names the thing ("Universal needles, 5-pack: $4.50": 8 packs are 8 * 4.50,
    # not 8 * 5, blind set 69), when the sentence holds another number
    named = ([m for m in matches if _NAMING_NUMBER.match(sentence, m.end())]
             if asks_amount(question) and not asks_how_many(question) else [])  # ("how many needles in 8 packs?": 5 * 8)
    if len(named) < len(matches):
        matches = [m for m in matches if m not in named]
    sized = _sizes_written(with_digits(question))
    ages = [int(a) for a in given_ages(question)]
    # nor a size of its label the question does not write ("Spiral rabbit guard, 60 cm: £0.35 each" for "200 spiral
    # rabbit guards": 0.35 * 200, not 60 * 200; practice set 2), when a price is there to read
    if asks_amount(question) and not asks_how_many(question) and prices_in(sentence):
        unsized = [m for m in matches if not (_SIZE_AFTER.match(sentence, m.end())
                                              and (m.group(1), _size_unit(sentence, m.end())) not in sized)]
        matches = unsized or matches
    for match in matches:
        before = sentence[:match.start()].split()[-2:]
        after = sentence[match.end():].split()[:3]
        # and the sizes of its own label the question writes ("12\" 180 g €5.50" for "180g records": blind set 93, read)
        label = re.split(r"[;:]", sentence[:match.start()])[-1]
        # and a table's cell under an age band holding every age the question gives ("Youth 8-17 $14.00" for "my three
        # kids (9, 11 and 14)", practice set 3)
        aged = 3 if ages and _holds_ages(label + " $0", ages) else 0
        # and a table's cell under the days holding the question's ("Fri-Sun & holidays $18.00" for "on a Saturday",
        # blind set 104, read)
        dayed = 3 if TABLE_ROW.match(sentence) and applies(f"{label} $0", question) else 0
        scored.append((len(stems(" ".join(before + after)) & asked) + 2 * len(_sizes_written(label) & sized) + aged + dayed,
                       match.group(1).replace(",", "")))
    best = max((score for score, _ in scored), default=0)
    if best == 0:
        return list(dict.fromkeys(number for _, number in scored))[:MAX_NUMBERS]
    return list(dict.fromkeys(number for score, number in scored if score == best))[:MAX_NUMBERS]


# A size: a number and its unit's letters ("180 g", "180g", "12\"", "12 inch"), not a count ("250 records").
_SIZE_WRITTEN = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}])([0-9]+(?:\.[0-9]+)?)\s*(g|kg|gsm|mm|cm|m|ml|l|oz|lb|in|inch|inches|\"|″|ft|"
                           r"rpm|gb|tb|w|kw|v)(?![\w])", re.IGNORECASE)
_SIZE_UNITS = {"inch": "in", "inches": "in", '"': "in", "″": "in"}


# A size's unit right after a number: " cm", "L", "-litre" (not a count's noun).
_SIZE_AFTER = re.compile(r"\s*-?\s*(mm|cm|m|l|ml|kg|g|in|inch|inches|\"|″|ft)(?![\w])", re.IGNORECASE)


def _size_unit(sentence: str, at: int) -> str:
    """The unit of the size written right after `at` in `sentence` (_SIZE_AFTER), as _sizes_written names it."""
    unit = _SIZE_AFTER.match(sentence, at).group(1).lower()
    return _SIZE_UNITS.get(unit, unit)


def _sizes_written(text: str) -> set[tuple[str, str]]:
    """The sizes `text` writes, as (number, unit) ("12\" 180 g" -> {("12", "in"), ("180", "g")})."""
    return {(m.group(1), _SIZE_UNITS.get(m.group(2).lower(), m.group(2).lower())) for m in _SIZE_WRITTEN.finditer(text)}


def prices_in(text: str) -> list[str]:
    """The numbers of `text` written as prices ("27.50 dollars", "$4", "14.75 crowns"; in a text with none of
    those, the amounts after a verb of paying: "each paid 96 florins a day")."""
    found = [next(g for g in m.groups() if g) for m in PRICE.finditer(text)] or _PRICE_PAID.findall(text)
    return list(dict.fromkeys(n.replace(",", "") for n in found))


def fact_sentences(results: Sequence[str]) -> list[tuple[str, str]]:
    """(heading, sentence) for each sentence holding a number in the passages quoted in
    `results` (backend.agent.tools.segmentation.passage_sentences)."""
    return [pair for pair in passage_sentences(results) if NUMBER_RE.search(pair[1])]


def _expressions(question: str, templates: Sequence[tuple[str, str | None]], operands: Sequence[str],
                 sentence: str, before: str = "") -> list[str]:
    expressions: list[str] = []
    if templates:
        # a cost, a share per person, what a budget buys: the price's number
        priced = (asks_cost(question) or asks_share_per_person(question) or any(t.startswith("floor(") for t, _ in templates)
                  or (asks_amount(question) and not asks_how_many(question)))  # "how much is a lift-out for my 11 m boat"
        prices = list(prices_in(sentence)) if priced else []
        if prices:  # a cost: the price, not the number sold nor a model's number ("Kell No. 9")
            operands = prices_first(question, sentence, operands, prices)
        # "minimum charge for 8 children"; "10 lb minimum per order" over the list's lines ("Regular: $1.75 / lb")
        least = _least_count(sentence, question, group_size(question)) or _least_count(before, question, None)
        if least is not None:
            templates = [(f"{{a}} * {least}", least)] + [t for t in templates if t[1] != least]
        # the count that picks a row of bands prices the row alone ("35 panels" over "31 - 40 panels: A$240")
        banded = banded_measures(question, sentence) if prices else set()
        # (in the place of the banded count: "3 patches ... under 30cm square" over "Patch (up to 30 cm x 30 cm): R220.00
        # each" is 3 of them, practice set 5)
        if banded and any(n in banded for _, n in templates):
            templates = list(dict.fromkeys(("{a}", None) if t[1] in banded else t for t in templates))
        for template, n in templates:
            fits = _operand_kind(template, sentence)
            expressions.extend(template.replace("{a}", a) for a in operands
                               if (a != n or counts_priced_thing(question, sentence, a)) and fits(a))
    else:
        prices = list(prices_in(sentence)) if asks_amount(question) and not asks_how_many(question) else []
        if prices:  # "how much is a lift-out for my 11 m boat" over "with our 25-tonne hoist: £14 per metre": £14
            operands = prices_first(question, sentence, operands, prices)
        own = without_ages(with_digits(question))  # its numbers but an edition's year ("the 2019 fair") and ages
        given = list(dict.fromkeys(m.group(1).replace(",", "") for m in NUMBER_RE.finditer(own)
                                   if not names_an_edition(own, m) and not names_a_size(own, m.start())
                                   and not names_a_length(own, m.start())
                                   and (asks_difference(question)  # "... and the £75 at FitCo": an amount compared
                                        or not MONEY_BEFORE.search(own[max(0, m.start() - 4):m.start()]))
                                   # a distance multiplies only a price per distance ("27 km from Naas" is no
                                   # count of castles: blind set 61, 120 * 27)
                                   and not (_DISTANCE_AFTER.match(own, m.end()) and not _PER_DISTANCE.search(sentence))
                                   # nor an hour of the day ("a tuesday afternoon around 2")
                                   and not hour_of_day(m.group(1).replace(",", ""), question)
                                   ))[:MAX_NUMBERS]
        # nor the size that picks a row of size bands ("my 800 litre pond" over "Garden pond 501-2000 litres: £80")
        banded = banded_measures(question, sentence)
        if banded and prices and set(given) <= banded:
            expressions.append(operands[0])  # the row's price alone
        given = [n for n in given if n not in banded]
        party = group_size(question)  # "me and my 3 mates": 4
        if party is not None and party not in given:
            given = [party] + given
        # "€11 per child, minimum charge for 8 children"; "10 lb minimum per order" the line before
        least = _least_count(sentence, question, party) or _least_count(before, question, None)
        if least is not None:
            given = [least] + [n for n in given if Fraction(n) >= Fraction(least)]
        elif prices:  # the count of what the price is per first: "$120 per hour" for "the 2 person crew ... 3.5 hrs"
            per = count_per(question, sentence, operands[0])
            if per in given:
                given = [per] + [n for n in given if n != per]
        operators = ("*+" if _PER_EACH.search(question) else "+*") if asks_total(question) else _GENERIC_ORDER
        for a in operands:
            for n in given:
                if a == n and not counts_priced_thing(question, sentence, a):
                    continue
                for op in operators:
                    expressions.extend((f"{a} {op} {n}", f"{n} {op} {a}"))
    return expressions



# A distance after a number ("27 km", "10 miles away"), and a price per one ("80p per mile", "€1.50/km").
_DISTANCE_AFTER = re.compile(r"\s*(?:km|kms|kilomet(?:re|er)s?|miles?|mi)\b", re.IGNORECASE)
_PER_DISTANCE = re.compile(r"(?:\bper|/|\ba|\beach)\s*(?:km|kilomet(?:re|er)|mile|mi)\b", re.IGNORECASE)
# A money sign right before a number: "$130" is an amount, never a count of anything.
MONEY_BEFORE = re.compile(rf"(?:[{CURRENCY_SIGNS}]|\b[A-Z]{{1,3}}\$)\s?$")


# An amount the question's operation is on: "17.5% of £240", "split an £87 bill", "add 20% VAT to £45",
# "10% off a £60 jacket", "£45 plus 12.5%"; not a budget or a comparison ("I've got £100", "under £40").
_OPERAND_AMOUNT = re.compile(r"(?:\bof|\bon|\bsplit(?:ting)?|\bto|\boff|\bdivide)\s+(?:(?:an?|the|our|my|this|that)\s+)?"
                             rf"[{CURRENCY_SIGNS}]\s?([0-9][0-9,]*(?:\.[0-9]+)?)"
                             rf"|[{CURRENCY_SIGNS}]\s?([0-9][0-9,]*(?:\.[0-9]+)?)(?=\s+(?:bill\s+)?(?:plus|minus|times|divided|split|"
                             r"between|among|shared|\+|-|\*|/))", re.IGNORECASE)


# A price taken off, no price of a thing: "save £10 per paying participant", "£5 off", "a £20 discount".
_SAVED_BEFORE = re.compile(r"\b(?:save|saves|saving|discount\s+of|reduction\s+of|knock|take)\s+(?:you\s+|up\s+to\s+|an?\s+extra\s+)?$",
                           re.IGNORECASE)
_OFF_AFTER = re.compile(r"\s*(?:off|discount|reduction|cheaper|less)\b", re.IGNORECASE)


def _named_only_for(question: str, sentence: str) -> bool:
    """Whether the question names the thing `sentence` prices first only where its label says
    whom it is for: "Hot lunch for Half-Day guests: £12.50" for "the half day experience" (not
    "Half-Day Falconry Experience (3.5 hours) - £120")."""
    first = PRICE.search(sentence)
    if first is None:
        return False
    head, _, rest = re.split(r"[.:;]\s", sentence[:first.start()].rstrip(" :-–"))[-1].partition(" for ")
    asked = norm_words(question)
    # (not whom a ticket is for: "Entry for adults: £10" is the adults' price)
    named = {w for w in asked & norm_words(rest) if not stems(w) & PEOPLE_STEMS}
    return bool(rest) and not asked & norm_words(head) and bool(named)


def _reductions_only(sentence: str) -> bool:
    """Whether every price of `sentence` is an amount taken off (_SAVED_BEFORE, _OFF_AFTER)."""
    prices = list(PRICE.finditer(sentence))
    return bool(prices) and all(_SAVED_BEFORE.search(sentence[:m.start()]) or _OFF_AFTER.match(sentence, m.end())
                                for m in prices)


def _deposits_only(sentence: str) -> bool:
    """Whether `sentence` prices a deposit first (basket.is_deposit: "A refundable deposit of £50 per
    bike is taken at pick-up (£100 for e-bikes)")."""
    prices = list(PRICE.finditer(sentence))
    return bool(prices) and is_deposit(sentence, prices, 0)


def counts_priced_thing(question: str, sentence: str, amount: str) -> bool:
    """Whether the question's number `amount`, also a price of `sentence`, counts what that price
    buys ("6 planks" over "Aluminum plank, 8 ft: $6 per day"; "for 12 people" over "groups of 10
    or more £12 per person"), so that the price is kept beside it; not a count of something else
    ("me and my 2 kids want 5 scoops" over "Scoops are £2 each")."""
    prices = list(PRICE.finditer(sentence))
    for i, m in enumerate(prices):
        if next(g for g in m.groups() if g).replace(",", "") != amount:
            continue
        if PER_HEAD_AFTER.match(sentence, m.end()) and group_size(question) == amount:
            return True
        if any(thing_words(sentence, prices, i) & norm_words(word) for word in re.findall(r"[a-z][\w-]*", question, re.IGNORECASE)
               if amount in counts_of(question, word)):
            return True
    return False



# "minimum charge for 8 children", "a minimum of 4 people", "minimum booking 10 guests".
_MINIMUM_COUNT = re.compile(r"\bminimum(?:\s+(?:charge|booking|order|group|number))?\s*(?:of|for|is)?\s+([0-9]+)\s+([a-z]+)"
                            r"|(?<![\w.])([0-9]+)\s*([a-z]+)\s+minimum\s+(?:per|a|an|each)\s+(?:order|booking|visit|load|job)\b",
                            re.IGNORECASE)


def _least_count(sentence: str, question: str, party: str | None) -> str | None:
    """The least count `sentence` charges for ("minimum charge for 8 children") when the question
    counts fewer of it (its party, for people; else a number before the same word); else None."""
    m = _MINIMUM_COUNT.search(sentence)
    if m is None:
        return None
    least, word = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    thing = stems(word)
    counts = [party] if party is not None and thing & PEOPLE_STEMS else []
    counts += counts_of(question, word)
    return least if counts and all(Fraction(c) < Fraction(least) for c in counts) else None


# With no operation named, the order the program's first candidate follows (it is the call:
# backend.agent.choice.FIRST_PRIOR): a product or a ratio is what a question about one number of
# the documents and one of its own asks more often than a sum (blind sets 1-20).
_GENERIC_ORDER = "*/-+"
# "every staff member works 40 hours a week ... in total": a product first.
_PER_EACH = re.compile(r"\b(?:every|each|per|apiece)\b", re.IGNORECASE)
# Years counted from a year: "2030 - {a}", "{a} - 2030".
_YEAR_TEMPLATE = re.compile(r"(?:1\d{3}|20\d{2}) - \{a\}|\{a\} - (?:1\d{3}|20\d{2})")


def _operand_kind(template: str, sentence: str) -> Callable[[str], bool]:
    """Which operands fit `template`: for years counted from a year ("2030 - {a}"), a year as
    `sentence` writes one; any number otherwise."""
    if _YEAR_TEMPLATE.fullmatch(template):
        years = set(years_in(sentence))
        return lambda a: a in years
    return lambda a: True


def sentence_candidates(question: str, sentences: Sequence[tuple[str, str]], embed: Callable[[Sequence[str]], Any] | None,
                evaluate: Callable[[str], Any]) -> list[str]:
    # Every sentence ranked once (a conversion may read one without a number's neighbours asked);
    # the fact sentences are those holding a number, in the same order.
    every = rank_sentences(question, list(sentences), embed)
    # "how much do I save with the block of 10", "the price per hour of the course": first
    texts = [s for _, s in every]
    offered = offer_expressions(question, texts)
    # "use 1 km = 0.621 miles" (its factor, not ours), "how big is the floor in square metres": first
    stated = stated_conversions(question, texts) or areas(question, texts)
    # "hire the house for 5 hours" over "£240 for 3 hours. Each extra hour is £65"; "5 of us" over "$165 for 5": first
    # (not a row of a band the question's count is outside: "41+ panels $190 + $4 per panel over 40" for 12 panels;
    # nor one outside the heading naming the question's kind of thing: headings.under_named_heading)
    headed, heading_words = under_named_heading(question, sentences)
    rates = [t for t in texts if not outside_band(question, t)
             and not (headed and t not in headed and not heading_words & norm_words(t))]
    allowed = hourly_block_expressions(question, texts) or allowance_expressions(
        question, [s for _, s in sentences], rates, lambda fee, rate: price_named(question, fee, rate, sentences))
    allowed += tier_expressions(question, texts)
    allowed += [] if allowed else block_rate_expressions(question, texts)  # "$20 per 15 minutes" for 45 minutes
    out = document_candidates(question, every, evaluate, sentences, (headed, heading_words))
    # "£3.20 per metre per week" for an 8-metre boat for 6 weeks: 3.20 * 8 * 6
    # "30 hawthorn whips" over "Hawthorn: 1-49 £0.95; 50-249 £0.80; 250+ £0.65.": the column holding 30, first
    banded = column_band_expressions(question, texts)
    # "only stay the minimum period" over "Unlimited Classes: $149.00 per month; (3-month minimum)": its 3 months, first
    banded += least_term_expressions(question, texts)
    # "the service contract for 4 units" over "2 units S$220.00; 3 units S$300.00; 4 units S$380.00": that cell, first
    banded += counted_cell_expressions(question, texts)
    first = stated + banded + allowed + offered + two_rates(question, [s for _, s in every[:MAX_RATE_SENTENCES]])
    return valid_expressions(first + out, evaluate) if first else out


def _minimum_lines(sentences: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """For each (heading, sentence) in document order, the line above it under the same heading
    and section (no heading in capitals between: sentences.is_heading) that states a least amount
    (_MINIMUM_COUNT: "Priced by weight, 10 lb minimum per order" over every line of its list)."""
    out: dict[tuple[str, str], str] = {}
    line, passage = "", None
    for pair in sentences:
        if pair[0] != passage or is_heading(pair[1]):
            line, passage = "", pair[0]
        if line:
            out[pair] = line
        if _MINIMUM_COUNT.search(pair[1]):
            line = pair[1]
    return out


def document_candidates(question: str, every: Sequence[tuple[str, str]], evaluate: Callable[[str], Any],
                         sentences: Sequence[tuple[str, str]] = (),
                         headed: tuple[set[str], frozenset[str]] | None = None) -> list[str]:
    """(`headed`: headings.under_named_heading of `sentences`, read once by the caller.)"""
    ranked = [pair for pair in every if NUMBER_RE.search(pair[1])]
    templates = named_operations(question)  # once: the question's operations, whatever sentence is tried
    if not ranked:
        if not templates:
            return []
        own = with_digits(question)
        return valid_expressions(_expressions(question, templates, numbers_in(own), own), evaluate)[:MAX_CANDIDATES]
    years_from = [t for t in templates if _YEAR_TEMPLATE.fullmatch(t[0])]
    if asks_age(question) and years_from and len(years_from) == len(templates):  # "how old will it be in 2045"
        begun = beginning(question, ranked)
        if begun is not None:
            out = valid_expressions(_expressions(question, templates, [begun[0]], begun[1]), evaluate)
            if out:
                return out[:MAX_CANDIDATES]
    if not templates:  # "in grams" over "212 kilograms", "in a week" over "140 grams a day"
        converted = valid_expressions(implied_conversions(question, [s for _, s in every]), evaluate)
        if converted:
            return converted[:MAX_CANDIDATES]
        related = valid_expressions(relations(question, [s for _, s in ranked]), evaluate)
        if related:  # "what percentage of ... did it start with", "how many years after ... was"
            return related[:MAX_CANDIDATES]
    own = set(numbers_in(with_digits(question)))
    # an amount the question writes itself, with the operation it names, is the whole calculation ("what's
    # 17.5% of £240?", "split an £87 bill 3 ways": new-user pass, the documents' £1.20 was taken instead)
    written = [(m.group(1) or m.group(2)).replace(",", "") for m in _OPERAND_AMOUNT.finditer(question)]
    written = [a for a in dict.fromkeys(written) if not any(a == n for _, n in templates)]
    if templates and written:
        stated = valid_expressions(_expressions(question, templates, written, question), evaluate)
        if stated:
            return stated[:MAX_CANDIDATES]
    # "a 2hr manual lesson": the sentence pricing a 2-hour lesson first; "4 nights" a price per night; not
    # what the question sets aside ("(ignore tourist tax)")
    # (a tax set aside is no thing: "not counting GST" leaves "Alpaca shearing is $38.00 per animal (excl GST)" first,
    # blind set 99)
    aside = {w for w in set_aside_words(question) if not re.fullmatch(TAX_WORD, w, re.IGNORECASE)}
    # nor a thing it adds to the bill ("incl the cleaning fee", "we need electric hook up": named_extras)
    money = asks_money(question)
    # and not a size band the question's measure is outside ("blade up to 20 cm" for "blades are about 25cm")
    # nor a deposit's unless asked, then first ("A refundable deposit of £50 per bike" for "8 city bikes for a day")
    deposit_asked = ASKS_DEPOSIT.search(question) is not None
    deposit_named = deposit_asked or bool(norm_words(question) & DEPOSIT_WORDS)
    # and a sentence naming the question's size first ("4 bed detached: ..." for "a 4 bed detached", not "3 bed detached")
    asked_sizes = sizes_alone(question)
    # and a price for months the question is not in ("throughout August" for a question naming none) after the rest
    # and a thing named by all its label's words before one whose label says more ("Pine" before "Pine/macrocarpa mix")
    wider = wider_names(question, [s for _, s in ranked])
    # and a list line whose label the question says no word of after one whose label it names ("Backyard Party Pack: 1
    # standard toilet + 1 handwash station ...: $349" after "Freestanding handwash station: $85" for "3 handwash
    # stations", blind set 101, read)
    unnamed = unnamed_labels(question, [s for _, s in ranked]) if money else set()
    # and a line whose label of two words or more the question says all of before one priced per a unit it counts
    # ("Replace fly zip: £19.50" for "replace the fly zip on 2 pairs of trousers", not "school trouser hemming £8.00
    # per pair": simple set 65)
    # (not over a line whose least count the question reaches: "rekey 3 or more cylinders ... $20.00 per cylinder"
    # for "all 4 lock cylinders rekeyed", blind set 66)
    whole = fully_named(question, [s for _, s in ranked]) if money else set()
    if any(least_count_met(s, question) and norm_words(s) & norm_words(" ".join(whole)) for _, s in ranked
           if s not in whole):
        whole = set()
    # and a row of an age band holding every age the question gives ("Monthly membership (juniors 6-15): $70" for
    # "my two kids (8 and 11)"), when one holds them
    ages = [int(a) for a in given_ages(question)]
    ages = ages if any(_holds_ages(s, ages) for _, s in ranked) else []
    # and the lines under a heading naming the question's kind of thing first ("COMMERCIAL & FARM SYSTEMS" for a farm shed)
    headed, heading_words = headed if headed is not None else under_named_heading(question, sentences)
    # (a sentence of a tax's rate alone prices nothing: "All prices are before 5% GST" is no price of "3 hours")
    # (nor does a least charge alone: "Minimum charge per call-out: $60" is no price of "feed my fish 4 times")
    ranked = sorted(ranked, key=lambda pair: (money and names_tax(pair[1]) and not prices_in(pair[1]),
                                              money and minimum_only(pair[1]),
                                              bool(aside & norm_words(pair[1])), outside_band(question, pair[1]),
                                              len(prices_in(pair[1])) == 1 and out_of_season(pair[1], question),
                                              bool(asked_sizes) and not asked_sizes & sizes(pair[1]),
                                              bool(headed) and pair[1] not in headed
                                              and not heading_words & norm_words(pair[1]),
                                              not held_counts(question, pair[1]),
                                              bool(ages) and not _holds_ages(pair[1], ages),
                                              (_deposits_only(pair[1]) and not deposit_named)
                                              or (deposit_asked and not _deposits_only(pair[1])),
                                              names_extra(question, pair[1]),
                                              _reductions_only(pair[1]) and not asks_saving(question),
                                              _named_only_for(question, pair[1]),
                                              not names_asked_length(question, pair[1]),
                                              bool(whole) and pair[1] not in whole,
                                              money and not priced_per_count(question, pair[1]),
                                              pair[1] in wider, pair[1] in unnamed))
    if money and not asks_how_many(question) and (not templates or asks_cost(question)):
        # an amount to pay is read from a sentence holding a price ("€130 per night"), not from one
        # holding none ("The minimum stay is 3 nights, or 7 nights in July and August"; "Standard: up to 2,000 words in
        # 3 working days" for "5,000 words ... at standard speed", blind set 97); with a count asked, a rate written
        # without a sign is one ("Bikes rent for 25 per day" for "a bike for 3 days")
        ranked = [pair for pair in ranked if prices_in(pair[1]) or (templates and _UNSIGNED_RATE.search(pair[1]))] or ranked
    before_of = _minimum_lines(sentences)
    texts = [s for _, s in every]
    # "a 3 hour session": its hours, at a rate per hour ("Resident artists: $180 per hour"; not "3-hour session: $450")
    # (only a question counting nothing else, and no line named by that length: "two 1-hour massages", "a 3 hour
    # party" over "Party room (3 hours): £150", review)
    lengths = named_lengths(question) if not templates and (money or asks_amount(question)) else set()
    digits = with_digits(question)
    counted = ([m for m in NUMBER_RE.finditer(digits) if not names_a_length(digits, m.start())
                and m.group(0) != "1"]  # ("one of your resident artists")
               or _COUNT_WORD.search(question))  # ("two 1-hour massages": with_digits leaves "two" before a number)
    # (a line named by that length only when it names the question's thing too: "Beginners' Modern Calligraphy (3
    # hours, kit included): €68.00" is no "3-hour private lesson", blind set 100, read)
    thing = set(content_words(question)) - _LENGTH_WORDS
    hours = (as_written(next(iter(lengths)) / 60) if len(lengths) == 1 and not counted
             and not any((names_asked_length(question, s) or (_LENGTH_LABEL.search(s) and not _deposits_only(s)))
                         and set(content_words(s)) & thing for _, s in ranked) else None)
    # (or a time spent in minutes at a rate per hour: "probably 45 minutes work" over "$68.00 per hour", practice set 1)
    spent = minutes_spent(question) if hours is None and money else None
    if spent is not None and any(re.search(rf"(?<![\w.]){spent}\s*-?\s*min", t, re.IGNORECASE) for _, t in ranked):
        spent = None  # ("Swedish massage: 30 minutes $45; 60 minutes $80" names its minutes, review)
    hours = as_written(spent / 60) if spent is not None else hours
    if spent is not None:  # (a line of an hourly rate first: not "Waived when labour ... is over $300"; the one the
        # question names most words of, then a standard one: "Standard hourly rate, 1 assembler: $68.00 per hour" over
        # "Two-person team (heavy or tall items): $118.00 per hour" for "a couple of shelves ... 45 minutes work")
        said = stems(question)
        ranked = sorted(ranked, key=lambda pair: (PER_HOUR.search(pair[1]) is None, -len(stems(pair[1]) & said),
                                                  _STANDARD.search(pair[1]) is None))
    for heading, sentence in ranked:  # best first, until one fits (a year counted from a year needs a year)
        operands = operands_of(sentence, question, heading)
        # The question's own numbers name the thing ("the 2022 meet"), they are not its operand.
        operands = [a for a in operands if a not in own] or operands
        hourly = (hours is not None and PER_HOUR.search(sentence) is not None
                  and not names_asked_length(question, sentence))
        # (not by a length the row names a column by: "a single kayak for 2 hours" over "Single kayak: 2 hours $35; ...")
        # (a number said once: "2 single kayaks for 2 hours" counts the kayaks by its other 2)
        columns = {n for n in column_lengths(question, sentence)
                   if len(re.findall(rf"(?<![\w.]){re.escape(n)}(?![\w.])", digits)) == 1}
        used = _by_priced_unit(templates, question, sentence)
        if columns & {n for _, n in templates}:  # (the question's other counts: "3 single kayaks for 2 hours": 3)
            unlengthed = re.sub(rf"(?:\bfor\s+)?(?<![\w.])(?:{'|'.join(map(re.escape, columns))})\s*-?\s*(?:hours?|hrs?|days?|nights?|"
                                rf"weeks?|minutes?|mins?)\b", " ", question, flags=re.IGNORECASE)
            used = named_operations(unlengthed) + [("{a}", None)]
        out = valid_expressions(_expressions(question, [(f"{{a}} * {hours}", hours)] if hourly else used, operands, sentence,
                                  before_of.get((heading, sentence), "")), evaluate)
        if not out:  # the numbers next to the question's words were the question's own
            out = valid_expressions(_expressions(question, used, numbers_in(sentence), sentence), evaluate)
        # (a sentence whose every reading misreads a figure gives way to the next: "Prices exclude VAT at 20%"
        # is no price of "3 mini valets")
        out = plausible(out, question, texts)
        if out:
            return out[:MAX_CANDIDATES]
    return []


# A line of the usual kind of a thing: "Standard hourly rate", "Regular wash".
_STANDARD = re.compile(r"\b(?:standard|regular|normal|basic|usual)\b", re.IGNORECASE)
# A rate written without a currency's sign: "Bikes rent for 25 per day", "0.35 a km".
_UNSIGNED_RATE = re.compile(r"(?<![\w.,])[0-9][0-9,]*(?:\.[0-9]+)?\s*(?:(?:per|a|an|each)\s+|/\s*)[a-z]", re.IGNORECASE)
# The unit a price is per: "$11.00 per box", "€4 each bag", "£2 a head".
_PRICED_UNIT = re.compile(rf"[{CURRENCY_SIGNS}]\s*[0-9][0-9,]*(?:\.[0-9]+)?\s*(?:per|a|an|each)\s+([a-z][\w-]*)", re.IGNORECASE)


def _by_priced_unit(templates: Sequence[tuple[str, str | None]], question: str,
                    sentence: str) -> list[tuple[str, str | None]]:
    """`templates` (named_operations') with those multiplying by a count of the unit `sentence`
    prices per first ("$11.00 per box" for "two floors above ground ... 20 standard boxes": "{a} *
    20" before "{a} * 2", blind set 98, read); in their order otherwise."""
    counts = {c for m in _PRICED_UNIT.finditer(sentence) for c in counts_of(question, m.group(1))}
    if not counts:
        return list(templates)
    return sorted(templates, key=lambda t: t[1] not in counts)  # (stable: a share of it stays before it)


# Words of a length of time, which name no thing.
_LENGTH_WORDS = frozenset({"hour", "hours", "hr", "hrs", "minute", "minutes", "min", "mins", "day", "days", "half", "full",
                           "much", "cost", "price"})
_COUNT_WORD = re.compile(r"\b(?:two|three|four|five|six|seven|eight|nine|ten|couple|both|several)\b", re.IGNORECASE)
# A line labelled by a length ("Party room (3 hours): £150", "2-hour lesson: £76").
_LENGTH_LABEL = re.compile(rf"(?<!to )(?<!under )(?<!over )(?<![\w.])[0-9]+(?:\.[0-9]+)?\s*-?\s*(?:hours?|hrs?|minutes?|mins?)\b[^{CURRENCY_SIGNS}]{{0,20}}[:\-–]\s*[{CURRENCY_SIGNS}]", re.IGNORECASE)


# An age band a price's row is for: "(juniors 6-15)", "Children 3 to 12", "ages 5-11".
_AGE_BAND = re.compile(r"\b(?:juniors?|children|child|kids?|youths?|ages?|aged|teens?|infants?)\s*\(?\s*([0-9]{1,2})\s*(?:-|–|to)\s*"
                       r"([0-9]{1,2})\b", re.IGNORECASE)


def _holds_ages(sentence: str, ages: Sequence[int]) -> bool:
    """Whether a priced `sentence` states an age band (_AGE_BAND) holding every one of `ages`."""
    return bool(ages) and bool(PRICE.search(sentence)) and any(
        all(int(m.group(1)) <= a <= int(m.group(2)) for a in ages) for m in _AGE_BAND.finditer(sentence))


def as_written(value: Fraction) -> str:
    """A number as a calculation writes it: "3", "1.5" (a whole or a finite decimal), else "7/3"."""
    if value.denominator == 1:
        return str(value.numerator)
    decimal = Decimal(value.numerator) / Decimal(value.denominator)
    return f"{value.numerator}/{value.denominator}" if Fraction(str(decimal)) != value else str(decimal)


def valid_expressions(expressions: Sequence[str], evaluate: Callable[[str], Any]) -> list[str]:
    """The expressions `evaluate` accepts, the first of each value only ("6 * 7" and "7 * 6" are
    one choice), but for a difference below zero (the other order is the one asked); at most
    MAX_CANDIDATES."""
    out: list[str] = []
    seen: set[Any] = set()
    for expression in dict.fromkeys(expressions):
        if len(out) == MAX_CANDIDATES:
            break
        try:
            value = evaluate(expression)
        except Exception:
            continue
        q = getattr(value, "q", value)
        if (" - " in expression and q < 0) or q in seen:
            continue
        seen.add(q)
        out.append(expression)
    return out

