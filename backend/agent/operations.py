"""The arithmetic a person's question names or implies, read from its words (issue 15): the
operations ("multiplied by 2", "12.5 metres taller", "how much do 4 tickets cost", "two-fifths
of"; named_operations), what it asks for (a cost, a total, an age, a quantity) and its numbers
as written (NUMBER_RE; counts in words as digits: with_digits). The calculator's cue
(backend.agent.routing.needs_calculation) and its candidates (backend.agent.tools.expressions)
read them. Every pattern reads at most MAX_CUE_CHARS of the message (cue_text) and none
backtracks over it.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Iterable

# The cues read at most this many characters of the message (its start and its end): what
# decides is the question, and a 30,000-character message must not cost the event loop anything.
MAX_CUE_CHARS = 2000
PERCENT_SIGN = r"(?:%|percent\b|per\s+cent\b)"


# The operations a question names with their number (named_operations), and numbers as written.
_NUMBER = r"(-?(?:[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?))"
# A number as written: ASCII digits, thousands separators, a minus sign right before it ("-12
# degrees"; not the hyphen of "2024-05-01", whose parts are not numbers here).
NUMBER_RE = re.compile(rf"(?<![\w.,-]){_NUMBER}(?!\w|-[0-9]|[.,][0-9])")
_FLAGS = re.IGNORECASE
# (pattern with one number group, template of the operand {a} and that number {n}).
_NAMED = (
    (re.compile(rf"\bsubtract\w*\s+{_NUMBER}\s+from\b", _FLAGS), "{a} - {n}"),
    (re.compile(rf"\bsubtract\w*\b[^.?!\n]{{0,80}}?\bfrom\s+{_NUMBER}", _FLAGS), "{n} - {a}"),
    (re.compile(rf"\b(?:minus|less)\s+{_NUMBER}", _FLAGS), "{a} - {n}"),
    (re.compile(rf"\b(?:multiplied\s+by|times)\s+{_NUMBER}", _FLAGS), "{a} * {n}"),
    (re.compile(rf"\bmultiply\b[^.?!\n]{{0,80}}?\bby\s+{_NUMBER}", _FLAGS), "{a} * {n}"),
    (re.compile(rf"(?<![\w.]){_NUMBER}\s+times\b", _FLAGS), "{a} * {n}"),
    (re.compile(rf"\bdivided\s+by\s+{_NUMBER}", _FLAGS), "{a} / {n}"),
    (re.compile(rf"\bdivide\b[^.?!\n]{{0,80}}?\bby\s+{_NUMBER}", _FLAGS), "{a} / {n}"),
    (re.compile(rf"\b(?:plus|add|adds|added|adding)\s+{_NUMBER}", _FLAGS), "{a} + {n}"),
    (re.compile(rf"(?<![\w.]){_NUMBER}\s*{PERCENT_SIGN}\s*of\b", _FLAGS), "{a} * {n} / 100"),
)
_GROW = r"grew|grow|grows|rose|rise|rises|increased?|increases|went\s+up|goes\s+up"
_SHRINK = r"fell|fall|falls|dropped|drops?|decreased?|decreases|shrank|shrinks?|went\s+down|goes\s+down"
# A quantity asked per unit of time ("how many kilometres a day"), not a rate given ("once a day").
_PER_UNIT = re.compile(r"\bhow\s+(?:many|much|far|long)\b[^.?!\n]{0,60}?\b(?:a|per|each|every)\s+"
                       r"(?:night|day|week|month|year|hour|minute|season)\b", re.IGNORECASE)
_FRACTIONS = {"third": 3, "quarter": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}
_WORDS = (
    (re.compile(r"\b(?:twice|double)\b", _FLAGS), "{a} * 2"),
    (re.compile(r"\btriple\b", _FLAGS), "{a} * 3"),
    (re.compile(r"\bhalf\s+(?:of|the|a|an|its|their)\b|\bhalve\b", _FLAGS), "{a} / 2"),
    *((re.compile(rf"\b(?:a|one)\s+{word}\s+of\b", _FLAGS), f"{{a}} / {d}") for word, d in _FRACTIONS.items()),
)
# Implicit operations with the question's number: a comparison ("if it were 12.5 metres taller"),
# a share ("split between 4", "per person among 3"), the cost of several ("how much do 4 tickets
# cost"), years counted from a year ("counting from 2030, how many years ago").
# The word between a number and its comparison is its unit ("12.5 metres taller"), never a verb
# or a conjunction ("15 is less than 200", "3 and more").
_UNIT = r"(?!(?:is|are|was|were|be|been|or|and|but|than|much|far|times)\b)[a-z]+"
_LARGER = r"taller|longer|heavier|older|higher|bigger|larger|wider|deeper|more|dearer|further|farther"
_SMALLER = r"shorter|lighter|younger|lower|smaller|narrower|shallower|less|fewer|cheaper"
_IMPLIED = (
    (re.compile(rf"(?<![\w.]){_NUMBER}\s*(?:%\s*|{_UNIT}\s+)?(?:{_LARGER})\b", _FLAGS), "{a} + {n}"),
    (re.compile(rf"(?<![\w.]){_NUMBER}\s*(?:{_UNIT}\s+)?(?:{_SMALLER})\b", _FLAGS), "{a} - {n}"),
    (re.compile(rf"\b(?:split|shared|divided|separated|spread|distributed)\b[^.?!\n]{{0,60}}?\b(?:equally|evenly)\s+"
                rf"(?:between|among|amongst|across|over)\s+{_NUMBER}", _FLAGS), "{a} / {n}"),
    (re.compile(rf"\b(?:split|shared|divided|separated)\s+(?:equally\s+|evenly\s+)?(?:between|among|amongst|by|into)"
                rf"\s+(?:groups\s+of\s+)?{_NUMBER}", _FLAGS), "{a} / {n}"),
    # "split the fare four ways", "shared 3 ways".
    (re.compile(rf"\b(?:split|share|shared|divide|divided)\b[^.?!\n]{{0,60}}?(?<![\w.]){_NUMBER}\s+ways\b", _FLAGS),
     "{a} / {n}"),
    (re.compile(rf"\bhow\s+(?:many|much)\s+more\b[^.?!\n]{{0,160}}?\b(?:reach|make|get\s+to|have|hit|total)\s+"
                rf"(?:[a-z]+\s+){{0,3}}?{_NUMBER}", _FLAGS), "{n} - {a}"),
    (re.compile(rf"\bhow\s+many\s+times\s+(?:[a-z]+\s+)?(?:than|as)\b[^.?!\n]{{0,60}}?{_NUMBER}", _FLAGS), "{a} / {n}"),
    # "How many minutes longer is the tour than a 45-minute film?": the difference.
    (re.compile(rf"\bhow\s+(?:many|much)\s+(?:(?!times\b)[a-z]+\s+)?(?:{_LARGER}|{_SMALLER})\b[^.?!\n]{{0,80}}?\bthan\b"
                rf"[^.?!\n]{{0,40}}?{_NUMBER}", _FLAGS), "{a} - {n}"),
    # A rate over a span: "over seven nights", "in 3 weeks", "for 12 months" (per day asked: "/").
    (_SPAN := re.compile(rf"\b(?:over|in|for|across|during|on)\s+{_NUMBER}\s+(?:nights|days|weeks|months|years|hours|"
                         rf"minutes|seasons|shifts|trips|journeys|crossings)\b", _FLAGS), "{a} * {n}"),
)
# A share per person asked ("how much each", "split it", "each person pay") of a price for a
# group counted in the question ("the 10 of us", "5 of us", "4 friends"): the price over them.
# Not "$12 per person" (a price already per person), nor "what share of the members".
_PER_PERSON = re.compile(r"\b(?:split|splitting|sharing|chipping\s+in|chip\s+in)\b"
                         r"|\bshare\s+(?:it|this|that|the\s+(?:cost|bill|price|total)|evenly|equally)\b"
                         r"|\bhow\s+much\s+(?:\w+\s+){0,3}each\b|\beach\s+(?:person|of\s+us|of\s+them|one\s+of\s+us)\s+"
                         r"(?:pay|pays|owe|owes|put|puts|chip)", re.IGNORECASE)
_PEOPLE = re.compile(rf"(?<![\w.]){_NUMBER}\s+(?:of\s+(?:us|you|them)|people|ppl|persons|friends|adults|guests|"
                     rf"colleagues|members|players|students|kids|children|siblings|flatmates|housemates|roommates|"
                     rf"coworkers|mates|guys|couples?)\b", re.IGNORECASE)
_PRICED_PER_HEAD = re.compile(r"\b(?:per|a)\s+(?:person|head|adult|child|ticket)\b|\bapiece\b|[$€£¥]\s*[0-9][0-9.,]*\s+each\b",
                              re.IGNORECASE)
# How many fit in a budget: "I've got a $500 budget. How many people can I send?" -> floor(500 / price).
_HOW_MANY_CAN = re.compile(r"\bhow\s+many\b[^.?!\n]{0,60}?\b(?:can|could)\s+(?:i|we|you|one)\b"
                           r"|\bhow\s+many\b[^.?!\n]{0,40}?\b(?:afford|fit\s+in)", re.IGNORECASE)
# "15% off", "a 20 percent discount", "a discount of 10%": the price after it.
_PERCENT_OFF = re.compile(rf"(?<![\w.]){_NUMBER}\s*{PERCENT_SIGN}\s*(?:off\b|discount\b|reduction\b)"
                          rf"|\b(?:discount|reduction)\s+of\s+{_NUMBER}\s*{PERCENT_SIGN}", _FLAGS)
_CHANGE_BY_PERCENT = re.compile(rf"\b({_GROW}|{_SHRINK})\b[^.?!\n]{{0,60}}?\bby\s+{_NUMBER}\s*{PERCENT_SIGN}", _FLAGS)
# A currency's name ("27.50 dollars", "how many rupees").
CURRENCY_NAMES = (r"(?:dollars?|euros?|pounds?|crowns?|marks?|francs?|florins?|guilders?|shillings?|pesos?|rupees?|"
                  r"lira|lire|dinars?|ducats?|thalers?|zloty|rand|yen|yuan|kronor|kroner|krona|krone|pence|cents?|"
                  r"credits?)")
# What several things cost, or bring in: a price times a count.
_BUDGET_WORDS = re.compile(r"\b(?:budget|have|got|with|up\s+to|spare|afford)\b", re.IGNORECASE)
# An amount as a price writes it, with or without thousands separators: "1,150", "4.60".
AMOUNT = r"([0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?)"
# A price after a currency sign: "£4.60", "$ 1,150".
SIGNED_PRICE = rf"[$€£¥]\s*{AMOUNT}"
# An amount of money in the question: "$500", "500 euros".
_MONEY = re.compile(rf"[$€£¥]\s*{_NUMBER}|(?<![\w.,]){_NUMBER}\s*{CURRENCY_NAMES}\b", _FLAGS)
# "how many pounds" may ask a weight, "how many marks" a grade, "how many credits" a course's: not a cost.
_COST_CURRENCY = r"(?!(?:pounds?|marks?|credits?)\b)" + CURRENCY_NAMES
_COST = re.compile(rf"\bhow\s+many\s+{_COST_CURRENCY}\b"  # "five people: how many rupees altogether?"
                   r"|\b(?:how\s+much|what\s+(?:would|will|do|does|did))\b[^.?!\n]{0,120}?"
                   r"\b(?:cost|pay|spend|charge|earn|lose|raise|collect|bring\s+in|come\s+to)"
                   r"|\b(?:total|whole|overall)\s+(?:[a-z]+\s+)?(?:fare|cost|price|bill|charge|amount)"
                   r"|\bgoing\s+to\s+(?:cost|come\s+to|set\s+\w+\s+back)\b|\bhow\s+much\s+for\b"
                   # "2 nutella crepes and 2 salted caramel crepes, how much?", "what's my bill"
                   r"|(?<!\bby\s)\bhow\s+much\s*(?:\?|$|altogether\b|all\s+together\b|in\s+total\b)"
                   r"|\bwhat(?:'s|s|\s+is|\s+will\s+be|\s+would\s+be)\s+(?:my|our|the)\s+(?:bill|total)\b"
                   r"|\bquote\s+(?:pls|please|me)\b"  # "brightpane quote pls: 6 windows"
                   # "if i buy 5 jars of the honey how much is that"
                   r"|\b(?:buy|buying|order|ordering|get|getting|take|taking|hire|hiring|book|booking)\s+"
                   r"[0-9][^.?!\n]{0,80}?\bhow\s+much\s+(?:is|would|will)\s+(?:that|this|it)\b"
                   r"|\b(?:calculate|work\s+out|figure\s+out)\s+(?:the\s+|what\s+)?(?:cost|price|total|fare|bill)\b"
                   r"|\bset\s+(?:me|us|you|him|her|them)\s+back\b|\bfor\s+the\s+lot\b"
                   r"|\bwhat(?:'s|s|\s+is|\s+would\s+be)\s+the\s+total\b"
                   r"|(?:^|[.!?]\s+)(?:and\s+)?(?:the\s+)?total\s*\?"  # "... with the fleet discount. Total?"
                   # "whats admission for 3 kids", "what's the fare for 2 adults"
                   r"|\bwhat(?:'s|s|\s+is|\s+would\s+be)\s+(?:the\s+)?(?:admission|entry|price|fee|fare|cost|charge|rent|hire)"
                   r"\s+(?:for|of)\s+[0-9]"
                   r"|\bwhat\b[^.?!\n]{0,120}?\b(?:would|will|do|does)\s+(?:\w+\s+)?"
                   r"(?:cost|come\s+to|add\s+up\s+to)\b", _FLAGS)
# A group counted by its members: "a family of 5", "a household of 4 members".
_COUNTED_GROUP = re.compile(rf"\b(?:family|household|group|party|team|class|crew|couple|table)\s+of\s+(?!(?:1[0-9]{{3}}|20[0-9]{{2}})$)"
                       rf"{_NUMBER}$", _FLAGS)  # "the class of 2024" is no head-count
# A length naming a thing, no count of it: "a 2 hr session", "the 90-minute class", "a 2-hour lesson"
# (not "2 hours of labour", "3 hours tuition").
_LENGTH_NAMED = re.compile(r"(?:\s*-\s*|\s+)(?:hrs?|hours?|mins?|minutes?)[\s-]+(?:long\s+)?(?:session|class|lesson|slot|tour|"
                           r"course|massage|treatment|ride|game|walk|package|workshop|trip|cruise|flight|appointment|"
                           r"consultation|visit|pass|ticket|party|hire|rental|block)s?\b"
                           r"|-(?:hrs?|hours?|mins?|minutes?)\s+[a-z]", _FLAGS)


def names_a_length(text: str, at: int) -> bool:
    """Whether the number at `at` of `text` is a length naming a thing ("a 2 hr session"), no count."""
    number = NUMBER_RE.match(text, at)
    return number is not None and _LENGTH_NAMED.match(text, number.end()) is not None


# The word right before a number, and what precedes it (read from at most 60 characters).
_WORD_BEFORE = re.compile(r"(^|[.?!]\s*|\S\s+)([\w'-]+)\s+$")
_YEARS = re.compile(r"\bhow\s+(?:many\s+years|long\s+ago|old)\b|\byears\s+ago\b", _FLAGS)
_YEAR = re.compile(r"(?<![\w.,])(1[0-9]{3}|20[0-9]{2})(?!\w|[.,]\d)")
_TOTAL = re.compile(r"\b(?:in\s+total|altogether|combined)\b", _FLAGS)
# The total of a bill asked: "what's the total", "... total?" at the end (besides _TOTAL).
_BILL_TOTAL = re.compile(r"\btotal[\s?]*$|\bwhat(?:'s|s|\s+is|\s+would\s+be|\s+will\s+be)\s+(?:the|my|our)\s+total\b"
                         r"(?!\s+(?:number|area|length|weight|distance|height|population|count)\b)", _FLAGS)
# An age: years counted from a thing's beginning ("how old", "been open by 2025", "since the first fair").
_AGE = re.compile(r"\bhow\s+old\b|\byears\s+old\b|\bbeen\s+(?:around|open|running|operating|going|in\s+business)\b"
                  r"|\bsince\s+(?:\w+\s+){0,5}?(?:first|founded|built|opened|established|began|started|formed)\b"
                  r"|\banniversary\b", _FLAGS)
# "two-fifths of", "3 quarters of" (a count as digits: with_digits wrote it), "one in four".
_DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fifth": 5,
                 "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7, "eighth": 8, "eighths": 8,
                 "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10}
_NUMERATORS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_FRACTION_OF = re.compile(rf"\b([2-9]|{'|'.join(_NUMERATORS)})[\s-]+({'|'.join(_DENOMINATORS)})\s+of\b", _FLAGS)
_ONE_IN = re.compile(rf"\b(?:one|1)\s+(?:in|out\s+of)\s+{_NUMBER}(?!\s*{PERCENT_SIGN})", _FLAGS)


_COUNTS = {"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
           "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
           "fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
           "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
           "ninety": "90", "a dozen": "12", "half a dozen": "6"}
_COUNT_WORD = re.compile(r"\b(?:" + "|".join(sorted(_COUNTS, key=len, reverse=True)) + r")\b"
                         r"(?=\s+(?!times\b)[a-z]|\s+[0-9]{1,3}\s*x\s*[0-9]|\s*[?.!,;]|\s*$)", _FLAGS)  # "six 8x10 prints"


def _names(text: str, at: int) -> bool:
    """Whether the word right before position `at` is a capitalised word that does not start its
    sentence: the name of a thing ("Model 3", "5 Guys" is not a count), not "Should 20"."""
    before = _WORD_BEFORE.search(text[max(0, at - 60):at])
    starts_sentence = before is not None and (before.group(1) == "" or before.group(1)[:1] in ".?!")
    return bool(before) and before.group(2)[:1].isupper() and not starts_sentence


def cue_text(text: str) -> str:
    """What the cues read of `text`: all of it up to MAX_CUE_CHARS, else its first and last
    halves of that, joined by a line break."""
    if len(text) <= MAX_CUE_CHARS:
        return text
    half = MAX_CUE_CHARS // 2
    return text[:half] + "\n" + text[-half:]


_COMPOUND_AFTER = re.compile(r"\s*(?:-\s*)?(?:hundred|thousand|million|billion|dozen|and\s+a\s+half|"
                             + "|".join(_COUNTS) + r")\b", _FLAGS)
_COMPOUND_BEFORE = re.compile(r"\b(?:(?:" + "|".join(_COUNTS) + r")\s*-?|(?:hundred|thousand|million)\s+and)\s*$",
                              _FLAGS)


# "three and a half hours" (not "two and a half thousand", "twenty one and a half", "1.5 and a half").
_AND_A_HALF = re.compile(r"(?<![\d.,-])\b(?:(one|" + "|".join(w for w in _COUNTS if " " not in w)
                         + r")|([0-9]+))\s+and\s+a\s+half\b(?!\s+(?:hundred|thousand|million|billion|dozen)\b)", _FLAGS)


# Ages a question gives, no operand of its arithmetic: "my dad is 70", "aged 65", "a 9-year-old",
# "ages 8 and 12", "two kids (9 and 12)", "70 years old".
_AGE_LIST = r"[0-9]{1,3}(?:\s*(?:,|and|&)\s*[0-9]{1,3})*"
_PERSON = (r"(?:he|she|i|i'm|im|dad|mum|mom|father|mother|grandma|grandpa|grandmother|grandfather|gran|nan|son|"
           r"daughter|wife|husband|partner|brother|sister|friend|kid|child|baby)")
_AGES = re.compile(rf"\b{_PERSON}\s+(?:(?:is|am|was|turns|turned|will\s+be)\s+)?[0-9]{{1,3}}(?![0-9])"
                   rf"(?!\s*(?:[%$£€]|\.[0-9]|(?!(?:and|or|but|so|if|when|years?)\b)[a-z]))"
                   rf"|\baged?\s+[0-9]{{1,3}}(?:\s*(?:,|and|&)\s*[0-9]{{1,3}}\b(?!\s*[a-z]))*\b|\bages\s+{_AGE_LIST}\b"
                   rf"|\b[0-9]{{1,3}}[\s-]*(?:years?|yrs?)[\s-]*old\b|\b[0-9]{{1,3}}-year-olds?\b"
                   rf"|(?P<who>\b(?:kids?|child|children|sons?|daughters?|boys?|girls?|grandkids?|twins)\s*)"
                   rf"\(\s*(?:ages?\s+|aged\s+)?[0-9]{{1,3}}(?:\s*(?:,|and|&)\s*[0-9]{{1,3}})+\s*\)", re.IGNORECASE)


def given_ages(text: str) -> list[str]:
    """The ages `text` gives ("my dad is 70" -> ["70"], "two kids (ages 8 and 12)" -> ["8", "12"])."""
    return [n for m in _AGES.finditer(text) for n in re.findall(r"[0-9]{1,3}", m.group(0))]


def without_ages(text: str) -> str:
    """`text` without the ages it gives ("my dad is 70", "two kids (ages 8 and 12)", "a
    9-year-old"): they count no thing its arithmetic is about."""
    return _AGES.sub(lambda m: (m.group("who") or "") + " ", text)


def with_digits(text: str) -> str:
    """`text` with a count written as a word before another word as digits ("four adults" ->
    "4 adults"; not "three times": "I told you three times" asks for nothing), for reading the
    operation of a question. A count that is part of a larger one ("two hundred", "twenty five",
    "two dozen") is left as words: it is not that count. A number written against its unit is
    set apart from it ("11m" -> "11 m")."""
    def digits(m: re.Match[str]) -> str:
        if _COMPOUND_AFTER.match(text, m.end()) or _COMPOUND_BEFORE.search(text[max(0, m.start() - 20):m.start()]):
            return m.group(0)
        if m.group(0).lower().endswith("ty") and re.match(r"\s*-?\s*one\b", text[m.end():], _FLAGS):
            return m.group(0)  # "twenty one"
        return _COUNTS[" ".join(m.group(0).lower().split())]

    def half(m: re.Match[str]) -> str:  # "three and a half hours" -> "3.5 hours"
        if m.group(1) and _COMPOUND_BEFORE.search(text[max(0, m.start() - 20):m.start()]):
            return m.group(0)  # "twenty one and a half"
        whole = m.group(2) or ("1" if m.group(1).lower() == "one" else _COUNTS[m.group(1).lower()])
        return f"{whole}.5"

    text = _GLUED_UNIT.sub(r"\1 \2", _AND_A_HALF.sub(half, text))  # "my 11m boat" -> "my 11 m boat"
    return _COUNT_WORD.sub(digits, text)


# A number written against its unit: "11m", "500ml", "4.5kg", "3hrs" (not "3pm", "2nd").
_GLUED_UNIT = re.compile(r"(?<![\w.,])([0-9]+(?:\.[0-9]+)?)(m|km|cm|mm|kg|g|ml|l|ft|lb|lbs|oz|hrs?|mins?|mph|kph)\b",
                         re.IGNORECASE)


# A number after a comparison is a condition's threshold, no count: "hedges taller than 2 metres",
# "more than 10 guests" (not "at least 5 tickets": what is bought).
_THRESHOLD_BEFORE = re.compile(r"\b(?:(?!(?:other|rather)\b)(?:[a-z]+er|more|less|fewer)\s+than|at\s+most)\s+$", _FLAGS)


def named_operations(question: str) -> list[tuple[str, str | None]]:
    """(template over the operand "{a}", the number it names) for each operation `question`
    names ("..., multiplied by 2?" -> [("{a} * 2", "2")]; "Subtract the opening year from
    2020." -> [("2020 - {a}", "2020")]; "twice" -> [("{a} * 2", None)]; "if it were 12.5 metres
    taller" -> [("{a} + 12.5", "12.5")]; "how much do 4 tickets cost" -> [("{a} * 4", "4")];
    "counting from 2030, how many years ago" -> [("2030 - {a}", "2030"), ("{a} - 2030",
    "2030")]), in the order they appear, each once."""
    question = with_digits(cue_text(question))
    found: list[tuple[float, tuple[str, str | None]]] = []
    for pattern, template in _NAMED + _IMPLIED:
        for match in pattern.finditer(question):
            n = match.group(1).replace(",", "")
            found.append((match.start(), (template.replace("{n}", n), n)))
    for pattern, template in _WORDS:
        found.extend((m.start(), (template, None)) for m in pattern.finditer(question))
    for m in _CHANGE_BY_PERCENT.finditer(question):  # "grew by 10%" -> {a} * 110 / 100
        n = m.group(2).replace(",", "")
        sign = "+" if re.fullmatch(_GROW, m.group(1), _FLAGS) else "-"
        found.append((m.start(), (f"{{a}} * (100 {sign} {n}) / 100", n)))
    for m in _FRACTION_OF.finditer(question):  # "two-fifths of" -> {a} * 2 / 5
        numerator = _NUMERATORS.get(m.group(1).lower(), m.group(1))
        found.append((m.start(), (f"{{a}} * {numerator} / {_DENOMINATORS[m.group(2).lower()]}", None)))
    for m in _ONE_IN.finditer(question):  # "one in four" -> {a} / 4
        n = m.group(1).replace(",", "")
        found.append((m.start(), (f"{{a}} / {n}", n)))
    for m in _PERCENT_OFF.finditer(question):  # "15% off" -> {a} * (100 - 15) / 100
        n = (m.group(1) or m.group(2)).replace(",", "")
        found.append((m.start(), (f"{{a}} * (100 - {n}) / 100", n)))
    if _PER_UNIT.search(question):  # "in 20 days, how many a day": a share of the span, not a total
        found = [(at, (t.replace(" * ", " / ") if _SPAN.match(question, at) else t, n)) for at, (t, n) in found]
    if _PER_PERSON.search(question) and not _PRICED_PER_HEAD.search(question):  # "the 10 of us, how much each"
        shares = [(m.start(), m.group(1).replace(",", "")) for m in _PEOPLE.finditer(question)]
        if found:  # "4 of us sharing a pod for 2 nights, how much each": the cost of the 2 nights, shared
            found = [(at - 0.5, (f"({t}) / {n}" if re.search(r" [-+] ", t) else f"{t} / {n}", tn))
                     for at, (t, tn) in found for _, n in shares if tn != n] + found
        else:
            found.extend((at, (f"{{a}} / {n}", n)) for at, n in shares)
    if not found and _HOW_MANY_CAN.search(question):  # "a $500 budget: how many people can I send"
        amounts = list(_MONEY.finditer(question))
        # "a $500 budget", "I have 60 euros", "with $40": that amount, not "$20 on lunch first"
        budgets = [m for m in amounts if _BUDGET_WORDS.search(question[max(0, m.start() - 25):m.end() + 12])]
        for m in budgets or amounts:
            n = (m.group(1) or m.group(2)).replace(",", "")
            found.append((m.start(), (f"floor({n} / {{a}})", n)))
    if not found and _COST.search(question):
        for m in NUMBER_RE.finditer(question):  # a count of things: "4 adults", not "Model 3"
            price = question[max(0, m.start() - 1):m.start()] in ("$", "€", "£", "¥")  # "$5 each"
            # "4 adults", "a family of 5": a count (a group of N people counts at its end too).
            window = question[max(0, m.start() - 40):m.start() + len(m.group(0))]
            group = _COUNTED_GROUP.search(window) is not None or _GROUP_OF.search(window) is not None
            if ((re.match(r"\s+[A-Za-z]", question[m.end():]) or group) and not _names(question, m.start())
                    and not price and not names_a_year(question, m) and not names_a_length(question, m.start())
                    and not _THRESHOLD_BEFORE.search(question[max(0, m.start() - 30):m.start()])):
                n = m.group(1).replace(",", "")
                found.append((m.start(), ("{a} * " + n, n)))
        party = group_size(question)  # "me and my 3 mates": 4 of them, first, when only people are counted
        if (found and party is not None and all(n != party for _, (_, n) in found)
                and all(_PEOPLE_COUNTED.match(question, at) for at, _ in found)):
            found.insert(0, (-1, ("{a} * " + party, party)))
    if not found and _YEARS.search(question):
        for m in _YEAR.finditer(question):
            found.extend(((m.start(), (f"{m.group(1)} - {{a}}", m.group(1))),
                          (m.start(), (f"{{a}} - {m.group(1)}", m.group(1)))))
    return list(dict.fromkeys(item for _, item in sorted(found)))


def names_an_edition(text: str, match: re.Match[str]) -> bool:
    """Whether the number `match` (of NUMBER_RE in `text`) is a year naming a thing: "the 2019
    fair", "the 2022 Olympics"; but "the 1500 runners" are a count (a plural after a number
    outside 1900-2099)."""
    year = _YEAR.fullmatch(match.group(1))
    if year is None or re.search(r"\bthe\s+$", text[max(0, match.start() - 5):match.start()], _FLAGS) is None:
        return False
    # "the 2022 Olympics", "the 2019 business expo" name editions; "the 1500 runners" count them
    return 1900 <= int(match.group(1)) <= 2099 or not re.match(r"\s+[a-z]+s\b", text[match.end():], _FLAGS)


def names_a_year(text: str, match: re.Match[str]) -> bool:
    """Whether the number `match` (of NUMBER_RE in `text`) is a year, not a count: an edition
    (names_an_edition), or after "of", "in", "since", ... ("the class of 2024 spend", "in 1990
    tickets")."""
    return names_an_edition(text, match) or (_YEAR.fullmatch(match.group(1)) is not None and re.search(
        r"\b(?:of|in|since|from|by|until|before|after)\s+$", text[max(0, match.start() - 8):match.start()],
        _FLAGS) is not None)


_ASKS_QUANTITY = re.compile(
    r"\bhow\s+(?:many|much|long|old|tall|high|far|heavy|big|wide|deep|large)\b"
    r"|\bwhat\s+(?:would|will)\b[^.?!\n]{0,120}?\b(?:be|cost|weigh|total)\b", _FLAGS)


def asks_quantity(text: str) -> bool:
    """Whether `text` asks for a quantity ("how many", "how old", "what would it cost")."""
    return _ASKS_QUANTITY.search(cue_text(text)) is not None


def numbers_beyond(text: str, passages: Iterable[str]) -> list[str]:
    """The numbers of `text` (counts written as words too) that none of `passages` holds as the
    same kind of number: a question about the documents that brings its own number ("how many
    pitches if it added 450?") asks to compute with theirs. A price ("$12") is not a count ("12
    standard windows"), nor a count of other things ("Children's menu (under 12)"): a number the
    question writes before a plural is held only by the same number before the same word."""
    # Counts as words on both sides: "started with four buses" asks about the passage's "four buses".
    known: dict[str, list[tuple[bool, set[str]]]] = {}
    for p in passages:
        digits = with_digits(p)
        for m in NUMBER_RE.finditer(digits):
            known.setdefault(m.group(1).replace(",", ""), []).append((_is_price(digits, m), _next_words(digits, m)))
    own = without_ages(with_digits(cue_text(text)))
    out = []
    for m in NUMBER_RE.finditer(own):
        n, price = m.group(1).replace(",", ""), _is_price(own, m)
        plural = {w[:-1] for w in _next_words(own, m) if w.endswith("s") and not w.endswith("ss")}
        if own[m.end():m.end() + 1] == "-":
            plural = set()  # "the 2.7-tonne lens": which one, not a count
        if not any(kind == price and (price or not plural or plural & {w.rstrip("s") for w in words})
                   for kind, words in known.get(n, [])):
            out.append(n)
    return list(dict.fromkeys(out))


def _is_price(text: str, m: re.Match[str]) -> bool:
    """Whether the number `m` of `text` is written as a price ("$12", "12 euros")."""
    return bool(re.search(r"[$€£¥]\s*$", text[max(0, m.start() - 2):m.start()])
                or re.match(rf"\s*{CURRENCY_NAMES}\b", text[m.end():], _FLAGS))


def _next_words(text: str, m: re.Match[str]) -> set[str]:
    """The two words after the number `m` of `text`, lowercased ("12 standard windows" ->
    {"standard", "windows"})."""
    return set(re.findall(r"[a-z][a-z']*", text[m.end():m.end() + 30].lower())[:2])


def asks_cost(text: str) -> bool:
    """Whether `text` asks what something costs ("how much would 3 tickets cost", "total fare")."""
    return _COST.search(cue_text(text)) is not None


# A price asked by name: "what's the delivery charge?", "what will my bill be".
_PRICE_ASKED = re.compile(r"\bwhat(?:'s|s|\s+is|\s+would\s+be|\s+will\s+be)\s+(?:the\s+|my\s+|our\s+)?(?:[a-z-]+\s+)?"
                          r"(?:charge|fee|cost|price|fare|bill|total)\b(?!\s+(?:number|count|amount\s+of\s+(?!money)))|\bwhat\s+will\s+(?:my|our|the)\s+bill\b"
                          r"|\bwhat(?:'s|s|\s+is)\s+(?:that|it)\s+(?:per|a|for\s+each)\s+(?:person|head)\b", _FLAGS)


def asks_price(text: str) -> bool:
    """Whether `text` asks an amount to pay or a quantity (asks_cost, asks_quantity, or a price
    asked by name: "what's the delivery charge?"): the cue for a price the documents adjust. A
    measure of another kind asked ("how far do you deliver for free?", "how much notice do I
    give?": _OTHER_MEASURE) is none, unless the question asks a cost as well."""
    text = cue_text(text)
    if asks_cost(text) or _PRICE_ASKED.search(text) is not None:
        return True
    return any(not _OTHER_MEASURE.match(text, m.start()) for m in _ASKS_QUANTITY.finditer(text))


# A measure asked that is no amount of money: a distance, a length of time, a size ("how far", "how
# long"), or "how much" of a thing that is none ("how much notice", "how much space"; not "how much
# with 2 kids", "how much postage").
_OTHER_MEASURE = re.compile(
    r"how\s+(?:long|old|tall|high|far|heavy|big|wide|deep|large)\b"
    r"|how\s+much\s+(?:advance\s+)?(?:notice|warning|time|space|room|water|weight|luggage|baggage|storage|data|"
    r"memory|leave|sleep|food|fuel|petrol|power|flour|sugar|milk)\b", _FLAGS)


def asks_how_many(text: str) -> bool:
    """Whether `text` asks a count ("how many ..."), not an amount of money."""
    return re.search(r"\bhow\s+many\b", cue_text(text), _FLAGS) is not None and not asks_cost(text)


def asks_age(text: str) -> bool:
    """Whether `text` asks for years counted from a thing's beginning ("How old will it be in
    2045?", "been open by 2025", "since the first fair")."""
    return _AGE.search(cue_text(text)) is not None


_DIGIT_WORDS = {"zero": 0, "one": 1, "a single": 1, "two": 2, "three": 3, "four": 4}
_DIGITS = r"([0-4]|zero|one|a\s+single|two|three|four)"
# The rounding a question asks for: "round to 2 decimals", "to two decimal places", "One decimal
# is fine", "nearest whole metre", "to the nearest tenth".
_ROUND_DECIMALS = re.compile(rf"\b{_DIGITS}\s+(?:decimal|dp\b|digits?\s+after)", _FLAGS)
# "nearest" what is no unit of the answer ("the nearest five", "nearest hour", "nearest million"):
# no rounding read.
_NOT_UNIT = (r"(?!(?:tenth|hundredth|thousandth|\d+|ten|five|fifty|twenty|hundred|thousand|million|billion|dozen|"
             r"hour|minute|second|day|week|month|year|quarter|half|station|stop|town|city)s?\b)")
_ROUND_WHOLE = re.compile(rf"\bnearest\s+(?:whole|full|integer\b|unit\b)|\b(?:as|to|in)\s+(?:a\s+)?whole\s+number\b"
                          rf"|\bround(?:ed)?\s+(?:it\s+|that\s+|this\s+|the\s+\w+\s+)?(?:up\s+|down\s+)?to\s+the\s+"
                          rf"nearest\s+{_NOT_UNIT}|\bno\s+decimals\b", _FLAGS)
_ROUND_DIRECTION = re.compile(r"\bround(?:ed|ing)?\s+(?:it\s+|that\s+|this\s+|the\s+\w+\s+)?(up|down)\b", _FLAGS)
_ROUND_PLACE = re.compile(r"\bnearest\s+(tenth|hundredth|thousandth|cent|penny|pence)\b", _FLAGS)
_PLACES = {"tenth": 1, "hundredth": 2, "thousandth": 3, "cent": 2, "penny": 2, "pence": 2}


def asked_rounding(text: str) -> int | None:
    """The decimal places `text` asks its answer rounded to ("round to 2 decimals" -> 2, "One
    decimal is fine" -> 1, "nearest whole metre" -> 0, "to the nearest tenth" -> 1), or None."""
    text = cue_text(text)
    match = _ROUND_DECIMALS.search(text)
    if match is not None:
        word = " ".join(match.group(1).lower().split())
        return int(word) if word.isdigit() else _DIGIT_WORDS[word]
    match = _ROUND_PLACE.search(text)
    if match is not None:
        return _PLACES[match.group(1).lower()]
    return 0 if _ROUND_WHOLE.search(text) else None


def asked_rounding_direction(text: str) -> str | None:
    """"up" or "down" when `text` asks to round up or down ("round up to the nearest whole
    number"), else None (to the nearest, half away from zero)."""
    match = _ROUND_DIRECTION.search(cue_text(text))
    return None if match is None else match.group(1).lower()


def without_rounding(text: str) -> str:
    """`text` without the phrases asking for rounding ("round to 2 decimals"): their numbers are
    no operands."""
    for pattern in (_ROUND_DECIMALS, _ROUND_PLACE, _ROUND_WHOLE, _ROUND_DIRECTION):
        text = pattern.sub(" ", text)
    return text


def asks_share_per_person(text: str) -> bool:
    """Whether `text` asks a total's share per person of a group it counts ("for the 10 of us,
    how much each if we split it"; not "$12 per person")."""
    text = with_digits(cue_text(text))
    return (_PER_PERSON.search(text) is not None and _PEOPLE.search(text) is not None
            and _PRICED_PER_HEAD.search(text) is None)


def people_sharing(text: str) -> list[str]:
    """The head-counts of a group `text` asks a share per person for ("6 of us ... if we split it
    equally, how much each" -> ["6"]; "2 adults and 3 kids ... split it" -> ["5"], a party listed
    in parts counted whole; "N of us" before any other count); [] when it asks none
    (asks_share_per_person)."""
    if not asks_share_per_person(text):
        return []
    found = list(_PEOPLE.finditer(with_digits(cue_text(text))))
    us = [m.group(1).replace(",", "") for m in found if re.search(r"\bof\s+(?:us|you|them)\b", m.group(0), re.I)]
    if us:  # "our club has 40 members; 5 of us are splitting it": the 5
        return us[:1]
    counts = [m.group(1).replace(",", "") for m in found]
    listed = len(found) > 1 and all(re.fullmatch(r"\s*(?:,|and|,\s*and)\s*", text_between)
                                    for text_between in _between(with_digits(cue_text(text)), found))
    total = sum(Fraction(c) for c in counts)
    if listed and total.denominator == 1:  # "2 adults and 3 kids ... split it": the 5 of them
        return [str(total.numerator)]
    return list(dict.fromkeys(counts))


# The size of the question's own group: "5 of us", "a group of 6", "we're 4", "me and 3 friends".
_GROUP_OF = re.compile(rf"\b(?:group|party|team|family|table)\s+of\s+{_NUMBER}(?![.,]?[0-9])\b"
                       rf"|(?<![\w.]){_NUMBER}\s+of\s+us\b"
                       rf"|\b(?:we're|we\s+are)\s+(?:a\s+(?:group|party|team)\s+of\s+)?{_NUMBER}(?![.,]?[0-9])\b"
                       rf"(?!\s*(?:%|[a-z]+\b(?<!people)(?<!players)(?<!adults)(?<!guests)(?<!persons)))",
                       re.IGNORECASE)
_ME_AND = re.compile(rf"\b(?:me|i|my\s+(?:son|daughter|kid|child|boy|girl|wife|husband|partner|friend))\s+and\s+"
                     rf"(?:my\s+|our\s+)?{_NUMBER}\s+(?:of\s+(?:my|his|her|their|our)\s+)?"
                     rf"(?:friends|mates|colleagues|others|buddies|pals|classmates|teammates)\b", re.IGNORECASE)
# Grown-ups named beside counted children: "me, my wife and our 2 kids" (the me and the wife).
_NAMED_ADULTS = re.compile(r"\b(?:me|myself|my\s+(?:wife|husband|partner|girlfriend|boyfriend|spouse|mum|mom|dad|"
                           r"mother|father))\b(?=[^.?!]{0,40}?\b(?:our|my)\s+[0-9]+\s+(?:kids|children|sons|daughters|"
                           r"boys|girls)\b)", re.IGNORECASE)
_HEADS = re.compile(rf"(?<![\w.]){_NUMBER}\s+(?:people|ppl|persons|players|guests|adults|children|kids|teens|"
                    rf"students|seniors)\b", re.IGNORECASE)


# A count of people: "3 mates", "5 of his friends", "2 kids".
_PEOPLE_COUNTED = re.compile(r"[0-9]+\s+(?:of\s+(?:my|his|her|their|our|us)\s+)?(?:[a-z]+\s+)?(?:people|ppl|persons|players|guests|"
                             r"adults|children|kids|teens|students|seniors|friends|mates|colleagues|others|buddies|pals|"
                             r"classmates|teammates|of\s+us)\b", re.IGNORECASE)


def group_size(text: str) -> str | None:
    """The head-count of the group `text` is about ("There are 5 of us" -> "5", "group of 6",
    "we're 4", "me and 3 friends" -> "4", "for 5 players"), or None."""
    text = with_digits(cue_text(text))
    found = _GROUP_OF.search(text)
    if found is not None:
        return next(g for g in found.groups() if g).replace(",", "")
    me = _ME_AND.search(text)
    if me is not None:
        return str(Fraction(me.group(1).replace(",", "")) + 1)
    found = list(_HEADS.finditer(text))
    wholes = [Fraction(m.group(1).replace(",", "")) for m in found if re.match(r"[0-9.,]+\s+(?:people|ppl|persons|guests)\b",
                                                                               m.group(0), re.IGNORECASE)]
    if wholes:  # "4 people - 2 adults and 2 kids": the 4
        return str(max(wholes))
    heads = [Fraction(m.group(1).replace(",", "")) for m in found]  # "2 adults and 3 children"
    if heads and not any(re.search(r"adults\b", m.group(0), re.IGNORECASE) for m in found):
        heads += [Fraction(1)] * len(_NAMED_ADULTS.findall(text))  # "me, my wife and our 2 kids"
    return None if not heads else str(sum(heads))


def _between(text: str, matches: list[re.Match[str]]) -> list[str]:
    """The text between each match of `matches` and the next."""
    return [text[a.end():b.start()] for a, b in zip(matches, matches[1:])]


# What a choice or an adjustment saves ("how much do I save", "how much less"), and any
# difference of two prices ("how much cheaper", "what's the difference", "how much more").
_SAVING = r"save|saves|saving|savings|how\s+much\s+(?:less|off)"
_SAVES = re.compile(rf"\b(?:{_SAVING})\b", _FLAGS)
_DIFFERENCE = re.compile(rf"\b(?:{_SAVING}|cheaper|dearer|difference|more\s+expensive|less\s+expensive"
                         rf"|how\s+much\s+(?:more|extra))\b", _FLAGS)


def asks_saving(text: str) -> bool:
    """Whether `text` asks what something saves ("how much do I save with the 10% off")."""
    return _SAVES.search(cue_text(text)) is not None


def asks_difference(text: str) -> bool:
    """Whether `text` asks a difference of two prices: a saving, "how much cheaper", "what's the
    difference", "how much more"."""
    return _DIFFERENCE.search(cue_text(text)) is not None


def asks_bill_total(text: str) -> bool:
    """Whether `text` asks what a bill comes to: asks_total, "what's the total", "... total?"."""
    return asks_total(text) or _BILL_TOTAL.search(cue_text(text)) is not None


def asks_total(text: str) -> bool:
    """Whether `text` asks for a total ("in total", "altogether", "combined")."""
    return _TOTAL.search(cue_text(text)) is not None
