"""A discount the documents grant and the question claims (issue 15): "I'm a student with a valid
card ... 3 hours of labour" over "Students with a valid card get 15% off all labour" -> the
calculator's candidates each times (100 - 15) / 100, first.

A discount is a sentence of the documents with a percentage off ("15% off", "a 20 percent
discount", "a discount of 10%"); who or what gets it is the sentence's words before the verb
granting it ("Groups of more than 10 people receive", "Students with a valid card get"). The
question claims it when it names who gets it ("I'm a student", "as a group", "my two siblings"),
or asks for a discount in words ("after the discount", "with the deal") and names something of
the sentence ("the multi-garment discount" of "5 or more garments ... 15% off the total"). Only
the percentage and words are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from typing import Sequence

from backend.agent.operations import PERCENT_SIGN
from backend.agent.tools.basket import norm_words

# A percentage off: "15% off", "a 20 percent discount", "a discount of 10%", "12 percent reduction".
_OFF = re.compile(rf"(?<![\w.])([0-9]{{1,2}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}\s*(?:off\b|discount\b|reduction\b)"
                  rf"|\b(?:discount|reduction)\s+of\s+([0-9]{{1,2}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}", re.IGNORECASE)
# The verb granting it: what comes before is who gets it.
_GRANTED = re.compile(r"\b(?:receive|receives|get|gets|earn|earns|enjoy|enjoys|are|is|pay|pays|qualify|qualifies|"
                      r"gives?)\b", re.IGNORECASE)
# A question asking for a discount in words.
_ASKS_DISCOUNT = re.compile(r"\b(?:discount|discounted|reduction|reduced|concession|concessions)\b"
                            r"|\b(?:group|student|member|members|senior|family|sibling|loyalty)\s+(?:rate|deal|price)\b",
                            re.IGNORECASE)
# "I'm not a student", "no siblings", "non-member": the words after it are no claim.
_NEGATED = re.compile(r"\b(?:not|no|non|never|without|isn't|aren't|don't|doesn't)\b[\s-]+((?:[\w'-]+\s+){0,2}[\w'-]+)",
                      re.IGNORECASE)
# Where the clause of a discount begins.
_CLAUSE = re.compile(r"[;:]|,\s+(?:and|but|while)\s|\.\s", re.IGNORECASE)
# Words naming everyone: no claim ("customers who ...", "every booking").
_ANYONE = frozenset({"customer", "client", "people", "person", "everyone", "every", "all", "booking", "visitor", "guest",
                     "price", "total", "rate", "ticket", "discount", "percent", "receive", "get", "more", "you", "your",
                     "valid", "card", "who", "with", "those"})


def claimed_discount(question: str, sentences: Sequence[str]) -> tuple[str, str] | None:
    """(the percentage as written: "15", its sentence) of the first discount of `sentences` the
    question claims (see the module docstring); None when it claims none or names a percentage
    itself."""
    if re.search(rf"[0-9]\s*{PERCENT_SIGN}", question, re.IGNORECASE):
        return None  # "with 15% off": the question's own (backend.agent.operations.named_operations)
    negated = {w for m in _NEGATED.finditer(question) for w in norm_words(m.group(1))}
    asked = norm_words(question) - _ANYONE - negated
    asks = _ASKS_DISCOUNT.search(question) is not None
    for sentence in sentences:
        match = _OFF.search(sentence)
        if match is None:
            continue
        clause = _CLAUSE.split(sentence[:match.start()])[-1]  # "...; junior membership is £30, | and siblings each receive"
        granted = list(_GRANTED.finditer(clause))
        who = norm_words(clause[:granted[-1].start()]) - _ANYONE if granted else set()
        # its head: the first word naming who ("Students with a valid card", "Groups of more than 10")
        head = next((w for w in (norm_words(word) for word in clause[:granted[-1].start()].split()) if w and
                     not w & _ANYONE), set()) if granted else set()
        named = len(who & asked)
        if named >= 2 or (named and asks) or (head & asked):
            return match.group(1) or match.group(2), sentence
    return None
