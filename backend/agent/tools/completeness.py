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
from typing import Collection, Sequence

from backend.agent.numerals import NUMBER_RE, PERCENT_SIGN, expression_figures, with_digits
from backend.agent.operations import asks_amount, asks_how_many
from backend.agent.tools.allowances import FROM_BUSINESS
from backend.agent.tools.pricing import PRICE
from backend.agent.tools.taxes import asked_rate


def stated_amounts(question: str) -> set[Fraction]:
    """The amounts of money `question` writes as prices ("my invoice is £480" -> {480})."""
    return {Fraction(next(g for g in m.groups() if g).replace(",", "")) for m in PRICE.finditer(question)}


# A number followed by a percent sign: a share, no price.
_PERCENTAGE = re.compile(rf"\s*{PERCENT_SIGN}", re.IGNORECASE)


# A question asking the charge for travel itself: "what's the delivery charge?", "how much will delivery be", "the
# extra charge for you to come out to me".
ASKS_TRAVEL = re.compile(r"\b(?:delivery|travel|mileage|call[\s-]?out)\s+(?:charge|fee|cost|price|be)\b"
                         r"|\bhow\s+much\s+(?:is|will|would)\s+(?:the\s+|your\s+)?(?:delivery|travel|mileage)\b"
                         r"|\b(?:charge|fee|cost)\s+(?:for|of)\s+(?:the\s+)?(?:delivery|travel|mileage)\b"
                         # "what's the extra charge for you to come out to me?" (blind set 86, read after its runs)
                         r"|\b(?:charge|fee|cost)\s+(?:for\s+(?:you|someone|a\s+tech\w*)\s+)?to\s+(?:come|travel|drive|get)\s+"
                         r"(?:out|here|over|to)\b", re.IGNORECASE)

# A unit of distance in a passage.
_DISTANCE_UNIT = re.compile(r"\b(?:miles?|mi|kms?|kilomet(?:re|er)s?)\b", re.IGNORECASE)
# A percentage laid on a bill in a calculation: "(100 - 5) / 100", "(100 + 20) / 100", "* 25 / 100".
_SHARE = re.compile(r"\(\s*100\s*[-+]\s*[0-9.]+\s*\)\s*/\s*100(?![0-9.])|\*\s*[0-9.]+\s*/\s*100(?![0-9.])")


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
