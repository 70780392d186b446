"""Which price of the documents a question means, and what adjusts it (issue 15): among a
sentence's prices, those whose own words name the question's thing ("medium (80 balls) $14") and
whose own clause's days and times hold the question's ("£45 between 8am and 6pm; £75 between 6pm
and 8am, and all day on Sundays" at 9pm: £75) first; the price of a fee named elsewhere ("included
in the call-out fee"); the documents the question names ("at the creperie"); a price per two
units times the question's count of each ("£3.20 per metre per week"); surcharges and amounts off
laid on a candidate, times the question's count of what they are per ("Lamination adds €4 per
poster"), an amount off only at its least spend ("Orders of £50 or more get £5 off").

Only words and numbers are read from the passages (untrusted data); the expressions go through
the calculator's parser (backend.agent.tools.fact_expressions.valid_expressions) before they are offered.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Sequence

from backend.agent.numerals import CURRENCY_SIGNS, AMOUNT, CURRENCY_CODES, CURRENCY_NAMES, SIGNED_PRICE, currency_sign, with_digits
from backend.agent.operations import names_a_length, sizes, sizes_alone
from backend.agent.party import group_size
from backend.agent.tools.bands import cell_band_holds, outside_band, with_band_nouns
from backend.agent.tools.basket import (TABLE_ROW, THRESHOLD_BEFORE, basket_items, counts_of, labels_after, norm_words, set_aside_words, singular,
                                        table_row_name, thing_words)
from backend.agent.tools.conditions import applies, in_months, named_days
from backend.agent.tools.discounts import (counted, headed_surcharges, least_count_met, least_group, least_spend,
                                          thing_counts)
from backend.agent.tools.identifiers import with_size_labels, with_worded_kinds
from backend.agent.tools.passages import document_name, read_passages
from backend.agent.tools.segmentation import text_sentences
from backend.agent.tools.sentences import content_words, rank_sentences, section_headings, stems, with_answers
from backend.agent.tools.units import is_unit

# A price: after a currency sign or before a currency's name.
PRICE = re.compile(rf"{SIGNED_PRICE}|(?<![0-9,.]){AMOUNT}\s*{CURRENCY_NAMES}\b", re.IGNORECASE)


# A price in a currency's minor unit, written as one: before "per", "each", "a", "an", "/", "for"
# or "or" ("8p per page", "30p each", "75¢/min"), or after a verb of costing or a colon ("costs
# 8p.", "Black and white: 20p"); not a temperature ("Wash at 40c", "(60c)"), a clock ("3pm", "8
# p.m."), a page ("p. 4") or a name ("Rooms 4p and 5p").
_MINOR_PRICE = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}-])([0-9]{{1,2}}(?:\.[0-9]+)?)\s?(?:(p)(?!\.?\s?m\b)(?!\w)|(c|¢)(?!\w)|(pence|cents?)\b)",
                          re.IGNORECASE)
_PRICED_BEFORE = re.compile(r"(?:\b(?:costs?|is|are|just|only|from|add|adds|plus)|:)\s*$", re.IGNORECASE)
_PRICED_AFTER = re.compile(r"\s*(?:per\b|each\b|an?\s|/|for\b|,?\s*or\b)", re.IGNORECASE)
# A table's row (basket.TABLE_ROW: "A4 single-sided: Black & white 10p; Colour
# 35p."), and the end of one of its cells: a cell's amount is a price.
_CELL_END = re.compile(r"\s*(?:;|\.$)")
# A row of pages, sizes or temperatures: "Pages: 16p; ...", "Sizes: A5 16p; A4 24p".
_NOT_PRICES = re.compile(r"\b(?:pages?|sizes?|temperatures?|temp|degrees|rooms?)\b", re.IGNORECASE)
# The major unit's sign of each minor unit.
_MAJOR_SIGNS = {"p": ("£",), "pence": ("£",), "c": ("$", "€"), "¢": ("$", "€"), "cent": ("$", "€"), "cents": ("$", "€")}


# A passage's currency declared for prices written without a sign: "TARIFF 2024 (all prices in EUR)",
# "Prices are in pounds sterling".
_DECLARED = re.compile(rf"\bprices\s+(?:are\s+)?(?:shown\s+|quoted\s+|given\s+)?in\s+({CURRENCY_CODES}|euros?|pounds?|"
                       r"sterling|(?:US\s+|Canadian\s+|Australian\s+|NZ\s+)?dollars?)\b", re.IGNORECASE)
# An amount without a sign where a price list writes one: after a row's label ("Caravan, up to 7 m: 65.00",
# "Covered pitch: add 30.00 per month") or before a unit it is charged per ("1.80 per km", "10.00 / month").
# (or ending a table's cell after its column's name, as table_sentences writes a row: "100 - 199: 12\" 140 g 6.40; 12\"
# 180 g 7.10.", blind set 93; not a clock time: "Check-in from 14.00; check-out by 11.00.", review)
_UNSIGNED_PRICE = re.compile(r"(?:(?<=:\s)|(?<=:\sadd\s)|(?<=:\sfrom\s)|(?<=\s-\s))([0-9]+\.[0-9]{2})(?![0-9%])"
                             rf"|(?<![\w.,{CURRENCY_SIGNS}])([0-9]+\.[0-9]{{2}})(?=\s*(?:per|/|each)\b)"
                             rf"|(?<![\w.,{CURRENCY_SIGNS}])(?<!\bfrom\s)(?<!\bto\s)(?<!\bby\s)(?<!\buntil\s)(?<!\btill\s)(?<!\bat\s)"
                             r"(?<!\bafter\s)(?<!\bbefore\s)(?<!\bopen\s)(?<!\bopens\s)(?<!\bcloses\s)(?<!\band\s)"
                             r"(?<=[A-Za-z0-9\"″]\s)([0-9]+\.[0-9]{2})(?=;|\.$)", re.IGNORECASE)


# An amount with its currency named after it: "45 dollars", "1.50 dollars per km", "a 30 dollar deposit", "12 euros"
# (not "pounds": a weight as often as money).
# (not "7 dollars and 50 cents", "10 dollar-store toys": review)
_NAMED_CURRENCY = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}])([0-9]{{1,3}}(?:,[0-9]{{3}})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?)\s*"
                             r"(?:(?:US|U\.S\.|Canadian|Australian|NZ|American)\s+)?(dollars?|euros?)\b"
                             r"(?!-|\s+and\s+[0-9]+\s+(?:cents?|c)\b)", re.IGNORECASE)


def with_named_currency(sentences: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """`sentences` ((heading, sentence) pairs) with each amount whose currency is named after it
    written with the currency's sign ("Nail trim: 15 dollars" -> "Nail trim: $15", "1.50 dollars per
    km" -> "$1.50 per km"): the readers of a bill's parts read signed prices (new-user pass: a travel
    allowance and a basket written in dollars were not read)."""
    # (only in a passage writing no other currency's sign: "8p per page ... add 5 dollars handling" keeps one sign, £)
    signs: dict[str, set[str]] = {}
    for heading, sentence in sentences:
        signs.setdefault(heading, set()).update(re.findall(rf"[{CURRENCY_SIGNS}](?=\s?[0-9])", sentence))

    def signed(heading: str, m: re.Match[str]) -> str:
        sign = "€" if m.group(2).lower().startswith("euro") else "$"
        return sign + m.group(1) if signs[heading] <= {sign} else m.group(0)

    return [(heading, _NAMED_CURRENCY.sub(lambda m, h=heading: signed(h, m), sentence)) for heading, sentence in sentences]


def with_declared_currency(sentences: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """`sentences` ((heading, sentence) pairs) with the amounts of a passage that declares its prices'
    currency (_DECLARED: "(all prices in EUR)") and writes no sign written with that currency's sign
    where a price list writes its prices (_UNSIGNED_PRICE, two decimals): "Caravan, up to 7 m: 65.00"
    -> "Caravan, up to 7 m: €65.00" (blind set 70: no price was read, nothing was calculated)."""
    declared: dict[str, str] = {}
    signed: set[str] = set()
    for heading, sentence in sentences:
        m = _DECLARED.search(sentence)
        if m is not None:
            declared.setdefault(heading, currency_sign(m.group(1)))
        if re.search(rf"[{CURRENCY_SIGNS}]\s?[0-9]", sentence):
            signed.add(heading)
    if not declared:
        return list(sentences)
    return [(heading, _UNSIGNED_PRICE.sub(lambda m: declared[heading] + (m.group(1) or m.group(2) or m.group(3)), sentence))
            if heading in declared and heading not in signed else (heading, sentence) for heading, sentence in sentences]


def as_priced(sentences: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """`sentences` ((heading, sentence) pairs of the found passages) as every reading of a bill
    reads them (the candidates, the calculator's cue, the document a question asks): prices in
    the major unit (in_major_units), a question the document asks itself with its answer
    (sentences.with_answers), each row under a heading of surcharges a surcharge
    (discounts.headed_surcharges: "Saturday appointment: +$40.00" under "SURCHARGES"), a row labelled by a
    size one word (identifiers.with_size_labels: "18x24: $68.00"), a kind numbered in words
    (identifiers.with_worded_kinds: "1-sided" -> "one-sided"), a row labelled by a band alone the thing
    its section lists (bands.with_band_nouns: "10 - 49 signs each: ...")."""
    pairs = with_worded_kinds(with_size_labels(with_answers(in_major_units(sentences))))
    sections = section_headings(pairs)
    return headed_surcharges(with_band_nouns(pairs, sections), sections)


def in_major_units(sentences: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """`sentences` ((heading, sentence) pairs) with each price in a minor unit written in the major
    unit of its passage's one currency sign: "Printing is 8p per page" -> "Printing is £0.08 per
    page" beside "£18 per day", "25c per litre" -> "$0.25 per litre" beside "$9"; an amount with its
    currency named after it with its sign (with_named_currency), one of a passage declaring its
    currency too (with_declared_currency). A passage writing
    no sign or more than one keeps its text. The calculation then reads both as prices of one unit
    (a set-49 question about 150 pages at 8p each was read as $2.50 insurance times 150)."""
    sentences = with_declared_currency(with_named_currency(sentences))
    signs: dict[str, set[str]] = {}
    for heading, sentence in sentences:
        signs.setdefault(heading, set()).update(re.findall(rf"[{CURRENCY_SIGNS}](?=\s?[0-9])", sentence))
    out: list[tuple[str, str]] = []
    for heading, sentence in sentences:
        passage_signs = signs.get(heading, set())

        def major(m: re.Match[str], sentence: str = sentence) -> str:
            unit = (m.group(2) or m.group(3) or m.group(4)).lower()
            allowed = [sign for sign in _MAJOR_SIGNS[unit] if sign in passage_signs]
            priced = (_PRICED_BEFORE.search(sentence, 0, m.start()) or _PRICED_AFTER.match(sentence, m.end())
                      or (unit == "p" and TABLE_ROW.match(sentence) and _CELL_END.match(sentence, m.end())
                          and not _NOT_PRICES.search(sentence)))
            if len(passage_signs) != 1 or not allowed or not priced:
                return m.group(0)
            return f"{allowed[0]}{Decimal(m.group(1)).scaleb(-2)}"  # "8" -> "0.08", "30" -> "0.30"

        out.append((heading, _MINOR_PRICE.sub(major, sentence)))
    return out


def of_named_documents(question: str, sentences: Sequence[tuple[str, str]]) -> list[str]:
    """The sentences of the documents whose headings' words the question names ("a standard session
    at Lumen": Lumen Portrait Studio's), all of them when it names none."""
    asked = stems(question) - _GENERIC_HEADING_STEMS
    held: dict[str, set[str]] = {}
    for h, s in sentences:
        held.setdefault(h, set()).update(stems(s))
    # a word names the documents whose headings hold it only when no other document says it: "machine" in
    # "Stitchwell Sewing Machine Repair - Policies & FAQ" names no document of a business whose every
    # document is about machines (simple set 69: its menu's prices were set aside)
    naming = {w for w in asked if not any(w in words for h, words in held.items() if w not in stems(h))}
    chosen = {h for h in held if stems(h) & naming}
    # (and only when the rest of what it asks is said there too: "2 sourdough loaves and 1 carrot cake" over passages
    # headed "Breads" and "Cakes" of one price list asks both, new-user pass)
    said = set().union(*(held[h] for h in chosen)) if chosen else set()
    elsewhere = set().union(*(words for h, words in held.items() if h not in chosen)) if chosen else set()
    if (asked - naming) & elsewhere - said:
        return [s for _, s in sentences]
    named = [s for h, s in sentences if h in chosen]
    return named or [s for _, s in sentences]


def of_asked_document(question: str, results: Sequence[str], named: Sequence[str]) -> list[str]:
    """Among `named` (of_named_documents' sentences), those of the one document of the search
    results `results` that shares the most words with the question when it names none and the
    results come from several: one business's discount is no other's ("Groups of 6 or more paying
    adults get 10% off" of a kayak tour, taken off a board-game café's room for "10 adults": blind
    set 59). `named` as it is when the documents tie, or there is one."""
    documents: dict[str, set[str]] = {}
    for label, text in (p for result in results for p in read_passages(result)):
        documents.setdefault(document_name(label), set()).update(stems(text))
    if len(documents) < 2:
        return list(named)
    asked = stems(question) - _GENERIC_QUESTION_STEMS
    shared = sorted(((len(asked & words), name) for name, words in documents.items()), reverse=True)
    if shared[0][0] == shared[1][0]:
        return list(named)
    # (and the documents whose names share a word of its own: one business's price list and its offers,
    # "riverside_yoga_prices.txt" and "riverside_yoga_offers.txt")
    own = _name_words(shared[0][1])
    business = {name for name in documents if name == shared[0][1] or own & _name_words(name)}
    # (read as the calculator reads them: a surcharges heading's rows too)
    chosen = {s for label, text in (p for result in results for p in read_passages(result))
              if document_name(label) in business
              for _, s in as_priced(text_sentences(text, label))}
    kept = [s for s in named if s in chosen]
    return kept or list(named)


def first_name_word(name: str) -> str | None:
    """The first word of a document's file name, when the name has several and it names no
    price list's thing ("hartwell_faq.txt": "hartwell"; not "dry_cleaning_prices.txt"'s "dry",
    nor "prices.txt")."""
    words = [w for w in re.split(r"[_\-.\s]+", re.sub(r"\.[a-z0-9]{2,4}$", "", name.lower())) if w]
    if len(words) < 2 or not words[0].isalpha() or stems(words[0]) & _GENERIC_HEADING_STEMS or words[0] in _TRADE_WORDS:
        return None
    return words[0]


# First words of a file's name that say what is sold, not whose: "dry_cleaning", "carpet_cleaning".
_TRADE_WORDS = frozenset("dry carpet window car van home house office pet dog cat bike boat key lock hair nail "
                         "skip mobile local city garden lawn tyre tire print photo".split())


def _name_words(name: str) -> set[str]:
    """The stems of a document's name that may name its business ("riverside_yoga_prices.txt":
    riversid, yoga), not a price list's words."""
    return stems(re.sub(r"[_\-.]+", " ", name)) - _GENERIC_HEADING_STEMS


# Words any question of a price list may hold, naming no business of it.
_GENERIC_QUESTION_STEMS = frozenset(stems(
    "how much many what whats when where which who is are does do the a an and or of for to in on at with "
    "price cost costs pay charge fee total plus each per me my we us our i you your it that this there "
    "would will be can could need want get please pls hi hello thanks"))


# Words of a heading that name no one business ("Lido prices", "Cafe menu", "price-list.pdf").
_GENERIC_HEADING_STEMS = frozenset(stems("price prices offer offers menu list hire rates rate info information shop "
                                         "services centre center club studio company ltd pdf txt docx leaflet "
                                         "opening hours welcome our the"))


def prices_first(question: str, sentence: str, operands: Sequence[str], prices: Sequence[str]) -> list[str]:
    """The `prices` of `sentence`, the operands among them first, then each price whose own words
    name the question's thing before the others ("balcony tickets €16", not "€22")."""
    named = named_prices(question, sentence)
    ordered = dict.fromkeys([a for a in operands if a in prices] + list(prices))
    return sorted(ordered, key=lambda a: -named.get(a, 0))


# A price per head: "£24 each", "£12 per person", "£9 pp".
PER_HEAD_AFTER = re.compile(r"\s*(?:per\s+(?:person|head|adult|child|guest|player|participant|pupil|student|visitor)|"
                             r"each|pp|a\s+head)\b", re.IGNORECASE)
def _counts_unit(question: str, unit: str) -> bool:
    """Whether `question` counts `unit` ("9 days") or names one of it ("for one day", "a week")."""
    word = re.escape(unit.lower().rstrip("s"))
    return bool(counts_of(question, unit)) or re.search(rf"\b(?:one|a|an|per|each|the\s+whole|a\s+full)\s+{word}s?\b",
                                                      question, re.IGNORECASE) is not None


_PER_UNIT_AFTER = re.compile(r"\s*per\s+([a-z]+)\b", re.IGNORECASE)
# The most prices of one sentence read for what names them (a longer "sentence" is a run-on list; each
# price's clause is read against the others: quadratic).
MAX_NAMED_PRICES = 40


def named_prices(question: str, sentence: str) -> dict[str, float]:
    """Each price of `sentence` -> how many of the question's words its own words name
    (basket.thing_words)."""
    found = list(PRICE.finditer(sentence))[:MAX_NAMED_PRICES]
    asked, lengths = norm_words(question), named_lengths(question)
    after = labels_after(sentence, found)
    named: dict[str, float] = {}
    carried: set[str] = set()
    for i, m in enumerate(found):
        price = next(g for g in m.groups() if g).replace(",", "")
        # "£45 between 8am and 6pm; £75 between 6pm and 8am, and all day on Sundays" at 9pm: the £75
        clause = _price_clause(sentence, found, i)
        when = applies(clause, question) if len(found) > 1 else None
        # "high season (Jul-Aug) £26" for a stay in May: no
        season = in_months(clause, question) if len(found) > 1 else None
        if season is not None:
            when = season if when is None else when and season
        # "dogs under 20 kg £25, dogs 20 kg and over £32" for a 25 kg dog: not the £25
        if len(found) > 1 and outside_band(question, sentence[found[i - 1].end() if i else 0:m.start()]):
            when = False
        # "£28 per person; groups of 4 or more pay £24 each" for 5 of us: the £24; for one, the £28 (a
        # price per head whose own words before it name the group: not "£120 for groups of 10 or more")
        per_head = PER_HEAD_AFTER.match(sentence, m.end()) is not None
        least = least_group(clause.split(m.group(0))[0]) if len(found) > 1 and per_head else None
        if least is not None:
            size = group_size(question)
            fits = size is not None and Fraction(size) >= least
            when = fits if when is None else when and fits
        # "$3.50 each | 10 or more copies of the same key: $2.75 each" for 10 copies: the $2.75; for 3, the $3.50
        if len(found) > 1 and least is None:
            tier = least_count_met(sentence[found[i - 1].end() if i else 0:m.start()], question)
            if tier is not None:
                when = tier if when is None else when and tier
        # the conditions first (a day or a month named over a time range only: "all day on Sundays"), then the words
        rank = 0 if when is None else -1 if not when else 2 if (named_days(clause) is not None or season) else 1
        # (a price with no words of its own, a row's later cell "$850 Per month; $40 Per day", is the row's)
        words = thing_words(sentence, found, i) or carried
        carried = words
        score = rank * 10 + len(words & asked)
        # a price per a unit the question counts: "$40 Per day" for "9 days", not "$850 Per month"
        per = _PER_UNIT_AFTER.match(sentence, m.end())
        if per is not None and len(found) > 1 and not stems(per.group(1)) & PEOPLE_STEMS and _counts_unit(question, per.group(1)):
            score += 0.5  # (between prices its words name alike: "Bike: £25 per day; helmets £2 per hour" stays £25)
        # a length naming it: "2 hr session" over "1-hour session: $28 90-minute session: $36 2-hour session: $42"
        # (labels after the prices, "2-hour lesson: £76 manual, £84 automatic": the line's own label names each)
        label = sentence[found[i - 1].end() if i and not after else 0:m.start() if not after else found[0].start()]
        if lengths and label.rstrip().endswith(":") and lengths & _lengths(label.split(":")[-2] if label.count(":") > 1
                                                                            else label):
            score += 3
        named[price] = max(named.get(price, score), score)
    return named


_LENGTH = re.compile(r"(?<![\w.])([0-9]+(?:\.[0-9]+)?)\s*(?:-\s*)?(hrs?|hours?|mins?|minutes?)\b", re.IGNORECASE)


def _lengths(text: str) -> set[Fraction]:
    """The lengths of time `text` writes, in minutes ("2 hr", "90-minute", "2-hour" -> {120, 90})."""
    return {Fraction(m.group(1)) * (60 if m.group(2).lower().startswith("h") else 1) for m in _LENGTH.finditer(text)}


def named_lengths(question: str) -> set[Fraction]:
    """The lengths naming a thing in `question`, in minutes ("a 2 hr session", "the 90-minute
    class" -> {120, 90}; not "for 2 hours": operations.names_a_length)."""
    return {length for m in _LENGTH.finditer(question) if names_a_length(question, m.start(1))
            for length in _lengths(m.group(0))}


# A length of time spent in minutes: "probably 45 minutes work", "about 15 minutes", "in under half an hour".
_MINUTES_SPENT = re.compile(r"(?<![\w.])([0-9]+)\s*-?\s*(?:minutes?|mins?)\b(?![\s-]+(?:drive|walk|away|from|notice|late|early))"
                            r"|\b(half)\s+an\s+hour\b|\b(?:a\s+)?(quarter)\s+(?:of\s+)?an\s+hour\b", re.IGNORECASE)


def minutes_spent(question: str) -> Fraction | None:
    """The one length of time `question` spends in minutes, when it counts nothing else ("probably
    45 minutes work at most" -> 45; "in under half an hour" -> 30); None otherwise (no such length,
    two of them, a length naming a thing: "a 90-minute class", or another number: "2 shelves in
    45 minutes")."""
    digits = with_digits(question)
    found = [m for m in _MINUTES_SPENT.finditer(digits) if not (m.group(1) and names_a_length(digits, m.start(1)))]
    if len(found) != 1 or re.search(r"\bhours?\b|\bhrs?\b", _MINUTES_SPENT.sub(" ", digits), re.IGNORECASE):
        return None
    m = found[0]
    if re.search(r"[0-9]", digits[:m.start()] + digits[m.end():]):
        return None
    return Fraction(m.group(1)) if m.group(1) else Fraction(30 if m.group(2) else 15)


def names_asked_length(question: str, sentence: str) -> bool:
    """Whether a price of `sentence` is labelled by a length the question names a thing by
    ("2-hour lesson: £72" for "a 2hr manual lesson"; not "£60 per hour, minimum 1 hour")."""
    lengths = named_lengths(question)
    if not lengths:
        return False
    row = TABLE_ROW.match(sentence)  # (or a table's row: "2-hour pass: Mon-Thu $14.00; Fri-Sun & holidays $18.00.",
    if row is not None and lengths & _lengths(row.group(1)):  # blind set 104, read)
        return True
    found = list(PRICE.finditer(sentence))
    for i, m in enumerate(found):  # a price's own label: "2-hour lesson: £76", not "minimum 1 hour"
        label = sentence[found[i - 1].end() if i else 0:m.start()]
        if label.rstrip().endswith(":") and lengths & _lengths(label.split(":")[-2] if label.count(":") > 1 else label):
            return True
    return False


# A table's cell under a column named by a length: "Single kayak: 2 hours $35; Half day $50." (its "2 hours"), "Up
# to 4 hours £300", "Full day (8 hours) £520".
_CELL_LENGTH = re.compile(rf"(?:^|[:;])\s*(?:up\s+to\s+|first\s+|\w+\s+\()?([0-9]+(?:\.[0-9]+)?)\s*-?\s*"
                          rf"(hours?|hrs?|days?|nights?|weeks?|minutes?|mins?)\)?\s+[{CURRENCY_SIGNS}]", re.IGNORECASE)


def column_band_expressions(question: str, sentences: Sequence[str]) -> list[str]:
    """The price of the count `question` gives of a table row's thing, at the cell whose column is a
    band of counts holding it ("Hawthorn: 1-49 £0.95; 50-249 £0.80; 250+ £0.65." for "30 hawthorn
    whips": "0.95 * 30", practice set 2), for each row of `sentences` the question names by all its
    name's words and counts once; [] when none."""
    asked, out = norm_words(question), []
    for sentence in sentences:
        row = TABLE_ROW.match(sentence)
        named = content_words(row.group(1)) if row else []
        if not named or not norm_words(row.group(1)) <= asked:
            continue
        counts = set(counts_of(question, named[-1]))
        prices = list(PRICE.finditer(sentence))
        if len(counts) != 1 or not table_row_name(sentence, prices):
            continue
        count = counts.pop()
        for i, m in enumerate(prices):
            cell = sentence[prices[i - 1].end() if i else row.end(1) + 1:m.start()].strip(" ;:")
            if cell_band_holds(cell, count):
                out.append(f"{m.group(1).replace(',', '')} * {count}")
    return out


_MEASURE_NOUNS = frozenset({"gsm", "btu", "psi", "watt", "volt", "mph", "rpm"})
# A cell of a count and its price: "4 units S$380.00", "3 rooms: £240".
_COUNTED_CELL = re.compile(rf"(?<![\w.,])([0-9]+)\s+([a-z]+)\s*:?\s*(?:[A-Z]{{1,3}})?{SIGNED_PRICE}")
# A price of each one beyond the last cell's count: "Each unit above 5: S$88.00 a year".
_EACH_BEYOND = re.compile(rf"\beach\s+(?:additional\s+|extra\s+)?([a-z]+)\s+(?:above|over|beyond|after)\s+([0-9]+)\s*:?\s*"
                          rf"(?:is\s+|costs?\s+)?(?:[A-Z]{{1,3}})?{SIGNED_PRICE}", re.IGNORECASE)


def counted_cell_expressions(question: str, sentences: Sequence[str]) -> list[str]:
    """The price of the cell whose count is the one `question` gives of its noun, in a sentence of
    cells of counts of one noun ("Annual service contract: 2 units S$220.00; 3 units S$300.00; 4 units
    S$380.00" for "the service contract for 4 units": "380.00", practice set 6); beyond the last
    cell, that cell's price and each one more at the price a sentence gives ("Each unit above 5:
    S$88.00 a year" for 7 units: "460.00 + (7 - 5) * 88.00"). [] when none."""
    out = []
    # (or lines of a list, each opening with its count: "20 tokens: $5.00" / "100 tokens: $20.00" / "250 tokens: $45.00",
    # blind set 104, read)
    lines = [m for s in sentences for m in [_COUNTED_CELL.match(s.lstrip("*•- "))] if m is not None]
    listed = " ; ".join(m.group(0) for m in lines) if len({m.group(2).lower() for m in lines}) == 1 and len(lines) >= 2 else ""
    for sentence in [*sentences, listed] if listed else sentences:
        cells = list(_COUNTED_CELL.finditer(sentence))
        nouns = {singular(m.group(2).lower()) for m in cells}
        # (of things, not of a measure: "A5 130 gsm £0.12; A5 300 gsm £0.20" are sizes)
        if len(cells) < 2 or len(nouns) != 1 or len(next(iter(nouns))) < 3 or is_unit(next(iter(nouns))) or (
                next(iter(nouns)) in _MEASURE_NOUNS):
            continue
        noun = nouns.pop()
        # (of the cells' row the question names in the sentence counting them: "the service contract for 4 units"
        # over "Annual service contract: 2 units ...", not "I'm on your annual contract. ... three 9000 BTU wall units")
        label = stems(re.sub(r"\([^()]*\)", " ", sentence[:cells[0].start()]))
        said = [part for part in re.split(r"(?<=[.?!])\s+", question) if counts_of(part, noun)]
        if len(said) != 1 or (sentence != listed and (not label or not label & stems(said[0]))):
            continue
        counts = set(counts_of(said[0], noun))
        if len(counts) != 1:
            continue
        count = int(counts.pop())
        # (each of the things the question counts besides: "3 hardcover photo books of 20 pages each" are 3 of the
        # "20 pages" cell; not a count naming the thing, "a 12-page booklet", review)
        if re.search(rf"(?<![\w.]){count}-{noun[:4]}", said[0], re.IGNORECASE):
            continue
        others = [n for n in re.findall(r"(?<![\w.,])[0-9]+(?![\w.,]*-)", with_digits(question)) if int(n) != count]
        if len(others) > 1:
            continue
        times = f" * {others[0]}" if others else ""
        price = {int(m.group(1)): next(g for g in m.groups()[2:] if g).replace(",", "") for m in cells}
        if count in price:
            out.append(f"{price[count]}{times}")
            continue
        last = max(price)
        beyond = [m for s in sentences for m in [_EACH_BEYOND.search(s)] if m is not None
                  and singular(m.group(1).lower()) == noun and int(m.group(2)) == last]
        if count > last and beyond and not others:
            out.append(f"{price[last]} + ({count} - {last}) * {next(g for g in beyond[0].groups()[2:] if g).replace(',', '')}")
    return out


def column_lengths(question: str, sentence: str) -> set[str]:
    """The numbers of the lengths `question` gives ("for 2 hours") that `sentence`, a table's row,
    names a column by ("Single kayak: 2 hours $35; Half day $50; Full day $75."): the price of
    that column is the hire's for that long, no price to multiply by it; {} when none."""
    if not TABLE_ROW.match(sentence):
        return set()
    return {m.group(1) for m in _CELL_LENGTH.finditer(sentence)
            if re.search(rf"(?<![\w.]){re.escape(m.group(1))}\s*-?\s*{_LENGTH_UNITS[m.group(2).lower()[:2]]}\b", question,
                         re.IGNORECASE)}


# A length's unit as a question may write it, by its first two letters as a column writes them ("2 hrs": "2 hours").
_LENGTH_UNITS = {"ho": r"(?:hours?|hrs?|h)", "hr": r"(?:hours?|hrs?|h)", "da": r"days?", "ni": r"nights?", "we": r"weeks?",
                 "mi": r"(?:minutes?|mins?)"}


# A price per a unit: "€130 per night", "£2.80 per kg", "$45 an hour"; or the unit first, on a list's line
# ("Dry ice, per lb (min. 10 lb) ........ $3.25": blind set 94, read; priced_per_count(unit_first=True)).
# (or a table's column named by its unit right before the price: "Dutch <-> German: Per word €0.14.")
_PRICE_PER = re.compile(rf"{SIGNED_PRICE}\s+(?:per|a|an|each)\s+(?P<unit>[a-z]+)"
                        rf"|(?:^|[:;]\s)\s*per\s+(?P<unit_cell>[a-z]+)\s+{SIGNED_PRICE}"
                        rf"|\bper\s+(?P<unit_first>[a-z]+)\b[^\n{CURRENCY_SIGNS};]{{0,60}}?{SIGNED_PRICE}", re.IGNORECASE)


# A count that is a bound, not an amount bought: "taller than 2 metres", "less than 48 hours", "up to 3 kg".
_THRESHOLD_COUNT = re.compile(r"\b(?:taller|shorter|longer|bigger|smaller|heavier|lighter|more|less|fewer|over|under|"
                              r"above|below)\s+than\s+[0-9]+|\b(?:over|under|above|below|up\s+to|at\s+least|at\s+most|"
                              r"within)\s+[0-9]+", re.IGNORECASE)


def priced_per_count(question: str, sentence: str, unit_first: bool = False) -> bool:
    """Whether `sentence` prices a unit the question counts ("€130 per night" for "4 nights in
    May", "£2.80 per kg" for "3kg"), not a person (the party is counted elsewhere), not by a bound
    ("hedges taller than 2 metres"), nor a rate the question asks itself ("what do you charge per
    metre"). `unit_first`: also the unit written before the price ("Dry ice, per lb (min. 10 lb): $3.25"
    for "15 lb of dry ice"; which lines a question asks about, not which of them ranks first: "Rekey lock
    cylinder (per cylinder): $25.00" stays after "pay $20.00 per cylinder" for "all 4 lock cylinders")."""
    own = _THRESHOLD_COUNT.sub(" ", question)  # "hedges taller than 2 metres", "less than 48 hours' notice"
    return any(not stems(unit) & PEOPLE_STEMS and counts_of(own, unit)
               and not re.search(rf"\bper\s+{re.escape(unit)}", question, re.IGNORECASE)  # the rate itself asked
               for unit in (m.group("unit") or m.group("unit_cell") or (m.group("unit_first") if unit_first else None)
                            for m in _PRICE_PER.finditer(sentence)) if unit)


# A count and the words after it that name what it counts: "2 laser cut car key blades", "3 padlock keys".
_COUNTED_RUN = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}])([0-9]+)\s+((?:[a-z][\w'-]*\s+){{0,4}}[a-z][\w'-]*)", re.IGNORECASE)
_RUN_END = re.compile(r"\b(?:for|of|at|on|in|to|with|and|or|but|please|pls|whats|what|how|is|are|from|before|after)\b",
                      re.IGNORECASE)


def prices_counted_thing(question: str, sentence: str) -> bool:
    """Whether `sentence` prices a thing the question counts more than once, named by the words
    after its count ("2 laser cut car key blades" over "Laser-cut car key blade: $85.00": two of
    its words, or its only one; simple set 66)."""
    counted: set[str] = set()
    for m in _COUNTED_RUN.finditer(with_digits(question)):
        if m.group(1) in ("0", "1"):
            continue
        counted |= norm_words(_RUN_END.split(m.group(2))[0])
    if not counted:
        return False
    prices = list(PRICE.finditer(sentence))
    return any(len(own & counted) >= min(2, len(own)) for own in (thing_words(sentence, prices, i) for i in range(len(prices)))
               if own)


# Where a price's own conditions end: the next clause ("; ") or the next list entry naming a day
# ("Weekdays £10 and weekends £14").
_CLAUSE_END = re.compile(r";|[,.]?\s(?:and|or)\s+(?=(?:on\s+)?(?:weekends?|weekdays?|mondays?|tuesdays?|wednesdays?|"
                         r"thursdays?|fridays?|saturdays?|sundays?)\b)|,\s+(?=(?:on\s+)?(?:weekends?|weekdays?|mondays?|"
                         r"tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?)\b)", re.IGNORECASE)


# The best ranked sentences a price per two units is read from.
MAX_RATE_SENTENCES = 3
_TWO_PER = re.compile(rf"{SIGNED_PRICE}\s+(?:per|a|an|each)\s+([a-z]+)\s+(?:per|a|an|each)\s+([a-z]+)\b", re.IGNORECASE)


def two_rates(question: str, ranked: Sequence[str]) -> list[str]:
    """A price per two units times the question's count of each ("Bow hire: £7 per person per
    session" for 4 of us and 3 sessions -> "7 * 4 * 3"; "£3.20 per metre per week" for an
    8-metre boat for 6 weeks -> "3.20 * 8 * 6"), of the best ranked sentences `ranked`; [] when
    the question counts either unit once or not at all."""
    out = []
    aside = set_aside_words(question)  # "(ignore tourist tax)": not "Tourist tax of €1.50 per adult per night"
    for sentence in ranked:
        if aside & norm_words(sentence):
            continue
        for m in _TWO_PER.finditer(sentence):
            counts = [_count_of(question, unit) for unit in (m.group(2), m.group(3))]
            if all(c is not None and c != "1" for c in counts):
                out.append(f"{m.group(1).replace(',', '')} * {counts[0]} * {counts[1]}")
    return out


def _count_of(question: str, unit: str) -> str | None:
    """How many of `unit` the question counts: its party for people ("me and my 3 mates": 4), else
    a number before the unit's word ("an 8-metre boat", "for 6 weeks", "Friday and Saturday
    nights": 2)."""
    if stems(unit) & PEOPLE_STEMS:
        return group_size(question)
    n = counted(question, unit)
    return None if n is None else str(n)


def price_named(question: str, name: str, rate: str, sentences: Sequence[tuple[str, str]]) -> str | None:
    """The price of the first sentence of `rate`'s document (`sentences`: (heading, sentence))
    naming `name` ("call-out fee"), `rate`'s own aside, the one whose own words and conditions
    fit `question` best ("£75 between 6pm and 8am" at 9pm); None when none names it or holds a
    price."""
    headings = {h for h, s in sentences if s == rate}
    for heading, sentence in sentences:
        if heading in headings and sentence != rate and name.lower() in sentence.lower():
            named = named_prices(question, sentence)
            if named:
                return max(named, key=lambda price: named[price])  # equals: the sentence's first
    return None


def _price_clause(sentence: str, found: Sequence[re.Match[str]], i: int) -> str:
    """The words of the `i`th price of `sentence` (`found`: its prices) naming when it applies: back
    to the last separator after the price before, on to the next clause or list entry (none when
    the text after it is the next entry's label: "... $42 Weekday happy hour (Mon-Thu 4-6pm): ")."""
    end = found[i + 1].start() if i + 1 < len(found) else len(sentence)
    # back to the clause's start ("Weekdays: adult £10, | child £6" keeps "Weekdays"), or to an entry naming a day
    before = sentence[:found[i].start()].split(";")[-1]
    before = _CLAUSE_END.split(before)[-1]
    after = _CLAUSE_END.split(sentence[found[i].end():end])[0]
    # "2-hour session: $42 | Weekday happy hour (Mon-Thu 4-6pm): $5 off": the next entry's label (not an aside's
    # "(note: book ahead)")
    if re.search(r":(?![0-9])", re.sub(r"\([^()]*\)", " ", after)):
        after = ""
    return before + found[i].group(0) + after


def without_amount(sentence: str, amount: str) -> str:
    """`sentence` without the last price `amount` written with its currency sign ("$5")."""
    found = list(re.finditer(rf"[{CURRENCY_SIGNS}]\s*{re.escape(amount)}(?![0-9])", sentence))
    return sentence if not found else sentence[:found[-1].start()] + " " + sentence[found[-1].end():]


def reached(expression: str, claim: str, evaluate: Callable[[str], Any]) -> bool:
    """Whether `expression`'s value reaches the least spend of the adjustment claimed by `claim`
    ("Orders over €150": above it; "£50 or more", "at least £50": it or above); True when it names
    none."""
    spend = least_spend(claim)
    if spend is None:
        return True
    value = exact_value(expression, evaluate)
    return value >= Fraction(spend) if re.search(r"or\s+more|at\s+least", claim, re.IGNORECASE) else value > Fraction(spend)


def surcharged(expression: str, surcharges: Sequence[tuple[str, str, str, str]], question: str = "") -> str:
    """`expression` with each amount of `surcharges` added or taken off (times the count the
    question gives of what it is per: "Lamination adds €4 per poster" for "6 A1 posters, all
    laminated" -> 6 * 4), then each percentage and each multiple laid on ("1.8 times the single
    fare": (7.40) * 1.8; only over one term, not a bill of several things); not an amount a later
    term of the bill is already, a thing the question lists that the sentence names (a basket's "one
    child trailer")."""
    added = expression
    # a thing the question lists is billed already ("4 hybrid bikes ... plus one child trailer": 4 * 32 + 6, over
    # "Child seat or trailer: £6 extra per day"): a later term of that amount, the thing named by the sentence
    billed = {price for term in added_terms(expression)[1:] for price in term.split(" * ")}
    listed = [norm_words(thing) for _, thing in basket_items(question)] if billed else []
    for kind, amount, sentence, _ in surcharges:
        named = norm_words(sentence)
        if kind == "+" and amount in billed and any(words and words <= named for words in listed):
            continue
        if kind in "+-":  # "Senior citizens (65+) receive $5 off each visit": - 5
            count = count_per(question, sentence, amount)
            added += f" {kind} " + (amount if count is None else f"{count} * {amount}")
    for kind, amount, _, _ in surcharges:
        if kind == "%":
            added = f"({added}) * (100 + {amount}) / 100"
        elif kind == "x" and len(added_terms(added)) == 1:  # "Return tickets cost 1.8 times the single fare"
            added = f"({added}) * {amount}"  # (not a bill of several things: which of them is the return?)
    return added


def added_terms(expression: str) -> list[str]:
    """The terms of `expression` added at its top level, outside brackets ("3 * 1.50 + (2 * 2.50)"
    -> ["3 * 1.50", "(2 * 2.50)"])."""
    terms, depth, start = [], 0, 0
    for i, ch in enumerate(expression):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and expression.startswith(" + ", i):
            terms.append(expression[start:i])
            start = i + 3
    return terms + [expression[start:]]


def exact_value(expression: str, evaluate: Callable[[str], Any]) -> Fraction:
    """The exact value of an expression the calculator accepted."""
    value = evaluate(expression)
    return Fraction(getattr(value, "q", value))


# A price per person ("£3 per person") counts everyone the question counts: "3 adults", "2 adults and 2 kids".
PERSON_STEMS = frozenset({"person", "head", "guest", "visitor", "particip", "peopl", "ppl", "passeng", "rider", "diner",
                          "attende"})
PEOPLE_STEMS = PERSON_STEMS | {"adult", "child", "kid", "children", "student", "senior", "friend", "mate", "player",
                                 "teen", "teenag", "junior", "pupil", "member"}


def count_per(question: str, sentence: str, amount: str, any_item: bool = True) -> str | None:
    """The count `question` gives of the thing an amount of `sentence` is per ("€4 per poster" and
    "6 A1 posters" -> "6"); None when it is per nothing or the question counts none of it, or one.
    With `any_item`, a price "per item" counts the one thing the question counts; not for a thing
    of a list named, whose price per item is its own (mentions: "2 bedside tables, a chest of
    drawers" over "Chest of drawers: $85 per item" is one chest, practice set 1)."""
    per = re.search(rf"[{CURRENCY_SIGNS}]\s*{re.escape(amount)}(?![0-9])\s+(?:more\s+|extra\s+|off\s+|(?:surcharge|supplement|fee|charge)\s+)?"
                    r"(?:per|each|a|an)\s+(?:paying\s+)?([a-z][\w-]*)",  # ("save £10 per paying participant")
                    sentence, re.IGNORECASE)
    if per is None:
        return None
    unit = stems(per.group(1))
    if unit & PERSON_STEMS:  # "£3 per person": the party ("me and my 3 mates": 4)
        party = group_size(question)
        return None if party in (None, "1") else party
    found = counts_of(question, per.group(1))  # every count: "6 A1 posters and 4 A2 posters, all laminated": 6 + 4
    count = " + ".join(found) if len(found) < 2 else f"({' + '.join(found)})"
    if not found and unit & _ANY_ITEM and any_item:  # "add €0.40 per item" for "160 envelopes ... in gold ink" (blind set 100)
        # (of one count only: "a back print only on the hoodies" of "20 T-shirts and 10 hoodies" is not on all 30, review)
        things = thing_counts(question)
        count = str(things[0]) if len(things) == 1 else ""
        found = [count] if count else []
    return None if not found or count == "1" else count


# Units that are any thing the question counts: "€0.40 per item", "£1 per piece".
_ANY_ITEM = frozenset(stems("item items piece pieces article articles"))


# Words of a section heading that name no kind of thing: "PRICES", "RATES 2025".
_GENERIC_SECTION = frozenset(stems("price prices rate rates list charges fees cost costs our the and extras other"))
_ADDED_ROW = re.compile(r"\s*(?:\+|add\b|adds\b|plus\b|extra\b)", re.IGNORECASE)
_MEASURE_WORDS = frozenset(stems("mile miles km kilometre kilometres metre metres hour hours minute minutes day days week "
                                 "weeks month months year years per each first"))


def named_with_section(question: str, sentences: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The one row ("label: price") that `question` names both by a word of its label and by a word
    of the section heading over it (sentences.section_headings), more of the label's words than any
    other such row: "can i get my ride-on serviced" over "ANNUAL SERVICES" and "Ride-on mower / lawn
    tractor: £165.00" (a long question's other words had ranked "storage is charged at £3.00 per
    day" first; blind set 90, read after its runs); None when none, or several name as many."""
    asked = stems(question)
    best: list[tuple[int, tuple[str, str]]] = []
    for pair, section in zip(sentences, section_headings(sentences)):
        label = pair[1].split(":", 1)[0] if ":" in pair[1] and PRICE.search(pair[1].split(":", 1)[1]) else ""
        # (a row of an amount added to another's is no thing's price: "Ride-ons & lawn tractors: add £20.00 to any zone")
        if not label or not stems(section) - _GENERIC_SECTION & asked or _ADDED_ROW.match(pair[1].split(":", 1)[1]):
            continue
        # (not its aside, "(chain sharpen included)", nor a distance or a time, "Zone B — 5 to 12 miles")
        # (a word of its own: not "Zone B" under "TRAVEL ZONES" for "I'm in Zone C", blind set 88)
        shared = len(stems(re.sub(r"\([^()]*\)", " ", label)) & asked - _MEASURE_WORDS - stems(section))
        if shared:
            best.append((shared, pair))
    if not best:
        return None
    top = max(n for n, _ in best)
    chosen = [pair for n, pair in best if n == top]
    return chosen[0] if len(chosen) == 1 else None


def listed_prices(question: str, sentences: Sequence[tuple[str, str]],
                   embed: Callable[[Sequence[str]], Any] | None) -> list[str]:
    """The prices of the best ranked sentence holding one, those whose own words
    (basket.thing_words) name most of the question's first ("small (40 balls) $8, medium (80
    balls) $14", asked about a medium bucket -> ["14", "8"]): the price a surcharge or a
    discount the question claims applies to."""
    ranked = rank_sentences(question, list(sentences), embed)
    headed = named_with_section(question, sentences)
    if headed is not None:  # ("my ride-on serviced" over "ANNUAL SERVICES" and "Ride-on mower / lawn tractor: £165.00")
        ranked = [headed] + [pair for pair in ranked if pair != headed]
    # "a 2hr manual lesson": the sentence pricing a 2-hour lesson first; "a 4 bed detached": "4 bed detached: ..."
    asked_sizes = sizes_alone(question)
    # and not what the question sets aside: "plain sleeves, no cuffs" is not "Shorten sleeves (working cuffs)"
    aside = set_aside_words(question)
    # nor a size band the question's measure is outside ("Saltwater/reef tank up to 55 gallons: $90" for a 90 gal reef)
    for _, sentence in sorted(ranked, key=lambda pair: (bool(aside & norm_words(pair[1])), outside_band(question, pair[1]),
                                                        not names_asked_length(question, pair[1]),
                                                        bool(asked_sizes) and not asked_sizes & sizes(pair[1]))):
        named = named_prices(question, sentence)
        # (a bound is no price: "repairs estimated at over £300 need a 25% deposit", blind set 90, read after its runs)
        bounds = {next(g for g in m.groups() if g).replace(",", "") for m in PRICE.finditer(sentence)
                  if THRESHOLD_BEFORE.search(sentence[:m.start()])}
        named = {price: score for price, score in named.items() if price not in bounds}
        if named:
            return sorted(named, key=lambda price: -named[price])  # equals in the sentence's order
    return []
