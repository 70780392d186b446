"""Places and kinds a business names by a number or a letter (issue 15): "Zone 1", "Studio 2",
"Room B", "Court 3", "the Level 1 bays". The number of such a name is no price, count or factor
("1 * 3" for "3 Zone 2 deliveries" over "Zone 1 (city centre): £6.00 per delivery"), and a
question naming one ("Studio 2 for 3 hours") is about that one's line, not another's with the
same word ("Studio 1: £12"). Blind sets 39, 62 and 64 (read after their runs): 1 right of 14
questions naming one. Only words and numbers are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from typing import Sequence

# The words a business names its places and kinds with before a number or a capital letter.
_WORDS = (r"room|studio|zone|court|level|bay|pitch|lane|field|hall|suite|cabin|tier|stage|track|booth|pod|kennel|"
          r"area|band|grade|plan|option|package|deck|floor|gate|hangar|shed|unit|lot")
# A number of a name right before it ("Zone 1", "Studio 2").
NAME_BEFORE = re.compile(rf"\b(?:{_WORDS})\s*$", re.IGNORECASE)
# A name of the documents: "Zone 1", "Room B" (a capital letter as written, alone).
_NAMED = re.compile(rf"\b({_WORDS})\s+([0-9]{{1,2}}|[A-Z])(?![\w.,/-])", re.IGNORECASE)


def _names(text: str, letters_any_case: bool) -> dict[str, set[str]]:
    """{word: {ids}} of the names `text` writes ("Studio 1 ... Studio 2" -> {"studio": {"1", "2"}}); a
    letter only as a capital unless `letters_any_case` (a question may write "room b")."""
    out: dict[str, set[str]] = {}
    for m in _NAMED.finditer(text):
        ident = m.group(2)
        if ident.isalpha() and not (letters_any_case or ident.isupper()):
            continue
        out.setdefault(m.group(1).lower(), set()).add(ident.upper())
    return out


def names_another(question: str, sentence: str, sentences: Sequence[str]) -> bool:
    """Whether `sentence` names another of the places or kinds the question names one of, by the
    same word ("Studio 1: £12" for "Studio 2 for 3 hours"), and not the question's own, when the
    documents (`sentences`) name more than one of them that way."""
    asked = _names(question, letters_any_case=True)
    if not asked:
        return False
    written = _names(" \n".join(sentences), letters_any_case=False)
    own = _names(sentence, letters_any_case=False)
    for word, ids in asked.items():
        listed = written.get(word, set())
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
        return m.group(1) if m.group(2).upper() in written.get(m.group(1).lower(), set()) else m.group(0)

    return _NAMED.sub(strip, question)
