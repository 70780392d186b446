"""The arithmetic a person's question names or implies, read from its words (issue 15): the
operations ("multiplied by 2", "12.5 metres taller", "how much do 4 tickets cost", "two-fifths
of"; named_operations) and what it asks for (a cost, a total, an age, a quantity, a saving:
asks_cost, asks_total, asks_age, asks_quantity, asks_saving, ...), which of its numbers the
documents do not hold (numbers_beyond), and which name a thing, no count ("a 2 hr session",
"the 2019 fair": names_a_length, names_an_edition, names_a_year). The calculator's cue
(backend.agent.routing.needs_calculation) and its candidates (backend.agent.tools.expressions)
read them. Numbers and counts as written (NUMBER_RE, with_digits, cue_text) are
backend.agent.numerals'; the people a question is about (its ages, its group, a share per
person) backend.agent.party's; the rounding it asks for backend.agent.rounding's. Every pattern
reads at most MAX_CUE_CHARS of the message (cue_text) and none backtracks over it.
"""

from __future__ import annotations

import re
from typing import Iterable

from backend.agent.numerals import COUNT_WORDS, CURRENCY_SIGNS, CURRENCY_NAMES, NUMBER, NUMBER_RE, PERCENT_SIGN, cue_text, with_digits
from backend.agent.party import GROUP_OF, PEOPLE_COUNTED, group_size, sharing_counts, without_ages

_FLAGS = re.IGNORECASE
# The operations a question names with their number (named_operations).
# (pattern with one number group, template of the operand {a} and that number {n}).
_NAMED = (
    (re.compile(rf"\bsubtract\w*\s+{NUMBER}\s+from\b", _FLAGS), "{a} - {n}"),
    (re.compile(rf"\bsubtract\w*\b[^.?!\n]{{0,80}}?\bfrom\s+{NUMBER}", _FLAGS), "{n} - {a}"),
    (re.compile(rf"\b(?:minus|less)\s+{NUMBER}", _FLAGS), "{a} - {n}"),
    (re.compile(rf"\b(?:multiplied\s+by|times)\s+{NUMBER}", _FLAGS), "{a} * {n}"),
    (re.compile(rf"\bmultiply\b[^.?!\n]{{0,80}}?\bby\s+{NUMBER}", _FLAGS), "{a} * {n}"),
    (re.compile(rf"(?<![\w.]){NUMBER}\s+times\b", _FLAGS), "{a} * {n}"),
    (re.compile(rf"\bdivided\s+by\s+{NUMBER}", _FLAGS), "{a} / {n}"),
    (re.compile(rf"\bdivide\b[^.?!\n]{{0,80}}?\bby\s+{NUMBER}", _FLAGS), "{a} / {n}"),
    # "add 20% VAT to £45", "plus 15% service": the amount and its share
    (re.compile(rf"\b(?:plus|add|adds|added|adding)\s+{NUMBER}\s*{PERCENT_SIGN}", _FLAGS), "{a} * (100 + {n}) / 100"),
    (re.compile(rf"\b(?:plus|add|adds|added|adding)\s+{NUMBER}(?![\d.,]|\s*{PERCENT_SIGN})", _FLAGS), "{a} + {n}"),
    (re.compile(rf"(?<![\w.]){NUMBER}\s*{PERCENT_SIGN}\s*of\b", _FLAGS), "{a} * {n} / 100"),
    # "20% VAT on £23.90", "a 15% tip on $80": that share (new-user pass)
    (re.compile(rf"(?<![\w.]){NUMBER}\s*{PERCENT_SIGN}\s*(?:vat|tax|sales\s+tax|gst|hst|tip|gratuity|commission|"
                rf"service\s+charge|interest|deposit|fee|surcharge|markup)\s+(?:on|of|for)\b", _FLAGS), "{a} * {n} / 100"),
)
_GROW = r"grew|grow|grows|rose|rise|rises|increased?|increases|went\s+up|goes\s+up"
_SHRINK = r"fell|fall|falls|dropped|drops?|decreased?|decreases|shrank|shrinks?|went\s+down|goes\s+down"
# A quantity asked per unit of time ("how many kilometres a day"), not a rate given ("once a day").
_PER_UNIT = re.compile(r"\bhow\s+(?:many|much|far|long)\b[^.?!\n]{0,60}?\b(?:a|per|each|every)\s+"
                       r"(?:night|day|week|month|year|hour|minute|season)\b", re.IGNORECASE)
_FRACTIONS = {"third": 3, "quarter": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}
_WORDS = (
    # (not a kind named "double": "a double wide driveway contract", "a double room", blind set 85 read after its runs)
    (re.compile(r"\btwice\b|\b(?:double|doubled|doubles)\b(?=\s+(?:the|that|this|it|its|their|his|her|my|our|what)\b"
                r"|\s*[?.!,]|\s*$)", _FLAGS), "{a} * 2"),
    (re.compile(r"\b(?:triple|tripled|triples)\b(?=\s+(?:the|that|this|it|its|their|his|her|my|our|what)\b|\s*[?.!,]|\s*$)",
                _FLAGS), "{a} * 3"),
    # (not a length of time: "in under half an hour", "half a day", practice set 4)
    (re.compile(r"\bhalf\s+(?:of|the|its|their)\b|\bhalf\s+an?\b(?!\s+(?:hour|day|minute|week|month|year|night|session)s?\b)"
                r"|\bhalve\b", _FLAGS), "{a} / 2"),
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
    (re.compile(rf"(?<![\w.]){NUMBER}\s*(?:%\s*|{_UNIT}\s+)?(?:{_LARGER})\b", _FLAGS), "{a} + {n}"),
    (re.compile(rf"(?<![\w.]){NUMBER}\s*(?:{_UNIT}\s+)?(?:{_SMALLER})\b", _FLAGS), "{a} - {n}"),
    (re.compile(rf"\b(?:split|shared|divided|separated|spread|distributed)\b[^.?!\n]{{0,60}}?\b(?:equally|evenly)\s+"
                rf"(?:between|among|amongst|across|over)\s+{NUMBER}", _FLAGS), "{a} / {n}"),
    (re.compile(rf"\b(?:split|shared|divided|separated)\s+(?:equally\s+|evenly\s+)?(?:between|among|amongst|by|into)"
                rf"\s+(?:groups\s+of\s+)?{NUMBER}", _FLAGS), "{a} / {n}"),
    # "split the fare four ways", "shared 3 ways".
    (re.compile(rf"\b(?:split|share|shared|divide|divided)\b[^.?!\n]{{0,60}}?(?<![\w.]){NUMBER}\s+ways\b", _FLAGS),
     "{a} / {n}"),
    (re.compile(rf"\bhow\s+(?:many|much)\s+more\b[^.?!\n]{{0,160}}?\b(?:reach|make|get\s+to|have|hit|total)\s+"
                rf"(?:[a-z]+\s+){{0,3}}?{NUMBER}", _FLAGS), "{n} - {a}"),
    (re.compile(rf"\bhow\s+many\s+times\s+(?:[a-z]+\s+)?(?:than|as)\b[^.?!\n]{{0,60}}?{NUMBER}", _FLAGS), "{a} / {n}"),
    # "How many minutes longer is the tour than a 45-minute film?": the difference.
    (re.compile(rf"\bhow\s+(?:many|much)\s+(?:(?!times\b)[a-z]+\s+)?(?:{_LARGER}|{_SMALLER})\b[^.?!\n]{{0,80}}?\bthan\b"
                rf"[^.?!\n]{{0,40}}?{NUMBER}", _FLAGS), "{a} - {n}"),
    # A rate over a span: "over seven nights", "in 3 weeks", "for 12 months" (per day asked: "/").
    (_SPAN := re.compile(rf"\b(?:over|in|for|across|during|on)\s+{NUMBER}\s+(?:nights|days|weeks|months|years|hours|"
                         rf"minutes|seasons|shifts|trips|journeys|crossings)\b", _FLAGS), "{a} * {n}"),
)
# How many fit in a budget: "I've got a $500 budget. How many people can I send?" -> floor(500 / price).
_HOW_MANY_CAN = re.compile(r"\bhow\s+many\b[^.?!\n]{0,60}?\b(?:can|could)\s+(?:i|we|you|one)\b"
                           r"|\bhow\s+many\b[^.?!\n]{0,40}?\b(?:afford|fit\s+in)", re.IGNORECASE)
# "15% off", "a 20 percent discount", "a discount of 10%": the price after it.
_PERCENT_OFF = re.compile(rf"(?<![\w.]){NUMBER}\s*{PERCENT_SIGN}\s*(?:off\b|discount\b|reduction\b)"
                          rf"|\b(?:discount|reduction)\s+of\s+{NUMBER}\s*{PERCENT_SIGN}", _FLAGS)
_CHANGE_BY_PERCENT = re.compile(rf"\b({_GROW}|{_SHRINK})\b[^.?!\n]{{0,60}}?\bby\s+{NUMBER}\s*{PERCENT_SIGN}", _FLAGS)
# What several things cost, or bring in: a price times a count.
_BUDGET_WORDS = re.compile(r"\b(?:budget|have|got|with|up\s+to|spare|afford)\b", re.IGNORECASE)
# An amount of money in the question: "$500", "500 euros".
_MONEY = re.compile(rf"[{CURRENCY_SIGNS}]\s*{NUMBER}|(?<![\w.,]){NUMBER}\s*{CURRENCY_NAMES}\b", _FLAGS)
# "how many pounds" may ask a weight, "how many marks" a grade, "how many credits" a course's: not a cost.
_COST_CURRENCY = r"(?!(?:pounds?|marks?|credits?)\b)" + CURRENCY_NAMES
_COST = re.compile(rf"\bhow\s+many\s+{_COST_CURRENCY}\b"  # "five people: how many rupees altogether?"
                   r"|\b(?:how\s+much|what\s+(?:would|will|do|does|did))\b[^.?!\n]{0,120}?"
                   r"\b(?:cost|pay|spend|charge|earn|lose|raise|collect|bring\s+in|come\s+to|owe|get\s+back|refund)"
                   r"|\b(?:total|whole|overall)\s+(?:[a-z]+\s+)?(?:fare|cost|price|bill|charge|amount)"
                   r"|\bgoing\s+to\s+(?:cost|come\s+to|set\s+\w+\s+back)\b|\bhow\s+much\s+for\b"
                   # "how much w/ tax?", "how much incl vat" (simple set 66)
                   r"|\bhow\s+much\s+(?:w/|with|incl\w*|inc\.?|plus)\s*(?:the\s+)?(?:tax|vat|gst|hst|sales\s+tax)\b"
                   # "how much would one visit be if I add the gravel vacuum" (blind set 67)
                   r"|\bhow\s+much\s+(?:would|will)\s+(?:it|that|this|one\s+[a-z]+|an?\s+[a-z]+|the\s+[a-z]+)\s+(?:be|come\s+to)\b"
                   # "how much is an Owl Encounter for me, my husband and our two kids" (blind set 68)
                   r"|\bhow\s+much\s+(?:is|are|would\s+be|will\s+be)\s+(?:an?|the)\s+[^.?!\n]{1,60}?\bfor\s+(?:me|us|my|our|[0-9]+|two|"
                   r"three|four|five|six|seven|eight|nine|ten)\b"
                   # "how much to get 2 bedrooms ... cleaned?", "how much would it be to hire" (blind set 60)
                   r"|\bhow\s+much\s+(?:(?:would|will|is)\s+it\s+(?:be\s+)?)?to\s+(?:get|have|hire|book|rent|clean|fix|"
                   r"repair|replace|service|buy|send|ship|do|take|bring|park|store|print|deliver)\b"
                   # "how much if I bring them in together?", "how much would that be?" (blind set 62)
                   r"|\bhow\s+much\s+(?:(?:would|will|is)\s+(?:it|that|this)\s+(?:be\s+)?)?(?:if|when)\s+(?:i|we)\b"
                   r"|\bhow\s+much\s+(?:would|will)\s+(?:it|that|this)\s+be\b"
                   # "Barn Hall for a full day on a Sunday, how much before VAT?" (a new user's check)
                   r"|\bhow\s+much\s+(?:before|ex|excluding|excl\.?|incl\w*|inc\.?|with|plus|\+)\s*(?:the\s+)?(?:vat|tax|taxes|gst|hst)\b"
                   # "Barn Hall for 4 hours plus the PA system, before VAT?": things listed, asked before or with a tax
                   r"|^[^.?!\n]*\b(?:plus|and|with|\+)\b[^.?!\n]*,\s*(?:before|ex|excluding|excl\.?|incl\w*|inc\.?|with|plus)\s*"
                   r"(?:the\s+)?(?:vat|tax|taxes|gst|hst)\s*\??\s*$"
                   # "How much is the Gold package and 4 uplighters?": a list's price (review)
                   r"|\bhow\s+much\s+(?:is|are|would\s+be|will\s+be)\s+(?:an?|the|[0-9]+)\s+(?!(?:deposit|discount|saving|surcharge|"
                   r"fee|tax|vat|difference)\b)[^.?!\n]{1,60}?\s(?:and|plus|with|\+)\s+(?:an?\s+|the\s+)?[0-9]"
                   # "Gold package plus 2 extra hours for a Saturday, how much is that?" (blind set 96, read)
                   r"|\bhow\s+much\s+is\s+(?:that|it|this)\s*(?:all\s*together|altogether|in\s+total|total)?\s*(?:[?!.]|$)"
                   r"|^\W*(?:a\s+|the\s+|total\s+)?(?:price|cost|quote)\s+for\s+[0-9]"  # "price for 6 shirts and 2 ..."
                   # "what's that come to", "what's a single block swan sculpture come to with GST?" (blind set 94, read)
                   # (a sum, not a way there: "What's the best way to come to the studio?", review)
                   r"|\bwhat(?:'s|s|\s+does|\s+do|\s+would|\s+will)\s+(?:(?![^.?!\n]*\b(?:way|bus|train|how)\b)"
                   r"[^.?!\n]{1,60}?\s)?(?:come|coming)\s+to\b(?!\s+(?:the|a|an|my|our|your|see|visit)\b)"
                   # "2 nutella crepes and 2 salted caramel crepes, how much?", "what's my bill"
                   r"|(?<!\bby\s)\bhow\s+much\s*(?:\?|$|altogether\b|all\s+together\b|in\s+total\b|all\s+up\b|all\s+in\b)"  # ("how much all up?", practice set 8)
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
                       rf"{NUMBER}$", _FLAGS)  # "the class of 2024" is no head-count
# A length naming a thing, no count of it: "a 2 hr session", "the 90-minute class", "a 2hr manual lesson"
# (not "2 hours of labour", "3 hours tuition").
_NAMED_BY_LENGTH = (r"(?:session|class|lesson|slot|tour|course|massage|treatment|ride|game|walk|package|workshop|trip|"
                    r"cruise|flight|appointment|consultation|visit|pass|ticket|party|hire|rental|block)s?\b")
_LENGTH_NAMED = re.compile(r"(?:\s*-\s*|\s*)(?:hrs?|hours?|mins?|minutes?)[\s-]+(?:long\s+)?" + _NAMED_BY_LENGTH +
                           r"|-(?:hrs?|hours?|mins?|minutes?)\s+[a-z]", _FLAGS)
# After "a", "the", ...: words may stand between ("a 2hr manual lesson"; not "2 hours of kayak hire").
_LENGTH_NAMED_AFTER_ARTICLE = re.compile(r"(?:\s*-\s*|\s*)(?:hrs?|hours?|mins?|minutes?)[\s-]+(?:long\s+)?"
                                         r"(?:(?!of\b|for\b|in\b|on\b|at\b)[a-z]+\s+){0,2}?" + _NAMED_BY_LENGTH, _FLAGS)
_ARTICLE_BEFORE = re.compile(r"\b(?:a|an|the|one|my|our|each|this|that)\s+$", _FLAGS)


_DIGITS = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def names_a_length(text: str, at: int) -> bool:
    """Whether the number at `at` of `text` is a length naming a thing ("a 2 hr session", "a 2hr
    manual lesson"), no count."""
    number = _DIGITS.match(text, at)
    if number is None:
        return False
    if _LENGTH_NAMED.match(text, number.end()) is not None:
        return True
    return (_ARTICLE_BEFORE.search(text[max(0, at - 8):at]) is not None
            and _LENGTH_NAMED_AFTER_ARTICLE.match(text, number.end()) is not None)


# A size naming a thing, no count of it: "a 12 inch cake", "the 8-inch", "a 2 litre bottle" (not "3
# inches of snow", "12 inches long"); sizes() reads them as (number, unit) to match a price's label
# ("12-inch $80").
_SIZE_UNITS = {"inch": "inch", "inches": "inch", "in": "inch", '"': "inch", "cm": "cm", "mm": "mm", "litre": "litre",
               "litres": "litre", "liter": "litre", "liters": "litre", "l": "litre", "ml": "ml", "oz": "oz",
               "ft": "ft", "foot": "ft", "feet": "ft", "yard": "yard", "yards": "yard", "yd": "yard", "pint": "pint",
               "pints": "pint", "gallon": "gallon", "gallons": "gallon", "bed": "bed", "bedroom": "bed", "bdr": "bed",
               "seater": "seater", "piece": "piece"}
_SIZE = re.compile(r"(?<![\w.,])([0-9]{1,3}(?:,[0-9]{3})+|[0-9]{1,6}(?:\.[0-9])?)\s*(?:-\s*)?(inch(?:es)?|in\b|\"|cm|mm|lit(?:re|er)s?|l\b|ml|oz|g\b|kg\b|btu\b|"
                   r"ft|foot|feet|yards?|yd|pints?|gallons?|bed(?:room)?|bdr|seater|piece)(?![a-z])", _FLAGS)
# (or a weight: "a 500 g bag", "two 500g bags", "a 1 kg Lane Espresso", blind set 103, read)
# (a weight only of a thing sold by it, a bag or a product's name: "a 1 kg Lane Espresso", "two 500g bags"; not "a 9 kg
# service wash" priced per kg, blind set 47)
_SIZE_NAMED = re.compile(r"\s*(?:-\s*)?(?:inch(?:es)?|in|\"|cm|mm|lit(?:re|er)s?|l|ml|oz|btu|ft|foot|feet|yards?|yd|pints?|"
                         r"gallons?)(?![a-z])[\s-]*(?!(?:of|long|wide|tall|high|deep|thick|across|in|by|x)\b)[a-z(]"
                         r"|\s*(?:-\s*)?(?:g|kg)(?![a-z])[\s-]*(?:(?:bags?|packs?|packets?|tubs?|box(?:es)?|jars?|bottles?|tins?|"
                         r"sacks?|pouch(?:es)?)\b|(?-i:[A-Z]))",
                         _FLAGS)


# A home's, a vehicle's or a suit's size before what it names, with or without an article: "a 4 bed
# detached", "fixed price 2 bed move", "3-bedroom house", "a 7 seater", "a 2 piece suit" (not "2 beds",
# "3 pieces", "3 bed sheets", "4 bed nights": counts of a plural).
_ROOMS_NAMED = re.compile(r"\s*(?:-\s*)?(?:bed(?:room)?|bdr|seater|piece)(?![a-z])"
                          r"(?:[\s-]+(?![a-z]*[^s\W]s\b)[a-z(]|\s*$|\s*[,.?!])", _FLAGS)


# A count and a word or two before a size: "4 budget | 16 inch tyres", "2 premium | 18 inch ones" (new-user
# pass: read as 4 budget tyres and 16 "inch tyres"); not "4 and 16 inch", "2 plus 18 inch".
# (or right before it: "2 500 g bags" of "two 500g bags")
_COUNT_BEFORE = re.compile(rf"(?:(?<![\w.,])[0-9]+|\b(?:{'|'.join(COUNT_WORDS)}))\s+"
                           r"(?:(?!(?:and|or|plus|with|then|x)\b)[a-z-]+\s+){0,2}$", _FLAGS)


def names_a_size(text: str, at: int) -> bool:
    """Whether the number at `at` of `text` is a size naming a thing ("a 12 inch cake", "the
    10-inch celebration cake", "4 budget 16 inch tyres", "a 4 bed detached", "2 bed move"; not "a
    frame that's 240 cm all the way round"), no count."""
    number = NUMBER_RE.match(text, at)
    if number is not None and _ROOMS_NAMED.match(text, number.end()) is not None:
        return True
    return (number is not None and _SIZE_NAMED.match(text, number.end()) is not None
            and (_ARTICLE_BEFORE.search(text[max(0, at - 8):at]) is not None
                 or _COUNT_BEFORE.search(text[max(0, at - 40):at]) is not None))


def sizes_alone(text: str) -> set[tuple[str, str]]:
    """The sizes `text` writes (sizes) when every number of it names one ("inside and out on a 4 bed
    detached"); none when it counts something too ("I live in a 3 bed semi - how much to clean 10
    screens?": the size is no thing asked)."""
    if any(not names_a_size(text, m.start()) for m in NUMBER_RE.finditer(text)):
        return set()
    return sizes(text)


def sizes(text: str) -> set[tuple[str, str]]:
    """The sizes `text` writes, as (number, unit): "12-inch $80" -> {("12", "inch")}, "a 2 litre
    bottle" -> {("2", "litre")}."""
    return {(m.group(1), _SIZE_UNITS.get(m.group(2).lower(), m.group(2).lower().rstrip("s")))
            for m in _SIZE.finditer(text)}


# The word right before a number, and what precedes it (read from at most 60 characters).
_WORD_BEFORE = re.compile(r"(^|[.?!]\s*|\S\s+)([\w'-]+)\s+$")
_YEARS = re.compile(r"\bhow\s+(?:many\s+years|long\s+ago|old)\b|\byears\s+ago\b", _FLAGS)
_YEAR = re.compile(r"(?<![\w.,])(1[0-9]{3}|20[0-9]{2})(?!\w|[.,]\d)")
_TOTAL = re.compile(r"\b(?:in\s+total|altogether|all\s+together|combined|all\s+up)\b", _FLAGS)
# The total of a bill asked: "what's the total", "... total?", "total please", "total pls" at the end (besides _TOTAL),
# "total with tax?", "total incl vat?", "how much all in?" (simple sets 69, 71), "how much is the total to replace the
# lining of my jacket and shorten the sleeves" (thirtieth session).
_BILL_TOTAL = re.compile(r"\btotal(?:\s*,?\s*(?:please|pls|plz|thanks|thx|ta|cheers))?[\s?!.]*$"
                         r"|\btotal\s+(?:with|incl\w*|inc\.?|plus|after)\s+(?:the\s+)?(?:tax|vat|gst|hst|sales\s+tax)\b"
                         r"|\ball[\s-]in\s*\??\s*$|\b(?:what(?:'s|s|\s+is|\s+would\s+be|\s+will\s+be)|"
                         # ("What's the final bill including GST?", practice set 1)
                         r"how\s+much\s+(?:is|will|would))\s+(?:the|my|our)\s+(?:(?:final|full|whole)\s+)?(?:total|bill|invoice)\b"
                         r"(?!\s+(?:number|area|length|weight|distance|height|population|count|discount|saving|"
                         r"savings|difference|time)\b)", _FLAGS)
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
_ONE_IN = re.compile(rf"\b(?:one|1)\s+(?:in|out\s+of)\s+{NUMBER}(?!\s*{PERCENT_SIGN})", _FLAGS)


def _names(text: str, at: int) -> bool:
    """Whether the word right before position `at` is a capitalised word that does not start its
    sentence: the name of a thing ("Model 3", "5 Guys" is not a count), not "Should 20"."""
    before = _WORD_BEFORE.search(text[max(0, at - 60):at])
    starts_sentence = before is not None and (before.group(1) == "" or before.group(1)[:1] in ".?!")
    return bool(before) and before.group(2)[:1].isupper() and not starts_sentence


# A number after a comparison is a condition's threshold, no count: "hedges taller than 2 metres",
# "more than 10 guests" (not "at least 5 tickets": what is bought).
_THRESHOLD_BEFORE = re.compile(r"\b(?:(?!(?:other|rather)\b)(?:[a-z]+er|more|less|fewer)\s+than|at\s+most)\s+$", _FLAGS)
# A number that is an hour of the day by the words after it: "before 10 in the morning", "at 7 at night", "9 o'clock".
_HOUR_OF_DAY_AFTER = re.compile(r"\s*(?:in\s+the\s+(?:morning|afternoon|evening)|at\s+night|o['’]clock)\b", _FLAGS)


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
    shares = sharing_counts(question)  # "the 10 of us, how much each": [(where, "10")]
    if shares and found:  # "4 of us sharing a pod for 2 nights, how much each": the cost of the 2 nights, shared
        found = [(at - 0.5, (f"({t}) / {n}" if re.search(r" [-+] ", t) else f"{t} / {n}", tn))
                 for at, (t, tn) in found for _, n in shares if tn != n] + found
    elif shares:
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
            group = _COUNTED_GROUP.search(window) is not None or GROUP_OF.search(window) is not None
            if ((re.match(r"\s+[A-Za-z]", question[m.end():]) or group) and not _names(question, m.start())
                    and not price and not names_a_year(question, m) and not names_a_length(question, m.start())
                    and not names_a_size(question, m.start())
                    and not _THRESHOLD_BEFORE.search(question[max(0, m.start() - 30):m.start()])
                    and not _HOUR_OF_DAY_AFTER.match(question, m.end())):  # ("before 10 in the morning", blind set 97)
                n = m.group(1).replace(",", "")
                found.append((m.start(), ("{a} * " + n, n)))
        party = group_size(question)  # "me and my 3 mates": 4 of them, first, when only people are counted
        if (found and party is not None and all(n != party for _, (_, n) in found)
                and all(PEOPLE_COUNTED.match(question, at) for at, _ in found)):
            found.insert(0, (-1, ("{a} * " + party, party)))
    if not found and _YEARS.search(question):
        for m in _YEAR.finditer(question):
            found.extend(((m.start(), (f"{m.group(1)} - {{a}}", m.group(1))),
                          (m.start(), (f"{{a}} - {m.group(1)}", m.group(1)))))
    return list(dict.fromkeys(item for _, item in sorted(found)))


def names_an_edition(text: str, match: re.Match[str]) -> bool:
    """Whether the number `match` (of NUMBER_RE in `text`) is a year naming a thing: "the 2019
    fair", "the 2022 Olympics", "my grandad's 1962 automatic"; but "the 1500 runners" are a count (a plural after a number
    outside 1900-2099)."""
    year = _YEAR.fullmatch(match.group(1))
    if year is None:
        return False
    before = text[max(0, match.start() - 30):match.start()]
    if (1900 <= int(match.group(1)) <= 2099 and re.search(r"(?:\b(?:my|our|his|her|their|your)|\w['’]s)\s+$", before, _FLAGS)
            and not re.match(r"\s+[a-z]+s\b", text[match.end():], _FLAGS)):  # not "my 2000 flyers"
        return True  # "my grandad's 1962 automatic", "my 2015 Golf": a model year (blind set 62: 175 * 1962)
    if re.search(r"\bthe\s+$", before, _FLAGS) is None:
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
            known.setdefault(m.group(1).replace(",", ""), []).append((_kind(digits, m), _next_words(digits, m)))
    own = without_ages(with_digits(cue_text(text)))
    # (a label's number names, it counts nothing after it: "Grades 4-5", "Room 12." but not "Stay 7 nights")
    labels = {m.group(1).lower().rstrip("s") for p in passages for m in _LABEL_WORD.finditer(with_digits(p))
              if not _COUNTED_AFTER.match(with_digits(p), m.end())}
    out = []
    for m in NUMBER_RE.finditer(own):
        n, kind_asked = m.group(1).replace(",", ""), _kind(own, m)
        price = kind_asked == "price"
        before = _LABEL_BEFORE.search(own[max(0, m.start() - 30):m.start()])
        if (before is not None and not price and before.group(1).lower().rstrip("s") in labels
                and not _COUNTED_AFTER.match(own, m.start())):
            continue  # "a Grade 4 exam" over "€75 for Grades 4-5": which grade, as the passages name them, no count
        plural = {w[:-1] for w in _next_words(own, m) if w.endswith("s") and not w.endswith("ss")}
        if own[m.end():m.end() + 1] == "-":
            plural = set()  # "the 2.7-tonne lens": which one, not a count
        if not any(kind == kind_asked and (kind != "count" or not plural or plural & {w.rstrip("s") for w in words})
                   for kind, words in known.get(n, [])):
            out.append(n)
    return list(dict.fromkeys(out))


# A word naming things by number, right before one: "Grade 4", "Grades 4-5", "Level 2", "Room 12" (not
# a preposition's or a verb's number: "for 4", "is 4", "costs 4").
_LABEL = (r"\b(?!(?:for|of|with|about|than|under|over|per|at|to|by|in|on|from|are|is|and|or|plus|"
          r"costs?|be|the|all|only|just|get|need|want|book|buy|have|each|every|first|next|last|"
          r"up|after|before|until|till|between|around|roughly|approx|approximately)\b)([A-Za-z]{3,})\s+")
_LABEL_WORD = re.compile(_LABEL + r"(?=[0-9])", re.IGNORECASE)
# A number counting the word after it: "7 nights", "4 people" (a plural, or "person", "night", ...).
_COUNTED_AFTER = re.compile(r"[0-9]+(?:\.[0-9]+)?\s+[a-z]+s\b", re.IGNORECASE)
# The label word right before a number of the question (read from the text before it).
_LABEL_BEFORE = re.compile(_LABEL + r"$", re.IGNORECASE)


def _is_price(text: str, m: re.Match[str]) -> bool:
    """Whether the number `m` of `text` is written as a price ("$12", "12 euros")."""
    return bool(re.search(rf"[{CURRENCY_SIGNS}]\s*$", text[max(0, m.start() - 2):m.start()])
                or re.match(rf"\s*{CURRENCY_NAMES}\b", text[m.end():], _FLAGS))


# A number written as a percentage: "15%", "10 percent", "5 per cent".
_PERCENT_AFTER = re.compile(r"\s*(?:%|percent\b|per\s+cent\b)", re.IGNORECASE)


def _kind(text: str, m: re.Match[str]) -> str:
    """What the number `m` of `text` is: "price" (_is_price), "percent" ("15%") or "count" (anything
    else): a passage's "15% holiday surcharge" holds no "15 lb of dry ice" (blind set 94, read)."""
    if _is_price(text, m):
        return "price"
    return "percent" if _PERCENT_AFTER.match(text, m.end()) else "count"


def _next_words(text: str, m: re.Match[str]) -> set[str]:
    """The two words after the number `m` of `text`, lowercased ("12 standard windows" ->
    {"standard", "windows"})."""
    return set(re.findall(r"[a-z][a-z']*", text[m.end():m.end() + 30].lower())[:2])


def asks_cost(text: str) -> bool:
    """Whether `text` asks what something costs ("how much would 3 tickets cost", "total fare")."""
    return _COST.search(cue_text(text)) is not None


# A price asked by name: "what's the delivery charge?", "what will my bill be".
_PRICE_ASKED = re.compile(r"\bwhat(?:'s|s|\s+is|\s+would\s+be|\s+will\s+be)\s+(?:the\s+|my\s+|our\s+)?(?:[a-z-]+\s+){0,3}"
                          r"(?:charge|fee|cost|price|fare|bill|total|balance)\b(?!\s+(?:number|count|amount\s+of\s+(?!money)))|\bwhat\s+will\s+(?:my|our|the)\s+bill\b"
                          r"|\bwhat(?:'s|s|\s+is)\s+(?:that|it)\s+(?:per|a|for\s+each)\s+(?:person|head)\b"
                          # a rate of a length of time: "whats your hourly rate for one guy incl GST" (practice set 1;
                          # not an interest or a tax rate)
                          r"|\bwhat(?:'s|s|\s+is|\s+are)\s+(?:the\s+|your\s+)?(?:standard\s+|usual\s+)?"
                          r"(?:hourly|daily|weekly|nightly|monthly|day|half[\s-]day)\s+rates?\b"
                          # "whats the final amount?", "the amount due" (blind set 79)
                          r"|\b(?:final|total|full|overall)\s+amount\b|\bamount\s+(?:due|owed|payable|to\s+pay|charged)\b"
                          # "what's a basic service call plus the travel charge, before HST?", "what's that before tax?"
                          # (a thing priced or "that": not "what's your phone number before tax", "what's included
                          # before tax", "before the tax year end", review)
                          # ("how much is that before vat", blind set 90, read after its runs)
                          r"|\b(?:what(?:'s|s|\s+is|\s+would\s+be|\s+will\s+be)|how\s+much\s+(?:is|would|will))\s+"
                          r"(?:that|it|this|(?=[^?.!]{0,60}?\b(?:plus|and)\b))"
                          r"(?![^?.!]{0,60}?\binclud)[^?.!]{0,80}?\b(?:before|excluding|ex|pre)[\s-]+(?:the\s+)?"
                          r"(?:tax|taxes|hst|gst|vat|sales\s+tax)\b(?![\s-]+year)", _FLAGS)


def asks_price(text: str) -> bool:
    """Whether `text` asks an amount to pay or a quantity (asks_cost, asks_quantity, or a price
    asked by name: "what's the delivery charge?"): the cue for a price the documents adjust. A
    measure of another kind asked ("how far do you deliver for free?", "how much notice do I
    give?": _OTHER_MEASURE) is none, unless the question asks a cost as well."""
    text = cue_text(text)
    if asks_cost(text) or _PRICE_ASKED.search(text) is not None:
        return True
    return any(not _OTHER_MEASURE.match(text, m.start()) for m in _ASKS_QUANTITY.finditer(text))


# An amount asked by its noun and a question mark: "8 kg of laundry. price?", "... total?".
# (or with its tax said: "Price not counting VAT?", "cost inc GST?"; or things counted and their tax alone: "300 hornbeam
# whips, ex VAT?", practice set 2)
_TAX_SAID = (r"(?:not\s+counting|ex(?:cl\w*)?\.?|inc(?:l\w*)?\.?|before|plus|after|with|without)\s+(?:the\s+)?"
             r"(?:vat|gst|hst|tax(?:es)?|sales\s+tax)")
_AMOUNT_NOUN = re.compile(rf"\b(?:price|cost|total|charge|fee|bill)(?:\s+{_TAX_SAID})?\s*\?"
                          rf"|^\W*[0-9][0-9,]*\s+[a-z](?:(?!\b(?:is|are|does|do|will|would|can|that|it)\b)[^?]){{0,60}}?[,\s]\s*"
                          rf"{_TAX_SAID}\s*\?\s*$", _FLAGS)  # (not "3 nights, is that with tax?", review)


# "total with cleaning", "the total for 3 nights": a bill's total (not "the total area"); "price after the
# long stay discount".
_TOTAL_NOUN = re.compile(r"\btotal\b(?!\s+(?:number|area|length|weight|distance|height|population|count|time|of\s+\d))"
                         # "price after the discount", "price ex vat?"
                         r"|\b(?:price|cost)\s+(?:after|with|incl\w*|inc|ex|excl\w*|exc|before|for|without|plus)\b", _FLAGS)


def asks_money(text: str) -> bool:
    """Whether `text` asks an amount of money in so many words: a cost ("how much would 3 tickets
    cost"), a price or a bill by name ("what's the delivery charge?", "price?", "what's the total"),
    not a quantity ("how much gas")."""
    cue = cue_text(text)
    return (asks_cost(cue) or asks_bill_total(cue) or _PRICE_ASKED.search(cue) is not None
            or _AMOUNT_NOUN.search(cue) is not None or _TOTAL_NOUN.search(cue) is not None)


def asks_amount(text: str) -> bool:
    """Whether `text` asks an amount to pay or a quantity: asks_price, or money in so many words
    (asks_money: "price?", "cost?", "total with cleaning")."""
    return asks_price(text) or asks_money(text)


# A measure asked that is no amount of money: a distance, a length of time, a size ("how far", "how
# long"), or "how much" of a thing that is none ("how much notice", "how much space"; not "how much
# with 2 kids", "how much postage").
_OTHER_MEASURE = re.compile(
    r"how\s+(?:long|old|tall|high|far|heavy|big|wide|deep|large)\b"
    r"|how\s+much\s+(?:advance\s+)?(?:notice|warning|time|space|room|water|weight|luggage|baggage|storage|data|"
    r"memory|leave|sleep|food|fuel|petrol|power|flour|sugar|milk)\b", _FLAGS)


# A limit the documents set, asked with the asker's own numbers beside it ("I've been a member for 2
# years - how much notice do I have to give?", "How far do you deliver for free? We're 8 miles away",
# "Up to how many days before the class can I cancel?"): the document's number, no calculation.
_POLICY_LIMIT = re.compile(r"\bhow\s+much\s+(?:advance\s+)?(?:notice|warning)\b"
                           r"|\bhow\s+far\s+(?:do|does|will|can|would)\s+\w+\s+(?:deliver|travel|come|go|cover)\b"
                           r"|\bup\s+to\s+how\s+(?:many|much|long|far)\b"
                           r"|\bhow\s+many\s+(?:days|hours|weeks)(?:'|\s+of)?\s+(?:notice|in\s+advance|before)\b", _FLAGS)


def asks_policy_limit(text: str) -> bool:
    """Whether `text` asks a limit the documents set (_POLICY_LIMIT: notice, delivery distance,
    how many days before), not an amount of money."""
    return _POLICY_LIMIT.search(cue_text(text)) is not None and not asks_money(text)


def asks_how_many(text: str) -> bool:
    """Whether `text` asks a count ("how many ..."), not an amount of money."""
    return re.search(r"\bhow\s+many\b", cue_text(text), _FLAGS) is not None and not asks_cost(text)


def asks_age(text: str) -> bool:
    """Whether `text` asks for years counted from a thing's beginning ("How old will it be in
    2045?", "been open by 2025", "since the first fair")."""
    return _AGE.search(cue_text(text)) is not None


# What a choice or an adjustment saves ("how much do I save", "how much less"), and any
# difference of two prices ("how much cheaper", "what's the difference", "how much more").
# (or what a discount takes off: "How many dollars does the member discount knock off the ...", blind set 92)
_SAVING = (r"save|saves|saving|savings|how\s+much\s+(?:less|off)"
           r"|(?:discount|reduction|offer|deal)\s+(?:knock|knocks|take|takes|shave|shaves)\s+off")
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
