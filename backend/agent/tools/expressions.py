"""Candidate calculator expressions for a question whose operand is in the run's tool results.

A question such as "How long is the bridge in metres, multiplied by 2?" needs a number the
search found and an operation the question names. SmolLM2-135M, asked to write that call, wrote
"1.23400000000000001", "148" or "1987 * 2340" for every such question (docs/BENCHMARKS.md,
"Agent runs with the real model"); a small model does much better choosing among written-out
answers by their likelihood than generating one (multiple-choice scoring, as in the MMLU and
HellaSwag evaluations). So the program writes the candidates and the model picks one
(backend.agent.choice):

- the fact sentence: the sentences of the quoted passages that hold a number, ranked by the
  chat's embedder's cosine similarity to the question (each embedded after its passage's
  heading: "Its two towers are 148 metres tall" names neither the bridge nor the document) plus
  LEXICAL_WEIGHT times the share of the question's words it holds (the heading's words left
  out); the best that gives a candidate is used;
- the operands: the numbers of that sentence with the most words of the question among the two
  words before them and the three after (all of them when none has one); a price for the cost
  of several things, a year as written for years counted from a year; at most MAX_NUMBERS;
- the operation, when the question names it with its number ("multiplied by 2", "3 times",
  "subtract 1981 from", "subtract ... from 2020", "plus 130", "15% of", "twice"): that
  operation with each operand, in the order the words give; also an implied one ("if it were
  12.5 metres taller", "how much do 4 tickets cost", "counting from 2030, how many years ago");
  backend.agent.routing.named_operations reads them;
- otherwise every operand with every number of the question, by + - * / in both orders ("in
  total" alone: + and *);
- each value once, no difference below zero, at most MAX_CANDIDATES.

One operation only: "15% of 80 + 20" gets candidates of one operation each, none of them right.

The passages are untrusted data: only their numbers are read, never an instruction, and the
expressions are checked by the calculator's own parser before they are offered.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np

from backend.agent.routing import NUMBER_RE, asks_cost, asks_total, named_operations, with_digits
from backend.agent.tools.passages import read_passages

# The most candidates one question gets: each is two scored requests of the engine, side by side
# (the engine runs 32 sequences at a time by default).
MAX_CANDIDATES = 8
# The most operands and question numbers combined: a question or passage full of numbers costs
# at most MAX_NUMBERS^2 * 8 expressions to check.
MAX_NUMBERS = 8
# The cues read this much of the question (backend.agent.routing.MAX_CUE_CHARS reads as much).
MAX_QUESTION_CHARS = 2000
# The weight of the question's words in a sentence against the embedder's cosine when ranking the
# fact sentences. Measured on the 31 document + arithmetic questions of the agent eval (dev,
# held-out and two blind sets): cosine alone put the right sentence first for 28; with the words
# (the heading's left out) 31 for every weight from 0.3 to 0.8.
LEXICAL_WEIGHT = 0.5
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")


def numbers_in(text: str) -> list[str]:
    """The numbers written in `text`, in order, each once, without thousands separators, at most
    MAX_NUMBERS ("2,340 metres ... 14 May 1987" -> ["2340", "14", "1987"])."""
    found = (m.group(1).replace(",", "") for m in NUMBER_RE.finditer(text))
    return list(dict.fromkeys(found))[:MAX_NUMBERS]


_WORD = re.compile(r"[a-z]{3,}")
_STOPWORDS = frozenset(
    "the and for are was were its his her their our your this that these those with from into than then "
    "what which who whom how many much does did has have had been being will would could should about "
    "each every per all any one some more most less over under onto upon after before since during above "
    "below between once also just only very there here when where while them they then".split())
# A price: a currency word after the number or a currency sign before it.
_AMOUNT = r"([0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?)"
# A price: after a currency sign or before a currency's name; in a sentence with neither, after a
# verb of paying ("each paid 96 florins a day", "sold for 72 marks": a currency the list lacks).
_PRICE = re.compile(rf"[$€£¥]\s*{_AMOUNT}"
                    rf"|(?<![0-9,.]){_AMOUNT}\s*(?:dollars?|euros?|pounds?|crowns?|marks?|francs?|florins?|guilders?|"
                    r"shillings?|pesos?|rupees?|lira|lire|dinars?|ducats?|thalers?|zloty|rand|yen|yuan|kronor|kroner|"
                    r"krona|krone|pence|cents?|credits?)\b", re.IGNORECASE)
_PRICE_PAID = re.compile(rf"\b(?:costs?|paid|pays?|priced\s+at|sells?\s+for|sold\s+for|fee\s+of|price\s+of)\s+"
                         rf"{_AMOUNT}(?=\s+(?!times\b)[a-z])", re.IGNORECASE)
# A year as written: four digits, no thousands separator ("1,260 animals" is no year).
_YEAR_WRITTEN = re.compile(r"(?<![\w.,])(1\d{3}|20\d{2})(?!\w|[.,]\d)")


def _stems(text: str) -> set[str]:
    return {w.rstrip("s") for w in _WORD.findall(text.lower()) if w not in _STOPWORDS}


def operands_of(sentence: str, question: str, heading: str = "") -> list[str]:
    """The numbers of `sentence` the question may be about: those with the most words of the
    question (the heading's words left out: the subject's name is everywhere) among the two
    words before them and the three after ("84 member farms and employs 230 people", asked about
    member farms -> ["84"]); all of them when none has one."""
    asked = _stems(question) - _stems(heading)
    scored: list[tuple[int, str]] = []
    for match in NUMBER_RE.finditer(sentence):
        before = sentence[:match.start()].split()[-2:]
        after = sentence[match.end():].split()[:3]
        scored.append((len(_stems(" ".join(before + after)) & asked), match.group(1).replace(",", "")))
    best = max((score for score, _ in scored), default=0)
    if best == 0:
        return numbers_in(sentence)
    return list(dict.fromkeys(number for score, number in scored if score == best))[:MAX_NUMBERS]


def prices_in(text: str) -> list[str]:
    """The numbers of `text` written as prices ("27.50 dollars", "$4", "14.75 crowns"; in a text with none of
    those, the amounts after a verb of paying: "each paid 96 florins a day")."""
    found = [next(g for g in m.groups() if g) for m in _PRICE.finditer(text)] or _PRICE_PAID.findall(text)
    return list(dict.fromkeys(n.replace(",", "") for n in found))


def years_in(text: str) -> list[str]:
    """The numbers of `text` written as years (1000-2099, no thousands separator)."""
    return list(dict.fromkeys(m.group(1) for m in _YEAR_WRITTEN.finditer(text)))


def fact_sentences(results: Sequence[str]) -> list[tuple[str, str]]:
    """(heading, sentence) for each sentence holding a number in the passages quoted in
    `results` (the contents of search_documents / read_passage results, read by
    backend.agent.tools.passages.read_passages). heading: the passage's first line when it is
    a title (at most 80 characters, no full stop), else the passage's label."""
    out: list[tuple[str, str]] = []
    for label, text in (p for result in results for p in read_passages(result)):
        lines = [line.strip() for line in text.split("\n") if line.strip()]
        if not lines:
            continue
        title = lines[0] if len(lines[0]) <= 80 and not lines[0].endswith((".", "!", "?", ":")) else label
        body = " ".join(text.split("\n")) if title == label else text[text.index(lines[0]) + len(lines[0]):]
        for sentence in _SENTENCE_END.split(body):
            sentence = " ".join(sentence.split())
            if sentence and NUMBER_RE.search(sentence):
                out.append((title, sentence))
    return list(dict.fromkeys(out))


def rank_sentences(question: str, sentences: Sequence[tuple[str, str]],
                   embed: Callable[[Sequence[str]], Any] | None) -> list[tuple[str, str]]:
    """The (heading, sentence) pairs, best first for `question`: cosine similarity by `embed` (each sentence
    embedded as "heading. sentence") plus LEXICAL_WEIGHT times the share of the question's words
    the sentence holds, the heading's words left out of both (the subject's name is in every
    question about it). By the words alone when there is no embedder."""
    if len(sentences) < 2:
        return list(sentences)
    if embed is not None:
        vectors = np.asarray(embed([question] + [f"{h}. {s}" for h, s in sentences]), dtype=np.float64)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        similarity = vectors[1:] @ vectors[0]
    else:
        similarity = np.zeros(len(sentences))
    asked = _stems(question)
    score = []
    for i, (heading, sentence) in enumerate(sentences):
        words = asked - _stems(heading)
        score.append(similarity[i] + LEXICAL_WEIGHT * len(_stems(sentence) & words) / max(1, len(words)))
    order = sorted(range(len(sentences)), key=lambda i: -score[i])
    return [sentences[i] for i in order]


def _expressions(question: str, templates: Sequence[tuple[str, str | None]], operands: Sequence[str],
                 sentence: str) -> list[str]:
    expressions: list[str] = []
    if templates:
        prices = list(prices_in(sentence)) if asks_cost(question) else []
        if prices:  # a cost: the price, not the number sold nor a model's number ("Kell No. 9")
            operands = [a for a in operands if a in prices] + [a for a in prices if a not in operands]
        for template, n in templates:
            fits = _operand_kind(template, sentence)
            expressions.extend(template.replace("{a}", a) for a in operands if a != n and fits(a))
    else:
        given = numbers_in(with_digits(question))
        operators = "+*" if asks_total(question) else "+-*/"
        for a in operands:
            for n in given:
                if a == n:
                    continue
                for op in operators:
                    expressions.extend((f"{a} {op} {n}", f"{n} {op} {a}"))
    return expressions


def _operand_kind(template: str, sentence: str) -> Callable[[str], bool]:
    """Which operands fit `template`: for years counted from a year ("2030 - {a}"), a year as
    `sentence` writes one; any number otherwise."""
    if re.fullmatch(r"(?:1\d{3}|20\d{2}) - \{a\}|\{a\} - (?:1\d{3}|20\d{2})", template):
        years = set(years_in(sentence))
        return lambda a: a in years
    return lambda a: True


def candidate_expressions(question: str, results: Sequence[str], embed: Callable[[Sequence[str]], Any] | None,
                          evaluate: Callable[[str], Any]) -> list[str]:
    """The expressions the model chooses among (see the module docstring), at most
    MAX_CANDIDATES, each accepted by `evaluate` (the calculator's; raising otherwise). With no
    number in the results (or no results), the operation the question names over its own other
    numbers ("What is 15% of 240?" -> ["240 * 15 / 100"]). [] when nothing fits (the model then
    writes the call)."""
    question = question[:MAX_QUESTION_CHARS]
    ranked = rank_sentences(question, fact_sentences(results), embed)
    templates = named_operations(question)  # once: the question's operations, whatever sentence is tried
    if not ranked:
        if not templates:
            return []
        own = with_digits(question)
        return _valid(_expressions(question, templates, numbers_in(own), own), evaluate)[:MAX_CANDIDATES]
    for heading, sentence in ranked:  # best first, until one fits (a year counted from a year needs a year)
        out = _valid(_expressions(question, templates, operands_of(sentence, question, heading), sentence), evaluate)
        if not out:  # the numbers next to the question's words were the question's own
            out = _valid(_expressions(question, templates, numbers_in(sentence), sentence), evaluate)
        if out:
            return out[:MAX_CANDIDATES]
    return []


def _valid(expressions: Sequence[str], evaluate: Callable[[str], Any]) -> list[str]:
    """The expressions `evaluate` accepts, the first of each value only ("6 * 7" and "7 * 6" are
    one choice), but for a difference below zero (the other order is the one asked); at most
    MAX_CANDIDATES."""
    out: list[str] = []
    seen: set[Any] = set()
    for expression in dict.fromkeys(expressions):
        if len(out) == MAX_CANDIDATES:
            break
        try:
            value = evaluate(expression)
        except Exception:
            continue
        q = getattr(value, "q", value)
        if (" - " in expression and q < 0) or q in seen:
            continue
        seen.add(q)
        out.append(expression)
    return out
