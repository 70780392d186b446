"""A plan's visits in a period and its least term (issue 15): "Weekly plan: 4 visits per month, 15%
off the regular visit price", asked "the monthly cost for the weekly plan" -> the visit's price
times 4; "Plans ... need a minimum commitment of 3 months", asked "the total I'd pay over the
minimum commitment" -> that times 3 again. A maintenance trade (an aquarium service, a cleaner,
a gardener) prices a visit and sells plans of so many visits a month; blind set 67. Only numbers
and words are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Sequence

from backend.agent.numerals import CURRENCY_SIGNS, NUMBER_RE, with_digits
from backend.agent.tools.sentences import content_words
from backend.agent.tools.visits import visits_counted

# "4 visits per month", "2 cleans a month", "one session each week"
_VISITS_PER = re.compile(r"(?<![\w.])([0-9]+)\s+(?:[a-z]+\s+)?(?:visits?|cleans?|sessions?|walks?|lessons?|services?|"
                         r"treatments?|cuts?|mows?|calls?)\s+(?:per|a|an|each|every)\s+(month|week)\b", re.IGNORECASE)
# The question asks the plan's bill for a period: "monthly cost", "per month", "a month", "my next monthly bill".
_ASKS_PERIOD = {"month": re.compile(r"\bmonthly\b|\b(?:per|a|each|every)\s+month\b|\bmonth'?s\b", re.IGNORECASE),
                "week": re.compile(r"\bweekly\s+(?:cost|bill|price|total|charge|payment)\b|\b(?:per|a|each|every)\s+week\b",
                                   re.IGNORECASE)}
# A plan's least term: "a minimum commitment of 3 months", "minimum term: 6 months", "a 12-month minimum contract".
_TERM = re.compile(r"\bminimum\s+(?:commitment|term|contract|period)\s*(?:of|:|is)?\s*([0-9]+)\s*-?\s*(months?|weeks?)\b"
                   r"|(?<![\w.])([0-9]+)\s*-?\s*(months?|weeks?)\s+minimum\s+(?:commitment|term|contract)\b", re.IGNORECASE)
_ASKS_TERM = re.compile(r"\b(?:minimum|whole|full|entire)\s+(?:commitment|term|contract|period)\b|\bover\s+the\s+minimum\b",
                        re.IGNORECASE)


def plan_visits(question: str, sentence: str) -> tuple[str, str] | None:
    """(the visits `sentence`'s plan gives in a period, as written; that period: "month") when
    `question` asks the plan's bill for that period or its least term; None otherwise."""
    m = _VISITS_PER.search(sentence)
    if m is None:
        return None
    period = m.group(2).lower()
    if _ASKS_PERIOD[period].search(question) is None and _ASKS_TERM.search(question) is None:
        return None
    return m.group(1), period


def least_term(question: str, sentences: Sequence[str], period: str) -> str | None:
    """The periods (`period`: "month") of the least term `sentences` give a plan ("a minimum
    commitment of 3 months": "3"), when `question` asks the bill over it; None otherwise."""
    if _ASKS_TERM.search(question) is None:
        return None
    for sentence in sentences:
        for m in _TERM.finditer(sentence):
            count, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            if unit.lower().rstrip("s") == period:
                return count
    return None


def over_plan(expression: str, question: str, sentence: str, sentences: Sequence[str]) -> str | None:
    """`expression` (a visit's price, the plan's discount taken off) times the visits of the plan
    `sentence` gives in the period the question asks, and times its least term when asked
    ("(115) * (100 - 15) / 100" -> "(115) * (100 - 15) / 100 * 4"); None when the question asks
    no period of the plan."""
    visits = plan_visits(question, sentence)
    if visits is None or visits_counted(question) is not None:
        return None  # ("what would 2 visits a month cost on the fortnightly plan?": counted already)
    term = least_term(question, sentences, visits[1])
    return f"{expression} * {visits[0]}" + (f" * {term}" if term is not None else "")


# A year as the length of a monthly service: "a year of monthly emptying", "for a full year", "a whole year's" (not "I've
# been a member for a year", review).
_A_YEAR = re.compile(r"\b(?:(for\s+|over\s+)(?:a|one|the)\s+(?:full|whole|entire)\s+year(?![\w-])"
                     r"|(?:a|one|1|the\s+(?=full|whole|entire))\s*(?:full\s+|whole\s+|entire\s+)?year(\s+of\b|'s))", re.IGNORECASE)


def _as_months(year: re.Match) -> str:
    after = {"'s": "'"}.get(year.group(2) or "", year.group(2) or "")
    return f"{year.group(1) or ''}12 months{after}"


def year_in_months(question: str, sentences: Sequence[str]) -> str:
    """`question` with a year (_A_YEAR) written as 12 months when the `sentences` price by the month
    and none by the year: "a year of monthly emptying of one standard console" over "Standard (65
    gal): Monthly service $36.00 / month" -> "12 months of monthly emptying ..." (blind set 98,
    read); unchanged otherwise."""
    if pays_year_upfront(question):
        return question  # (a year paid upfront is the documents' own deal: upfront_months)
    # (a line priced by the month that the question names by a word: not "Pet insurance add-on: £8 per month" for "a year
    # of daycare" priced by the week, review)
    asked = set(content_words(question)) - _PERIOD_WORDS
    if any(_PER_MONTH.search(s) and set(content_words(s)) & asked for s in sentences) and not any(
            _PER_YEAR.search(s) for s in sentences):
        return _A_YEAR.sub(_as_months, question)
    return question


_PER_MONTH = re.compile(rf"[{CURRENCY_SIGNS}]\s*[0-9][0-9.,]*\s*(?:/\s*|per\s+|a\s+|each\s+)(?:calendar\s+)?month\b", re.IGNORECASE)
# A price by the year: "£400 per year", "$400 for the year", "£90 for 12 months", "Annual membership: £400", "£400 annually".
_PER_YEAR = re.compile(rf"[{CURRENCY_SIGNS}]\s*[0-9][0-9.,]*\s*(?:/\s*|per\s+|a\s+|each\s+|for\s+(?:the|a|one)\s+(?:full\s+|whole\s+)?)"
                       rf"(?:year|annum|yr)\b|[{CURRENCY_SIGNS}]\s*[0-9][0-9.,]*\s*(?:for\s+12\s+months|annually|yearly)\b|"
                       # (not a yearly thing of its own: "CRO annual return (B1) filing: €110", blind set 106, read)
                       rf"\b(?:annual|yearly)\b(?!\s+(?:returns?|reports?|accounts?|filings?|statements?|audits?)\b)"
                       rf"[^.]{{0,40}}[{CURRENCY_SIGNS}]\s*[0-9]", re.IGNORECASE)
_PERIOD_WORDS = frozenset({"month", "months", "monthly", "year", "years", "yearly", "annual", "per", "cost", "price",
                           "much", "total", "pay"})


# A year paid upfront as so many months: "Pay the full year upfront and you pay for 11 months instead of 12", "Annual
# prepay: pay for 10 months and get 12", "pay 12 months of membership upfront and get 2 months free".
_UPFRONT = re.compile(r"\b(?:upfront|up\s+front|pre-?pay\w*|in\s+advance)\b", re.IGNORECASE)
_MONTHS_PAID = re.compile(r"\bpay\s+(?:for\s+|only\s+)*([0-9]+)\s+months\s+(?:instead\s+of|and\s+get)\s+12\b", re.IGNORECASE)
_MONTHS_FREE = re.compile(r"\b(?:12\s+months|(?:a|the)\s+(?:full\s+|whole\s+)?year)\b[^.]{0,60}?\b(?:get|with|and)\s+"
                          r"([0-9]+|one|two|three)\s+months?\s+free\b", re.IGNORECASE)
_FREE_COUNT = {"one": 1, "two": 2, "three": 3}
# A question paying a year upfront: "we'll pay the whole year upfront", "a full year paid upfront", "prepay a year".
_PAYS_YEAR_UPFRONT = re.compile(r"\b(?:pay|paying|paid)\s+(?:for\s+)?(?:the\s+|a\s+)?(?:full\s+|whole\s+|entire\s+)?year\s+"
                                r"(?:upfront|up\s+front|in\s+advance)\b"
                                r"|\b(?:a|the|one)\s+(?:full\s+|whole\s+|entire\s+)?year\s+(?:paid\s+)?(?:upfront|up\s+front|in\s+advance)\b"
                                r"|\bpre-?pay(?:ing)?\s+(?:for\s+)?(?:a|the|one)\s+(?:full\s+|whole\s+)?year\b"
                                r"|\b(?:pay|paying|pre-?pay(?:ing)?)\s+(?:annually|yearly)\b"
                                # ("If I pay a year of the Plus package up front", blind set 106, read: what it pays for kept)
                                r"|\b(?:pay|paying|paid)\s+(?:for\s+)?(?:a|the|one)\s+(?:full\s+|whole\s+)?year\s+of\b"
                                r"(?=(?:\s+[\w'-]+){1,5}?\s+(?:upfront|up\s+front|in\s+advance)\b)", re.IGNORECASE)


def pays_year_upfront(question: str) -> bool:
    """Whether `question` pays a year upfront (_PAYS_YEAR_UPFRONT)."""
    return _PAYS_YEAR_UPFRONT.search(question) is not None


# A price by the month: "$42.00 / month", "£240 per month", "Monthly membership $44.99", "Monthly membership (adults): $95".
_MONTHLY_PRICE = re.compile(rf"[{CURRENCY_SIGNS}]\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*(?:/\s*|per\s+|a\s+|each\s+)(?:calendar\s+)?month\b"
                            rf"|\bmonthly\b[^.;{CURRENCY_SIGNS}]{{0,30}}?[{CURRENCY_SIGNS}]\s*([0-9][0-9,]*(?:\.[0-9]+)?)(?![0-9]|[.,][0-9]|\s*(?:/\s*|per\s+|a\s+)"
                            r"(?:year|week|day|visit|session))"
                            # (a row of a plan by the month: "Plus - 151 to 300 transactions a month: €375.00", blind set 106)
                            rf"|\b(?:a|per)\s+month\s*:\s*[{CURRENCY_SIGNS}]\s*([0-9][0-9,]*(?:\.[0-9]+)?)", re.IGNORECASE)


def monthly_prices(sentences: Sequence[str]) -> set[Fraction]:
    """The values of the prices `sentences` give by the month (_MONTHLY_PRICE): a year paid upfront is
    so many of them, not of a price by the lesson or by the year ("Small unit: $360 per year or $35
    per month": 35 only, review)."""
    return {Fraction(next(g for g in m.groups() if g).replace(",", "")) for s in sentences for m in _MONTHLY_PRICE.finditer(s)}


def without_year_upfront(question: str) -> str:
    """`question` without the words paying a year upfront (_PAYS_YEAR_UPFRONT): "If I prepay of
    adult membership, how much do I pay?" of "If I prepay a full year of adult membership, ..."."""
    return _PAYS_YEAR_UPFRONT.sub(" ", question)


def upfront_months(question: str, sentences: Sequence[str]) -> str | None:
    """The months a year paid upfront is charged, as a number ("11" of "Pay the full year upfront and
    you pay for 11 months instead of 12"; "10" of "pay 12 months of membership upfront and get 2
    months free"), when `question` pays a year upfront ("we'll pay the whole year upfront", "If I
    prepay a year of the Ultimate plan"; blind sets 20, 40, 45 and 98); None otherwise."""
    if not pays_year_upfront(question) or any(_PER_YEAR.search(s) for s in sentences):
        return None  # (a price by the year is its own: "Small unit: $360 per year or $35 per month", review)
    # (not a deal of another plan the documents price: "Gold members who prepay a full year get 2 months free" for a
    # year of Silver, review)
    labels = {w for s in sentences if ":" in s and re.search(rf"[{CURRENCY_SIGNS}]\s*[0-9]", s)
              for w in content_words(s.split(":")[0])}
    asked = set(content_words(question))
    for sentence in sentences:
        if _UPFRONT.search(sentence) is None or (set(content_words(sentence)) & labels) - asked - _PERIOD_WORDS:
            continue
        paid = _MONTHS_PAID.search(sentence)
        if paid is not None:
            return paid.group(1)
        free = _MONTHS_FREE.search(sentence)
        if free is not None:
            months = 12 - int(_FREE_COUNT.get(free.group(1).lower(), free.group(1)))
            return str(months) if months > 0 else None
    return None


def upfront_bill(bill: str, months: str, question: str, sentences: Sequence[str], listed: set[Fraction]) -> str | None:
    """A month's `bill` for a year paid upfront as the deal's `months` of it (upfront_months: "(95) * 11"
    of "95" for "you pay for 11 months instead of 12"), when every price of the documents (`listed`,
    by value) it holds, the question's counts aside, is a price by the month (monthly_prices: no
    "(30) * 10" of "Weekly lesson: £30 per lesson", review); None otherwise."""
    asked = {Fraction(m.group(1).replace(",", "")) for m in NUMBER_RE.finditer(with_digits(question))}
    billed = {Fraction(x) for x in re.findall(r"[0-9]+(?:\.[0-9]+)?", bill)} & listed - asked
    return f"({bill}) * {months}" if billed and billed <= monthly_prices(sentences) else None
