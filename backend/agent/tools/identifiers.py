"""Places and kinds a business names by a number or a letter (issue 15): "Zone 1", "Studio 2",
"Room B", "Court 3", "the Level 1 bays". The number of such a name is no price, count or factor
("1 * 3" for "3 Zone 2 deliveries" over "Zone 1 (city centre): £6.00 per delivery"), and a
question naming one ("Studio 2 for 3 hours") is about that one's line, not another's with the
same word ("Studio 1: £12"). Blind sets 39, 62 and 64 (read after their runs): 1 right of 14
questions naming one. Only words and numbers are read from the passages (untrusted data).
"""

from __future__ import annotations

import functools
import re
from typing import Sequence

from backend.agent.numerals import COUNT_WORDS

# The words a business names its places and kinds with before a number or a capital letter.
_WORDS = (r"room|studio|zone|court|level|bay|pitch|lane|field|hall|suite|cabin|tier|stage|track|booth|pod|kennel|"
          r"area|band|grade|plan|option|package|deck|floor|gate|hangar|shed|unit|lot")
# The word of a name right before its number ("Zone 1", "Studio 2").
_NAME_BEFORE = re.compile(rf"\b({_WORDS})\s*$", re.IGNORECASE)
# A name: "Zone 1", "Room B" (a letter alone); not a count after the word ("a double room 2 nights", "the hall 4
# hours", "a deck 20 square metres": review).
_COUNTED_AFTER = (r"\s*-?\s*(?:nights?|hours?|hrs?|days?|weeks?|months?|years?|people|persons?|guests?|adults?|kids?|"
                  r"children|dogs?|cats?|m2|m²|sq\b|square|metres?|meters?|ft|feet|foot|miles?|km|times|x\b|lots?|sessions?)")
_NAMED = re.compile(rf"\b({_WORDS})\s+([0-9]{{1,2}}|[A-Z])(?![\w.,/-])(?!{_COUNTED_AFTER})", re.IGNORECASE)
# A name opening a sentence (a row's label: "Room B: ...", "- Zone 2 (inner suburbs): £9.00"), not one named in
# passing ("Drum kit hire: £10 (included free in Studio 3)", "10% off (not Room C)": review).
_OPENING = re.compile(r"\W{0,4}(?:the\s+)?(?:[A-Za-z-]+\s+){0,2}$")


@functools.lru_cache(maxsize=256)
def _names(text: str, letters_any_case: bool) -> dict[str, frozenset[str]]:
    """{word: {ids}} of the names `text` writes ("Studio 1 ... Studio 2" -> {"studio": {"1", "2"}}); a
    letter only as a capital unless `letters_any_case` (a question may write "room b"). Cached: the
    documents' names are read once per question, not once per sentence (do not mutate)."""
    out: dict[str, set[str]] = {}
    for m in _NAMED.finditer(text):
        ident = m.group(2)
        if ident.isalpha() and not (letters_any_case or ident.isupper()):
            continue
        if ident.isalpha() and ident.islower() and ident in ("a", "i"):
            continue  # "plan a 12 months", "room i think": an article, a pronoun
        out.setdefault(m.group(1).lower(), set()).add(ident.upper())
    return {word: frozenset(ids) for word, ids in out.items()}


def names_another(question: str, sentence: str, sentences: Sequence[str]) -> bool:
    """Whether `sentence` names another of the places or kinds the question names one of, by the
    same word ("Studio 1: £12" for "Studio 2 for 3 hours"), and not the question's own, when the
    documents (`sentences`) name more than one of them that way."""
    asked = _names(question, letters_any_case=True)
    if not asked:
        return False
    written = _names(" \n".join(sentences), letters_any_case=False)
    opening = next((m for m in _NAMED.finditer(sentence) if _OPENING.fullmatch(sentence[:m.start()])), None)
    own = _names(opening.group(0), letters_any_case=False) if opening is not None else {}
    for word, ids in asked.items():
        listed = written.get(word, frozenset())
        # (a question's "room a" only where the documents name rooms by letter: not "a room a week")
        ids = {i for i in ids if i in listed}
        if len(listed) > 1 and ids and own.get(word) and not own[word] & ids:
            return True
    return False


def without_names(question: str, sentences: Sequence[str]) -> str:
    """`question` with the number or letter of each name the documents (`sentences`) write the same
    way taken out ("3 Zone 2 deliveries" -> "3 Zone deliveries"): once its line is chosen
    (names_another), the name counts nothing."""
    written = _names(" \n".join(sentences), letters_any_case=False)

    def strip(m: re.Match[str]) -> str:
        return m.group(1) if m.group(2).upper() in written.get(m.group(1).lower(), frozenset()) else m.group(0)

    return _NAMED.sub(strip, question)


def names_several(before: str, sentences: Sequence[str]) -> bool:
    """Whether the number right after `before` is the number of a name (`before` ends with a name's
    word) the passages (`sentences`) write with several numbers or letters ("Zone 1", "Zone 2"): no
    number of a bill. ("Unit 4 Bridge Industrial Estate" alone is an address: plausible reads it.)"""
    word = _NAME_BEFORE.search(before)
    if word is None:
        return False
    return len(_names(" \n".join(sentences), letters_any_case=False).get(word.group(1).lower(), frozenset())) > 1


_WORD_NUMBERS = {"one": "1", **{word: n for word, n in COUNT_WORDS.items() if " " not in word}}
# A kind the documents name by a number in words: "Two-tank reef trip", "One-tank reef trip".
_WORDED_KIND = re.compile(r"\b(" + "|".join(_WORD_NUMBERS) + r")-([a-z]+)\b", re.IGNORECASE)


def as_written_kinds(question: str, sentences: Sequence[str]) -> str:
    """`question` with a kind the documents name by a number in words written as they write it
    ("2 of us on the 2 tank reef trip" over "Two-tank reef trip ... $145" -> "... on the two-tank
    reef trip": its 2 names the trip and counts nothing; blind set 84, read after its runs)."""
    kinds = {(_WORD_NUMBERS[m.group(1).lower()], m.group(2).lower()): m.group(0).lower()
             for s in sentences for m in _WORDED_KIND.finditer(s)}
    for (number, word), written in kinds.items():
        question = re.sub(rf"(?<![\w.]){number}\s*-?\s*{re.escape(word)}\b", written, question, flags=re.IGNORECASE)
    return question
