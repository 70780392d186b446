"""The people a question is about (issue 15): the ages it gives, no operand of its arithmetic
("my dad is 70", "two kids (ages 8 and 12)": given_ages, without_ages), the size of its group
("5 of us", "a group of 6", "me and 3 friends" -> 4, "me, my wife and our 2 kids" -> 4:
group_size) and a share per person it asks of a total ("for the 10 of us, how much each if we
split it"; not "$12 per person": asks_share_per_person, people_sharing, sharing_counts). Read
from the question's words with its counts as digits (backend.agent.numerals.with_digits), at
most MAX_CUE_CHARS of it; the calculator's operations (backend.agent.operations) and the
tools over prices (backend.agent.tools) read them.
"""

from __future__ import annotations

import re
from fractions import Fraction

from backend.agent.numerals import CURRENCY_SIGNS, NUMBER, cue_text, with_digits

# Ages a question gives, no operand of its arithmetic: "my dad is 70", "he's 70", "aged 65", "a
# 9-year-old", "ages 8 and 12", "two kids (9 and 12)", "my two kids (both 13)", "70 years old".
_AGE_LIST = r"[0-9]{1,3}(?:\s*(?:,|and|&)\s*[0-9]{1,3})*"
_PERSON = (r"(?:he|she|he's|she's|hes|shes|i|i'm|im|who|who's|dad|mum|mom|father|mother|grandma|grandpa|grandmother|"
           r"grandfather|grandad|granddad|granny|gran|nana|nan|son|daughter|wife|husband|partner|brother|sister|friend|"
           r"kid|child|baby)")
# ("my mum's 72", "my gran (72)", "who is 72", "my son is turning 7": review of the twenty-first session; "Im a senior
# (68)": blind set 88, read after its runs, was 28.00 * 68)
_AGES = re.compile(rf"\b{_PERSON}(?:['’]s)?(?:\s+|\s*\(\s*)(?:(?:(?:is\s+|was\s+)?(?:turns|turned|turning)|is|am|was|will\s+be)\s+)?[0-9]{{1,3}}(?![0-9])"
                   rf"(?!\s*(?:[%$£€]|\.[0-9]|(?!(?:and|or|but|so|if|when|years?)\b)[a-z]))"
                   rf"|\baged?\s+[0-9]{{1,3}}(?:\s*(?:,|and|&)\s*[0-9]{{1,3}}\b(?!\s*[a-z]))*\b|\bages\s+{_AGE_LIST}\b"
                   rf"|\b[0-9]{{1,3}}[\s-]*(?:years?|yrs?)[\s-]*old\b|\b[0-9]{{1,3}}-year-olds?\b"
                   # ("Im a senior (68)", "pensioner, 72": an age of 50 or more; not "senior 1", review)
                   rf"|\b(?:senior|pensioner|retiree|oap)\s*(?:\(\s*|,\s*|\s+(?:aged?\s+)?)(?:[5-9][0-9]|1[01][0-9])\b(?![%$£€.])"
                   rf"|(?P<who>\b(?:kids?|child|children|sons?|daughters?|boys?|girls?|grandkids?|twins)\s*)"
                   rf"\(\s*(?:(?:ages?\s+|aged\s+)?[0-9]{{1,3}}(?:\s*(?:,|and|&)\s*[0-9]{{1,3}})+|both\s+(?:aged?\s+)?[0-9]{{1,3}})\s*\)",
                   re.IGNORECASE)


def given_ages(text: str) -> list[str]:
    """The ages `text` gives ("my dad is 70" -> ["70"], "two kids (ages 8 and 12)" -> ["8", "12"])."""
    return [n for m in _AGES.finditer(text) for n in re.findall(r"[0-9]{1,3}", m.group(0))]


def without_ages(text: str) -> str:
    """`text` without the ages it gives ("my dad is 70", "two kids (ages 8 and 12)", "a
    9-year-old"): they count no thing its arithmetic is about."""
    return _AGES.sub(lambda m: (m.group("who") or "") + " ", text)


# The size of the question's own group: "5 of us", "a group of 6", "we're 4", "me and 3 friends".
GROUP_OF = re.compile(rf"\b(?:group|party|team|family|table)\s+of\s+{NUMBER}(?![.,]?[0-9])\b"
                      rf"|(?<![\w.]){NUMBER}\s+of\s+us\b"
                      rf"|\b(?:we're|we\s+are)\s+(?:a\s+(?:group|party|team)\s+of\s+)?{NUMBER}(?![.,]?[0-9])\b"
                      rf"(?!\s*(?:%|[a-z]+\b(?<!people)(?<!players)(?<!adults)(?<!guests)(?<!persons)))",
                      re.IGNORECASE)
_ME_AND = re.compile(rf"\b(?:me|i|my\s+(?:son|daughter|kid|child|boy|girl|wife|husband|partner|friend))\s+and\s+"
                     rf"(?:my\s+|our\s+)?{NUMBER}\s+(?:of\s+(?:my|his|her|their|our)\s+)?"
                     rf"(?:friends|mates|colleagues|others|buddies|pals|classmates|teammates)\b", re.IGNORECASE)
# Grown-ups named beside counted children: "me, my wife and our 2 kids" (the me and the wife).
_NAMED_ADULTS = re.compile(r"\b(?:me|myself|my\s+(?:wife|husband|partner|girlfriend|boyfriend|spouse|mum|mom|dad|"
                           r"mother|father))\b(?=[^.?!]{0,40}?\b(?:our|my)\s+[0-9]+\s+(?:kids|children|sons|daughters|"
                           r"boys|girls)\b)", re.IGNORECASE)
# (and a workplace's or an event's: "a team-building session for 18 colleagues", practice set 3)
_HEADS = re.compile(rf"(?<![\w.]){NUMBER}\s+(?:people|ppl|persons|players|guests|adults|children|kids|teens|"
                    rf"students|seniors|colleagues|co-?workers|employees|staff|attendees|delegates|participants)\b",
                    re.IGNORECASE)


# A count of people: "3 mates", "5 of his friends", "2 kids".
PEOPLE_COUNTED = re.compile(r"[0-9]+\s+(?:of\s+(?:my|his|her|their|our|us)\s+)?(?:[a-z]+\s+)?(?:people|ppl|persons|players|guests|"
                            r"adults|children|kids|teens|students|seniors|friends|mates|colleagues|others|buddies|pals|"
                            r"classmates|teammates|of\s+us)\b", re.IGNORECASE)


# A child of the party named, not counted, with its age: "and my son who's 11", "with our little girl (4)"; not "My
# son is driving us there", "for me and my son? He's 30".
_NAMED_CHILD = re.compile(r"(?:\band|\bwith|\bplus|&|,)\s+(?:my|our)\s+(?:little\s+|youngest\s+|eldest\s+|oldest\s+)?"
                          r"(son|daughter|boy|girl|kid|child)\b(?=\s*\(\s*(?:age\s+)?[0-9]|,?\s+(?:who'?s|who\s+is|aged?)\s+[0-9])",
                          re.IGNORECASE)


def named_children(text: str) -> list[str]:
    """The children of the party `text` names with their ages, not counted ("3 adults and my son
    who's 11": ["son"]; not "My son is driving us there")."""
    return [m.group(1) for m in _NAMED_CHILD.finditer(text)]


def group_size(text: str) -> str | None:
    """The head-count of the group `text` is about ("There are 5 of us" -> "5", "group of 6",
    "we're 4", "me and 3 friends" -> "4", "for 5 players"), or None."""
    text = with_digits(cue_text(text))
    found = GROUP_OF.search(text)
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
    if heads and all(re.search(r"adults\b", m.group(0), re.IGNORECASE) for m in found):
        heads += [Fraction(1)] * len(named_children(text))  # "3 adults and my son who's 11" (not "my son ... 5 kids")
    return None if not heads else str(sum(heads))


def _between(text: str, matches: list[re.Match[str]]) -> list[str]:
    """The text between each match of `matches` and the next."""
    return [text[a.end():b.start()] for a, b in zip(matches, matches[1:])]


# A share per person asked ("how much each", "split it", "each person pay") of a price for a
# group counted in the question ("the 10 of us", "5 of us", "4 friends"): the price over them.
# Not "$12 per person" (a price already per person), nor "what share of the members".
_PER_PERSON = re.compile(r"\b(?:split|splitting|sharing|chipping\s+in|chip\s+in)\b"
                         r"|\bshare\s+(?:it|this|that|the\s+(?:cost|bill|price|total)|evenly|equally)\b"
                         r"|\bhow\s+much\s+(?:\w+\s+){0,3}each\b"
                         r"|\beach\s+(?:person|of\s+us|of\s+them|one\s+of\s+us|family|household|couple)\s+"
                         r"(?:pay|pays|owe|owes|put|puts|chip)", re.IGNORECASE)
_PEOPLE = re.compile(rf"(?<![\w.]){NUMBER}(?:\s+(?:of\s+(?:us|you|them)|people|ppl|persons|friends|adults|guests|"
                     rf"colleagues|members|players|students|kids|children|siblings|flatmates|housemates|roommates|"
                     rf"coworkers|mates|guys|couples?|famil(?:y|ies)|households?)\b"
                     rf"|[\s-]*(?:piece|member)\s+band\b)", re.IGNORECASE)  # (not "your 3 man crew": theirs)
# The asker and the others counted: "me and 3 friends", "me + 2 mates", "my 2 roommates and I" (the asker too).
_OTHERS = r"(?:friends|mates|colleagues|others|buddies|pals|classmates|teammates|roommates|flatmates|housemates|coworkers)"
_WITH_ME = re.compile(rf"\b(?:me|myself|i)\s*(?:and|\+|&)\s*(?:my\s+|our\s+)?{NUMBER}\s+(?:[a-z]+\s+)?{_OTHERS}\b"
                      rf"|(?<![\w.])(?:my\s+)?{NUMBER}\s+(?:[a-z]+\s+)?{_OTHERS}\s*(?:and|\+|&)\s*(?:me|i|myself)\b",
                      re.IGNORECASE)
# The ways a bill is split, said: "split the bill 3 ways".
_WAYS = re.compile(rf"\b(?:split|splitting|divide|dividing|share|sharing)\b[^.?!]{{0,25}}?(?<![\w.]){NUMBER}\s+ways\b",
                   re.IGNORECASE)
_PRICED_PER_HEAD = re.compile(rf"\b(?:per|a)\s+(?:person|head|adult|child|ticket)\b|\bapiece\b|[{CURRENCY_SIGNS}]\s*[0-9][0-9.,]*\s+each\b",
                              re.IGNORECASE)


def asks_share_per_person(text: str) -> bool:
    """Whether `text` asks a total's share per person of a group it counts ("for the 10 of us,
    how much each if we split it"; "split it 50/50"; not "$12 per person")."""
    text = with_digits(cue_text(text))
    return (_PER_PERSON.search(text) is not None and (_PEOPLE.search(text) is not None or _HALVES.search(text) is not None)
            and _PRICED_PER_HEAD.search(text) is None)


def people_sharing(text: str) -> list[str]:
    """The head-counts of a group `text` asks a share per person for ("6 of us ... if we split it
    equally, how much each" -> ["6"]; "2 adults and 3 kids ... split it" -> ["5"], a party listed
    in parts counted whole; "N of us" before any other count); [] when it asks none
    (asks_share_per_person)."""
    if not asks_share_per_person(text):
        return []
    said = _said_share(with_digits(cue_text(text)))
    if said is not None:
        return [said[1]]
    found = list(_PEOPLE.finditer(with_digits(cue_text(text))))
    counts = [m.group(1).replace(",", "") for m in found]
    listed = len(found) > 1 and all(re.fullmatch(r"\s*(?:,|and|,\s*and)\s*", text_between)
                                    for text_between in _between(with_digits(cue_text(text)), found))
    total = sum(Fraction(c) for c in counts)
    if listed and total.denominator == 1:  # "2 adults and 3 kids ... split it": the 5 of them
        return [str(total.numerator)]
    return list(dict.fromkeys(counts))


# A bill split in two halves: "If we split it 50/50", "split the cost fifty-fifty", "go halves" (blind set 86).
_HALVES = re.compile(r"\b(?:split|splitting|divide|dividing|share|sharing)\b[^.?!]{0,25}?(?:\b50\s*[/-]\s*50\b|\bfifty[\s-]fifty\b"
                     r"|\bin\s+half\b|\bdown\s+the\s+middle\b)|\bgo(?:ing)?\s+halves\b", re.IGNORECASE)
# "50/50" as written: its numbers count nothing.
HALVES_WRITTEN = re.compile(r"\b50\s*[/-]\s*50\b|\bfifty[\s-]fifty\b", re.IGNORECASE)


def _said_share(text: str) -> tuple[int, str] | None:
    """(position, head-count) of the one group `text` (with digits) says shares: the ways said ("my
    2 roommates and I ... split the bill 3 ways": 3), "N of us" ("our club has 40 members; 5 of us are
    splitting it": 5), the asker and the others counted ("me and 3 friends": 4), halves ("split it
    50/50": 2); None otherwise."""
    ways = _WAYS.search(text)
    if ways is not None:
        return ways.start(1), ways.group(1).replace(",", "")
    halves = _HALVES.search(text)
    if halves is not None:  # "If we split it 50/50": 2 ways
        return halves.start(), "2"
    us = next((m for m in _PEOPLE.finditer(text) if re.search(r"\bof\s+(?:us|you|them)\b", m.group(0), re.I)), None)
    if us is not None:
        return us.start(), us.group(1).replace(",", "")
    me = _WITH_ME.search(text)
    if me is not None:
        count = me.group(1) or me.group(2)
        return me.start(), str(Fraction(count.replace(",", "")) + 1)
    return None


def sharing_counts(text: str) -> list[tuple[int, str]]:
    """(position, head-count) of each group `text` counts ("the 10 of us", "4 friends") when it
    asks a share per person ("how much each", "split it"; not "$12 per person"), else []. `text`
    is read as given: named_operations passes its question cut to the cue and with digits."""
    if not _PER_PERSON.search(text) or _PRICED_PER_HEAD.search(text):
        return []
    said = _said_share(text)
    if said is not None:  # ("me and 3 friends ... how much each": 4 ways, not 3)
        return [said]
    return [(m.start(), m.group(1).replace(",", "")) for m in _PEOPLE.finditer(text)]
