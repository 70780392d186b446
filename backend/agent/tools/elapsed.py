"""Rows priced by the time since a thing was last done (issue 15): "Within 12 months: Upright $165;
Grand $195", "1 to 3 years ago: Upright $205; Grand $240", "Over 3 years (pitch raise + tuning):
Upright $260; Grand $300", asked "a grand that hasn't been tuned in like 2 years" -> the $240 (blind
set 80, read after its runs). A time gone by is read from the question ("8 months ago", "hasn't
been tuned in 4 years", "2 yrs ago", "last year"); a row's band opens its line ("Within 12 months",
"1 to 3 years ago", "Over 3 years", "5+ years"). The time is no count of anything (backend.agent.
tools.plausible drops a product with it). Only numbers and words are read from the passages
(untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Sequence

from backend.agent.numerals import with_digits
from backend.agent.tools.basket import counts_of
from backend.agent.tools.pricing import PRICE, named_prices

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
_PERIOD = r"(years?|yrs?|months?|mos?)"
# Months in each period as written.
_MONTHS = {"y": 12, "m": 1}
# The work a time since is of: "tuned", "serviced", "swept" (not "we moved house last year", "I stored with you
# last year", "we came last year": review).
_DONE = (r"(?:tuned|serviced|service|cleaned|swept|checked|inspected|maintained|treated|sealed|pumped|emptied|"
         r"groomed|repaired|painted|done|descaled|flushed|tested|calibrated|regulated)")
# A time gone by, as a question writes it: "last tuned about 8 months ago", "serviced 2 yrs ago", "hasn't been tuned
# in like 2 years", "not cleaned for 6 years", "tuned last year".
_AGO = re.compile(rf"\b{_DONE}\b(?:\s+\w+){{0,2}}?\s+(?:about\s+|around\s+|roughly\s+|like\s+)?{_NUMBER}\s*-?\s*"
                  rf"{_PERIOD}\s+ago\b", re.IGNORECASE)
_NOT_SINCE = re.compile(rf"(?:\b(?:has|have|had|is|was|were)n['’]?t|\bnot|\bnever)\b(?:\s+been)?\s+{_DONE}\b\s+(?:in|for)\s+"
                        rf"(?:the\s+last\s+|like\s+|about\s+|over\s+|around\s+)?{_NUMBER}\s*-?\s*{_PERIOD}\b", re.IGNORECASE)
_LAST_YEAR = re.compile(rf"\b{_DONE}\b(?:\s+\w+)?\s+(?:within\s+)?(?:the\s+)?(?:last|past)\s+year\b", re.IGNORECASE)
# A row's band of time opening its line: "Within 12 months", "1 to 3 years ago", "Over 3 years", "5+ years",
# "Less than 2 years".
_ROW_WITHIN = re.compile(rf"^\W*(?:within|up\s+to|under|less\s+than)\s+(?:the\s+last\s+)?{_NUMBER}\s*{_PERIOD}\b", re.IGNORECASE)
_ROW_BETWEEN = re.compile(rf"^\W*{_NUMBER}\s*(?:to|-|–)\s*{_NUMBER}\s*{_PERIOD}\b", re.IGNORECASE)
_ROW_OVER = re.compile(rf"^\W*(?:over|more\s+than|above)\s+{_NUMBER}\s*{_PERIOD}\b|^\W*{_NUMBER}\s*\+\s*{_PERIOD}\b",
                       re.IGNORECASE)


def _months(number: str, period: str) -> Fraction:
    return Fraction(number) * _MONTHS[period.lower()[0]]


def months_since(question: str) -> Fraction | None:
    """The time gone by that `question` gives, in months ("last tuned about 8 months ago" -> 8;
    "hasn't been tuned in 4 years" -> 48; "tuned last year" -> 12); None when it gives none."""
    text = with_digits(question)
    m = _AGO.search(text) or _NOT_SINCE.search(text)
    if m is not None:
        return _months(m.group(1), m.group(2))
    return Fraction(12) if _LAST_YEAR.search(text) else None


def _row_holds(sentence: str, months: Fraction) -> bool | None:
    """Whether the band of time opening `sentence` holds `months`; None when none opens it."""
    m = _ROW_WITHIN.match(sentence)
    if m is not None:
        return months <= _months(m.group(1), m.group(2))
    m = _ROW_BETWEEN.match(sentence)
    if m is not None:
        return _months(m.group(1), m.group(3)) <= months <= _months(m.group(2), m.group(3))
    m = _ROW_OVER.match(sentence)
    if m is not None:
        number, period = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        return months > _months(number, period) or (m.group(3) is not None and months == _months(number, period))
    return None


def elapsed_row(question: str, sentences: Sequence[str]) -> str | None:
    """The price of the row whose band of time holds the time gone by that `question` gives
    (months_since), the one its words name most (pricing.named_prices: "Grand $240" for "a
    grand"), times the question's count of what that price's label names when more than one ("2
    uprights" -> "2 * 165"); None when the question gives no such time or no row holds it, or two
    rows do (but for a time on both rows' bound: the row "within" it)."""
    months = months_since(question)
    if months is None:
        return None
    held = [s for s in sentences if _row_holds(s, months) and PRICE.search(s)]
    if len(held) > 1:  # on a bound of two rows ("tuned last year": "Within 12 months" and "1 to 3 years ago"): within
        held = [s for s in held if _ROW_WITHIN.match(s)]
    if len(held) != 1:
        return None
    named = named_prices(question, held[0])
    if not named:
        return None
    price = max(named, key=lambda p: named[p])  # (equals: the first, in the sentence's order)
    label = _label_of(held[0], price)
    count = next((c for word in label for c in counts_of(question, word) if Fraction(c) > 1), None)
    return f"{count} * {price}" if count is not None else price


def _label_of(sentence: str, price: str) -> list[str]:
    """The words between the price before `price` in `sentence` (or the row's band) and it:
    "Upright" of "Within 12 months: Upright $165; Grand $195"."""
    found = list(PRICE.finditer(sentence))
    for i, m in enumerate(found):
        if next(g for g in m.groups() if g).replace(",", "") == price:
            start = found[i - 1].end() if i else sentence.find(":") + 1
            return re.findall(r"[a-z]{3,}", sentence[start:m.start()], re.IGNORECASE)
    return []
