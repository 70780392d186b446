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
from backend.agent.tools.units import is_unit

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


# A kind with its members listed after it in brackets: "Board-foot rate, softwood (pine, spruce, cedar, hemlock)",
# "Hardwood (oak, maple, cherry, walnut, ash)" (three or more members in lower case; a place's names are capitals).
_MEMBER = r"[a-z][a-z-]*(?:\s[a-z][a-z-]*)?"
_KIND_MEMBERS = re.compile(rf"\b([A-Za-z][A-Za-z-]+)\s*\(\s*({_MEMBER}(?:\s*,\s*(?:(?:and|or)\s+)?{_MEMBER}){{2,}}"
                           rf"(?:\s*,?\s*(?:and|or)\s+{_MEMBER})?)\s*\)")
_PRICED = re.compile(r"[0-9]")


def as_member_kinds(question: str, sentences: Sequence[str]) -> str:
    """`question` with a member of a kind the documents list in brackets written as that kind, where
    the kind prices a line of its own too and the member is named nowhere else ("800 board feet of
    pine kiln dried" over "Board-foot rate, softwood (pine, spruce, cedar, hemlock): $0.55" and, under
    KILN DRYING, "Softwood: $0.45 per board foot" -> "... of softwood kiln dried": the kiln's softwood
    line; blind set 105, read after its runs)."""
    text = " \n".join(sentences)
    for sentence in sentences:
        for m in _KIND_MEMBERS.finditer(sentence):
            kind = m.group(1)
            members = [w.strip() for w in re.split(r",|\b(?:and|or)\b", m.group(2)) if w.strip()]
            if re.search(rf"\b{re.escape(kind)}\b", question, re.IGNORECASE):
                continue
            # (the kind prices a line without its members: "Softwood: $0.45 per board foot")
            # (opening it: not "Small breeds: $30.00" for "Large breeds (labrador, retriever, collie)", review)
            if not any(_PRICED.search(other) and re.match(rf"\W*{re.escape(kind)}\b", other, re.IGNORECASE)
                       and m.group(0) not in other for other in sentences):
                continue
            for member in members:
                said = re.compile(rf"\b{re.escape(member)}\b", re.IGNORECASE)
                if said.search(question) and len(said.findall(text)) == len(said.findall(" ".join(
                        k.group(2) for k in _KIND_MEMBERS.finditer(text)))):
                    question = said.sub(lambda w: f"{w.group(0)} {kind.lower()}", question, count=1)
                    break
    return question


# A word the documents write joined by a hyphen: "Ride-on mower", "self-propelled", "one-off".
_COMPOUND = re.compile(r"\b([A-Za-z]{2,})-([A-Za-z]{2,})\b")


def as_written_compounds(question: str, sentences: Sequence[str]) -> str:
    """`question` with a word the documents hyphenate written as they write it when the question
    writes it apart or joined ("can i get my ride on serviced" over "Ride-on mower / lawn tractor:
    £165.00" -> "... my ride-on serviced": one word of the row's label, blind set 90, read after its
    runs)."""
    compounds = {(m.group(1).lower(), m.group(2).lower()) for s in sentences for m in _COMPOUND.finditer(s)}
    for first, second in sorted(compounds):
        question = re.sub(rf"\b{re.escape(first)}(?:\s+|){re.escape(second)}\b", f"{first}-{second}", question,
                          flags=re.IGNORECASE)
    return question



# A size of two lengths ("18\" x 24\"", "24 x 36", "18x24", "60cm x 90cm"; a question's "18 by 24" too), and a
# row's label that is one ("  18\" x 24\" ........ $68.00", read "18\" x 24\": $68.00").
_MARK = r"(?:\"|”|″|''|in\.?|inch(?:es)?|cm|mm)?"
_TWO_SIDES = re.compile(rf"(?<![\w.])([0-9]+(?:\.[0-9]+)?)\s*{_MARK}\s*(?:x|×|by)\s*([0-9]+(?:\.[0-9]+)?)\s*{_MARK}(?![\w.])",
                        re.IGNORECASE)
_SIZE_LABEL = re.compile(rf"^\s*([0-9]+(?:\.[0-9]+)?)\s*{_MARK}\s*[x×]\s*([0-9]+(?:\.[0-9]+)?)\s*{_MARK}\s*(?=:)",
                         re.IGNORECASE)


def with_size_labels(sentences: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """`sentences` ((heading, sentence) pairs) with a row whose label is a size of two lengths
    labelled by one word ("18\" x 24\": $68.00" -> "18x24: $68.00"), as a question names it
    (as_written_sizes; blind set 89, read after its runs: "3 of the 18x24 aluminum signs" took
    "12\" x 18\": $42.00")."""
    return [(h, _SIZE_LABEL.sub(lambda m: f"{m.group(1)}x{m.group(2)}", s, count=1)) for h, s in sentences]


def as_written_sizes(question: str, sentences: Sequence[str]) -> str:
    """`question` with a size of two lengths that labels a row (with_size_labels) written as the row
    writes it: "one 24 x 36 aluminum sign" over "24x36: $115.00" -> "one 24x36 aluminum sign" (its
    numbers name the row, they count nothing)."""
    labels = {m.group(0).strip() for s in sentences for m in re.finditer(r"(?<![\w.])[0-9]+(?:\.[0-9]+)?x[0-9]+(?:\.[0-9]+)?(?=:)", s)}
    if not labels:
        return question

    def written(match: re.Match[str]) -> str:
        token = f"{match.group(1)}x{match.group(2)}"
        return token if token in labels else match.group(0)
    return _TWO_SIDES.sub(written, question)


# A kind named by a number in digits and a word that is no unit: "1-sided", "2-sided" (not "2-hour", "3-day").
# (not "2-for-1", "1-Jan", "12-noon", review; nor "SUV / 7-seater", which a question names by "SUV", blind set 53: the
# one, two or three of a kind's columns only, "1-sided", "2-sided")
_NUMBERED_KIND = re.compile(r"(?<![\w.])([1-3])-(?!(?:for|and|the|off|way|noon|midnight|jan|feb|mar|apr|may|jun|"
                            r"jul|aug|sep|sept|oct|nov|dec)[a-z]*\b)([a-z]{3,})\b", re.IGNORECASE)


def with_worded_kinds(sentences: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """`sentences` ((heading, sentence) pairs) with each kind named by a number in digits written
    in words ("10 - 49: 1-sided $14.00; 2-sided $19.00" -> "... one-sided $14.00; two-sided
    $19.00"), as_written_kinds' form: a question's "25 one sided lawn signs" then names the kind,
    and its 1 counts nothing (blind set 89, read after its runs). A length or a period keeps its
    digits ("2-hour lesson": units.is_unit)."""
    words = {n: w for w, n in _WORD_NUMBERS.items()}

    def worded(m: re.Match[str]) -> str:
        return m.group(0) if is_unit(m.group(2)) or m.group(1) not in words else f"{words[m.group(1)]}-{m.group(2)}"
    return [(h, _NUMBERED_KIND.sub(worded, s)) for h, s in sentences]

