"""Two numbers of the documents related, the question bringing none of its own (issue 15): a share
as a percentage, years between two events, a percentage of an amount; and when the thing a
question asks the age of began. Candidates among the calculator's (backend.agent.tools.expressions);
only numbers and words are read from the passages (untrusted data)."""

from __future__ import annotations

import re
from typing import Sequence

from backend.agent.numerals import NUMBER_RE, with_digits
from backend.agent.operations import names_an_edition
from backend.agent.rounding import without_rounding
from backend.agent.tools.sentences import stems

# The most operands and question numbers combined: a question or passage full of numbers costs
# at most MAX_NUMBERS^2 * 8 expressions to check.
MAX_NUMBERS = 8
# A year as written: four digits, no thousands separator ("1,260 animals" is no year).
_YEAR_WRITTEN = re.compile(r"(?<![\w.,])(1\d{3}|20\d{2})(?!\w|[.,]\d)")


def numbers_in(text: str) -> list[str]:
    """The numbers written in `text`, in order, each once, without thousands separators, at most
    MAX_NUMBERS ("2,340 metres ... 14 May 1987" -> ["2340", "14", "1987"])."""
    found = (m.group(1).replace(",", "") for m in NUMBER_RE.finditer(text))
    return list(dict.fromkeys(found))[:MAX_NUMBERS]


def years_in(text: str) -> list[str]:
    """The numbers of `text` written as years (1000-2099, no thousands separator)."""
    return list(dict.fromkeys(m.group(1) for m in _YEAR_WRITTEN.finditer(text)))


# Two numbers of the documents related, the question bringing none of its own: a share as a
# percentage ("What percentage of its current hives did it start out with?" over "began with 14
# hives and today manages 236"), years between two events ("how many years after the club was
# founded was its boathouse rebuilt"), a percentage of an amount ("how much of the restoration
# money went on repainting" over "raised $210,000, of which 40 percent went on repainting").
_ASKS_PERCENTAGE = re.compile(r"\bwhat\s+(?:percentage|percent|per\s+cent|proportion|share)\b"
                              r"|\bas\s+a\s+percentage\b|\bwhat\s+%", re.IGNORECASE)
_ASKS_YEARS_BETWEEN = re.compile(r"\bhow\s+many\s+years\s+(?:after|before|later|earlier|passed|elapsed|went\s+by|"
                                 r"between|separate|apart)\b|\bhow\s+(?:long|many\s+years)\s+(?:after|before)\b"
                                 r"|\bhow\s+long\s+(?:was\s+it\s+)?between\b", re.IGNORECASE)
_ASKS_PART = re.compile(r"\bhow\s+(?:much|many)\s+(?:of|\w+\s+of)\s+(?:the|its|their|that|this)\b", re.IGNORECASE)
_PERCENT_IN = re.compile(r"(?<![\w.,])([0-9]+(?:\.[0-9]+)?)\s*(?:%|percent\b|per\s+cent\b)", re.IGNORECASE)
# A year's clause: "It moved to a new boathouse in 1968 | and won its first cup in 1921".
_CLAUSE_BREAK = re.compile(r"[,;]|\s(?:and|but|while|whereas)\s", re.IGNORECASE)
# The fact sentences two numbers are read from: the best ranked ones.
MAX_RELATED_SENTENCES = 3


def asks_relation(question: str) -> bool:
    """Whether `question` asks to relate two numbers of the documents (see relations) and brings
    no number of its own (but an edition's year: "the 2019 restoration money")."""
    own = with_digits(without_rounding(question))  # "round to 1 decimal" brings no operand
    if any(not names_an_edition(own, m) for m in NUMBER_RE.finditer(own)):
        return False
    return bool(_ASKS_PERCENTAGE.search(question) or _ASKS_YEARS_BETWEEN.search(question)
                or _ASKS_PART.search(question))


def relations(question: str, ranked: Sequence[str]) -> list[str]:
    """Expressions relating two numbers of the best ranked fact sentences `ranked` (best first),
    for a question asks_relation accepts: each smaller number as a percentage of each larger one
    of the same sentence; each later year less each earlier one of the first
    MAX_RELATED_SENTENCES + 1 years whose clauses hold most of the question's words (pairs of
    better ones first); a
    percentage of each other number of its sentence. [] for any other question."""
    if not asks_relation(question):
        return []
    top = list(ranked[:MAX_RELATED_SENTENCES])
    out: list[str] = []
    if _ASKS_YEARS_BETWEEN.search(question):
        # The years of the sentences naming most of the question's words first ("founded in 1904",
        # "won its first cup in 1921"; not "moved to a new boathouse in 1968"), then by rank.
        asked = stems(question)
        clauses = [(clause, rank) for rank, s in enumerate(ranked) for clause in _CLAUSE_BREAK.split(s)
                   if years_in(clause)]
        clauses.sort(key=lambda item: (-len(stems(item[0]) & asked), item[1]))
        years = list(dict.fromkeys(y for clause, _ in clauses for y in years_in(clause)))[:MAX_RELATED_SENTENCES + 1]
        pairs = sorted(((i, j) for i in range(len(years)) for j in range(i + 1, len(years))), key=lambda p: p[0] + p[1])
        out.extend(f"{max(years[i], years[j], key=int)} - {min(years[i], years[j], key=int)}" for i, j in pairs
                   if years[i] != years[j])
    elif _ASKS_PERCENTAGE.search(question):
        for sentence in top:
            numbers = [n for n in numbers_in(sentence) if n not in years_in(sentence)]
            out.extend(f"{a} * 100 / {b}" for a in numbers for b in numbers if a != b and float(a) < float(b))
    else:
        for sentence in top:
            for percent in _PERCENT_IN.finditer(sentence):
                out.extend(f"{n} * {percent.group(1)} / 100" for n in numbers_in(sentence)
                           if n != percent.group(1) and n not in years_in(sentence))
    return out


_BEGAN = re.compile(r"\b(?:founded|built|opened|established|formed|started|began|begun|set\s+up|planted|launched|"
                    r"first|created|made|dug|tapped|laid|installed|incorporated|inaugurated)\b", re.IGNORECASE)
# A life's beginning: the age of the one the sentence names only ("Pemberly hatched in 1931"), never
# the age of the place it lives in.
_BORN = re.compile(r"\b(?:born|hatched|foaled|whelped)\b", re.IGNORECASE)
# A state that began then, of the thing the question names ("The sourdough starter has been kept
# alive since 1951"): read only when no beginning names it.
_SINCE = re.compile(r"\bsince\b", re.IGNORECASE)
# A sentence whose subject is the passage's thing: a pronoun, or the heading's words first
# ("It was first built in 1784", "The Ravella Typewriter Museum opened"; not "Its restoration
# began in 1997", "Restoration work on the bridge began").
_PRONOUN_SUBJECT = re.compile(r"^\W*(?:it|this|she|he)\b", re.IGNORECASE)
# Beginnings of the thing itself, not of a use of it ("built in 1620", not "opened to the public").
_MADE = re.compile(r"\b(?:founded|built|established|formed|created|made|dug|laid|incorporated|completed|"
                   r"first\s+(?:built|opened|established|founded))\b", re.IGNORECASE)
_ARTICLE = re.compile(r"^\W*(?:the|a|an)\s+", re.IGNORECASE)
# Words of an age question that name no thing ("how old will it be", "years of age").
_AGE_WORDS = frozenset({"old", "year", "age", "counting", "count", "open", "around", "running", "since", "first",
                        "anniversary", "turn", "will", "now"})


def _is_subject(sentence: str, heading: str) -> bool:
    """Whether `sentence` is about `heading`'s thing as its subject (_PRONOUN_SUBJECT)."""
    if _PRONOUN_SUBJECT.search(sentence):
        return True
    first = _ARTICLE.sub("", sentence).split()[:1]
    return bool(first) and bool(stems(first[0]) & stems(heading))


def beginning(question: str, ranked: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """(year, its sentence): when the thing the question asks the age of began, in the passage of
    the best sentence (the sentences with its heading):

    - the best ranked sentence saying something began (founded, built, opened, first, hatched,
      ...) that names a thing the question names ("Pemberly", not the heading's "Brackenholt
      Zoo"); else the best ranked "since" sentence naming it ("kept alive since 1951");
    - else, of the sentences saying something began (not a birth): the thing made (built,
      founded, ...) as the subject (_is_subject), then another beginning as the subject ("The
      museum opened in 1987", not "412 typewriters, the oldest built in 1878"), then made and
      the heading named ("Built in 1620, the manor"); then the one naming most of the heading,
      then the earliest year ("It was first built in 1784", not "Restoration work on the bridge
      began in 1997");
    - else the earliest year of the passage; None without a year."""
    heading = ranked[0][0]
    named = stems(question) - stems(heading) - _AGE_WORDS
    years = [(int(y), y, s) for h, s in ranked if h == heading for y in years_in(s)]
    for cue in (lambda s: _BEGAN.search(s) or _BORN.search(s), _SINCE.search):
        for _, year, sentence in years:  # in rank order
            if cue(sentence) and named & stems(sentence):
                return year, sentence
    began = [item for item in years if _BEGAN.search(item[2]) and not _BORN.search(item[2])]
    if not (began or years):
        return None
    own = stems(heading)

    def tier(sentence: str) -> int:
        """0: the thing made, as the subject ("It was first built in 1784"); 1: another beginning
        of the thing as the subject ("The museum opened in 1987"); 2: made, the heading named
        ("Built in 1620, the manor has"); 3: else."""
        subject, made = _is_subject(sentence, heading), _MADE.search(sentence) is not None
        if subject:
            return 0 if made else 1
        return 2 if made and own & stems(sentence) else 3

    _, year, sentence = min(began or years, key=lambda item: (tier(item[2]), -len(own & stems(item[2])), item[0]))
    return year, sentence
