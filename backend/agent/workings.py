"""The workings of a calculation over the documents: where each of its figures comes from.

A calculation the program wrote over the documents ("(18 * 4) * (100 - 10) / 100") is shown with
each of its numbers beside the words it was read from: the user's own message ("every 4 weeks")
or a passage's sentence as the program read it ("3 bed detached: Outside £18"), with that
passage's citation. A figure read wrongly is then there to be seen. A bare expression gave the
user nothing to check a wrong total against, and the program states wrong totals as plainly as
right ones (eighteenth session's note); chat products write their workings out.
"""

from __future__ import annotations

import re
from typing import Iterator, Sequence

from backend.agent.numerals import CURRENCY_SIGNS, COUNT_WORDS, expression_figures, number_pattern, with_digits
from backend.agent.tools.basket import TABLE_ROW
from backend.agent.tools.pricing import in_major_units
from backend.agent.tools.segmentation import text_sentences

# At most this many figures are listed; a quote is cut to about this many characters.
MAX_FIGURES = 8
MAX_QUOTE_CHARS = 90
# Words of the user's message shown on each side of a number ("clean every 4 weeks").
_WORDS_AROUND = 3
# What a quote must not carry into the answer's Markdown: emphasis, links, HTML, code, tables.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~#$])")  # ("$": two prices would read as TeX between them)
# A clause's end in the user's message (not a decimal point or a thousands comma).
_CLAUSE_END = re.compile(r"[;?!]|[.,](?!\d)|\s(?:and|but|so|then)\s", re.IGNORECASE)

# A thousands separator ("£1,200"): the calculation writes 1200.
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")

HEADING = "Where the figures come from:"


def figures(expression: str) -> list[str]:
    """The distinct numbers of `expression`, in order of first appearance, but the 100 of a
    percentage ("(100 - 10) / 100" -> ["10"]): numerals.expression_figures."""
    return expression_figures(expression)


def occurs(number: str, text: str) -> re.Match[str] | None:
    """`number` in `text` as a number of its own, by value ("18" in "£18.", not in "118" or
    "18.5"; "1200" in "£1,200"; "2.5" in "£2.50"; not a clock's "30" of "8:30")."""
    return next(_occurrences(number, text), None)


def _occurrences(number: str, text: str) -> Iterator[re.Match[str]]:
    """Each place `text` writes `number` as a number of its own (occurs)."""
    return re.finditer(rf"(?<![\d.,:]){number_pattern(number)}(?![\d]|[.,:]\d)", text)


# After a percentage: "%", "percent".
_AS_PERCENT = re.compile(r"\s*(?:%|percent\b|per\s+cent\b)", re.IGNORECASE)
# A figure used as a percentage in a calculation: "(100 + 8) / 100", "* 25 / 100".
_PERCENT_USE = r"\(\s*100\s*[-+]\s*{n}\s*\)\s*/\s*100|\*\s*{n}\s*/\s*100(?![\d.])"


def escaped(text: str) -> str:
    """`text` with its Markdown marks escaped (untrusted text shown as written)."""
    return _MARKDOWN.sub(r"\\\1", text)


def _window(text: str, start: int, end: int) -> str:
    """At most MAX_QUOTE_CHARS of `text` around `text[start:end]`, cut at spaces, with "…" where cut."""
    if len(text) <= MAX_QUOTE_CHARS:
        return text
    half = (MAX_QUOTE_CHARS - (end - start)) // 2
    left, right = max(0, start - half), min(len(text), end + half)
    if left > 0:
        space = text.find(" ", left, start)
        left = space + 1 if space >= 0 else left
    if right < len(text):
        space = text.rfind(" ", end, right)
        right = space if space >= 0 else right
    return ("…" if left > 0 else "") + text[left:right].strip() + ("…" if right < len(text) else "")


def _from_message(number: str, message: str) -> str | None:
    """The words of the user's `message` around `number` ("clean every 4 weeks"), as written ("I have
    two small dogs" for 2, not "I have 2 small dogs": new-user pass), or None when it does not write it
    (with digits: "four adults" writes 4)."""
    text = _THOUSANDS.sub("", message)
    found = occurs(number, text)
    if found is None:
        words = [word for word, digits in COUNT_WORDS.items() if digits == number and " " not in word]
        found = next((m for word in words for m in [re.search(rf"\b{word}\b", text, re.IGNORECASE)] if m), None)
    if found is None:
        text = _THOUSANDS.sub("", with_digits(message))
        found = occurs(number, text)
    if found is None:
        return None
    start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, found.start())), default=0)
    stop = next((m.start() for m in _CLAUSE_END.finditer(text, found.end())), len(text))
    before, after = text[start:found.start()], text[found.end():stop]
    prefix, suffix = re.search(r"\S*$", before).group(), re.match(r"\S*", after).group()  # "£18", "4pm"
    words = before[:len(before) - len(prefix)].split()[-_WORDS_AROUND:]
    words.append(prefix + found.group() + suffix)
    words += after[len(suffix):].split()[:_WORDS_AROUND]
    return " ".join(words)


def _from_passage(number: str, label: str, text: str, percent: bool = False) -> str | None:
    """The sentence of a passage, as the program read it (text_sentences, prices in major units:
    in_major_units), that holds `number`: a table row's name and the cell holding it ("Hybrid:
    Full day £32 per bike"), another sentence cut around it, one writing it as a percentage first when
    it is one of the calculation's (`percent`); None when none holds it."""
    sentences = text_sentences(text, label)
    pairs = list(zip(sentences, in_major_units(sentences)))
    if percent:  # a percentage's from a sentence writing one first ("Add 8 percent sales tax", new-user pass)
        pairs.sort(key=lambda pair: not any(_AS_PERCENT.match(pair[1][1], m.end()) for m in _occurrences(number, pair[1][1])))
    for (_, sentence), (_, read) in pairs:
        found = occurs(number, read)
        if found is None:
            continue
        row = TABLE_ROW.match(sentence)
        if row is not None:
            cell = next((c for c in sentence[row.end(1) + 1:].split(";") if occurs(number, c)), None)
            if cell is not None:
                return f"{row.group(1).strip()}: {cell.strip().rstrip('.')}"
        where = occurs(number, sentence) or found
        return _window(sentence, where.start(), where.end())
    return None


def workings(expression: str, message: str, passages: Sequence[tuple[int, str, str]]) -> str:
    """The lines telling where each figure of `expression` comes from, under HEADING, as a
    Markdown list: "- 4: your question “clean every 4 weeks”", "- 18: “3 bed detached: Outside
    £18” [2]" (`passages`: (citation number, label, text), the passage the answer cites first),
    "- 13: worked out, written neither in your question nor in the passages". A number the
    message writes is the message's, unless the message writes it as a price ("the day pass is
    £18 right?") and a passage writes it too. At most MAX_FIGURES; "" for an expression without
    numbers. Quotes are untrusted text: their Markdown is escaped."""
    lines: list[str] = []
    for number in figures(expression)[:MAX_FIGURES]:
        own = _from_message(number, message)
        priced = re.search(rf"[{CURRENCY_SIGNS}]\s?{re.escape(number)}(?![\d]|\.\d)", _THOUSANDS.sub("", message)) is not None
        read = None
        if own is None or priced:
            percent = re.search(_PERCENT_USE.format(n=re.escape(number)), expression) is not None
            read = next(((n, q) for n, label, text in passages if (q := _from_passage(number, label, text, percent))),
                        None)
        if read is not None:
            lines.append(f"- {number}: “{escaped(read[1])}” [{read[0]}]")
        elif own is not None:
            lines.append(f"- {number}: your question “{escaped(own)}”")
        else:
            lines.append(f"- {number}: worked out, written neither in your question nor in the passages")
    return "\n".join([HEADING, *lines]) if lines else ""
