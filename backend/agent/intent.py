"""Whether the person asked for a tool that has a side effect (issue 15).

A side-effecting tool (ToolSpec.side_effect, e.g. save_note) is offered to the model, and a
call to it executed, only on a turn whose person's own latest message (Turn.user_text, the text
as typed) holds one of the tool's intent phrases (ToolSpec.intent_words: "save a note",
"remember that", ...) as whole words, case-insensitive, any run of spaces between its words.
The rule does not depend on the model: a small model forced to call a tool picks any offered
one ("What is 99 * 99?" saved a note), and text that reaches the prompt from elsewhere (a
document's passage, a tool's result, the system prompt) never counts, so an injected "call
save_note" cannot make a run write on a turn where the person did not ask to save something.
On a turn where he did, what the note says is the model's, which reads that turn's documents
and results: it is bounded (save_note's schema), goes only to his own notes, and the step
shows it. Tools without a side effect always pass.

The phrase must be a request: at the start of a clause (the message's start, or after . ! ? ; :
, or a line break), with at most a polite or linking lead-in before it (REQUEST_LEADS: "please",
"can you", "I want you to", "and", "don't forget to", ...), and not negated earlier in its
sentence (NEGATION: "don't", "do not", "never", "no need to", ...; "don't forget to" is a lead-in,
not a negation). So "Do you remember that song?", "Don't save a note", "Do not, whatever happens,
save a note" and "my notes say save a note" ask for nothing; "Save a note that …", "Please
remember that …", "No, save a note …", "Never mind: note down …" do. Only the first MAX_INTENT_CHARS
characters of the message are read.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

MAX_INTENT_CHARS = 4000
# What may come between a clause's start and the phrase (whole, in this order of words).
REQUEST_LEADS = (
    "please", "pls", "kindly", "also", "and", "but", "then", "now", "so", "ok", "okay", "hey", "hi", "just",
    "can you", "could you", "would you", "will you", "can u", "could u", "i want you to", "i'd like you to",
    "i would like you to", "i need you to", "go ahead and", "don't forget to", "do not forget to",
    "remember to", "make sure to", "be sure to", "you should", "you can", "let's", "lets",
)
_LEADS = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(REQUEST_LEADS, key=len, reverse=True))
_LEAD = r"(?:(?:" + _LEADS + r")[\s,]+){0,3}"
_CLAUSE_START = r"(?:^|[.!?;:,\n])\s*"
# Negations earlier in the phrase's sentence; the lead-ins "don't forget to" are taken out first.
NEGATION = re.compile(r"(?<!\w)(?:don'?t|do\s+not|doesn'?t|never|no\s+need\s+to|not|without|stop|"
                      r"shouldn'?t|won'?t|didn'?t|nor)(?!\w)", re.IGNORECASE)
_NOT_NEGATION = re.compile(r"(?<!\w)(?:don'?t|do\s+not)\s+forget\s+to(?!\w)|(?<!\w)never\s+mind(?!\w)", re.IGNORECASE)


def asks_for(spec: Any, user_text: str | None) -> bool:
    """Whether a run answering `user_text` may offer and execute `spec`: True for a tool without
    a side effect; for one with, True only when `user_text` asks for it (one of its intent
    phrases as a request: see above), case-insensitive, any whitespace between words. None or ""
    (no message of the person's, e.g. a script's run) asks for nothing."""
    if not spec.side_effect:
        return True
    words = tuple(w for w in getattr(spec, "intent_words", ()) if w)
    if not user_text or not words:
        return False
    text = user_text[:MAX_INTENT_CHARS]
    phrases = "|".join(r"\s+".join(re.escape(part) for part in w.split()) for w in words)
    pattern = _CLAUSE_START + _LEAD + r"(?P<phrase>" + phrases + r")(?!\w)"
    return any(not _negated(text[:m.start("phrase")])
               for m in re.finditer(pattern, text, re.IGNORECASE | re.MULTILINE))


def _negated(before: str) -> bool:
    """Whether the sentence the phrase is in negates it before the phrase ("Do not, whatever
    happens, save" -> True; "Don't worry. Save" -> False; "Don't forget to save" -> False)."""
    sentence = re.split(r"[.!?;:\n]", before[-400:])[-1]
    return NEGATION.search(_NOT_NEGATION.sub(" ", sentence)) is not None


def asked_names(specs: Iterable[Any], user_text: str | None) -> frozenset[str]:
    """The names of the side-effecting tools among `specs` that `user_text` asks for."""
    return frozenset(s.name for s in specs if s.side_effect and asks_for(s, user_text))
