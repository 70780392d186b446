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
shows it. Tools without a side effect always pass. A phrase negated just before it ("don't save
a note", "do not remember that", "no need to write it down": NEGATION within the three words
before the phrase, in the same sentence) does not count; another occurrence that is not negated
still does.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

# Words that negate an intent phrase when they come at most NEGATION_WINDOW words before it.
NEGATION = re.compile(r"(?<!\w)(?:don'?t|do\s+not|doesn'?t|never|no\s+need\s+to|not|without|stop|"
                      r"shouldn'?t|won'?t|didn'?t|nor|no)(?!\w)", re.IGNORECASE)
NEGATION_WINDOW = 3


def asks_for(spec: Any, user_text: str | None) -> bool:
    """Whether a run answering `user_text` may offer and execute `spec`: True for a tool without
    a side effect; for one with, True only when `user_text` holds one of its intent phrases as
    whole words (letters, digits and "_" around it do not count; any whitespace between its
    words), case-insensitive. None or "" (no message of the person's, e.g. a script's run) asks
    for nothing."""
    if not spec.side_effect:
        return True
    words = tuple(w for w in getattr(spec, "intent_words", ()) if w)
    if not user_text or not words:
        return False
    phrases = (r"\s+".join(re.escape(part) for part in w.split()) for w in words)
    pattern = r"(?<!\w)(?:" + "|".join(phrases) + r")(?!\w)"
    return any(not _negated(user_text[:m.start()]) for m in re.finditer(pattern, user_text, re.IGNORECASE))


def _negated(before: str) -> bool:
    """Whether the text before a phrase ends in a negation within NEGATION_WINDOW words of the
    same sentence ("please don't " -> True; "Don't worry. " -> False)."""
    clause = re.split(r"[.!?;\n]", before)[-1]
    words = clause.split()[-NEGATION_WINDOW - 1:]  # "do not" is two words
    return NEGATION.search(" ".join(words)) is not None


def asked_names(specs: Iterable[Any], user_text: str | None) -> frozenset[str]:
    """The names of the side-effecting tools among `specs` that `user_text` asks for."""
    return frozenset(s.name for s in specs if s.side_effect and asks_for(s, user_text))
