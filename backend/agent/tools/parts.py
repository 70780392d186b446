"""A repair's parts charged beside its price (issue 15): over "Flat rates cover labour and the
service call. Parts are extra." with "Dryer belt replacement: $129.00" and "Dryer belt: $28.00",
"a dryer belt replacement including the belt" is 129 + 28, and "Dishwasher drain pump needs
replacing ... Total with part and HST?" the replacement's $159 and the pump's $86 (blind set 88,
read after its runs). A repair's part is the line whose label is the repair's label without its
word of repairing ("replacement", "repair", "fitting"). Only numbers and words are read from the
passages (untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Sequence

from backend.agent.numerals import expression_figures
from backend.agent.tools.basket import norm_words
from backend.agent.tools.headings import label_words
from backend.agent.tools.pricing import PRICE

# The words a repair's label names its work by: "Dryer belt replacement", "Fridge defrost system repair".
_REPAIR_WORDS = frozenset({"replacement", "replace", "repair", "fitting", "fit", "install", "installation", "swap",
                           "change", "labour", "labor"})
# The parts asked with the repair: "including the part", "part and HST included", "with parts", "including both parts".
_ASKS_PARTS = re.compile(r"\b(?:incl\w*|inc\.?|with|plus|and)\s+(?:the\s+|both\s+|all\s+|any\s+|new\s+)*parts?\b"
                         r"|\bparts?\s+(?:and\s+[a-z]+\s+)?(?:incl\w*|inc\.?|included)\b", re.IGNORECASE)
# A part named after "including": "including the belt", "with a new igniter".
_INCLUDING = re.compile(r"\b(?:incl\w*|inc\.?|with|plus)\s+(?:the\s+new\s+|a\s+new\s+|the\s+|a\s+|new\s+)?([a-z][\w-]*)",
                        re.IGNORECASE)
# A repair's line saying its part is in its price: "(battery included)", "incl. parts".
_INCLUDED = re.compile(r"\bincl(?:uded|uding|\.|usive)?\b|\bwith\s+(?:the\s+)?parts?\b", re.IGNORECASE)
# A repair asked in the question's words: "needs replacing", "replace", "repaired".
_REPAIR_ASKED = re.compile(r"\b(?:replac\w*|repair\w*|fix\w*|fit(?:ted|ting)?|install\w*)\b", re.IGNORECASE)


def _one_price(sentence: str) -> str | None:
    prices = [next(g for g in m.groups() if g).replace(",", "") for m in PRICE.finditer(sentence)]
    return prices[0] if len(prices) == 1 else None


def repair_parts(sentences: Sequence[str]) -> list[tuple[str, frozenset[str], str]]:
    """(the repair's price, its part's label, the part's price) for each line of one price whose
    label is a repair's ("Dryer belt replacement: $129.00") when another line of one price is
    labelled by the rest of it ("Dryer belt: $28.00"): [("129.00", {"dryer", "belt"}, "28.00")]."""
    priced = [(label_words(s), price, s) for s in sentences if (price := _one_price(s)) is not None]
    out = []
    for label, price, sentence in priced:
        core = label - _REPAIR_WORDS
        if core == label or not core or _INCLUDED.search(sentence):
            continue  # ("Battery replacement: $15.00 (battery included)": its part is in it, review)
        parts = [p for other, p, _ in priced if other == core]
        if len(parts) == 1:  # (one line of that name: not "SSD 1TB: $85" beside "SSD: $65", review)
            out.append((price, core, parts[0]))
    return out


def asks_parts(question: str, parts: Sequence[tuple[str, frozenset[str], str]]) -> bool:
    """Whether `question` asks a bill with the parts of its repairs: "including the part", "with
    parts", "including both parts", or a part's own word after "including" ("including the belt")."""
    if _ASKS_PARTS.search(question):
        return True
    words = set().union(*(core for _, core, _ in parts)) if parts else set()
    return any(norm_words(m.group(1)) & words for m in _INCLUDING.finditer(question))


def with_parts(question: str, expression: str, sentences: Sequence[str]) -> str | None:
    """`expression` plus the price of the part of each repair it holds the price of (repair_parts),
    when the question asks the parts (asks_parts) and the expression holds no part's price yet;
    None otherwise."""
    parts = repair_parts(sentences)
    if not parts or not asks_parts(question, parts):
        return None
    held = {Fraction(f) for f in expression_figures(expression)}
    added = [part for repair, _, part in parts if Fraction(repair) in held and Fraction(part) not in held]
    return " + ".join([expression] + added) if added else None


def asked_repairs(question: str, sentences: Sequence[str]) -> list[str]:
    """The prices of the repairs `question` names with their parts (asks_repair_with_parts): each
    repair whose part's label the question says all of ("a dryer belt replacement including the
    belt": ["129.00"]); [] otherwise."""
    if not asks_repair_with_parts(question, sentences):
        return []
    return [repair for repair, core, _ in repair_parts(sentences) if _repair_named(question, core)]


def asks_repair_with_parts(question: str, sentences: Sequence[str]) -> bool:
    """Whether `question` asks a repair the passages price apart from its part, with the part
    ("how much for a dryer belt replacement including the belt?"): the calculator is planned."""
    parts = repair_parts(sentences)
    return bool(parts) and asks_parts(question, parts) and any(_repair_named(question, core) for _, core, _ in parts)


# How many words apart a part's name and a word of repairing may stand for the question to ask that repair.
_REPAIR_REACH = 4


def _repair_named(question: str, core: frozenset[str]) -> bool:
    """Whether `question` asks the repair of the part named `core`: every word of it, and a word of
    repairing ("replacement", "replacing", "fix") within _REPAIR_REACH words of one of them ("screen
    replacement including the screen" asks no battery's: "My battery is fine", review)."""
    words = re.findall(r"[A-Za-z][\w'-]*", question)
    if not core <= norm_words(question):
        return False
    at = [i for i, w in enumerate(words) if norm_words(w) & core]
    repairs = [i for i, w in enumerate(words) if _REPAIR_ASKED.fullmatch(w) or norm_words(w) & _REPAIR_WORDS]
    return any(abs(i - j) <= _REPAIR_REACH for i in at for j in repairs)
