"""What a percentage of the documents is laid on (issue 15): "Bank holiday events carry a 20%
surcharge on the package price", "get 15% off the package price" name the price it changes; of a
bill of several things ("520 + 6 * 12": the Silver package and 6 uplighters), only the terms priced by
a line that names that thing ("Silver package: DJ time 4 hours; Price £520.") take it, the rest are
added after it at their own price (blind set 96, read: the surcharge was laid on the uplighters too).

Only words and numbers are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Mapping, Sequence

from backend.agent.numerals import PERCENT_SIGN
from backend.agent.tools.basket import norm_words
from backend.agent.tools.pricing import PRICE, added_terms
from backend.agent.tools.sentences import CAPS_RUN_ON

# The price a percentage names after it: "on the package price", "off the sculpture price", "to the room rate".
_LAID_ON = re.compile(rf"[0-9]\s*{PERCENT_SIGN}[^.;()]{{0,40}}?\b(?:on|off|to)\s+(?:(?:the|your|each|any)\s+"
                      r"((?:[a-z][\w-]*\s+){1,2}?)(?:price|prices|rate|rates|fee|fees|cost|costs)\b(?!\s+(?:of|for)\b)"
                      # "15% off room hire", "a 10% surcharge on boat rental"
                      r"|(?:the\s+)?([a-z][\w-]*\s+)(?:hire|rental)\b"
                      # "+25% on hourly labour" (practice set 7)
                      r"|(?:all\s+|any\s+)?(?:hourly\s+)?(labou?r)\b)", re.IGNORECASE)
# Words naming a whole bill or any price, not one thing of it: "on the total price", "off the normal rate".
_WHOLE = frozenset({"total", "full", "whole", "entire", "final", "overall", "booking", "order", "bill", "invoice", "normal",
                    "standard", "usual", "regular", "list", "original", "base", "basic", "ticket", "hire", "rental",
                    "event", "item", "all", "hourly", "daily", "nightly", "weekly", "monthly", "per", "quoted", "listed"})


def laid_on(sentence: str) -> frozenset[str]:
    """The words (norm_words) of the thing whose price the percentage of `sentence` names ({"package"}
    of "a 20% surcharge on the package price"); empty when it names none or a whole bill's (_WHOLE)."""
    m = _LAID_ON.search(sentence)
    if m is None:
        return frozenset()
    words = frozenset(norm_words(m.group(1) or m.group(2) or m.group(3)))
    return frozenset() if not words or words & norm_words(" ".join(_WHOLE)) else words


def terms_apart(expression: str, on: frozenset[str], sentences: Sequence[str], sections: Mapping[str, str],
                excluded: Sequence[frozenset[str]] = (), question: str = "") -> tuple[str, str] | None:
    """`expression`'s terms added at its top level (pricing.added_terms) in two: those whose price is
    one of a line of `sentences` whose label (the words before its ":") or section heading names
    every word of `on` and no thing of `excluded` (discounts.excluded_from's: "a 15% surcharge on all
    items except delivery" lays none on "Delivery: $40"), and the rest: ("520", "6 * 12") for "520 +
    6 * 12" and {"package"}; when no line names `on` ("on the boat price" over rows of kayaks and
    canoes), the lines not under an extras heading ("EXTRAS", "ADD-ONS") against those that are; a
    price of several lines by the lines whose labels `question` names most ("Silver package: £300"
    and "LED dance floor: £300" for "the Gold package and the dance floor"). None when neither `on`
    nor `excluded` names a thing, or the terms are not all priced by a line, or either part would be
    empty, or a price's lines differ and the question names none of them more."""
    if not on and not excluded:
        return None
    asked = norm_words(question)
    lines: dict[Fraction, list[tuple[int, bool, bool]]] = {}  # (words asked, named, not under an extras heading)
    for sentence in sentences:
        label = norm_words(CAPS_RUN_ON.sub("", sentence.split(":")[0]))  # (not a heading's: "CALL-OUT & LABOUR Call-out fee")
        # (a visit's or a journey's fee is no thing of its section: "Call-out fee, per visit: £45.00" under "CALL-OUT &
        # LABOUR" takes no "+25% on hourly labour", practice set 7)
        words = label | (norm_words(sections.get(sentence, "")) if not label & _VISIT_FEE_WORDS else frozenset())
        for m in PRICE.finditer(sentence):
            value = Fraction(re.search(r"[0-9][0-9,]*(?:\.[0-9]+)?", m.group(0)).group(0).replace(",", ""))
            lines.setdefault(value, []).append((len(label & asked), on <= words and not any(thing <= words for thing in excluded),
                                                _EXTRAS_HEADING.search(sections.get(sentence, "")) is None))
    terms = added_terms(expression)
    values = [[Fraction(x) for x in re.findall(r"[0-9]+(?:\.[0-9]+)?", term) if Fraction(x) in lines] for term in terms]
    if not all(values):
        return None
    named: dict[Fraction, bool] = {}
    main: dict[Fraction, bool] = {}
    for value in {v for held in values for v in held}:
        most = max(n for n, _, _ in lines[value])
        found = [f for f in lines[value] if f[0] == most]
        if len({f[1:] for f in found}) > 1:
            return None  # (one price of lines the question tells no apart)
        named[value], main[value] = found[0][1], found[0][2]
    for priced in (named, main) if on else (named,):
        kept = [term for term, held in zip(terms, values) if any(priced[v] for v in held)]
        apart = [term for term in terms if term not in kept]
        if kept and apart:
            return " + ".join(kept), " + ".join(apart)
        if kept:
            return None
    return None


# Words of the label of a fee for a visit or a journey.
_VISIT_FEE_WORDS = frozenset({"call", "callout", "visit", "travel", "mileage", "delivery", "trip"})


# A heading over extras, no thing a percentage on a named price is laid on: "EXTRAS", "Add-ons", "OPTIONAL EXTRAS".
_EXTRAS_HEADING = re.compile(r"\b(?:extras|add[\s-]?ons|accessories|optional\s+extras|upgrades)\b", re.IGNORECASE)
