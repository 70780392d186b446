"""Multi-buy offers (issue 15): "Universal needle 5-packs: buy 3, get the 4th free", "buy 2 get 1
free", "buy one get one free", "3 for the price of 2". Of a count of the thing the offer names,
every full group (3 + 1, 2 + 1, 1 + 1, 3) has its free ones taken off: 8 packs under "buy 3, get
the 4th free" are (8 - floor(8 / 4) * 1) * 4.50, the price read from the sentence that prices the
thing. Only numbers and words are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from typing import Sequence

from backend.agent.numerals import CURRENCY_SIGNS, NUMBER_RE, SIGNED_PRICE, with_digits
from backend.agent.tools.conditions import applies, named_days
from backend.agent.tools.pricing import PRICE
from backend.agent.tools.sentences import CAPS_RUN_ON, stems

_COUNT = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
_ORDINAL = r"(\d+)(?:st|nd|rd|th)|(second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth)"
# "buy 3, get the 4th free", "buy 2 get 1 free", "buy one, get one free", "3 for the price of 2".
_BUY_GET = re.compile(rf"\bbuy\s+{_COUNT}\s*,?\s*(?:and\s+)?get\s+(?:the\s+(?:{_ORDINAL})|{_COUNT}|an?(?:other)?)\s+"
                      rf"(?:[a-z-]+\s+){{0,2}}?(?:free|half[\s-]price)\b", re.IGNORECASE)
_FOR_PRICE_OF = re.compile(rf"\b{_COUNT}\s+for\s+the\s+price\s+of\s+{_COUNT}\b", re.IGNORECASE)
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
          "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
          "tenth": 10, "eleventh": 11, "twelfth": 12}
# Words of an offer's sentence that name no thing.
_OFFER_WORDS = stems("buy get free deal offer offers price half each the a an and for of")


def _number(word: str | None) -> int | None:
    if word is None:
        return None
    return int(word) if word.isdigit() else _WORDS.get(word.lower())


def _offer(sentence: str) -> tuple[int, int, bool, str] | None:
    """(group, free in it, half price rather than free, the words before the offer) of a multi-buy
    offer in `sentence`; None when it holds none."""
    m = _BUY_GET.search(sentence)
    if m is not None:
        bought = _number(m.group(1))
        nth = _number(m.group(2)) or _number(m.group(3))
        more = _number(m.group(4)) or 1
        if not bought:
            return None
        group, free = (nth, nth - bought) if nth else (bought + more, more)
        if group <= bought or free <= 0:
            return None
        return group, free, "half" in m.group(0).lower(), sentence[:m.start()]
    m = _FOR_PRICE_OF.search(sentence)
    if m is not None:
        group, paid = _number(m.group(1)), _number(m.group(2))
        if group and paid and group > paid:
            return group, group - paid, False, sentence[:m.start()]
    return None


# Words of an offer's days and times, and its verbs: no thing it names.
_WHEN_WORDS = stems("after before from until on at in every weekday weekdays weekend weekends monday mondays tuesday tuesdays "
                    "wednesday wednesdays thursday thursdays friday fridays saturday saturdays sunday sundays am pm noon "
                    "morning mornings evening evenings night nights only are is now")
# A price for a group of things: "2-hour passes are 2 for $20.00", "3 for £10".
_GROUP_PRICE = re.compile(rf"\b{_COUNT}\s+for\s+{SIGNED_PRICE}", re.IGNORECASE)


def _group_priced(expression: str, question: str, sentences: Sequence[str]) -> str | None:
    """`expression` with a term "price * count" of a thing a group price names ("After 5pm on Tuesdays,
    2-hour passes are 2 for $20.00" over "2-hour pass: Mon-Thu $14.00") charged by the group, the rest at
    its price: "14.00 * 6" -> "(floor(6 / 2) * 20.00 + (6 - floor(6 / 2) * 2) * 14.00)", when the offer's
    days and times hold for the question (blind set 104, read); None otherwise."""
    for sentence in sentences:
        m = _GROUP_PRICE.search(sentence)
        group = _number(m.group(1)) if m else None
        if not group or group < 2 or applies(sentence, question) is False:
            continue
        days = named_days(sentence)
        if days and not days & (named_days(question) or frozenset()):
            continue
        named = stems(re.sub(r"[0-9]+", " ", CAPS_RUN_ON.sub("", sentence[:m.start()]))) - _OFFER_WORDS
        # (the question names its thing, whatever the days and times: "Child day passes are 2 for $10.00" is no price of
        # "6 adult day passes", review)
        if not (named - _WHEN_WORDS) <= stems(question):
            continue
        paid = next(g for g in m.groups()[1:] if g).replace(",", "")
        for term in re.finditer(r"(?<![\w.(])([0-9]+(?:\.[0-9]+)?) \* ([0-9]+)(?![\w.])", expression):
            price, count = term.group(1), int(term.group(2))
            rows = [s for s in sentences if s != sentence and named & stems(s) and re.search(
                rf"[{CURRENCY_SIGNS}]\s*{re.escape(price)}(?![0-9])", s)]
            if count >= group and rows:
                whole = f"floor({count} / {group})"
                return (f"{expression[:term.start()]}({whole} * {paid} + ({count} - {whole} * {group}) * {price})"
                        f"{expression[term.end():]}")
    return None


def with_multibuy(expression: str, question: str, sentences: Sequence[str]) -> str | None:
    """`expression` with its term of the thing a multi-buy offer names (multibuy_expression) under
    that offer: "4.50 * 8 + 24.00" -> "(8 - floor(8 / 4) * 1) * 4.50 + 24.00"; the offer's cost alone
    when `expression` holds no term of its price; a group price's (_group_priced); None when no offer
    applies."""
    offered = multibuy_expression(question, sentences)
    if offered is None:
        return _group_priced(expression, question, sentences) if expression else None
    count, price = re.fullmatch(r"\((\d+) - .*\) \* (.+)", offered).groups()
    term = re.compile(rf"(?<![\w.]){re.escape(price)} \* {count}(?![\w.])|(?<![\w.]){count} \* {re.escape(price)}(?![\w.])")
    if term.search(expression):
        return term.sub(offered, expression, count=1)
    return offered


def multibuy_expression(question: str, sentences: Sequence[str]) -> str | None:
    """The cost of the question's count of a thing under a multi-buy offer of `sentences` (see the
    module docstring): "(8 - floor(8 / 4) * 1) * 4.50"; None when no offer names a thing the question
    counts at least one full group of, or no other sentence prices it with one price."""
    asked = with_digits(question)
    for sentence in sentences:
        offer = _offer(sentence)
        if offer is None:
            continue
        group, free, half, _ = offer
        named = stems(re.sub(r"[0-9]+", " ", sentence)) - _OFFER_WORDS  # ("Buy 10 lessons, get 2 free": lessons)
        if not named:
            continue
        count = None
        for m in NUMBER_RE.finditer(asked):
            after = asked[m.end():].split()[:5]
            if stems(" ".join(after)) & named and m.group(1).isdigit():
                count = int(m.group(1))
                break
        if count is None or count < group:
            continue
        days = named_days(sentence)
        if days and not days & (named_days(question) or frozenset()):
            continue  # "Tuesdays only: 2 for the price of 1", asked of a Friday (review)
        words = stems(question)
        priced = [((len(stems(s) & named & words), len(stems(s) & words)), PRICE.findall(s), s)
                  for s in sentences if s != sentence]
        # (the one the question names: "3 adult t-shirts" over "Kids £8" and "Adult £12", review)
        priced = [(shared, s) for shared, prices, s in priced if shared[0] and len(prices) == 1]
        if not priced:
            continue
        best = max(priced, key=lambda pair: pair[0])[1]
        price = next(g for g in PRICE.search(best).groups() if g).replace(",", "")
        off = f"floor({count} / {group}) * {free}" + (" / 2" if half else "")
        return f"({count} - {off}) * {price}"
    return None
