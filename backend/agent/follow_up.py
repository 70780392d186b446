"""A follow-up message read with the question before it: "and for 6?" after "How much for 4 budget
16 inch tyres fitted?" asks "How much for 6 budget 16 inch tyres fitted?".

A short message that only changes a count ("and for 6?", "what about 8 classes?", "for 10
instead?") or adds a thing ("add a wheel alignment to that", "plus a box of cupcakes") means
nothing alone: searched and calculated as typed, the new-user pass got "6 * 4 = 12" with
citations of nothing. The program writes the whole question it asks (follow_up_question) and
the run's tools read that; the model's prompt keeps the conversation as typed. A message that is
a question of its own is left as it is.
"""

from __future__ import annotations

import re
from typing import Sequence

from backend.agent.numerals import NUMBER_RE, with_digits
from backend.agent.operations import names_a_length, names_a_size, sizes
from backend.agent.tools.sentences import stems

_FLAGS = re.IGNORECASE
# Only a new count, with what it counts at most: "and for 6?", "what about 8 classes?", "how about
# for 10 instead", "ok and 3?", "6 then?", "make it 5".
_COUNT_ONLY = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|right|cool|thanks?|great)[\s,!.]+)?(?:and|what|how|but)?\s*(?:about|if)?\s*(?:it(?:'s|\s+is|\s+was|"
    r"\s+were)\s+)?(?:make\s+it\s+|(?:for|with)\s+)?(?:just\s+|only\s+)?"
    r"(?P<count>[0-9]+(?:\.[0-9]+)?)(?P<thing>(?:\s+[a-z'-]+){0,2}?)"
    r"\s*(?:instead|then|of\s+them|please|pls)?\s*[?!.]*\s*$", _FLAGS)
# A number that is no new count of the same thing: more of it ("2 more", "another 3", "3 extra"), a time
# ("3 pm", "3 o'clock").
_NOT_A_NEW_COUNT = re.compile(r"\b(?:more|extra|another|else|additional|am|pm|a\.m\.|p\.m\.|o'clock)\b", _FLAGS)
# Only a thing added: "add a wheel alignment to that", "plus a box of cupcakes", "and a wheel alignment
# too?", "can you add 2 mats to that?", "with a mat as well".
_ADDED = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|right|and)[\s,]+)?(?:(?:can|could)\s+you\s+|please\s+)?(?:also\s+)?"
    r"(?:(?:add|plus|throw\s+in|include)\s+(?P<added>.+?)(?:\s+(?:to\s+(?:that|it|this|the\s+(?:total|bill|order))|too|as\s+well|also))?"
    r"|(?:and|with)\s+(?P<tail>.+?)\s+(?:to\s+(?:that|it|this|the\s+(?:total|bill|order))|too|as\s+well))"
    r"\s*(?:please|pls)?\s*[?!.]*\s*$", _FLAGS)
# The most words a follow-up has ("and for six?"): a longer message is a question of its own.
MAX_FOLLOW_UP_WORDS = 10
# How many of the person's earlier messages a chain of follow-ups is read back through.
MAX_EARLIER = 4


def _is_size(text: str, m: re.Match[str]) -> bool:
    """Whether the number `m` of `text` names a size or a length ("16 inch tyres", "a 2 hr
    lesson"), no count."""
    if names_a_size(text, m.start()) or names_a_length(text, m.start()):
        return True
    return any(number == m.group(0) for number, _ in sizes(text[m.start():m.start() + 24]))


def _with_count(question: str, count: str, thing: str) -> str | None:
    """`question` with its count replaced by `count`: the count of `thing` when the follow-up names
    one ("8 classes": the number before "classes"), else its first number that is no size (not the
    16 of "16 inch tyres"); a size for a size ("what about 18 inch?": the 16 of "16 inch"); None
    when it has none."""
    asked_size = sizes(f"{count} {thing.strip()}")
    if asked_size:
        unit = next(iter(asked_size))[1]
        same = [m for m in NUMBER_RE.finditer(question) if any(u == unit for n, u in
                                                                  sizes(question[m.start():m.start() + 24]) if n == m.group(0))]
        return question[:same[0].start()] + count + question[same[0].end():] if same else None
    wanted = stems(thing)
    numbers = list(NUMBER_RE.finditer(question))
    candidates = [m for m in numbers if not _is_size(question, m)]
    if wanted:
        # the number the thing follows, read up to the next number ("for 2 people for 3 nights": nights are the 3)
        ends = {m.start(): next((n.start() for n in candidates if n.start() > m.start()), len(question))
                for m in candidates}  # (a size between is part of the thing: "4 budget 16 inch tyres")
        candidates = [m for m in candidates if stems(question[m.end():min(ends[m.start()], m.end() + 40)]) & wanted]
    if not candidates:
        return None  # "thanks 5 stars": a thing the question does not count
    m = candidates[0]
    return question[:m.start()] + count + question[m.end():]


# Another kind of the same thing: "what about premium 18 inch ones instead?", "and the premium tyres instead".
_SWAPPED = re.compile(r"^\W*(?:(?:ok(?:ay)?|and)[\s,]+)?(?:(?:what|how)\s+about\s+)?(?:the\s+|some\s+)?"
                      r"(?P<kind>(?:[a-z0-9'-]+\s+){0,4}?)(?P<head>ones?|[a-z'-]+)\s+instead\s*[?!.]*\s*$", _FLAGS)


def _with_kind(question: str, kind: str, head: str) -> str | None:
    """`question` with the words naming the kind of its counted thing replaced by `kind`: "How much
    for 4 budget 16 inch tyres fitted?" with "premium 18 inch" for "ones" (or "tyres") -> "How much
    for 4 premium 18 inch tyres fitted?"; None when it counts nothing or `head` is not its thing."""
    counted = next((m for m in NUMBER_RE.finditer(question) if not _is_size(question, m)), None)
    if counted is None or not kind.strip():
        return None
    words = list(re.finditer(r"[A-Za-z0-9'-]+", question[counted.end():]))
    plural = head.lower() in ("one", "ones")
    for i, word in enumerate(words[:6]):
        w = word.group(0).lower()
        if (plural and w.endswith("s") and not w.isdigit() and not sizes(f"1 {w}")) or (
                not plural and stems(w) & stems(head)):
            start, end = counted.end() + words[0].start(), counted.end() + word.start()
            if i == 0:
                return question[:start] + kind.strip() + " " + question[start:]
            return question[:start] + kind.strip() + " " + question[end:]
    return None


def _resolved(text: str, before: str) -> str | None:
    """The whole question the follow-up `text` asks after the question `before`; None when `text`
    is no follow-up of either kind."""
    typed = " ".join(with_digits(text).split())
    if len(typed.split()) > MAX_FOLLOW_UP_WORDS:
        return None
    count = _COUNT_ONLY.match(typed)
    if count is not None:
        if _NOT_A_NEW_COUNT.search(typed):
            return None  # "and 2 more?" adds to the count; "what about 3 pm?" is a time
        return _with_count(before, count.group("count"), count.group("thing"))
    swapped = _SWAPPED.match(typed)
    if swapped is not None:
        return _with_kind(before, swapped.group("kind"), swapped.group("head"))
    added = _ADDED.match(typed)
    if added is not None:
        thing = (added.group("added") or added.group("tail")).strip()
        stem = before.rstrip().rstrip("?!. ")
        return f"{stem} plus {thing}?"
    return None


def follow_up_question(text: str, earlier: Sequence[str]) -> str | None:
    """The whole question `text` asks when it follows up the person's earlier messages `earlier`
    (oldest first; the last MAX_EARLIER read, a follow-up of a follow-up through its question):
    "and for 6?" after "How much for 4 budget 16 inch tyres fitted?" -> "How much for 6 budget 16
    inch tyres fitted?"; "add a wheel alignment to that" -> "How much for 4 budget 16 inch tyres
    fitted plus a wheel alignment?". None when it is a message of its own or nothing came before."""
    question: str | None = None
    for message in earlier[-MAX_EARLIER:]:
        question = (_resolved(message, question) if question else None) or message
    if not question:
        return None
    return _resolved(text, question)
