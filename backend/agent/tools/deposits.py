"""Deposits (issue 15): the share of the bill a deposit is, when the question asks it ("A 25%
deposit is taken at booking"), and what is left to pay when the question says it paid the deposit
("I already paid the deposit. How much do I still owe on the day?" over "A witnessed cremation needs
a £50 deposit when booked, which is deducted from the final bill": the bill less 50). Only numbers
and words are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Sequence

from backend.agent.numerals import SIGNED_PRICE
from backend.agent.tools.basket import counts_of, is_deposit
from backend.agent.tools.pricing import PRICE
from backend.agent.tools.refunds import asks_refund

# The deposit as the amount asked: "how much is the deposit for an e-bike", "what's the deposit?".
ASKS_DEPOSIT = re.compile(r"\b(?:what(?:'s|s|\s+is)|how\s+much\s+(?:is|are))\s+(?:the\s+|a\s+)?(?:[a-z-]+\s+)?deposits?\b"
                          r"|\bhow\s+much\s+(?:of\s+a\s+)?deposit\b", re.IGNORECASE)  # ("how much deposit do I pay")
# A deposit that is a share of the bill: "A 25% deposit is taken at booking", "a deposit of 30%".
_PERCENT_DEPOSIT = re.compile(r"(?<![\w.])([0-9]{1,2}(?:\.[0-9]+)?)\s*%\s+(?:non[\s-]?refundable\s+|booking\s+)?deposit\b"
                              r"|\bdeposit\s+of\s+([0-9]{1,2}(?:\.[0-9]+)?)\s*%", re.IGNORECASE)


def percentage_deposit(question: str, sentences: Sequence[str]) -> str | None:
    """The percentage (as written) of the bill a deposit the question asks is, when the passages
    take a share of it ("A 25% deposit is taken at booking") and price no deposit of their own."""
    if ASKS_DEPOSIT.search(question) is None or asks_refund(question) or any(
            is_deposit(s, prices, i) for s in sentences for prices in [list(PRICE.finditer(s))] for i in range(len(prices))):
        return None  # ("plus a £50 deposit per bike": the documents price it)
    found = (_PERCENT_DEPOSIT.search(s) for s in sentences)
    return next((m.group(1) or m.group(2) for m in found if m is not None), None)


# A deposit the question says it paid, and the rest of the bill asked: "I already paid the deposit. How much do I
# still owe on the day?", "After the drop-off deposits, how much will I still owe" (blind sets 67, 69, 72, 77).
PAID_DEPOSIT = re.compile(r"\b(?:paid|put\s+down|left)\s+(?:the|a|my|our|your)\s+(?:[a-z-]+\s+){0,2}?deposits?\b"
                          r"|\bdeposits?\s+(?:is|was|has\s+been|have\s+been)\s+(?:already\s+)?paid\b"
                          r"|\bafter\s+(?:the|my|our)\s+(?:[a-z-]+\s+){0,2}?deposits?\b", re.IGNORECASE)
# The clause saying so, with its subject and "already": "and I've already paid the deposit", "I paid the deposit already".
_PAID_CLAUSE = re.compile(rf"(?:,?\s*\b(?:and|but)\s+)?(?:\b(?:i|we)(?:'ve|\s+have)?\s+)?(?:already\s+)?(?:{PAID_DEPOSIT.pattern})"
                          r"(?:\s+already)?", re.IGNORECASE)
_ASKS_REST = re.compile(r"\b(?:owe|left\s+to\s+pay|balance|the\s+rest|remainder|remaining|on\s+the\s+day|"
                        r"still\s+(?:have\s+to\s+|need\s+to\s+)?pay)\b", re.IGNORECASE)
# A deposit's amount: "a $50 non-refundable deposit", "a £50 deposit per machine", "Deposit: £30".
DEPOSIT_PRICE = re.compile(rf"{SIGNED_PRICE}\s*(?:[a-z-]+\s+){{0,2}}?deposits?\b(?:\s+per\s+([a-z]+))?"
                           rf"|\bdeposits?\s*(?:of|:|is|=)\s*{SIGNED_PRICE}(?:\s+per\s+([a-z]+))?", re.IGNORECASE)


# A deposit held and given back, no part of the bill: "A £50 refundable security deposit ... returned after the castle
# is collected" (not "a $50 non-refundable deposit ..., taken off the final bill"; review).
_HELD = re.compile(r"(?<!non-)(?<!non )\brefundable\b|\bsecurity\b|\bdamage\b|\breturned\b|\bgiven\s+back\b|\bpaid\s+back\b"
                   r"|\brefunded\s+(?:when|after|once|on)\b", re.IGNORECASE)


def balance_due(question: str, sentences: Sequence[str]) -> tuple[str, str] | None:
    """("-", the deposit's amount, times the question's count of what it is per: "50 * 2") or ("%",
    the deposit's percentage) for a question saying the deposit is paid and asking the rest, when
    the passages take one deposit (one amount, or one share of the bill); None otherwise (several
    deposits, a refund asked)."""
    if PAID_DEPOSIT.search(question) is None or _ASKS_REST.search(question) is None or asks_refund(question):
        return None
    # (a deposit held and given back is no part of the bill, nor a share's alternative)
    found = {(m.group(1) or m.group(3)).replace(",", ""): m.group(2) or m.group(4)
             for s in sentences if not _HELD.search(s) for m in DEPOSIT_PRICE.finditer(s)}
    if len({Fraction(a) for a in found}) == 1:
        amount, per = next(iter(found.items()))
        count = next(iter(counts_of(question, per)), None) if per else None
        return "-", amount if count is None else f"{amount} * {count}"
    shares = {m.group(1) or m.group(2) for s in sentences for m in _PERCENT_DEPOSIT.finditer(s)}
    return ("%", next(iter(shares))) if not found and len(shares) == 1 else None


def without_paid_deposit(question: str) -> str:
    """`question` without the clause saying the deposit is paid ("I booked a witnessed cremation and
    already paid the deposit." -> "I booked a witnessed cremation."): the bill it asks the rest of."""
    return _PAID_CLAUSE.sub("", question)
