"""Whether a calculation over the documents reads each of its figures as the kind of number it is.

Each candidate calculation (backend.agent.tools.expressions) is put together by one of many readers,
and each of them guards its own numbers. A figure read as the wrong kind of number still reached
the user as a confident total, on questions none of the readers was written for (blind sets 61-64,
twentieth and twenty-first sessions): "85 * 72" for "my mum is 72", "45 * 20" for "I live about 20 km
outside Galway" over a price per visit, "60 * 8" for "Length 60 min", "4 * 3" for "Unit 4, Tanner's
Yard", "2024 * 3" for "(from 1 March 2024)", "10 * 8" for "get 10% off". This module is the one
check every candidate passes last, whoever wrote it:

- a number the question writes counts things, unless every time it is written it is an age
  ("my mum's 72", "gran (72)"), or a clock time where it is multiplied or divided; a head-count
  worked out of it ("me and 3 friends": 4) counts;
- a price is multiplied by a count, not by another price, nor by a measure the question writes
  (km, cm, kg, square metres, gallons, a percentage) unless the price's own clause is per that measure ("$265 per day,
  delivery $2 per mile": the day's price is not);
- a number read from the passages is a price, a percentage used as one (not as a factor), or a
  count the passages state; not part of an address or telephone number, a clock time as a
  factor or a dividend, a year written as a date outside a divisor (unless the question asks
  about years), nor minutes a thing lasts ("Length 60 min"; unless the question asks a time;
  "£20 per 15 minutes" is a count);
- a deadline of the question ("back in 3 days") multiplies only a price by time ("€20 per day"),
  a flat fee per order no count but of orders, an amount the question says was paid ("the £45
  I paid") no price; an hour of the day ("afternoon around 2") counts nothing;
- a price written only as a price and a count of the question are never added or taken away,
  and the price is divided by the count only for a share or a rate asked ("6.00 / 2" for "Total
  please" is no bill); nor a measure of the question ("my 90 gal tank") with a price;
- a question asking money in words gets a calculation holding a price ("(10 + 2) / 10" for "all
  10 of us" holds none).

A candidate with a misread figure is dropped; when none is left the program says it could not
work the amount out, and quotes the closest passage, instead of a wrong total.
"""

from __future__ import annotations

import ast
import re
from fractions import Fraction
from typing import Sequence

from backend.agent.numerals import CURRENCY_SIGNS, expression_figures, number_pattern, with_digits
from backend.agent.operations import asks_how_many, asks_money
from backend.agent.party import asks_share_per_person, group_size, people_sharing, without_ages
from backend.agent.tools.allowances import charged_both_ways
from backend.agent.tools.bands import inside_band
from backend.agent.tools.identifiers import names_several
from backend.agent.tools.pricing import PRICE

# A measure's units after a number, by kind ("20 km", "45 cm", "3 kg", "12 sq m").
_MEASURES = {
    "distance": r"(?:km|kms|kilomet(?:re|er)s?|miles?|mi)\b",
    "length": r"(?:mm|cm|m|metres?|meters?|inch(?:es)?|ft|foot|feet|yards?|yds?)\b(?!\s*(?:sq|square|2|²))",
    "area": r"(?:sq\.?\s*(?:m|ft|metres?|meters?|feet|foot)|square\s+(?:metres?|meters?|feet|foot|ft|m)|m2|m²|ft2)\b",
    "weight": r"(?:kg|kgs|kilos?|kilograms?|g|grams?|lbs?)\b",
    "volume": r"(?:gal|gals|gallons?|l|litres?|liters?|ml)\b",
    # ("45% water change": no 45 of anything; "$15 per additional 10%" is priced by it)
    "percent": r"(?:%|percent\b|per\s+cent\b)",
    # ("back in 3 days": no count of sleeves shortened; minutes are read in the passages: _DURATION_AFTER)
    "duration": r"(?:(?:working|business|full|whole)\s+)?(?:hours?|hrs?|days?|nights?|weeks?|months?)\b",
}
# The same, as a passage prices by them: with other names ("$1.50 per pound", "per ft²", "per sqm").
_PRICED_UNITS = {**_MEASURES, "elapsed": r"(?!)",
                 "area": r"(?:sq\.?\s*(?:m|ft|metres?|meters?|feet|foot)|sqm|square\s+(?:metres?|meters?|feet|foot|ft|m)|m2|m²|ft2|ft²)(?!\w)",
                 "weight": r"(?:kg|kgs|kilos?|kilograms?|g|grams?|lbs?|pounds?)\b",
                 "percent": r"(?:[0-9]+(?:\.[0-9]+)?\s*)?(?:%|percent\b|per\s+cent\b)"}
# A clause priced by a length of time, anywhere in it ("€20 per day", "Day rate", "2 nights: £150", "£19/hr",
# "weekly", "p/h"): any of these words, not only after _PER.
_TIMED = re.compile(r"\b(?:hours?|hourly|hrs?|h|p/?h|days?|daily|nights?|nightly|weeks?|weekly|wks?|p/?w|pw|months?|"
                    r"monthly|mo|mos|pcm|weekends?|sessions?|lessons?|shifts?)\b|[0-9](?:h|hrs?|d|wk|wks)\b|/\s?(?:d|w|m)\b",
                    re.IGNORECASE)
# Words pricing one of a measure ("per km", "€1.50/km", "a mile", "each additional mile", "per sq m").
_PER = (r"(?:\bper[\s-]*|/\s*|\ban?\s+|\beach\s+|\bevery\s+)"  # ("£2.10 per-mile"; not "10 am" read "a m")
        r"(?:(?:extra|additional|further|linear|lineal|running|square|sq\.?)\s+)?")
# A clock time after a number ("7pm", "7 p.m.", "10:30", "9 o'clock").
_CLOCK_AFTER = re.compile(r"(?:\s?(?:am|pm|a\.m\.|p\.m\.)(?![a-z])|:[0-5][0-9]|\s+o['’]clock)", re.IGNORECASE)
_CLOCK_BEFORE = re.compile(r"[0-9]:$")
# An hour of the day written as a bare number, in a question that names a part of the day ("a tuesday
# afternoon around 2", "Saturday morning at 10, 3 of us": blind set 66).
# (not a party's size: "for about 20", "party of around 12")
_HOUR_BEFORE = re.compile(r"(?<!\bfor )(?<!\bof )(?<!\bus )(?<!\bbe )\b(?:at|around|about|after|before|by|until|till|from)\s+$",
                          re.IGNORECASE)
_HOUR_AFTER = re.compile(r"\s*(?:ish\b|-ish\b)?\s*(?:[,.?!;)]|$|(?:on|in|this|tomorrow|today|tonight|next|and|or|the|if)\b)",
                         re.IGNORECASE)
_PART_OF_DAY = re.compile(r"\b(?:morning|afternoon|evening|night|tonight|noon|midday|lunch(?:time)?|o['’]clock)\b",
                          re.IGNORECASE)
# A duration a thing lasts, in minutes, after a number ("Length 60 min", "takes roughly 45-60
# minutes"); a count only after words that price or allow by it ("£20 per 15 minutes", "the first
# 30 minutes", "up to 90 minutes"). (Hours are left alone: "2 hours £12" heads a hire price, and
# a worked-out count of days, 2, may equal it.)
_DURATION_AFTER = re.compile(r"\s*-?\s*(?:min|mins|minutes?)\b", re.IGNORECASE)
_COUNTED_BEFORE = re.compile(r"(?:\b(?:per|every|each|for|first|extra|additional|another|further|up\s+to|next|"
                             r"minimum|maximum|max\.?|over|after|within|least|than|of|is|are|"
                             r"(?:charged|billed)\s+in)|/|\+)\s*$",  # ("billed in 15-minute blocks", blind set 89)
                             re.IGNORECASE)
# An address or a telephone number around a number ("Unit 4, Tanner's Yard", "No. 12", "Tel 0113
# 496 0321", "14 Chapel Walk").
_ADDRESS_BEFORE = re.compile(r"\b(?:unit|no\.?|suite|flat|tel\.?|telephone|phone|call|fax|box|po\s+box)\s*:?\s*$",
                             re.IGNORECASE)
_PHONE_AROUND = re.compile(r"[0-9]\s?$")
# A year: 1900-2099 not written as money.
_YEAR = re.compile(r"(?:19|20)[0-9]{2}")
# A question naming a length of time ("how many minutes of organ music", "hours of work", "how long").
_TIME_UNIT = r"(?:secs?|seconds?|min|mins|minutes?|hrs?|hours?)"
_ASKS_TIME = re.compile(rf"\bhow\s+(?:many|much)\s+(?:[a-z]+\s+){{0,2}}?(?:{_TIME_UNIT}|time)\b|\bhow\s+long\b"
                        rf"|\b(?:in|per|an?)\s+{_TIME_UNIT}\b|\b{_TIME_UNIT}\s+of\b|\bhourly\b", re.IGNORECASE)
# What writes a year as a date: a month, a day, "since", "from" ("(from 1 March 2024)"; not a
# price without its sign, "Saturday hire: 2000").
_YEAR_BEFORE = re.compile(r"(?:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?|\b(?:in|since|from|until|"
                          r"till|by|of|before|after|during|est\.?|established|founded|opened|updated|valid)"
                          r"|\b[0-9]{1,2}(?:st|nd|rd|th)?|[©/-])\s*$", re.IGNORECASE)
# What writes a year as a title's: "PRICE LIST 2025", "Rates 2024", "Summer season 2025" (no figure anywhere in a
# calculation: "250 / 2025" for "250 records" over "PRICE LIST 2025", blind set 93, read after its runs).
_TITLE_YEAR_BEFORE = re.compile(r"\b(?:list|rates?|prices?|pricing|tariffs?|fees|charges|menu|season|edition|"
                                r"catalog(?:ue)?|brochure|guide|schedule|terms|conditions|copyright)\s*$", re.IGNORECASE)
# (ending its title: not "Hall hire rates 2000 kr per hour", "Tour prices 1950 CZK per person", review)
# (or opening it: "2025 PRICE LIST  (all prices in CAD)", blind set 94)
_TITLE_WORDS_AFTER = re.compile(r"\s*(?:price\s+list|prices|pricing|rates|fees|tariffs?|menu|season|catalog(?:ue)?|"
                                r"brochure|guide|schedule|edition)\b", re.IGNORECASE)
_TITLE_YEAR_AFTER = re.compile(r"[ \t]*(?:$|\n|[(|:–—-]|\s{2,})")
# A question about years (its year is the calculation's: "how many years since 1998").
_ASKS_YEARS = re.compile(r"\b(?:years?|old|since|ago|anniversary|founded|built|born|age|how\s+long)\b", re.IGNORECASE)


def _occurrences(number: str, text: str) -> list[re.Match[str]]:
    """Each place `text` writes `number` as a number of its own, by value ("2.5" is "2.50"; "1200"
    is "1,200"; not the 9 of "LS9")."""
    return list(re.finditer(rf"(?<![\w.,]){number_pattern(number)}(?![\d]|[.,]\d)", text))


def _measure(text: str, end: int) -> str | None:
    """The kind of measure written after the number ending at `end` of `text`, or None."""
    for kind, unit in _MEASURES.items():
        if re.match(r"\s*-?\s*" + unit, text[end:], re.IGNORECASE):
            return kind
    return None


def _counts_in_question(number: str, question: str, multiplied: bool = True) -> bool | None:
    """Whether `question` writes `number` as a count at least once (True), writes it only as an
    age, or, when it is `multiplied`, as a clock time (False), or does not write it (None). (A
    measure is judged in its product: _misread_product.)"""
    text = with_digits(question).replace("’", "'")
    if number == group_size(question) or number in people_sharing(question):
        return True  # "me and 3 friends": 4, written nowhere
    if not _occurrences(number, text):
        return None
    unaged = without_ages(text)
    found = _occurrences(number, unaged)
    if not found:
        return False  # "my mum is 72", "he's 70", "two kids (both 13)"
    # ("last serviced 8 months ago", "hasn't been tuned in 4 years": a time gone by, no count)
    found = [m for m in found if not _elapsed(unaged, m)]
    if not found:
        return False
    day_part = _PART_OF_DAY.search(unaged) is not None
    # ("a tuesday afternoon around 2": wherever it stands, no count of anything)
    found = [m for m in found if not (day_part and _bare_hour(unaged, m))]
    if not found:
        return False
    return not multiplied or any(not (_CLOCK_AFTER.match(unaged, m.end()) or _CLOCK_BEFORE.search(unaged[:m.start()]))
                                 for m in found)  # "8 of us this Friday at 7pm": no 7 of anything


def hour_of_day(number: str, question: str) -> bool:
    """Whether `question` writes `number` only as an hour of the day ("afternoon around 2", "at 7pm")."""
    text = without_ages(with_digits(question).replace("’", "'"))
    found = _occurrences(number, text)
    day_part = _PART_OF_DAY.search(text) is not None
    return bool(found) and all(_CLOCK_AFTER.match(text, m.end()) or _CLOCK_BEFORE.search(text[:m.start()])
                               or (day_part and _bare_hour(text, m))
                               for m in found)


def _bare_hour(text: str, m: re.Match[str]) -> bool:
    """Whether the number `m` of `text` is an hour written bare ("afternoon around 2": 1-12)."""
    return (m.group(0).isdigit() and 1 <= int(m.group(0)) <= 12 and _HOUR_BEFORE.search(text[:m.start()]) is not None
            and _HOUR_AFTER.match(text, m.end()) is not None)


def _prices(sentence: str) -> list[Fraction]:
    """The values of the prices `sentence` writes (pricing.PRICE: "£18" and "18.00 EUR" are 18)."""
    return [Fraction(next(g for g in m.groups() if g).replace(",", "")) for m in PRICE.finditer(sentence)]


def _read_in_passages(number: str, sentences: Sequence[str], asks_years: bool, asks_time: bool, at: str) -> bool:
    """Whether some sentence writes `number` as what a calculation may use where it stands, `at`
    ("factor" of a product, "dividend", "divisor", "percentage" or "term" of a sum: _positions): a
    price; a percentage where the calculation uses it as one, not as a factor ("(100 - 10) / 100";
    "10 * 8" for "get 10% off" is no price); a count. Not part of an address or telephone number; not a clock time
    as a factor or a dividend; outside a divisor, not a year written as a date ("(from 1 March
    2024)", unless the question `asks_years`: "2030 - 2011"); nowhere minutes a thing lasts
    ("Length 60 min", unless the question `asks_time`: "how many minutes of organ music in 8
    weeks", "what is that per hour"; "£20 per 15 minutes" is a count)."""
    value = Fraction(number)
    for sentence in sentences:
        if value in _prices(sentence):
            return True
        for m in _occurrences(number, sentence):
            before, after = sentence[:m.start()], sentence[m.end():]
            if before.endswith(tuple(f"{CURRENCY_SIGNS}")) or re.search(rf"[{CURRENCY_SIGNS}]\s$", before):
                return True
            if re.match(r"\s*(?:%|percent\b|per\s*cent\b)", after, re.IGNORECASE):
                if at == "percentage":
                    return True
                continue  # "get 10% off" is no price
            if at in ("factor", "dividend") and (_CLOCK_AFTER.match(after) or _CLOCK_BEFORE.search(before)):
                continue  # "from 6:30 pm to 9:30 pm" (but "96 / 9": 9 hours worked out)
            if (not asks_years and _YEAR.fullmatch(number)
                    and ((at != "divisor" and _YEAR_BEFORE.search(before))
                         or (_TITLE_YEAR_BEFORE.search(before) and _TITLE_YEAR_AFTER.match(after))
                         or (not before.strip() and _TITLE_WORDS_AFTER.match(after)))):
                continue  # "(from 1 March 2024)" times 3 rods; "PRICE LIST 2025" anywhere
            if _ADDRESS_BEFORE.search(before) or (_PHONE_AROUND.search(before) and re.match(r"\s?[0-9]", after)):
                continue
            if names_several(before, sentences):
                continue  # "Zone 1 (city centre): £6.00" beside "Zone 2 ...": a name, no number of the bill
            if re.match(r"\s?[0-9]{3}", after) and re.search(r"[0-9]{3,}\s?$", before + " ") is None and len(number) >= 3:
                continue  # the start of "0113 496 0321"
            if not asks_time and _DURATION_AFTER.match(after) and not _COUNTED_BEFORE.search(before):
                continue  # "Length 60 min", "takes roughly 45-60 minutes" (60 * 8 for 8 players; 8 / 60)
            return True
    return False


def _price_sentences(number: str, sentences: Sequence[str]) -> list[str]:
    """The sentences writing `number` as a price (pricing.PRICE, by value: "£18" is "18.00")."""
    value = Fraction(number)
    return [s for s in sentences if value in _prices(s)]


_DEADLINE_BEFORE = re.compile(r"\b(?:in|within|inside|takes?|taking|after|turnaround\s+of)\s+(?:the\s+next\s+|about\s+|around\s+)?$",
                              re.IGNORECASE)
# A time gone by: "last tuned about 8 months ago", "serviced 2 yrs ago", "hasn't been tuned in like 2 years" (blind
# set 80): no count of anything, and nothing is priced per it.
_AGO_AFTER = re.compile(r"\s*-?\s*(?:years?|yrs?|months?|mos?|weeks?|wks?|days?)\s+ago\b", re.IGNORECASE)
_PERIOD_AFTER = re.compile(r"\s*-?\s*(?:years?|yrs?|months?|mos?|weeks?|wks?|days?)\b", re.IGNORECASE)
_ELAPSED_BEFORE = re.compile(r"(?:\b(?:has|have|had|is|was|were|are|did|does|do)n['’]?t|\bnot|\bnever)\b[^,.;?!]{0,30}\b(?:in|for)\s+(?:the\s+last\s+|like\s+|about\s+|over\s+)?$",
                             re.IGNORECASE)
# A factor of a conversion the question states ("use 1 km = 0.621 miles", "a mile is 1.6 km"): no measure of a thing
# (but "The venue is 30 km away").
_CONVERSION_BEFORE = re.compile(r"(?:=|\b(?:1|one|a|an)\s+[a-z]+\s+(?:is|equals))\s*(?:about\s+|roughly\s+)?$", re.IGNORECASE)


def _elapsed(text: str, m: re.Match[str]) -> bool:
    """Whether the number `m` of `text` is a time gone by (_AGO_AFTER, _ELAPSED_BEFORE)."""
    return _AGO_AFTER.match(text, m.end()) is not None or (
        _ELAPSED_BEFORE.search(text[:m.start()]) is not None and _PERIOD_AFTER.match(text, m.end()) is not None)


def _only_prices(number: str, sentences: Sequence[str]) -> bool:
    """Whether every place `sentences` write `number` is a price ("€15 travel"; not "£2" where
    "2 hours" is written too)."""
    value = Fraction(number)
    return bool(_price_sentences(number, sentences)) and all(
        len(_occurrences(number, s)) == _prices(s).count(value) for s in sentences)


def _measures_in_question(number: str, question: str) -> set[str]:
    """The kinds of measure `question` writes `number` with ("20 km": {"distance"}), every time it
    writes it (once a count, it counts)."""
    text = without_ages(with_digits(question))
    kinds = [_measure(text, m.end()) if not _CONVERSION_BEFORE.search(text[:m.start()]) else None
             for m in _occurrences(number, text)]
    # (a length of time is a measure only as a deadline or how long a job takes: "back in 3 days", "ready
    # within 2 weeks"; "for 3 days", "a packed lunch on 5 days" count days)
    kinds = [None if k == "duration" and not _DEADLINE_BEFORE.search(text[:m.start()]) else k
             for k, m in zip(kinds, _occurrences(number, text))]
    # (nor a time gone by, which nothing is priced per: "last tuned about 8 months ago", "hasn't been tuned in 4 years")
    kinds = ["elapsed" if _elapsed(text, m) else k for k, m in zip(kinds, _occurrences(number, text))]
    return set(kinds) if kinds and None not in kinds else set()  # ("4 of us ... 4 miles from the quay": a count)


def _positions(expression: str) -> tuple[list[list[str]], dict[str, str]]:
    """The numbers multiplied directly together in `expression`, by product, but a percentage's
    ("(18 * 4) * (100 - 10) / 100" -> [["18", "4"]]; "40 * 2 * 20 / 100" -> [["40", "2"]]), and
    where each number stands: "factor", "dividend", "divisor", "percentage" ("(100 - 10)", "* 20 /
    100") or "term" (the first of these it is, in that order). ([], {}) when it does not parse."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return [], {}
    products: list[list[str]] = []
    at: dict[str, set[str]] = {}

    def text(node: ast.AST) -> str:
        return ast.get_source_segment(expression, node) or ""

    def chain(node: ast.AST) -> list[ast.AST]:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            return chain(node.left) + chain(node.right)
        return [node]

    def is_hundred(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and node.value == 100

    def percentage_term(node: ast.AST) -> bool:  # (100 - 10), (100 + 20)
        return (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))
                and (is_hundred(node.left) or is_hundred(node.right)))

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and is_hundred(node.right):
            parts = chain(node.left)
            constants = [p for p in parts if isinstance(p, ast.Constant)]
            if constants and not any(percentage_term(p) for p in parts):
                at.setdefault(text(constants[-1]), set()).add("percentage")  # "* 20 / 100"
                parts = [p for p in parts if p is not constants[-1]]
            record(parts)
            return
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            record(chain(node))
            return
        if percentage_term(node):  # (100 - 10): 10 is a percentage; (100 + 100): a 100% surcharge (blind set 97)
            side = node.right if is_hundred(node.left) else node.left
            if isinstance(side, ast.Constant):
                at.setdefault(text(side), set()).add("percentage")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            if isinstance(node.left, ast.Constant):
                at.setdefault(text(node.left), set()).add("dividend")
            if isinstance(node.right, ast.Constant):
                at.setdefault(text(node.right), set()).add("divisor")
        if isinstance(node, ast.Constant):
            at.setdefault(text(node), set()).add("term")
        for child in ast.iter_child_nodes(node):
            visit(child)

    def record(parts: list[ast.AST]) -> None:
        numbers = [text(p) for p in parts if isinstance(p, ast.Constant)]
        if len(numbers) > 1:
            products.append(numbers)
            for n in numbers:
                at.setdefault(n, set()).add("factor")
        for p in parts:
            if not (len(numbers) > 1 and isinstance(p, ast.Constant)):
                visit(p)

    visit(tree)
    order = ("factor", "dividend", "divisor", "percentage", "term")
    return products, {n: next(o for o in order if o in kinds) for n, kinds in at.items()}


_PER_MONEY = re.compile(rf"\b(?:per|every|each|a)\s+(?:[A-Z]{{1,3}}\$|[{CURRENCY_SIGNS}])\s?[0-9]", re.IGNORECASE)


# A question doing a thing every so often: its length of time counts the times ("we want weekly cleans.
# What would 4 weeks cost?").
_FREQUENCY = re.compile(r"\b(?:weekly|daily|nightly|monthly|fortnightly|every\s+(?:week|day|night|month|fortnight)"
                        r"|each\s+(?:week|day|night|month)|(?:once|twice|[0-9]+\s+times?)\s+(?:a|per|each)\s+"
                        r"(?:week|day|night|month))\b", re.IGNORECASE)


def _timed(clause: str) -> bool:
    """Whether `clause` prices by a length of time (_TIMED), not one it takes ("ready in 3 working
    days": no price per day; "1 day: £20" is)."""
    return any(not re.search(r"(?<![\w.,])(?:[2-9]|[1-9][0-9]+)\s*(?:-\s*)?(?:(?:working|business|full|whole)\s+)?$",
                             clause[:m.start()], re.IGNORECASE)
               for m in _TIMED.finditer(clause))


_KM = re.compile(r"\s*-?\s*(?:km|kms|kilomet)", re.IGNORECASE)


def _priced_per(clause: str, kind: str, number: str, question: str) -> bool:
    """Whether `clause` prices per the measure of `kind` the question writes `number` in; a
    distance in its own unit ("£2 per mile" is no price per km: "30 km away")."""
    m = re.search(_PER + _PRICED_UNITS[kind], clause, re.IGNORECASE)
    if m is None or kind != "distance":
        return m is not None
    text = with_digits(question)
    in_km = any(_KM.match(text, found.end()) for found in _occurrences(number, text))
    return in_km == bool(re.search(r"km|kilomet", m.group(0), re.IGNORECASE))


def _misread_product(numbers: Sequence[str], question: str, sentences: Sequence[str]) -> bool:
    """Whether a product of `numbers` multiplies two prices none of which the question counts
    ("45 * 20": a second flue's €45 times the €20 Saturday surcharge, for "20 km outside"), or a
    figure of the passages by a measure of the question that figure is not per ("265 * 25": "$265
    per day" times "25 km from your depot"; "30 * 90": "Non-reflective glass: 30" times "a 90 cm
    frame")."""
    # (a 2 doubling a charge the passages lay both ways is no figure of theirs: "2 * 23 * 0.35" over "0.35 per km,
    # counted as the return distance", blind set 97, read)
    doubled = any(charged_both_ways(s) for n in numbers if n != "2" for s in _price_sentences(n, sentences))
    # (nor one doubling the customer's distance for a rate on the round trip: "2 * 85" for "85 km from your office"
    # over "EUR 0.60 per km for every km of the round trip over 60 km", blind set 102, read)
    doubled = doubled or ("2" in numbers and any("distance" in _measures_in_question(n, question) for n in numbers if n != "2")
                          and any(charged_both_ways(s) for s in sentences))
    read = {n: [s for s in sentences if _occurrences(n, s)] for n in numbers
            if _counts_in_question(n, question) is not True and not (n == "2" and doubled)}
    read = {n: found for n, found in read.items() if found}
    # (an amount of money the question writes is a price too: "I already paid the £45 consultation" is
    # no count of straps adjusted at £9)
    paid = [n for n in numbers if _money_in_question(n, question)]
    if sum(1 for n, found in read.items() if _only_prices(n, found)) > 1 or (paid and any(
            n not in paid and _price_sentences(n, found) and not any(_PER_MONEY.search(f) for f in found)
            for n, found in read.items())):
        return True  # (but "£2.50 per month for every £1,000 of declared value" for "£8,000 worth of stuff")
    repeats = _FREQUENCY.search(question) is not None  # "weekly cleans ... 4 weeks": 4 cleans
    for n, found in read.items():
        clauses = [c for s in found for c in _CLAUSE.split(s)
                   if any(not (_CLOCK_AFTER.match(c, m.end()) or _CLOCK_BEFORE.search(c[:m.start()]))
                          for m in _occurrences(n, c))]  # (not "Thursday: 9:00am - 7:30pm (late night)")
        # (a price's own clauses, where it is one: "£12.00" is not "valid for 12 months")
        clauses = [c for c in clauses if Fraction(n) in _prices(c)] or clauses
        if clauses and not repeats and all(_ONCE.search(c) for c in clauses) and any(
                other != n and _counts_in_question(other, question) and not _counts_orders(other, question)
                for other in numbers):
            return True  # "£6.00 flat fee per order" times "2 of my shirts"
        for other in numbers:
            kinds = _measures_in_question(other, question) if other != n else set()
            kinds -= {"duration"} if repeats else set()
            if kinds and not any(_timed(c) if k == "duration" else _priced_per(c, k, other, question)
                                 for k in kinds for c in clauses):
                return True  # ("$265 per day, delivery $2 per mile": the day's price is no price per mile)
            # (nor is a price per a distance or a weight one of a length of time: "0.35 per km" for "an interpreter for
            # 3 hours", blind set 97, read)
            if other != n and _lengths_of_time(other, question) and clauses and not any(_timed(c) for c in clauses) and all(
                    any(re.search(_PER + _PRICED_UNITS[k], c, re.IGNORECASE) for k in ("distance", "weight", "area"))
                    for c in clauses):
                return True
    return False


def _lengths_of_time(number: str, question: str) -> bool:
    """Whether `question` writes `number` as a length of time every time it writes it ("for 3 hours")."""
    text = without_ages(with_digits(question))
    found = _occurrences(number, text)
    return bool(found) and all(_measure(text, m.end()) == "duration" for m in found)


# A price charged once whatever the count ("Local delivery ...: £6.00 flat fee per order", "a £20 booking
# fee"; not "One-off deep clean: $45 per hour per cleaner", a clean not repeated), and the question's counts of
# such units ("2 orders", "3 visits").
_ONCE = re.compile(r"\b(?:flat[\s-]+(?:fee|charge)|per\s+(?:order|booking|call[\s-]?out|delivery|invoice|transaction|"
                   r"basket)|each\s+(?:order|booking)|(?:order|booking)\s+fee)\b(?!\s*(?:per|an?|each|/)\s)",
                   re.IGNORECASE)
_ORDER_UNITS = re.compile(r"\s+(?:(?:separate|different|more|other)\s+)?(?:orders?|bookings?|visits?|call[\s-]?outs?|jobs?|"
                          r"deliveries|invoices?|transactions?|trips?|times)\b", re.IGNORECASE)


def _counts_orders(number: str, question: str) -> bool:
    """Whether `question` writes `number` as a count of orders, visits or bookings ("2 separate orders")."""
    text = with_digits(question)
    return any(_ORDER_UNITS.match(text, m.end()) for m in _occurrences(number, text))


# Where a sentence's clauses part: "Shirts: £2.80 per kg, minimum charge £12".
_CLAUSE = re.compile(r"[,;]\s+|\s+[-–—]\s+")


# A question asking a share or a rate, where a price is divided by a count ("how much each", "split
# it", "per hour", "on average").
_ASKS_SHARE = re.compile(r"\b(?:each|per|apiece|split|share|shared|sharing|between|divid\w*|average|a\s+head|pp|"
                         r"an?\s+(?:piece|night|person|day|week|month|hour|ticket|lesson|session|visit|item|unit|kid|child|adult)|"
                         r"works?\s+out|ways|rate|one)\b", re.IGNORECASE)


_ASKS_RATIO = re.compile(r"\b(?:times|ratio|percent(?:age)?|fraction|proportion)\b|%", re.IGNORECASE)


def _mixed_kinds(expression: str, question: str, sentences: Sequence[str]) -> list[str]:
    """The figures of `expression` that combine a price of the passages with a count (or a measure:
    "90 gal") of the question as no bill does: added or taken away ("6.00 + 2", "6.00 - 2" for "2 of my shirts"),
    the price divided by the count when the question asks no share or rate ("6.00 / 2" for
    "Total please"), or the count divided by the price when it asks no count ("2 / 6.00"). A
    percentage's "(100 - 10)" is neither."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return []

    def kind(node: ast.AST) -> str | None:
        if not isinstance(node, ast.Constant) or node.value == 100:
            return None
        number = ast.get_source_segment(expression, node) or ""
        counted = _counts_in_question(number, question)
        if counted and _money_in_question(number, question):
            return "money"
        if counted and _measures_in_question(number, question) - {"duration"}:
            return "measure"  # "my 90 gal reef tank"
        if counted:
            return "count"
        found = [s for s in sentences if _occurrences(number, s)]
        if counted is None and _only_prices(number, found):  # (not "the first 10 miles free" beside "£10")
            return "price"
        if counted is None and _price_sentences(number, found):
            return "priced"  # a price somewhere, something else elsewhere ("Adjust straps: £9.00", "9:00am")
        return None

    def _band_price(node: ast.AST) -> bool:  # (a distance only: "40 kg" over "Pets over 30 kg: add £40" is the dog)
        number = ast.get_source_segment(expression, node) or ""
        return _measures_in_question(number, question) == {"distance"} and any(
            inside_band(question, s) for s in _price_sentences(number, sentences))

    out: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.BinOp):
            continue
        kinds = (kind(node.left), kind(node.right))
        mixed = False
        if isinstance(node.op, ast.Add):
            # (a distance a row holding it prices by the same figure may be that price, added: "25 km from Kingston"
            # over "Zone B, 15 to 40 km: $25", blind set 80)
            kinds = tuple("priced" if k == "measure" and _band_price(side) else k
                          for k, side in zip(kinds, (node.left, node.right)))
        if isinstance(node.op, (ast.Add, ast.Sub)):
            # (a measure and a figure the passages also write as that measure are not: "(16 - 10)" for "16 miles
            # from" over "the first 10 miles free"; "90 - 50" for "my 90 gal reef tank" over "$50 deposit" is)
            mixed = (set(kinds) in ({"count", "price"}, {"measure", "price"})
                     or (set(kinds) == {"measure", "priced"} and not _same_measure(expression, node, question, sentences)))
        elif isinstance(node.op, ast.Div):
            mixed = ((kinds in (("price", "count"), ("price", "measure"), ("priced", "measure"))
                      and _ASKS_SHARE.search(question) is None)
                     or (kinds in (("count", "price"), ("measure", "price"), ("measure", "priced")) and not asks_how_many(question))
                     # an amount by an amount is a count ("how many can I get for £45"), or a ratio asked
                     or (set(kinds) <= {"price", "priced", "money"} and None not in kinds and "money" in kinds
                         and not asks_how_many(question) and _ASKS_RATIO.search(question) is None))
        if mixed:
            out.extend(ast.get_source_segment(expression, side) or "" for side in (node.left, node.right))
    return out


def _same_measure(expression: str, node: ast.BinOp, question: str, sentences: Sequence[str]) -> bool:
    """Whether the two numbers `node` adds or takes away are measures of one kind: the question's
    ("16 miles") and the passages' ("the first 10 miles")."""
    left, right = (ast.get_source_segment(expression, side) or "" for side in (node.left, node.right))
    kinds = _measures_in_question(left, question) or _measures_in_question(right, question)
    other = right if _measures_in_question(left, question) else left
    return any(_measure(s, m.end()) in kinds for s in sentences for m in _occurrences(other, s))


def _with_itself(expression: str) -> list[str]:
    """The numbers `expression` combines with themselves ("90 * 90", "90 - 90", "2 * 90 * 90")."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant):
            if node.left.value == node.right.value:
                out.append(ast.get_source_segment(expression, node.left) or "")
    return out


def _money_in_question(number: str, question: str) -> bool:
    """Whether `question` writes `number` as an amount of money ("£45", "45 dollars")."""
    text = with_digits(question)
    return any(re.search(rf"[{CURRENCY_SIGNS}]\s?$", text[:m.start()]) or re.match(r"\s*(?:dollars?|euros?|pounds?|quid|bucks)\b",
                                                                        text[m.end():], re.IGNORECASE)
               for m in _occurrences(number, text))


def misread_figures(expression: str, question: str, sentences: Sequence[str]) -> list[str]:
    """The figures of `expression` (a calculation over the passages' `sentences`, for the user's
    `question`) read as a kind of number no calculation uses where it stands, or multiplied as one
    (a price by a price, a figure by a measure it is not per): see the module docstring. [] when
    every figure is a count, a price or a percentage where it stands."""
    asks_years = _ASKS_YEARS.search(question) is not None
    asks_time = _ASKS_TIME.search(question) is not None
    products, at = _positions(expression)
    out = []
    for number in expression_figures(expression):
        if re.fullmatch(r"0[0-9]+", number):
            out.append(number)  # "0722", "03": a telephone number's or a code's digits, no amount
            continue
        where = at.get(number, "term")
        counted = _counts_in_question(number, question, where in ("factor", "dividend"))
        if counted:
            continue
        if counted is False and hour_of_day(number, question) and not _price_sentences(number, sentences):
            out.append(number)  # "a tuesday afternoon around 2" is no 2 of anything
            continue
        if _read_in_passages(number, sentences, asks_years, asks_time, where):
            continue
        if counted is None and not any(_occurrences(number, s) for s in sentences):
            continue  # worked out, written nowhere ("1" of "price * 1", a sum's part)
        out.append(number)
    # ("90 * 90", "90 / 90": "$90" with "my 90 gal reef tank", a price read where the measure stands; not a
    # length by itself, an area)
    out.extend(n for n in _with_itself(expression) if n not in out and any(
        not any(re.search(_PER + _PRICED_UNITS[kind], s, re.IGNORECASE) for s in _price_sentences(n, sentences))
        for kind in _measures_in_question(n, question) - {"length", "duration"}))  # ("£3 per kg" for "3 kg of apples")
    for numbers in products:
        if _misread_product(numbers, question, sentences):
            out.extend(n for n in numbers if n not in out)
    out.extend(n for n in _mixed_kinds(expression, question, sentences) if n not in out)
    return out


# A figure written as a price without a sign: "12 CHF", "USD 95", "95 EUR", "Rs. 250", "₹250", "800 kr", "25 per hour".
# (and a rate with no currency at all, "25 per hour", "25 a day": a price per a unit things are priced by)
_CODE_BEFORE = re.compile(r"(?:\b[A-Z]{3}|\bRs\.?|₹|₽|₩|₺|₪|₴|฿|R\$|kr\.?)\s?$")
_CODE_AFTER = re.compile(r"\s?(?:[A-Z]{3}\b|kr\b|zł|Kč|₹|€|£|\$)")
_RATE_AFTER = re.compile(r"\s*(?:per|each|a|an|/)\s*(?:hour|hr|day|night|week|month|year|person|head|guest|adult|child|"
                         r"kg|kilo|lb|pound|litre|liter|mile|km|item|piece|unit|session|lesson|visit|load|page|copy|bag|"
                         r"box|bike|car|dog|room|ticket|pair|metre|meter|foot|ft)s?\b", re.IGNORECASE)


def _price_like(number: str, sentence: str) -> bool:
    """Whether `sentence` writes `number` as a price, with a sign (pricing.PRICE) or a currency's
    code or symbol (_CODE_BEFORE, _CODE_AFTER), or as a rate ("25 a day", "25 per hour")."""
    if Fraction(number) in _prices(sentence):
        return True
    return any(_CODE_BEFORE.search(sentence[:m.start()]) or _CODE_AFTER.match(sentence, m.end())
               or _RATE_AFTER.match(sentence, m.end()) for m in _occurrences(number, sentence))


def _holds_price(expression: str, question: str, sentences: Sequence[str]) -> bool:
    """Whether `expression` can be a bill: a figure of it is money the question writes, or a price
    of the passages (_price_like), unless every figure is a count of the question and none is
    multiplied ("(10 + 2) / 10" for "8 of us ... 2 more ... all 10 of us" beside "£10 per
    participant"; "5 * 2" for "my 2 kids want 5 scoops" at £2 each is one)."""
    figures = expression_figures(expression)
    if any(_money_in_question(n, question) for n in figures):
        return True
    if not any(_price_like(n, s) for n in figures for s in sentences):
        return False
    products, _ = _positions(expression)
    return bool(products) or not all(_counts_in_question(n, question) for n in figures)


# A question about money in so many words.
_MONEY_WORDS = re.compile(r"\b(?:cost|costs|price|pay|paid|charge|charged|fee|bill|owe|quote|refund|back|how\s+much|"
                          rf"spend|total\s+price)\b|[{CURRENCY_SIGNS}]", re.IGNORECASE)


def plausible(expressions: Sequence[str], question: str, sentences: Sequence[str]) -> list[str]:
    """`expressions` but those with a misread figure (misread_figures), in order; for a question
    asking an amount of money (not how many), also those holding no price ("(10 + 2) / 10" for "8
    of us ... and 2 more ... splitting everything", "10 * 2" for "it's 10 days away" and two people)."""
    money = ((asks_money(question) or asks_share_per_person(question)) and not asks_how_many(question)
             and _MONEY_WORDS.search(question) is not None)  # (not "In total?" over a list of counts)
    return [e for e in expressions if not misread_figures(e, question, sentences)
            and (not money or _holds_price(e, question, sentences))]
