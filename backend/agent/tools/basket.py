"""The total of a basket a question lists (issue 15): "how much for 2 adults and 3 kids, plus shoe
hire for all five of us" over "an adult day pass costs £13, a child pass costs £8 ... Shoe hire is
£4 per session" -> "2 * 13 + 3 * 8 + 5 * 4".

A question names several counted things (at least two: "3 sourdough loaves, 2 seeded rye and one
box of six croissants") and asks what they come to; each thing's price is the one of the
documents whose words before it (back to the price before, within its sentence) name the thing
most ("adult" for "adults", "child" for "kids", "loaf" for "loaves"). One candidate among the
calculator's (backend.agent.tools.expressions), for the model to choose; None when a thing has no
price. Only numbers and words are read from the passages (untrusted data), and the expression is
checked by the calculator's parser before it is offered.
"""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction
from typing import Sequence

from backend.agent.operations import (SIGNED_PRICE, asks_cost, asks_difference, asks_share_per_person, asks_total, group_size,
                                      with_digits, without_ages)
from backend.agent.tools.sentences import content_words, stems
from backend.agent.tools.units import is_unit

# The most things a basket holds (each is a product in the expression).
MAX_ITEMS = 8
_PRICE = re.compile(SIGNED_PRICE)
_STOP = r"(?:and|or|plus|of|at|for|from|in|on|with|to|the|a|an|each|per|please)\b"
# "2 adults", "3 sourdough loaves", "one box": a count and up to three words naming the thing.
_ITEM = re.compile(rf"(?<![\w.,$€£¥-])([0-9]+(?:\.[0-9]+)?|one)\s+((?:(?!{_STOP})[a-z][\w'-]*\s*){{1,3}})", re.IGNORECASE)
# "plus shoe hire for all 5 of us": a thing for every one of the people counted.
_FOR_ALL = re.compile(rf"\b(?:plus|and|with)\s+((?:(?!{_STOP})[a-z][\w'-]*\s+){{1,3}})for\s+(?:all\s+|each\s+of\s+)?"
                      rf"(?:the\s+)?([0-9]+|all|everyone|each)\b", re.IGNORECASE)
# A price's words: those back to the price before it, and this many characters after it, up to the next
# price, comma or "and" ("£11 for a box of six").
AFTER_CHARS = 25
_DURATION = re.compile(r"(?:second|minute|hour|day|night|week|weekend|month|year|season|session|decimal|times?\b)",
                       re.IGNORECASE)
# A question weighing two ways against each other (beside asking a difference): no basket's total.
_OTHER_WAY = re.compile(r"\b(?:more|less|instead|versus|vs)\b", re.IGNORECASE)
# Words that name one kind of person or thing in different words.
_SAME = {"kid": "child", "children": "child", "youngster": "child", "grown-up": "adult", "grownup": "adult",
         "party": "group", "parties": "group"}


def singular(word: str) -> str:
    """`word` (lowercase) without its plural ending: "loaves" -> "loaf", "classes" -> "class",
    "passes" -> "pass", "pass" -> "pass", "berries" -> "berry", "tickets" -> "ticket"."""
    if word.endswith("ves") and len(word) > 4:
        return word[:-3] + "f"
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith(("ss", "us", "is")) else word


def norm_words(words: str) -> set[str]:
    """The words of `words` (content_words) with plurals and synonyms made one ("loaves" ->
    "loaf", "kids" -> "child", "passes" -> "pass")."""
    return {_SAME.get(w, _SAME.get(singular(w), singular(w))) for w in content_words(words)}


# A thing of a list with no count after a counted one: "3 bouquets and a table centrepiece",
# "2 large buckets and club hire" (one of it).
_ONE_MORE = re.compile(rf"\s*(?:,\s*)?(?:and|plus|\+|with)\s+(?:(?:a|an)\s+)?(?!one\b|[0-9])"
                       rf"((?:(?!{_STOP}|my\b|our\b|we\b|i\b|it\b|you\b)[a-z][\w'-]*\s*){{1,3}})", re.IGNORECASE)
_OF_THING = re.compile(rf"of\s+(?:the\s+)?(?![0-9])((?:(?!{_STOP})[a-z][\w'-]*\s*){{1,3}})", re.IGNORECASE)
# Grown-ups of a party named, not counted: "me, my wife and our 2 kids", "me and my partner".
_ME = re.compile(r"\b(?:me|myself|i)\s*(?:,|and|&|\+)\s*(?=my\b|our\b|[0-9])", re.IGNORECASE)
_GROWN_UP = re.compile(r"\bmy\s+(?:wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|spouse|mum|mom|dad|mother|"
                       r"father)\b", re.IGNORECASE)
_CHILDREN = frozenset({"child", "son", "daughter", "teen", "teenager", "toddler", "baby", "junior"})
_ADULTS = frozenset({"adult", "ticket", "person", "people", "senior", "student", "friend", "guest", "player"})
# A thing for each of the things counted before: "each in its own box", "each with a waffle cone".
_EACH_WITH = re.compile(rf"\beach\s+(?:one\s+)?(?:in|with|gets?|needs?|has|having)\s+(?:its|their|his|her)?\s*(?:own\s+)?"
                        rf"(?:a\s+|an\s+)?((?:(?!{_STOP})[a-z][\w'-]*\s*){{1,2}})", re.IGNORECASE)
# A thing with no count whose price the documents lack is left out, not the basket.
OPTIONAL = "1?"


def basket_items(question: str) -> list[tuple[str, str]]:
    """(count, the words naming the thing) for each counted thing `question` lists, in order;
    [] for fewer than two. A count inside another thing's name is not a thing ("one box of 6
    croissants" is one box). A thing named after a counted one with no count of its own ("and a
    table centrepiece", "and club hire") is one, OPTIONAL; the grown-ups of a party named ("me,
    my wife and our 2 kids") are adults."""
    text = with_digits(question)
    items: list[tuple[str, str]] = []
    grown = len(_ME.findall(text)) + len(_GROWN_UP.findall(text))
    for m in _ITEM.finditer(text):
        if re.search(r"\bof\s+$", text[max(0, m.start() - 4):m.start()]):
            continue  # "box of 6 croissants"
        if _DURATION.match(m.group(2)):
            continue  # "for 3 nights", "2 weeks": how long, not a thing bought
        count = "1" if m.group(1).lower() == "one" else m.group(1)
        of = _OF_THING.match(text, m.end())  # "2 metres of cotton lining": the metres and what they are of
        items.append((count, m.group(2).strip() + (" " + of.group(1).strip() if of else "")))
        more = _ONE_MORE.match(text, of.end() if of else m.end())
        if more is not None and not _DURATION.match(more.group(1)):
            items.append((OPTIONAL, more.group(1).strip()))
    for m in _EACH_WITH.finditer(text):  # "4 galettes to take away, each in its own box": 4 boxes
        counted_before = [(c, thing) for c, thing in items if c != OPTIONAL and text.find(thing) < m.start()]
        # another thing than the one counted ("6 photo mugs, each with a different photo": no photo bought)
        if counted_before and not norm_words(m.group(1)) & norm_words(counted_before[-1][1]):
            items.append((counted_before[-1][0], m.group(1).strip()))
    # the grown-ups beside counted children only, not beside counted adults ("My wife and I want 2 adult tickets")
    words = [norm_words(thing) for _, thing in items]
    if grown and any(w & _CHILDREN for w in words) and not any(w & _ADULTS for w in words):
        items.insert(0, (str(grown), "adults"))
    people = sum(float(c) for c, _ in items if c != OPTIONAL)
    for m in _FOR_ALL.finditer(text):
        count = m.group(2) if m.group(2).isdigit() else (f"{people:g}" if people else None)
        if count is not None:
            thing = m.group(1).strip()
            # "plus shoe hire for all five": counted for all, not once more
            items = [item for item in items if not (item[0] == OPTIONAL and item[1] == thing)]
            items.append((count, thing))
    counted = [item for item in items if item[0] != OPTIONAL]
    return items[:MAX_ITEMS] if len(items) >= 2 and counted else []


# A count and the word or three after it ("6 standard keys", "an 8-metre boat", "6 A1 posters").
_COUNT_BEFORE = re.compile(r"(?<![\w.,$€£¥])([0-9]+)(?:\s+|-)((?:[a-z0-9][\w-]*\s+){0,2}[a-z][\w-]*)", re.IGNORECASE)


def counts_of(question: str, thing: str) -> list[str]:
    """Every count `question` gives of `thing` (a word), in order: a number before it or before a
    word or two and it, or a word naming the same ("6 A1 posters and 4 A2 posters", "poster" ->
    ["6", "4"]; "2 kids", "child" -> ["2"]); ages are no counts ("I'm 70")."""
    unit, same = stems(thing), norm_words(thing)
    return [m.group(1) for m in _COUNT_BEFORE.finditer(without_ages(with_digits(question)))
            if any(stems(word) & unit or norm_words(word) & same for word in m.group(2).replace("-", " ").split())]


def naming_words(sentence: str, prices: Sequence[re.Match[str]], i: int) -> set[str]:
    """The words naming the `i`th of the prices `prices` (matches in `sentence`): those back to the
    price before it, and AFTER_CHARS after it up to the next price, comma or "and", plurals and
    synonyms made one (norm_words)."""
    m = prices[i]
    start = prices[i - 1].end() if i else 0
    end = min(prices[i + 1].start() if i + 1 < len(prices) else len(sentence), m.end() + AFTER_CHARS)
    cut = re.search(r"[,;]|[.!?](?:\s|$)|\s(?:and|while|whereas)\s", sentence[m.end():end])  # the next thing's
    end = m.end() + cut.start() if cut else end
    return norm_words(sentence[start:m.start()] + " " + sentence[m.end():end])


def thing_words(sentence: str, prices: Sequence[re.Match[str]], i: int) -> set[str]:
    """The words right before the `i`th of the prices `prices` (matches in `sentence`) that name
    what it buys: the last MAX_THING_WORDS of its clause back to the price before it, neither an
    aside in brackets nor a verb of paying ("small (40 balls) $8, medium (80 balls) $14":
    {"medium"} for $14), or the first after it when it is "for" or "per" them ("$7 for
    children"; not a unit: "€7.50 per metre"), made one as norm_words does."""
    after = _FOR_THING.match(sentence, prices[i].end())
    if after is not None and not is_unit(after.group(1).split()[0]):  # "$7 for children"; not "€24 per metre"
        return norm_words(" ".join(content_words(after.group(1))[:MAX_THING_WORDS]))
    own = _ASIDE.sub(" ", sentence[prices[i - 1].end() if i else 0:prices[i].start()])
    clause = next((c for c in reversed(_THING_BREAK.split(own)) if content_words(c)), "")
    words = [w for w in content_words(clause) if w not in _PAYING][-MAX_THING_WORDS:]
    return norm_words(" ".join(words))


# The words before a price read as naming what it buys ("medium (80 balls) $14": "medium").
MAX_THING_WORDS = 2
_ASIDE = re.compile(r"\([^()]*\)")
_FOR_THING = re.compile(r"\s+(?:per\s+[a-z]+\s+(?=for\b))?(?:for|per)\s+(?:an?\s+|the\s+|each\s+)?(?![0-9])([a-z][\w' -]*?)(?=\s+(?:and|or|but|while)\b|[,;.()]|$)",
                        re.IGNORECASE)
_THING_BREAK = re.compile(r"[:;,]")
_PAYING = frozenset({"cost", "costs", "priced", "charged", "pay", "pays", "sold", "sells", "just", "only"})


def _price_of(thing: str, sentences: Sequence[str]) -> str | None:
    """The price of the documents whose words (naming_words) name `thing` most, then whose own
    words right before it (thing_words) do, the first of equals; None when no price's words name
    it."""
    wanted = norm_words(thing)
    best: tuple[tuple[int, int], str] | None = None
    for sentence in sentences:
        prices = list(_PRICE.finditer(sentence))
        for i, m in enumerate(prices):
            named = (len(wanted & naming_words(sentence, prices, i)), len(wanted & thing_words(sentence, prices, i)))
            if named[0] and (best is None or named > best[0]):
                best = (named, m.group(1).replace(",", ""))
    return None if best is None else best[1]


_BUNDLE_FOR = re.compile(rf"(?<![\w.,])([0-9][0-9,]*)\s+((?:[a-z][\w'-]*\s+){{0,3}}?)for\s+{SIGNED_PRICE}", re.IGNORECASE)


def _bundle_price(count: str, thing: str, sentences: Sequence[str]) -> str | None:
    """The price of exactly `count` of `thing` sold together ("1,000 cards for €78" for 1000 business
    cards), as written; None when no sentence sells that many of it at one price."""
    wanted = norm_words(thing)
    for sentence in sentences:
        for m in _BUNDLE_FOR.finditer(sentence):
            if m.group(1).replace(",", "") == count and norm_words(m.group(2)) & wanted:
                return m.group(3).replace(",", "")
    return None


def basket_expression(question: str, sentences: Sequence[str]) -> str | None:
    """The total of the things `question` lists at their prices in `sentences` ("2 * 13 + 3 * 8 +
    5 * 4"), or None: not a question asking a cost or a total, one comparing ("how much do I
    save"), fewer than two things, or a thing without a price."""
    if (not (asks_cost(question) or asks_total(question) or asks_share_per_person(question)) or asks_difference(question)
            or _OTHER_WAY.search(question)):
        return None
    return listed_total(basket_items(question), sentences)


def listed_total(items: Sequence[tuple[str, str]], sentences: Sequence[str]) -> str | None:
    """The total of `items` ((count, the words naming the thing), as basket_items gives them) at
    their prices in `sentences`; None when a thing has no price, or for no items."""
    terms = []
    for count, thing in items:
        whole = None if count == OPTIONAL else _bundle_price(count, thing, sentences)
        if whole is not None:  # "1000 business cards" over "1,000 cards for €78": one bundle of them
            terms.append(whole)
            continue
        price = _price_of(thing, sentences)
        if price is None and count == OPTIONAL:
            continue
        if price is None:
            return None
        terms.append(price if count in ("1", OPTIONAL) else f"{count} * {price}")
    if len(terms) < min(2, len(items)):
        return None  # "3 bouquets and a card": the card has no price, and one thing is no basket
    return " + ".join(terms) if terms else None


# A price's unit right after it: "£60 per hour", "$8 per person", "£12 each".
_PER_AFTER = re.compile(r"\s*(?:per|a|an|each|every)\s+([a-z]+)", re.IGNORECASE)
_PERSON = frozenset({"person", "head", "guest", "adult", "people"})
_NO_THING = _PERSON | {"child", "hour", "minute", "day", "night", "week", "month", "year", "time", "hire", "rental",
                             "extra"}


def mentioned_items(question: str, sentences: Sequence[str], names: Sequence[str] = (),
                    joined: re.Pattern[str] | None = None) -> list[tuple[str, str]]:
    """(count, price) for each price of `sentences` whose thing the question names without a count
    of its own before it or with one ("a midi skip plus a road permit" over "Midi skip (4 yard):
    £210 ... Road permit ...: £45" -> [("1", "210"), ("1", "45")]; "2 tyres" over "a tyre at £12
    each" -> ("2", "12")): a price is named when every word right before it (thing_words) is one
    of the question's, or two of its words back to the price before it are, or its head word
    (_head) is and names no other price; of
    prices named by the same words, the one the question names most ("large builder's skip" over
    "builder's skip"). Its count: the number before its name, else the count of its unit ("£60
    per hour" and "2 hours"), the party for a price per person; else one. [] for fewer than two,
    more than MAX_ITEMS, or a price named twice, or things not listed (each after the one before
    and a word of `joined` between them: _JOINED, "and", "plus", a comma). The words of `names`
    (the documents' headings: the business) name no thing."""
    at = list(re.finditer(r"[\w'-]+", question))
    tokens = _without_names([norm_words(t.group(0)) for t in at], names)
    asked = set().union(*tokens)
    read = []  # (own words, naming words, price match, sentence) of every price
    for sentence in sentences:
        prices = list(_PRICE.finditer(sentence))
        for i, m in enumerate(prices):
            # the words of a person, a period or a hire name no thing ("Big-axe upgrade: $8 per person")
            if _ADJUSTMENT_AROUND.search(sentence[max(0, m.start() - 2):m.end() + 5]):
                continue  # "+$25 per device", "$20 off": an adjustment (discounts), no thing's price
            # the words back to the price before it (a list's next line is no name of it)
            before = sentence[prices[i - 1].end() if i else 0:m.start()]
            every = norm_words(before[_PER_AFTER.match(before).end():] if _PER_AFTER.match(before) else before)
            naming = every - _NO_THING
            read.append((thing_words(sentence, prices, i) - _NO_THING or naming, naming, every, m, sentence))
    naming_prices = Counter(word for _, naming, _, _, _ in read for word in naming)
    # (span of the question naming it, its words named, own words, every word named, price, text after it)
    found: list[tuple[tuple[int, int], set[str], set[str], set[str], str, str]] = []
    for own, naming, every, m, sentence in read:
        named = naming & asked
        # all its own words; or two of its words; or its head that names no other price ("the pasta"
        # over "Pasta from scratch (3 hours): €75"; not "screen" over "Tempered glass screen protector: $15")
        # (a head alone in a list's line only: "Pasta from scratch (3 hours): €75", not "Puncture repairs are £12")
        head = _head(sentence[:m.start()]) if sentence[:m.start()].rstrip().endswith(":") else None
        words = (own if own and own <= asked else named if len(named) >= 2
                 else {head} if head in asked and naming_prices[head] == 1 else set())
        span = _phrase(tokens, words)  # named together ("a full overhaul ... express service" names no "Full service")
        if own and span is not None:
            found.append((span, named, own, every & asked, m.group(1).replace(",", ""), sentence[m.end():]))
    # of prices named at the same place, the one named by most words ("large builder's skip" over "builder's skip")
    kept = [f for f in found if not any(g[0][0] <= f[0][0] and f[0][1] <= g[0][1] and (g[0] != f[0] or f[1] < g[1])
                                        for g in found)]
    kept.sort(key=lambda f: f[0])
    # a list: "a midi skip plus a road permit", "the pasta, the Thai street food and the knife skills"
    listed = all(a[0][1] < b[0][0] and (joined or _JOINED).search(question[at[a[0][1]].end():at[b[0][0]].start()])
                 for a, b in zip(kept, kept[1:]))
    if not 2 <= len(kept) <= MAX_ITEMS or len({f[0] for f in kept}) < len(kept) or not listed:
        return []
    items = []
    for _, named, own, every, price, after in kept:  # "the kids' baking class" over "Kids' baking, ages 8-14: €30"
        counts = [c for word in sorted(own & asked) + sorted(every - own) for c in counts_of(question, word)]
        per = _PER_AFTER.match(after)
        if not counts and per is not None:
            unit = singular(per.group(1).lower())
            party = group_size(question) if unit in _PERSON else None
            counts = [party] if party is not None else counts_of(question, unit)
        items.append((counts[0] if counts else "1", price))
    return items


def _without_names(tokens: list[set[str]], names: Sequence[str]) -> list[set[str]]:
    """`tokens` (each a word's norm_words) with those naming a business of `names` emptied: a run of
    two or more of a name's words ("At Dunmore Skip Hire, ... a midi skip": the first "skip" only),
    or a name's first word ("at whiskerfold")."""
    out = list(tokens)
    for name in names:
        words = norm_words(name)
        first = next(iter(norm_words(content_words(name)[0])), None) if content_words(name) else None
        inside = [bool(t) and t <= words for t in tokens]
        for i, t in enumerate(tokens):
            run = (i > 0 and inside[i - 1]) or (i + 1 < len(tokens) and inside[i + 1])
            if inside[i] and (run or first in t):
                out[i] = set()
    return out


_JOINED = re.compile(r"\b(?:and|plus|with|also|as\s+well\s+as)\b|[,+&]", re.IGNORECASE)


def _phrase(tokens: Sequence[set[str]], words: set[str]) -> tuple[int, int] | None:
    """The first and last of the first run of `tokens` (each a word's norm_words) that holds all
    of `words` within one token more than they are ("the kids' baking class" holds {"child",
    "baking"}); None when none does, or for no words."""
    if not words:
        return None
    for i, first in enumerate(tokens):
        if not first & words:
            continue
        held: set[str] = set()
        for j in range(i, min(len(tokens), i + len(words) + 1)):
            held |= tokens[j] & words
            if held == words:
                return (i, j)
    return None


_ADJUSTMENT_AROUND = re.compile(r"\+\s*[$€£¥]|[0-9]\s*off\b", re.IGNORECASE)
# Where a thing's name ends before its price: a preposition, an aside, a colon ("Pasta from scratch (3 hours):").
_NAME_END = re.compile(r"\s(?:from|for|with|of|in|on|at|to|per|by|when|if)\s|[(:;,]", re.IGNORECASE)


def _head(before: str) -> str | None:
    """The head word of the thing named right before a price (`before`: the text up to it): the last
    word of its name, made one as norm_words does ("Tempered glass screen protector: " ->
    "protector"; "Pasta from scratch (3 hours): " -> "pasta"); None when it names none."""
    clause = re.split(r"[.;:]\s|\n|[$€£¥][0-9.,]+", before.rstrip(" :"))[-1]
    name = _NAME_END.split(clause.strip())[0]
    words = [w for w in content_words(name)]
    return None if not words else next(iter(norm_words(words[-1])), None)


def mentioned_total(question: str, sentences: Sequence[str], names: Sequence[str] = ()) -> str | None:
    """The total of the things `question` names at their prices (mentioned_items: "210 + 45",
    "310 + 2 * 60 + 2 * 12"), for a question asking a cost or a total and comparing nothing; else
    None."""
    if (not (asks_cost(question) or asks_total(question)) or asks_difference(question)
            or _OTHER_WAY.search(question)):
        return None
    items = mentioned_items(question, sentences, names)
    return " + ".join(price if count == "1" else f"{count} * {price}" for count, price in items) or None


# Two things weighed against each other: "the sourdough weekend than the pasta class", "between ... and ...".
_WEIGHED = re.compile(r"\b(?:than|and|vs|versus|or|compared\s+(?:to|with))\b|[,/]", re.IGNORECASE)


def mentioned_difference(question: str, sentences: Sequence[str], names: Sequence[str] = ()) -> str | None:
    """The difference of the two things a question asking one names (operations.asks_difference:
    "how much more is the sourdough weekend than the pasta class" over "Pasta from scratch (3
    hours): €75 ... Sourdough weekend ...: €160" -> "160 - 75"), the dearer first, each at the
    count the question gives of it (mentioned_items); None unless it names exactly two, or when it
    counts anything or asks a price per unit (two ways of paying: backend.agent.tools.offers)."""
    # not a count's, a party's or a unit's price against another way of paying ("2 adults and 3 kids ... than the
    # family ticket", "on 22 working days ... than the monthly pass", "save per session": backend.agent.tools.offers)
    if (not asks_difference(question) or re.search(r"[0-9]", with_digits(question))
            or re.search(r"\bper\s+[a-z]", question, re.IGNORECASE)):
        return None
    items = mentioned_items(question, sentences, names, _WEIGHED)
    if len(items) != 2 or any(count != "1" for count, _ in items):
        return None
    terms = [price if count == "1" else f"{count} * {price}" for count, price in items]
    values = [Fraction(price) * Fraction(count) for count, price in items]
    return f"{terms[0]} - {terms[1]}" if values[0] >= values[1] else f"{terms[1]} - {terms[0]}"
