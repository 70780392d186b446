"""Which tools a turn needs, decided by the program (the agent policy "planned", issue 15).

A small model chooses tools badly: SmolLM2-135M, free to choose ("auto"), never calls one, and
forced to call one ("one_call") calls one on every turn ("Hello" got the time) and picks the
wrong one for 3 of 5 document questions (docs/BENCHMARKS.md, "Agent runs with the real
model"). Under "planned" the program picks the tools of a turn from the person's own message,
the model writes each call's arguments (greedy, constrained to that one tool's schema) and then
the answer; a turn that needs no tool is answered without any. This is the loop the issue
describes with the choice of tool taken from the model, as a router in front of a small model
(the tool-retrieval step of Gorilla, Patil et al. 2023, and of ToolBench's retriever, Qin et
al. 2023, here with rules and the documents' own retrieval instead of a trained retriever).

Each tool decides for itself (ToolSpec.relevant(user_id, text) -> bool, blocking: it may
search); tools without it are never planned (read_passage needs an id only a search gives).
A side-effecting tool is planned only when the person's message asks for it
(backend.agent.intent). The plan is in PLAN_ORDER: what finds facts (search_documents,
current_time) before calculator, so a calculation can use a number found in a document; save_note
last, so a note can hold what the other tools found; other tools after, in the given order.

Cues (matched on the person's own message, never on documents or tool results):
- calculator: an arithmetic expression ("12 * 34", "(17 + 5) * 3", "15%") or an arithmetic
  word ("times", "divided", "sum", "percent", "power", "squared", "average", ...) together with
  a number (digits or a number word);
- current_time: asking for the time or the date ("what time", "today", "what day", "date");
- search_documents: a passage of the person's documents (or shared ones) at least
  MIN_DOCUMENT_SIMILARITY cosine-similar to the message (the chat's embedder), or the message
  naming his documents ("my documents", "the report", "according to").
"""

from __future__ import annotations

import logging
import re
from typing import Any, Iterable

log = logging.getLogger(__name__)

# Cosine similarity of message and passage (all-MiniLM-L6-v2) above which a turn searches the
# documents. Measured on scripts/agent_policy_eval.py's questions against its document: every
# question about the document scored at least 0.51, every other question at most 0.09.
MIN_DOCUMENT_SIMILARITY = 0.35
PLAN_ORDER = ("search_documents", "read_passage", "current_time", "calculator", "save_note")

_NUMBER_WORDS = (r"zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
                 r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
                 r"eighty|ninety|hundred|thousand|million|billion|half|twice|double|triple|quarter")
_NUMBER = re.compile(rf"\d|\b(?:{_NUMBER_WORDS})\b", re.IGNORECASE)
# Two numbers with an operator between them, a percentage, a power or a root written out.
_EXPRESSION = re.compile(r"\d\s*\)?\s*(?:[-+*/×÷^x]|\*\*)\s*\(?\s*\d|\d\s*%|\bsqrt\s*\(", re.IGNORECASE)
_ARITHMETIC_WORDS = re.compile(
    r"\b(?:plus|minus|times|multipl(?:y|ied|ying)|divided|divide|dividing|sum|total|product|difference|"
    r"percent(?:age)?|squared|cubed|square root|power|average|mean|subtract(?:ed)?|add(?:ed)? up|"
    r"calculate|compute|how much is|twice|double|triple|half of|per cent|ratio)\b",
    re.IGNORECASE)
_TIME = re.compile(
    r"\b(?:what time|the time|time is it|current time|time (?:in|zone)|time now|date|today|tonight|"
    r"tomorrow|yesterday|what day|which day|day of the week|what year|this year|current year|o'clock|"
    r"clock)\b", re.IGNORECASE)
_DOCUMENT_WORDS = re.compile(
    r"\b(?:my (?:documents?|files?|uploads?|pdfs?|papers?)|(?:the|this|that) (?:document|file|report|pdf|"
    r"paper|upload)|according to|in (?:the|my) (?:documents?|files?|sources?))\b", re.IGNORECASE)


def needs_calculation(text: str) -> bool:
    """Whether `text` asks for arithmetic: an expression, or an arithmetic word and a number."""
    return bool(_EXPRESSION.search(text) or (_ARITHMETIC_WORDS.search(text) and _NUMBER.search(text)))


def asks_for_time(text: str) -> bool:
    """Whether `text` asks for the current time or date."""
    return _TIME.search(text) is not None


def names_documents(text: str) -> bool:
    """Whether `text` refers to the person's documents in words ("my documents", "the report")."""
    return _DOCUMENT_WORDS.search(text) is not None


def query_of(text: str, max_chars: int, forbidden: str) -> str | None:
    """The person's message as a search query: every character in `forbidden` and each run of
    whitespace made one space, cut to `max_chars` at a word; None when nothing is left."""
    cleaned = re.sub(r"\s+", " ", "".join(" " if c in forbidden else c for c in text)).strip()
    if len(cleaned) > max_chars:
        cut = cleaned[:max_chars]
        cleaned = (cut.rsplit(" ", 1)[0] if " " in cut else cut).strip()
    return cleaned or None


_EXPRESSION_RUN = re.compile(r"[-+*/%^()×÷x.\d\s]+")
_OPERATOR_BETWEEN = re.compile(r"[\d)]\s*(?:[-+*/%^]|\*\*)\s*[\d(+-]")


def typed_expression(text: str, evaluate: Any) -> str | None:
    """The arithmetic expression typed in `text` ("What is (17 + 5) * 3?" -> "(17 + 5) * 3"):
    the longest run of digits, operators and parentheses with an operator between two operands
    ("x" and "×" read as "*", "÷" as "/"), which `evaluate(expression)` accepts (raising
    otherwise); None when there is none, so the model writes it ("2 to the power of 10")."""
    best: str | None = None
    for match in _EXPRESSION_RUN.finditer(text):
        run = match.group(0).strip().rstrip(".").strip()
        run = run.replace("×", "*").replace("÷", "/")
        run = re.sub(r"(?<=[\d)\s])x(?=[\s\d(])", "*", run)
        if "x" in run or not _OPERATOR_BETWEEN.search(run):
            continue
        try:
            evaluate(run)
        except Exception:
            continue
        if best is None or len(run) > len(best):
            best = run
    return best


def plan_tools(specs: Iterable[Any], offered: Iterable[str], user_id: str, user_text: str | None) -> list[str]:
    """The names of the tools this turn calls, in PLAN_ORDER: those in `offered` (allowed for
    the user; a side-effecting one only when his message asks for it) whose
    ``relevant(user_id, user_text)`` is true. None or "" plans none. A cue that fails (a
    database error during the search) plans nothing for that tool and is logged."""
    if not user_text or not user_text.strip():
        return []
    offered = set(offered)
    planned: list[str] = []
    for spec in specs:
        relevant = getattr(spec, "relevant", None)
        if spec.name not in offered or relevant is None:
            continue
        try:
            if relevant(user_id, user_text):
                planned.append(spec.name)
        except Exception:
            log.exception("deciding whether %s is needed failed", spec.name)
    rank = {name: i for i, name in enumerate(PLAN_ORDER)}
    return sorted(planned, key=lambda name: rank.get(name, len(PLAN_ORDER)))  # stable: others keep their order
