"""A trade's charge for coming out, added to a bill the question asks of a visit (issue 15).

A mobile trade (a locksmith, a plumber, an appliance engineer) prices a job as its labour plus a
charge for every visit: "SERVICE CALL (TRIP CHARGE) Every mobile visit within our service area:
$45.00", "Call-out fee: £60", "Home visits carry a £25 travel fee". A question asking the price of
a job done where the customer is ("locked out of my house", "can you come Wednesday", "at my
flat") owes it; one done in the shop ("if I just pick it up at the shop", "I'll drop it in") does
not. Blind set 66: six of twelve bills were labour plus the service call, and the program stated
the labour alone. Only the amount and words are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Sequence

from backend.agent.tools.pricing import PRICE

# A charge for every visit: named ("service call", "call-out fee", "trip charge", "travel fee", "visit
# fee") or said of every visit ("Every mobile visit ...: $45.00"); not a surcharge, a minimum, a price
# per mile, a percentage, nor a visit that is free.
_VISIT_CHARGE = re.compile(r"\b(?:service[\s-]+call|call[\s-]?out(?:\s+(?:fee|charge))?|trip\s+(?:charge|fee)|"
                           r"travel\s+(?:fee|charge)|visit(?:ing)?\s+(?:fee|charge)|attendance\s+(?:fee|charge))\b"
                           r"|\b(?:every|each|any)\s+(?:mobile\s+|home\s+|site\s+|on[\s-]?site\s+)?(?:visit|call[\s-]?out)\b",
                           re.IGNORECASE)
_NOT_A_VISIT_CHARGE = re.compile(r"%|\bsurcharges?\b|\bminimum\b|\bper\s+(?:mile|km|kilomet\w*|hour|hr)\b|/\s*(?:mile|km|hr)\b"
                                 r"|\bfree\b|\bno\s+(?:charge|fee)\b|\bwaived\b|\bdiscount|\boff\b|\+\s*$",
                                 re.IGNORECASE)
# A job asked of a visit: the trade comes to the customer.
_ASKS_VISIT = re.compile(r"\b(?:can|could|would|will)\s+(?:you|someone|somebody)\s+(?:come|pop|get\s+out|send)\b"
                         r"|\b(?:come|coming)\s+(?:out|over|round|around|to\s+(?:me|us|my|our))\b"
                         r"|\bcall[\s-]?out\b|\bhome\s+visit\b|\bvisit\b|\blocked\s+(?:myself\s+|ourselves\s+)?out\b"
                         r"|\bat\s+(?:my|our|a|the)\s+(?:house|home|flat|apartment|place|office|property|rental|shop\s+unit)\b"
                         r"|\bmiles?\s+(?:from|away)\b|\bkm\s+(?:from|away)\b|\bwhen\s+you(?:'d|\s+would)?\s+come\b",
                         re.IGNORECASE)
# A job done in the shop: no visit.
_IN_SHOP = re.compile(r"\b(?:in|at)\s+(?:the|your)\s+(?:shop|store|counter|branch|workshop)\b|\bpick(?:ed|ing)?\s+(?:it\s+|them\s+)?up\b"
                      r"|\bdrop(?:ped|ping)?\s+(?:it\s+|them\s+)?(?:off|in|round)\b|\bbring(?:ing)?\s+(?:it\s+|them\s+)?in\b"
                      r"|\bcollect(?:ion)?\b|\bin[\s-]store\b|\bwhile\s+I\s+wait\b", re.IGNORECASE)


def visit_charge(question: str, sentences: Sequence[str]) -> str | None:
    """The amount, as written ("45.00"), of the one charge `sentences` lay on every visit
    (_VISIT_CHARGE, one price in the sentence, _NOT_A_VISIT_CHARGE none of it), when `question`
    asks a job done where the customer is (_ASKS_VISIT) and not in the shop (_IN_SHOP); None
    otherwise, or when the sentences name two different such charges."""
    if _ASKS_VISIT.search(question) is None or _IN_SHOP.search(question) is not None:
        return None
    found: dict[Fraction, str] = {}
    for sentence in sentences:
        prices = list(PRICE.finditer(sentence))
        if len(prices) != 1 or _VISIT_CHARGE.search(sentence) is None:
            continue
        if _NOT_A_VISIT_CHARGE.search(sentence[prices[0].end():prices[0].end() + 40]) or _NOT_A_VISIT_CHARGE.search(
                sentence[:prices[0].start()]):
            continue
        amount = next(g for g in prices[0].groups() if g).replace(",", "")
        found.setdefault(Fraction(amount), amount)
    return next(iter(found.values())) if len(found) == 1 else None
