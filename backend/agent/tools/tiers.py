"""Prices by the size of a group (issue 15): "Pricing is per group: $90 for 2 players, $120 for 3,
$140 for 4, $165 for 5 and $180 for 6", asked by "There are 5 of us" -> "165"; "what's that per
person" for a group of 6 -> "180 / 6".

A tier list is a sentence with at least MIN_TIERS prices each "for N", one of them naming who
("players", "people", "guests", "persons"); the question's group is
backend.agent.party.group_size. Only numbers and words are read from the passages
(untrusted data).
"""

from __future__ import annotations

import re
from typing import Sequence

from backend.agent.numerals import AMOUNT, SIGNED_PRICE
from backend.agent.party import asks_share_per_person, group_size

# "$90 for 2 players", "$120 for 3", "£45 for up to 4 people"
_WHO = r"people|persons|players|guests|adults|riders|divers|climbers|participants"
_TIER = re.compile(rf"{SIGNED_PRICE}\s+for\s+(?:up\s+to\s+|groups?\s+of\s+)?{AMOUNT}(?:\s+({_WHO}))?\b"
                   rf"(?!\s+(?!(?:{_WHO}|and|or|which|is)\b)[a-z])", re.IGNORECASE)
# The best ranked sentences a tier list is read from: the question is about its thing.
MAX_RANKED = 2
# The fewest prices "for N" a sentence lists to be read as tiers.
MIN_TIERS = 2


def tiers(sentence: str) -> dict[str, str]:
    """The price of each group size of a tier list in `sentence` ({"2": "90", "3": "120", ...}),
    or {} when it holds none."""
    found = list(_TIER.finditer(sentence))
    if len(found) < MIN_TIERS or not any(m.group(3) for m in found):
        return {}
    return {m.group(2).replace(",", ""): m.group(1).replace(",", "") for m in found}


def tier_expressions(question: str, sentences: Sequence[str]) -> list[str]:
    """The price of the question's group (group_size) in each tier list of the MAX_RANKED best
    ranked of `sentences` (best first) that has its size; divided by the size when the question asks a share per
    person ("180 / 6"). [] when the question names no group or no tier list has its size."""
    size = group_size(question)
    if size is None:
        return []
    out = []
    for sentence in sentences[:MAX_RANKED]:
        price = tiers(sentence).get(size)
        if price is not None:
            out.append(f"{price} / {size}" if asks_share_per_person(question) or _PER_HEAD.search(question)
                       else price)
    return list(dict.fromkeys(out))


_PER_HEAD = re.compile(r"\b(?:per|a|each)\s+(?:person|head|player)\b|\beach\s*\?|\bhow\s+much\s+each\b", re.IGNORECASE)
