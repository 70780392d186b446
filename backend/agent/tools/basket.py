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
from typing import Sequence

from backend.agent.numerals import CURRENCY_SIGNS, SIGNED_PRICE, with_digits
from backend.agent.operations import asks_bill_total, asks_cost, asks_difference, asks_money, asks_total, names_a_size, sizes
from backend.agent.party import asks_share_per_person, named_children, without_ages
from backend.agent.tools.bands import cell_band_holds, held_counts, joined_row_outside, outside_band
from backend.agent.tools.sentences import content_words, stems
from backend.agent.tools.taxes import TAX_WORD
from backend.agent.tools.units import is_unit

# The most things a basket holds (each is a product in the expression).
MAX_ITEMS = 8
PRICE = re.compile(SIGNED_PRICE)
_STOP = r"(?:and|or|plus|of|at|for|from|in|on|with|to|the|a|an|each|per|please)\b"
# "2 adults", "3 sourdough loaves", "one box": a count and up to three words naming the thing.
# (or a size joined to its unit, read as a sized thing only: "one 95-gallon bin", blind set 98, read)
_ITEM = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}-])([0-9]+(?:\.[0-9]+)?|one)(\s+|-(?=[a-z]))((?:(?!{_STOP})[a-z][\w'-]*\s*){{1,3}})",
                   re.IGNORECASE)
# A thing a measure after it is of: "uplift of " (not a count of a named pack: "box of 6 croissants").
_MEASURED_OF = re.compile(r"\b(?:with|and|plus|&)\s+(?!(?:a|an|the|total|minimum|maximum|max|min|up|about|around)\b)"
                          r"([a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)\s+of\s+$", re.IGNORECASE)
_AREA_UNIT = re.compile(r"m2|m²|sq\s?m|sq\s?ft|square\s+(?:met(?:re|er)s?|feet|foot|yards?)", re.IGNORECASE)
# The thing a measure written after it measures: "Wool Blend Loop supplied and laid, " (capitalised words, a name).
# (two capitalised words or more, no greeting or request: not "Quote please, 40 m2", "Hi Dave, 40 m2", review)
_NAMED_BEFORE_MEASURE = re.compile(r"(?:^|[.?!]\s+)(?!(?:Hi|Hello|Hey|Dear|Quote|Quick|Thanks|Please|Ok|So|Yes|No)\b)"
                                   r"((?:[A-Z][\w'-]*\s+){2,4}(?:[a-z][\w'-]*\s+){0,3}?[a-z][\w'-]*),\s*$")
# "plus shoe hire for all 5 of us": a thing for every one of the people counted.
_FOR_ALL = re.compile(rf"\b(?:plus|and|with)\s+((?:(?!{_STOP})[a-z][\w'-]*\s+){{1,3}})for\s+(?:all\s+|each\s+of\s+)?"
                      rf"(?:the\s+)?([0-9]+|all|everyone|each)\b", re.IGNORECASE)
# A price's words: those back to the price before it, and this many characters after it, up to the next
# price, comma or "and" ("£11 for a box of six").
AFTER_CHARS = 25
# (a working one too: "within 3 working days", practice set 5)
_DURATION = re.compile(r"(?:(?:working|business|calendar|consecutive)\s+)?(?:second|minute|hour|day|night|week|weekend|month|year|"
                       r"season|session|decimal|times?\b)",
                       re.IGNORECASE)
# A question weighing two ways against each other (beside asking a difference): no basket's total.
OTHER_WAY = re.compile(r"\b(?:more|less|instead|versus|vs)\b", re.IGNORECASE)
# Words that name one kind of person or thing in different words.
_SAME = {"kid": "child", "children": "child", "youngster": "child", "boy": "child", "girl": "child", "son": "child",
         "daughter": "child", "grown-up": "adult", "grownup": "adult",
         "party": "group", "parties": "group", "color": "colour", "mono": "black"}
# "B&W", "b/w": black and white (a print's colour).
_BLACK_WHITE = re.compile(r"(?<![a-z])b\s?[&/]\s?w(?![a-z])", re.IGNORECASE)
# "black and white", "black & white", "B&W": one name, not two things listed.
_BLACK_AND_WHITE = re.compile(r"\bblack\s*(?:and|&|/)\s*white\b|(?<![a-z])b\s?[&/]\s?w(?![a-z])", re.IGNORECASE)


# The words before an amount that make it a bound, no price: "Delivery is free for orders over £50" (new-user pass:
# "3 baguettes ... plus VAT and delivery" was 3 * 2.10 + 50), "spend at least $100".
# (not "minimum": "Call-out charge: minimum £60" is the call-out's price, review)
THRESHOLD_BEFORE = re.compile(r"\b(?:over|above|more\s+than|under|below|less\s+than|at\s+least|up\s+to|exceeding|"
                              r"spend(?:ing)?)\s*$", re.IGNORECASE)


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
    "loaf", "kids" -> "child", "passes" -> "pass", "color" -> "colour"; "B&W" is "black white")."""
    words = _BLACK_WHITE.sub(" black white ", words)
    return {canonical(w) for w in content_words(words)}


def canonical(word: str) -> str:
    """One lowercase `word` as norm_words makes it: "kids" -> "child", "tickets" -> "ticket"."""
    return _SAME.get(word, _SAME.get(singular(word), singular(word)))


# A thing of a list with no count after a counted one: "3 bouquets and a table centrepiece",
# "2 large buckets and club hire" (one of it).
# ("and the hallway" too, not "with the order discount")
# (a clause's verb begins no thing: "3 standard boxes and want your truck to come to my house", blind set 98, read)
# (a verb right after "and" begins no thing; after an article it is a noun: "and a can of primer", review)
_ONE_MORE = re.compile(rf"\s*(?:,\s*)?(?:(?:and|plus|\+|with)\s+(?!(?:want|wants|need|needs|would|will|can|could|should|shall|must|"
                       r"am|are|is|was|were|do|does|did|require|requires|have|has|had|like|hope|plan|prefer)\b)(?:(?:a|an)\s+)?"
                       r"|(?:and|plus|\+)\s+the\s+)(?!one\b|[0-9])"
                       rf"((?:(?!{_STOP}|my\b|our\b|we\b|i\b|it\b|you\b)[a-z][\w'-]*\s*){{1,3}})", re.IGNORECASE)
# Things of a list with no count before the first counted one: "a single block heart plus a martini luge, one LED
# base and a drip tray" (blind set 94, read: the heart and the luge were left out), "a haircut and 2 beard trims", "the
# Silver package and 4 uplighters", "Gold package plus 2 extra hours" (blind set 96, read).
# (the business's own thing: "your master design plus 85 printed copies", blind set 100)
# (or after a comma: "Saturday in March, Silver package, one extra hour and 8 uplighters", blind set 96)
_ONE_BEFORE = re.compile(rf"(?:\b(?:a|an|the|your)\s+|^\s*|(?<=[,;:])\s+)((?:(?!{_STOP}|my\b|our\b|your\b)[a-z][\w'-]*\s*){{1,3}}?)\s*(?:,\s*(?:and\s+|plus\s+)?|"
                         rf"(?:and|plus|\+|&)\s+)$", re.IGNORECASE)
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


# A size's unit where a basket's thing would be: "130 gsm", "180 g", "12 inch" (not "3 cm of ribbon").
_SIZE_THING = re.compile(r"(?:gsm|g|inch(?:es)?|mm|cm|rpm)\b", re.IGNORECASE)


# One occasion of a service, named bare: "one visit", "a single session", no thing of a basket.
_OCCASION = re.compile(r"(?:visit|trip|session|appointment|booking|time|go)(?:\s+(?:be|if|cost|costs|come|would|will|with|for)\b.*)?", re.IGNORECASE)
_PAIRS_OF = re.compile(r"^pairs?\s+(?:of\s+)?(?=\S)", re.IGNORECASE)


# Words naming no thing bought: who asks, or what they say.
_NOT_BOUGHT = re.compile(r"\b(?:question|query|group|member|student|family|couple|party|customer|client|friend|guest|"
                         r"regular|dog|cat|pet|kid|child|baby|adult|person|minute|quick)s?\b", re.IGNORECASE)


# A day or an occasion's time, no thing bought: "the seal safari on the bank holiday monday, 3 adults".
_WHEN_THING = re.compile(r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekends?|weekdays?|holidays?|mornings?|"
                         r"afternoons?|evenings?|nights?|eve)\b", re.IGNORECASE)


# A word saying how long, before a length: "full day", "half day", "whole week", "two nights", "extra hours".
_HOW_LONG_WORD = re.compile(r"(?:full|half|whole|entire|extra|additional|one|two|three|four|five|six|seven|several|few|"
                            r"long|short|each|every|per|next|last|this|that|same|first|second|[0-9]+)\b", re.IGNORECASE)


def _listed_before(text: str) -> list[str]:
    """The things `text` (a question up to its first counted thing) lists right before that thing
    with no count, each joined to the next by a comma, "and" or "plus" (_ONE_BEFORE), in order."""
    found: list[str] = []
    while (m := _ONE_BEFORE.search(text)) is not None and len(found) < MAX_ITEMS:
        words = m.group(1).split()
        # (a thing named with how long it is had: "Loft full day plus 2 extra hours", not "a full week plus ...")
        if _DURATION.match(words[-1]) and len(words) >= 2 and not _HOW_LONG_WORD.match(words[0]) \
                and not _NOT_BOUGHT.search(m.group(1)) and not _WHEN_THING.search(" ".join(words[:-1])) \
                and not re.match(rf"{_NOT_SERVED}", m.group(1), re.IGNORECASE):
            found.insert(0, m.group(1).strip())
            break
        # (how long, not a thing bought: "for a full week plus 2 extra nights"; "a day pass" is one; nor who asks: "I'm
        # a student and 3 friends", "as a member", "we are a group", "a quick question", review)
        if (_DURATION.match(words[-1]) or _TAX_ALONE.fullmatch(m.group(1).strip())
                or re.search(r"\b(?:for|i'?m|am|as|are|we're|is|be|of)\s+$", text[:m.start()], re.IGNORECASE)
                and not (m.group(0).lower().startswith("the ") and text[:m.start()].lower().endswith(("for ", "is ")))
                or _NOT_BOUGHT.search(m.group(1)) or _WHEN_THING.search(m.group(1))):
            break
        if _NOT_WANTED.match(m.group(1)) or _NOT_WANTED_BEFORE.search(text[:m.start()]):
            break  # "Unlike last year, no marquee, 10 trestle tables": no marquee bought (review)
        found.insert(0, m.group(1).strip())
        text = text[:m.start()]
    return found


# A thing said not to be wanted: "no marquee", "not delivery", "without the gazebo".
_NOT_WANTED = re.compile(r"(?:no|not|without|except|minus|skip|skipping)\b", re.IGNORECASE)
_NOT_WANTED_BEFORE = re.compile(r"\b(?:no|not|without|except|minus|skip|skipping)\s+(?:the\s+|a\s+|an\s+|any\s+)?$",
                                re.IGNORECASE)


def _one_more(text: str, at: int) -> re.Match[str] | None:
    """The thing listed right after `at` with no count (_ONE_MORE), past a sales tax named among them
    ("3 baguettes, plus VAT and delivery": delivery; the tax is no thing bought, new-user pass)."""
    more = _ONE_MORE.match(text, at)
    while more is not None and _TAX_ALONE.fullmatch(more.group(1).strip()):
        more = _ONE_MORE.match(text, more.end())
    return more


_TAX_ALONE = re.compile(rf"(?:the\s+)?{TAX_WORD}", re.IGNORECASE)


# One thing more for each of the things counted before it, added by "plus", "and" or "with": "40 lawn signs plus a stake
# for each", "and a stake each" (not "two kids ..., one session each per week": what each does, blind set 39).
_FOR_EACH = re.compile(r"(?:(?<=\bplus )|(?<=\bwith )|(?<=\band )|(?<=\+ ))(?:a|an|one)\s+([a-z][\w-]*(?:\s+(?!(?:for|with|on|per)\b)[a-z][\w-]*)?)\s+(?:(?:for|with|on|per)\s+)?each"
                       r"(?:\s+(?:one|of\s+them|sign|item))?\b", re.IGNORECASE)
# (a count of things, not a date's or a time's number: "on 12 May", "at 7 pm", "for 3 hours", review)
_LAST_COUNT = re.compile(rf"(?<![\w.{CURRENCY_SIGNS}:/])([0-9]+)\s+(?!(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
                         r"|(?:am|pm|a\.m|p\.m|o'clock|min|mins|minutes?|hrs?|hours?|days?|nights?|weeks?|months?|"
                         r"years?|miles?|km)\b)[a-z]", re.IGNORECASE)


def with_each_counted(question: str) -> str:
    """`question` with a thing had once for each of the things counted before it written with their
    count ("Ordering 40 two-sided lawn signs plus a stake for each" -> "... plus 40 stake"; blind set
    89, read after its runs); the question as it is when no count comes before it."""
    def counted(m: re.Match[str]) -> str:
        before = _LAST_COUNT.findall(with_digits(question[:m.start()]))
        return f"{before[-1]} {m.group(1)}" if before and int(before[-1]) > 1 else m.group(0)
    return _FOR_EACH.sub(counted, question)


# A count written with thousands separators: "1,300".
_THOUSANDS = re.compile(r"(?<![\w.,])[0-9]{1,3}(?:,[0-9]{3})+(?![\w,])")


def basket_items(question: str) -> list[tuple[str, str]]:
    """(count, the words naming the thing) for each counted thing `question` lists, in order;
    [] for fewer than two. A count inside another thing's name is not a thing ("one box of 6
    croissants" is one box). A thing named after a counted one with no count of its own ("and a
    table centrepiece", "and club hire") is one, OPTIONAL; the grown-ups of a party named ("me,
    my wife and our 2 kids") are adults."""
    text = _BLACK_AND_WHITE.sub("black-white", with_digits(question))
    text = _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)  # "1,300 full-wool ewes" (blind set 99)
    items: list[tuple[str, str]] = []
    grown = len(_ME.findall(text)) + len(_GROWN_UP.findall(text))
    for m in _ITEM.finditer(text):
        measured = _MEASURED_OF.search(text[max(0, m.start() - 40):m.start()])
        if measured is not None and (is_unit(m.group(3).strip()) or _AREA_UNIT.fullmatch(m.group(3).strip())):
            # (a measure of the thing before: "with uplift of 18 m2 of old carpet", practice set 8)
            of = _OF_THING.match(text, m.end())
            items = [item for item in items if item != (OPTIONAL, measured.group(1))]
            items.append((m.group(1), f"{m.group(3).strip()} {measured.group(1)}" + (f" {of.group(1).strip()}" if of else "")))
            continue
        if re.search(r"\bof\s+$", text[max(0, m.start() - 4):m.start()]):
            continue  # "box of 6 croissants"
        if _DURATION.match(m.group(3)):
            continue  # "for 3 nights", "2 weeks": how long, not a thing bought
        count = "1" if m.group(1).lower() == "one" else m.group(1)
        if count == "1" and _OCCASION.fullmatch(m.group(3).strip()):
            continue  # "how much would one visit be if I add ...": the occasion, not a thing bought
        if m.group(2) == "-" and not names_a_size(text, m.start()):
            continue  # ("a 3-day pass": no 3 of anything here)
        if names_a_size(text, m.start()):  # "a 12 inch cake": one cake of that size, named by it
            if items and items[-1][0] != OPTIONAL and text.find(items[-1][1], 0, m.start()) >= m.start() - 30 \
                    and re.search(r"[0-9]+\s+(?:[a-z-]+\s+){1,2}$", text[max(0, m.start() - 40):m.start()]):
                # "4 budget 16 inch tyres": the count before names the sized thing ("4 budget 16-inch tyres")
                items[-1] = (items[-1][0], f"{items[-1][1]} {m.group(1)}-{m.group(3).strip()}")
                more = _one_more(text, m.end())  # "... and a wheel alignment"
                if more is not None and not _DURATION.match(more.group(1)):
                    items.append((OPTIONAL, more.group(1).strip()))
                continue
            # (a count right before the size counts the sized things: "2 12000 BTU wall units", practice set 6)
            bare = re.search(r"(?<![\w.,])([0-9]+)\s+$", text[max(0, m.start() - 12):m.start()])
            items.append((bare.group(1) if bare else "1", f"{m.group(1)}-{m.group(3).strip()}"))
            continue
        if _SIZE_THING.match(m.group(3)) and not re.match(r"\s*of\b", text[m.end():]):
            continue  # "600 flyers, A5 130 gsm", "180 g": a size of the thing, not a thing bought
        served = _SERVED.search(text[max(0, m.start() - 40):m.start()])
        if served is not None and _PEOPLE_WORD.match(m.group(3)):  # "coffee for 25 people": 25 coffees
            items.append((m.group(1), served.group(1).strip()))
            continue
        of = _OF_THING.match(text, m.end())  # "2 metres of cotton lining": the metres and what they are of
        # (or a measure alone after the thing it measures: "Wool Blend Loop supplied and laid, 20 m2", practice set 8)
        named = (_NAMED_BEFORE_MEASURE.search(text[:m.start()])
                 if of is None and (is_unit(m.group(3).strip()) or _AREA_UNIT.fullmatch(m.group(3).strip())) else None)
        if not items and named is None:
            items.extend((OPTIONAL, thing) for thing in _listed_before(text[:m.start()]))
        items.append((count, m.group(3).strip() + (" " + of.group(1).strip() if of else "")
                      + (" " + named.group(1).strip() if named else "")))
        more = _one_more(text, of.end() if of else m.end())
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
    # and a child named, not counted, beside counted adults ("3 adults and my son who's 11")
    named = named_children(text)
    if named and any(w & _ADULTS for w in words) and not any(w & _CHILDREN for w in words):
        items.append((str(len(named)), named[0]))
    people = sum(float(c) for c, _ in items if c != OPTIONAL)
    for m in _FOR_ALL.finditer(text):
        count = m.group(2) if m.group(2).isdigit() else (f"{people:g}" if people else None)
        if count is not None:
            thing = m.group(1).strip()
            # "plus shoe hire for all five": counted for all, not once more
            items = [item for item in items if not (item[0] == OPTIONAL and item[1] == thing)]
            # (nor what it is for counted as a thing: "plus furniture moving for 1 room" is no room, practice set 8)
            if m.group(2).isdigit():
                unit = _ITEM.match(text, m.start(2))
                items = [item for item in items if not (unit is not None and item == (count, unit.group(3).strip()))]
            items.append((count, thing))
    counted = [item for item in items if item[0] != OPTIONAL]
    # "2 pairs of trousers": trousers (not "Headlight restoration - £30 per pair")
    items = [(n, _PAIRS_OF.sub("", thing) if _PAIRS_OF.sub("", thing) else thing) for n, thing in items]
    return items[:MAX_ITEMS] if len(items) >= 2 and counted else []


# Words that name no thing served ("how much for 25 people", "a quote for 12 guests").
_NOT_SERVED = (r"(?:how|what|much|price|prices|cost|costs|total|quote|booking|book|table|room|space|i|we|it|that|this|"
               r"is|are|be|need|want|order|get)\b")
# "(ignore skate hire)", "excluding insurance", "not counting the deposit", "but not tourist tax", "no pets":
# words the question sets aside.
SET_ASIDE = re.compile(r"\b(?:ignore|ignoring|excluding|exclude|not\s+counting|without|leave\s+out|leaving\s+out|"
                       r"not\s+incl(?:uding|\.)?)\s+([^.?!,;()]{1,60})"
                       # "but not tourist tax", "no pets": a thing named right after (not "not sure", "no idea")
                       r"|\b(?:not|no)\s+(?!(?:sure|certain|too|very|really|quite|that|so|yet|now|able|going|idea|clue|"
                       r"problem|worries|rush|need|way|longer|more|one|matter|later|earlier|until|before|after|a|an|"
                       r"member|members|i|we|you|it|is|are|be|been)\b)((?:the\s+)?[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)",
                       re.IGNORECASE)


def set_aside_words(question: str) -> set[str]:
    """The words of what `question` sets aside (SET_ASIDE), as norm_words makes them: "(ignore
    tourist tax)" -> {"tourist", "tax"}."""
    return set().union(*(norm_words(m.group(1) or m.group(2)) for m in SET_ASIDE.finditer(question)))


# A thing served to a count of people: "coffee for 25 people", "+ lunch for 12 guests".
_SERVED = re.compile(rf"(?:^|[,+;:]\s*|\b(?:and|plus|with)\s+)((?:(?!{_STOP}|for\b|{_NOT_SERVED})[a-z][\w'&-]*\s+){{1,3}})"
                     r"for\s+$", re.IGNORECASE)
_PEOPLE_WORD = re.compile(r"(?:people|persons?|guests?|attendees|delegates|pax)\b", re.IGNORECASE)


# A count and the word or three after it ("6 standard keys", "an 8-metre boat", "6 A1 posters"; thousands apart: "a
# 1,500-word manual", blind set 97).
_COUNT_BEFORE = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}])([0-9]{{1,3}}(?:,[0-9]{{3}})+|[0-9]+(?:\.[0-9]+)?)(?:\s+|-|(?=[a-z])(?!(?:am|pm|a\.m|p\.m|st|nd|rd|th|h\d)\b))((?:(?:[a-z][\w-]*|[0-9]{{1,3}}x[0-9]{{1,3}}|[0-9][0-9,]*(?:\.[0-9]+)?\s?(?:g|kg|ml|l|oz|lb|cm|mm|btu)(?![\w.]))\s+){{0,2}}[a-z][\w-]*)",
                           re.IGNORECASE)


# Units written short: "a 2hr lesson" counts 2 hours.
# A measure's symbol and its first word written out: "6 cubic metres" counts "m3" (blind set 75).
_MEASURE_WRITTEN = {"m3": "cubic", "m³": "cubic", "cbm": "cubic", "m2": "square", "m²": "square", "sqm": "square"}
_ABBREVIATED = {"hr": "hour", "h": "hour", "min": "minute", "mn": "minute", "wk": "week", "yr": "year", "mo": "month"}


def counts_of(question: str, thing: str) -> list[str]:
    """Every count `question` gives of `thing` (a word), in order: a number before it or before a
    word or two and it, or a word naming the same ("6 A1 posters and 4 A2 posters", "poster" ->
    ["6", "4"]; "2 kids", "child" -> ["2"]; "a 1,500-word manual", "word" -> ["1500"]); ages are no
    counts ("I'm 70")."""
    unit, same, short = stems(thing), norm_words(thing), thing.lower().rstrip("s")

    def names(word: str) -> bool:
        bare = word.lower().rstrip("s")
        return bool(stems(word) & unit or norm_words(word) & same or (len(short) < 3 and bare == short)
                    or _ABBREVIATED.get(bare, "-") in same or _MEASURE_WRITTEN.get(short) == bare)
    text = without_ages(with_digits(question))
    return [m.group(1).replace(",", "") for m in _COUNT_BEFORE.finditer(text)  # not a size ("a 12 inch cake")
            if any(names(word) for word in m.group(2).replace("-", " ").split()) and not names_a_size(text, m.start())]


def naming_words(sentence: str, prices: Sequence[re.Match[str]], i: int) -> set[str]:
    """The words naming the `i`th of the prices `prices` (matches in `sentence`): those back to the
    price before it (to the comma ending that price's words, when there is one), and AFTER_CHARS after it up to the next price, comma or "and", plurals and
    synonyms made one (norm_words)."""
    m = prices[i]
    start = prices[i - 1].end() if i else 0
    # not the price before's own words after it ("£0.08 per page black and white, | £0.30 per page colour")
    # (nor a comma inside an aside: "Photo package (around 40 edited photos, emailed within a week): £35")
    ended = re.search(r"[,;]|[.!?](?:\s|$)", _ASIDE.sub(lambda a: " " * len(a.group(0)), sentence[start:m.start()]))
    # (nor a clause of how it is done after its label's comma: "Civil certificate copies (birth, marriage or death),
    # ordered for you: EUR 18 each" is named by the copies, blind set 102, read)
    # (nor, before a line's only price, a size or a state after its name: "Cherry laurel, 10 L pot, 80-100 cm: £9.50
    # each", "English yew, root-balled, 40-60 cm: £12.00 each", practice set 2)
    done = ended is not None and ended.group(0) == "," and (
        _HOW_DONE.match(sentence, start + ended.end()) is not None
        or (not i and _DESCRIBES.match(sentence, start + ended.end()) is not None))
    start = start + ended.end() if ended and not done else start
    end = min(prices[i + 1].start() if i + 1 < len(prices) else len(sentence), m.end() + AFTER_CHARS)
    cut = re.search(r"[,;]|[.!?](?:\s|$)|\s(?:and|while|whereas)\s", sentence[m.end():end])  # the next thing's
    end = m.end() + cut.start() if cut else end
    # a table row's later cells are named by the row too: "Hybrid: 2 hours £15; Full day £32." names £32 "hybrid", and
    # its first price in a later cell: "Silver package: DJ time 4 hours; Price £520." names £520 "silver" (blind set 96)
    named = table_row_name(sentence, prices)
    # and a sentence's opening label names each of its prices: "Children under 14: Island Cruise £20 and Seal Safari £30"
    lead = _LEAD_LABEL.match(sentence) if i and not named else None
    named = lead.group(1) if lead is not None and lead.end() <= prices[0].start() else named
    return norm_words(f"{named} {sentence[start:m.start()]} {sentence[m.end():end]}")


# A clause of how a thing is done, after its label and a comma, up to the colon before its price: " ordered for you:".
# A size or a state after a thing's name and a comma: " 10 L pot", " 80-100 cm", " root-balled".
_DESCRIBES = re.compile(r"\s*(?:[0-9]|[a-z][a-z-]{3,}ed\b)", re.IGNORECASE)  # (not "red", "bed", "shed": review)
_HOW_DONE = re.compile(r"\s*[a-z]+ed\b[^,;:.]{0,30}:", re.IGNORECASE)
_LEAD_LABEL = re.compile(rf"\s*([^:;.{CURRENCY_SIGNS}]{{1,60}}):\s")


# A table's row as segmentation.table_sentences writes it: "Hybrid: 2 hours £15 per bike; Full day £32 per bike."
TABLE_ROW = re.compile(r"([^:;]{1,80}):\s[^;]*;\s.*\.$")
# A cell under a column's name: a capital or a number first ("Full day £32", "2 hours £15"; not "hot tub £25").
_COLUMN_CELL = re.compile(rf"\s*(?:[A-Z0-9]|[{CURRENCY_SIGNS}])")


def table_row_name(sentence: str, prices: Sequence[re.Match[str]]) -> str:
    """The row's name of a table's row (TABLE_ROW, before its first price, each cell under a
    column's name: _COLUMN_CELL): "Hybrid" of "Hybrid: 2 hours £15 per bike; Full day £32 per
    bike."; "" for another sentence ("Cottage add-ons: hot tub £25 per night; late checkout £15.")."""
    row = TABLE_ROW.match(sentence)
    if row is None or not prices or row.end(1) >= prices[0].start():
        return ""
    cells = sentence[row.end(1) + 1:].split(";")
    return row.group(1) if all(_COLUMN_CELL.match(cell) for cell in cells) else ""


def thing_words(sentence: str, prices: Sequence[re.Match[str]], i: int) -> set[str]:
    """The words right before the `i`th of the prices `prices` (matches in `sentence`) that name
    what it buys: the last MAX_THING_WORDS of its clause back to the price before it, neither an
    aside in brackets nor a verb of paying ("small (40 balls) $8, medium (80 balls) $14":
    {"medium"} for $14), or the first after it when it is "for" or "per" them ("$7 for
    children"; not a unit: "€7.50 per metre") together with a label's right before it ("Colour
    copies: £0.65 per page": {"colour", "copy", "page"}), made one as norm_words does."""
    own = _ASIDE.sub(" ", sentence[prices[i - 1].end() if i else 0:prices[i].start()])
    if i:  # not the unit of the price before ("$35 per day; $110 per week": no "day" names the $110)
        own = _UNIT_OF_PRICE_BEFORE.sub(" ", own, count=1)
    clauses = _THING_BREAK.split(own)
    clause = next((c for c in reversed(clauses) if content_words(c)), "")
    # (a label's thing, not whom it is for: "Hot lunch | for Half-Day guests: £12.50 per person")
    named = re.split(r"\s+for\s+", clause, maxsplit=1)[0] if re.match(r"[\s*•-]*[A-Za-z][^:]*\s+for\s+[^:]+$", clause) \
        and len(_THING_BREAK.split(own)) > 1 else clause
    before = norm_words(" ".join([w for w in content_words(named) if w not in _PAYING][-MAX_THING_WORDS:]))
    # (and a row's name before a dash and what it is: "Plus - 151 to 300 transactions a month: €375.00", blind set 106)
    dashed = _NAME_DASH.match(own) if not i else None
    if dashed is not None:
        before |= norm_words(dashed.group(1))
    after = _FOR_THING.match(sentence, prices[i].end())
    # "$7 for children"; not "€24 per metre", nor "£12.50 per person" (anyone)
    if after is not None and not is_unit(after.group(1).split()[0]) and not norm_words(after.group(1)) <= _ANYONE_WORDS:
        words = norm_words(" ".join(content_words(after.group(1))[:MAX_THING_WORDS]))
        # a label right before it names it too: a table's column ("Hybrid: 2 hours £15 per bike; Full day £32
        # per bike"), a line's label ("Colour copies: £0.65 per page"); not another price's words ("$12 for
        # adults and $8 for kids": no "adults" names the $8)
        tail = own[own.rfind(clause) + len(clause):] if clause else ""
        labelled = len(clauses) > 1 and re.fullmatch(r"\s*[:;]?\s*", tail) is not None and not _JOINED.search(clause)
        return words | before if labelled else words
    labels = labels_after(sentence, prices)
    if labels:  # "£38 manual, £42 automatic": each price's label after it
        return norm_words(labels[i])
    # a table's row priced under a column named only as a price: "Silver package: DJ time 4 hours; Price £520." buys
    # the Silver package (blind set 96, read)
    row = table_row_name(sentence, prices)
    if row and before and before <= _PRICE_COLUMN:
        return norm_words(row)
    return before


# A row's name, a dash and what it is, before its price: "Plus - 151 to 300 transactions a month: ".
_NAME_DASH = re.compile(r"[\s*•]*([A-Z][\w&'/+]*(?:[ \t]+[A-Za-z][\w&'/+]*){0,2})[ \t]+[-–—][ \t]+[^:\n]+:\s*$")


# The names of a table's price column: "Price", "Cost", "Rate", "Fee", "Total".
_PRICE_COLUMN = frozenset({"price", "cost", "rate", "fee", "total", "amount", "charge"})


# Whom a price is for that names no one in particular ("per person", "per booking").
_ANYONE_WORDS = frozenset({"person", "people", "head", "guest", "participant", "passenger", "booking", "order"})
_UNIT_OF_PRICE_BEFORE = re.compile(r"^\s*(?:per|each|a|an)\s+[a-z][\w-]*", re.IGNORECASE)
# A label right after a price, before the next one: "€0.10 single-sided, | €0.15 double-sided".
_LABEL_AFTER = re.compile(r"\s+(?!(?:per|each|a|an|for|off|more|extra|or|and|surcharge|supplement|fee|plus|with|"
                          r"from|to|on|at|in|if|when)\b)([a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s*"
                          r"(?:[,;]\s*(?:or\s+|and\s+)?|\s(?:or|and)\s+|[.)]?\s*$)", re.IGNORECASE)


def labels_after(sentence: str, prices: Sequence[re.Match[str]]) -> list[str]:
    """The label of each price of `sentence` (`prices`: its prices) when each is written after its
    price and the prices follow one another ("Single lesson (1 hour): £38 manual, £42 automatic"
    -> ["manual", "automatic"]); [] for fewer than two prices, or any price with no such label."""
    if len(prices) < 2:
        return []
    labels = []
    for i, m in enumerate(prices):
        label = _LABEL_AFTER.fullmatch(sentence, m.end(), prices[i + 1].start() if i + 1 < len(prices) else len(sentence))
        if label is None:
            return []
        labels.append(label.group(1))
    return labels


# The words before a price read as naming what it buys ("medium (80 balls) $14": "medium").
MAX_THING_WORDS = 2
_ASIDE = re.compile(r"\([^()]*\)")
_FOR_THING = re.compile(r"\s+(?:per\s+[a-z]+\s+(?=for\b))?(?:for|per)\s+(?:an?\s+|the\s+|each\s+)?(?![0-9])([a-z][\w' -]*?)(?=\s+(?:and|or|but|while)\b|[,;.()]|$)",
                        re.IGNORECASE)
_THING_BREAK = re.compile(r"[:;,]")
_JOINED = re.compile(r"\b(?:for|and|or|per|each)\b", re.IGNORECASE)
_PAYING = frozenset({"cost", "costs", "priced", "charged", "pay", "pays", "sold", "sells", "just", "only"})


# A price for a least count of a thing: "5 or more shirts €3.00 each", "10+ copies 8p".
_TIER = re.compile(r"([0-9]+)\s*(?:\+|or\s+more\b|and\s+over\b)\s*((?:[a-z][\w-]*\s*){0,2})$", re.IGNORECASE)


def _tier_met(label: str, thing: str, count: str) -> bool | None:
    """Whether `count` of `thing` reaches the least count the words right before a price set
    ("Shirt: €3.50 - 5 or more shirts" for 6 shirts: True, for 2: False); None when they set none or
    name another thing."""
    m = _TIER.search(label.rstrip(" :-–"))
    if m is None or (m.group(2).strip() and not norm_words(m.group(2)) & norm_words(thing)):
        return None
    try:
        return float(count) >= int(m.group(1))
    except ValueError:
        return None


# A price's label naming a package: its word, or things joined by "+" ("3 bedrooms + lounge + hallway").
_PACKAGE_WORDS = frozenset({"package", "bundle", "combo", "deal"})
# A package's own name before its word: "Townland Trace package", "Gold bundle".
_PACKAGE_NAME = re.compile(r"((?:[A-Z][\w'-]*\s+){1,3})(?:package|bundle|combo|deal)\b")
_PACKAGE = re.compile(r"\b(?:package|bundle|combo|deal)\b|\w\s*\+\s*\w", re.IGNORECASE)


# A least amount with words between its name and its amount: "Minimum charge per call-out: $60 before tax", "Minimum
# order for envelopes, place cards and escort cards: EUR 60.00" (blind set 100).
_MINIMUM_BEFORE = re.compile(r"\bmin(?:imum|\.)?\s+(?:[\w-]+\s+){0,1}(?:charge|fee|price|spend|order|invoice|bill)\b"
                             rf"[^.;{CURRENCY_SIGNS}]{{0,60}}$", re.IGNORECASE)


def is_minimum(sentence: str, price: re.Match[str]) -> bool:
    """Whether the price `price` of `sentence` is a least amount ("Minimum charge per call-out: $120")."""
    return _MINIMUM_BEFORE.search(sentence[max(0, price.start() - 90):price.start()]) is not None


def _price_of(thing: str, sentences: Sequence[str], question: str = "", count: str = "") -> str | None:
    """The price of the documents whose label names `thing`'s size ("12-inch $80" for "12-inch
    cake"), then whose words (naming_words) name it most, then whose own words right before it
    (thing_words) name it, then the rest of `question` ("Full day £32" of the hybrid row for "4
    hybrid bikes for a full day"; _own_clause), then a table row the question names elsewhere, then a
    row's cell named in the thing's own sentence of the question ("... emptied bi-weekly"; no day's
    word), the first of equals; a price for a least count of it ("5 or more shirts €3.00 each") only
    for `count` of as many, and then first; a package's price (_PACKAGE) after one naming the thing
    alone; None when no price's words name it."""
    wanted, sized = norm_words(thing), sizes(thing)
    asked = norm_words(question) - wanted
    context = norm_words(_own_clause(thing, question)) - wanted
    said = norm_words(next((s for s in re.split(r"(?<=[.?!])\s+", question) if thing.lower() in s.lower()), "")) - wanted
    best: tuple[tuple[int, bool, bool, int, int, int, int, int], str] | None = None
    for sentence in sentences:
        prices = list(PRICE.finditer(sentence))
        for i, m in enumerate(prices):
            if THRESHOLD_BEFORE.search(sentence[:m.start()]) or is_minimum(sentence, m):
                continue  # "free for orders over £50": a bound, no price of delivery; "Minimum order for ... place cards"
            # a size naming it first: "12-inch $80" for a 12 inch cake
            # (a table row's later cell is sized by its row: "3 bed semi: Regular $35; One-off clean $50.")
            label = (table_row_name(sentence, prices) if i else "") + " " + sentence[prices[i - 1].end() if i else 0:m.start()]
            naming = len(wanted & naming_words(sentence, prices, i))
            if not naming:
                continue
            if question and (outside_band(question, label) or joined_row_outside(question, sentence, prices, i)):
                continue  # "Freshwater tank up to 55 gallons: $65" for "a 60 gallon freshwater tank"; "41+ panels"
            own = thing_words(sentence, prices, i)
            # a price for a least count of it: only for as many ("5 or more shirts €3.00 each" for 6 shirts, first)
            tier = _tier_met(sentence[prices[i - 1].end() if i else 0:m.start()], thing, count) if count else None
            # (or a table's column of a band of the count: "Hawthorn: 1-49 £0.95; 50-249 £0.80" for 60 hawthorn, practice
            # set 2)
            row_name = table_row_name(sentence, prices) if count else ""
            if row_name and tier is None:
                cell = sentence[prices[i - 1].end() if i else sentence.index(":") + 1:m.start()].strip(" ;:")
                tier = cell_band_holds(cell, count)
            if tier is False:
                continue
            # a package of several things ("HOME PACKAGE: 3 bedrooms + lounge + hallway for $175") prices
            # none of them alone ("2 bedrooms and the hallway" was 175 * 2 + 25: blind set 60)
            # (the package itself when the thing is its name: "the Townland Trace" over "Townland Trace package: ...;
            # Fee EUR 420", not "Land record search: EUR 40 per townland", blind set 102, read)
            package = _PACKAGE_NAME.search(label)
            alone = (not _PACKAGE.search(label) or bool(wanted & _PACKAGE_WORDS)
                     or (package is not None and wanted <= norm_words(package.group(1))))
            # (and of a table's rows, the row the question names elsewhere: "Gold plan plus 2 extra hours" over rows'
            # "Extra hour £60" and "Extra hour £80", review)
            row = norm_words(table_row_name(sentence, prices)) & asked if question else set()
            # (and of a table row's cells the one named in the thing's own sentence of the question: "two executive
            # consoles and one 95-gallon bin emptied bi-weekly", blind set 98; not "The weekend is too busy for us", review)
            in_row = bool(wanted & norm_words(table_row_name(sentence, prices)))
            # (a day's cell is the conditions' to choose: "on Tuesday since the weekend is full", review)
            cell = (norm_words(sentence[prices[i - 1].end() if i else 0:m.start()]) & said) - _DAY_WORDS if in_row else set()
            score = (len(sized & sizes(label)), bool(tier), alone, naming, len(wanted & own), len(context & own), len(row),
                     len(cell))
            if best is None or score > best[0]:
                best = (score, m.group(1).replace(",", ""))
    return None if best is None else best[1]


# Words of a day or a time of day, which name no table cell for the basket (backend.agent.tools.conditions reads them).
_DAY_WORDS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "weekend", "weekday",
                        "holiday", "morning", "afternoon", "evening", "night", "peak", "offpeak", "off-peak"})


# Where a thing's own words in a question end: the next thing's ("1 tandem for 2 hours and 1 road bike ...").
_NEXT_THING = re.compile(r"\b(?:and|plus|with|or)\b|[,+;.?!]", re.IGNORECASE)


def _own_clause(thing: str, question: str) -> str:
    """The words of `question` around `thing` back to the thing's before it and up to the next
    thing's (_NEXT_THING): "for a full day" of "4 hybrid bikes for a full day plus one child
    trailer", "one-off clean for my" of "one-off clean for my 3 bed townhouse plus 12 screens";
    with the question's opening before its first count ("weekend tickets for" of each of "weekend
    tickets for 2 adults and 1 child"); "" when `thing` is not in it."""
    at = question.lower().replace("-", " ").find(thing.lower().replace("-", " "))  # "3 bed" is "3-bed"
    if at < 0:
        return ""
    before, rest = question[:at], question[at + len(thing):]
    start = max((m.end() for m in _NEXT_THING.finditer(before)), default=0)
    end = _NEXT_THING.search(rest)
    # and the words opening the question, before its first count, of every thing ("weekend tickets for 2 adults
    # and 1 child": the child's weekend ticket too)
    # (or before whom it is for: "how much is a Seal Safari | for me, my husband and our two kids")
    first = re.search(r"[0-9]|\bfor\s+(?:me|us|my|our)\b", question)
    opening = question[:first.start()] if first is not None and first.start() < start else ""
    return f"{opening} {before[start:]} {rest[:end.start()] if end else rest}"


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
    if (not (asks_cost(question) or asks_total(question) or asks_bill_total(question) or asks_share_per_person(question)
             or asks_money(question))  # "what's the price for a private Hawk Walk for 4 adults, plus the photo package?"
            or asks_difference(question)
            or OTHER_WAY.search(question)):
        return None
    items: list[tuple[str, str]] = []
    # (a distance is billed only at a price per distance: "10 miles away" beside "Flat travel fee of $45 anywhere within
    # 25 miles" is how far, blind set 92; "15 miles away" beside "£1 per mile over 5 miles" is read as travel later)
    per_distance = any(re.search(rf"[{CURRENCY_SIGNS}]\s*[0-9.,]+\s*(?:per|a|/|for\s+(?:every|each)|every|each)\s*"
                                 r"(?:additional\s+|extra\s+)?(?:mile|mi\b|km|kilomet)", s, re.IGNORECASE) for s in sentences)
    for count, thing in basket_items(question):
        if not per_distance and re.match(r"(?:miles?|mi|km|kilomet(?:re|er)s?)\b", thing, re.IGNORECASE):
            continue
        if count == OPTIONAL and items and _one_name(items[-1][1], thing, sentences):
            continue  # "4kg wash and fold" over "Wash & fold: £2.50 per kg": one thing, named with "and"
        if _part_of_name(question, thing, sentences):
            continue  # "a full groom with haircut for 2 dogs" over "Full groom with haircut: £60 per dog": one thing
        items.append((count if not _served(question, count, thing) or _per_person(thing, sentences) else "1", thing))
    # a thing named without a count whose price a counted one has is that one's act: "bind 2 documents" over "Binding:
    # £3 per document" binds 2 documents, no third binding
    counted = {_price_of(thing, sentences) for count, thing in items if count != OPTIONAL} - {None}
    items = [(count, thing) for count, thing in items if count != OPTIONAL or _price_of(thing, sentences) not in counted]
    if any(held_counts(f"{count} {thing}", sentence, lot=True) for count, thing in items for sentence in sentences):
        return None  # "10 windows" over "9 - 16 windows: £32": a band's row prices the lot (mentions.mentioned_items)
    return listed_total(items, sentences, question) if len(items) >= 2 else None


def _part_of_name(question: str, thing: str, sentences: Sequence[str]) -> bool:
    """Whether `thing` follows a word of `question` joined by "with", "and", "&" or "plus" as one
    name of the documents joins them ("groom with haircut": "Full groom with haircut: £60";
    "bath and brush": "Bath and brush (large dog): £50")."""
    # (only a thing counted by no number of its own: "2 wash and dry loads and 3 dry only loads" keeps its 3 dry only
    # loads, "2 tea and scone and 1 scone" its 1 scone)
    if re.search(rf"(?<![\w.])[0-9]+\s+{re.escape(thing)}\b", with_digits(question), re.IGNORECASE):
        return False
    first = thing.split()[0]
    m = re.search(rf"([\w'-]+)\s+(?:with|and|&|plus)\s+(?:the\s+|a\s+)?{re.escape(first)}\b", question, re.IGNORECASE)
    return m is not None and any(
        re.search(rf"\b{re.escape(m.group(1))}\s+(?:with|and|&)\s+{re.escape(first)}", sentence, re.IGNORECASE)
        for sentence in sentences)


def _one_name(before: str, thing: str, sentences: Sequence[str]) -> bool:
    """Whether `before`'s last word, "and" or "&", and `thing`'s first word name one thing of
    `sentences` ("wash" and "fold": "Wash & fold: £2.50 per kg")."""
    last, first = before.split()[-1], thing.split()[0]
    pattern = re.compile(rf"\b{re.escape(last)}\s*(?:and|&)\s*{re.escape(first)}\b", re.IGNORECASE)
    return any(pattern.search(sentence) for sentence in sentences)


def _served(question: str, count: str, thing: str) -> bool:
    """Whether `question` counts `thing` by the people it serves ("coffee for 25 people")."""
    return re.search(rf"{re.escape(thing)}\s+for\s+{re.escape(count)}\s+{_PEOPLE_WORD.pattern}", question,
                     re.IGNORECASE) is not None


# A price per head: "$2.50 per person", "£8 a head", "€5 per guest".
_PER_HEAD = re.compile(r"\s*(?:per|a|an|each)\s+(?:person|head|guest|adult|pax|attendee|delegate)\b|\s*pp\b|\s+each\b",
                       re.IGNORECASE)


def _per_person(thing: str, sentences: Sequence[str]) -> bool:
    """Whether the price of `thing` in `sentences` (_price_of) is per person ("Coffee for groups:
    $2.50 per person"; not "Boat hire: £90 per day", the boat's whatever the party)."""
    price = _price_of(thing, sentences)
    return price is not None and any(m.group(1).replace(",", "") == price and _PER_HEAD.match(sentence, m.end())
                                     for sentence in sentences for m in PRICE.finditer(sentence))


# Who pays a list's price per person when no price names them ("adults" beside "Children under 12: ... £30").
_FULL_PRICE_WHO = frozenset({"adult", "person", "people", "grown"})


def _per_head_price(question: str, sentences: Sequence[str]) -> str | None:
    """The price per person (_PER_HEAD: "Owl Encounter (1 hour) - £45 per person") whose words
    (naming_words) name most of `question`'s, the first of equals; None when none names any."""
    asked = norm_words(question)
    best: tuple[int, str] | None = None
    for sentence in sentences:
        prices = list(PRICE.finditer(sentence))
        for i, m in enumerate(prices):
            if _PER_HEAD.match(sentence, m.end()) is None:
                continue
            named = len(asked & naming_words(sentence, prices, i) - _FULL_PRICE_WHO)
            if named and (best is None or named > best[0]):
                best = (named, m.group(1).replace(",", ""))
    return None if best is None else best[1]


def listed_total(items: Sequence[tuple[str, str]], sentences: Sequence[str], question: str = "") -> str | None:
    """The total of `items` ((count, the words naming the thing), as basket_items gives them) at
    their prices in `sentences` (_price_of, read with the rest of `question`); None when a thing
    has no price, or for no items."""
    terms = []
    for count, thing in items:
        whole = None if count == OPTIONAL else _bundle_price(count, thing, sentences)
        if whole is not None:  # "1000 business cards" over "1,000 cards for €78": one bundle of them
            terms.append(whole)
            continue
        price = _price_of(thing, sentences, question, count)
        if price is None and norm_words(thing) & _FULL_PRICE_WHO and question:
            price = _per_head_price(question, sentences)  # "me, my husband and our two kids": the adults pay "£45 per person"
        if price is None and count == OPTIONAL:
            continue
        if price is None:
            return None
        if count in ("1", OPTIONAL):  # "re-sand it" over "Re-sanding: £1.10 per m2" for "a 100 m2 drive": its area
            count = _measure_of(price, sentences, question) or count
        count = least_count_of(price, count, thing, sentences) or count
        terms.append(price if count in ("1", OPTIONAL) else f"{count} * {price}")
    if len(terms) < min(2, len(items)):
        return None  # "3 bouquets and a card": the card has no price, and one thing is no basket
    return " + ".join(terms) if terms else None


def least_count_of(price: str, count: str, thing: str, sentences: Sequence[str]) -> str | None:
    """The least count of `thing` the price `price` is sold in, when `count` is under it: "6" for 4
    uplighters over "Uplighting: £12 per uplighter (minimum 6 uplighters)" (blind set 96, read); None
    when none is written right after the price, or `count` reaches it."""
    if not re.fullmatch(r"[0-9]+", count):
        return None
    wanted = norm_words(thing)
    for sentence in sentences:
        # (the bracket holds it alone: not "(minimum 10 chairs for delivery; any number if you collect)", review)
        for m in re.finditer(rf"[{CURRENCY_SIGNS}]\s*{re.escape(price)}(?![0-9])[^()\n;]{{0,30}}\(\s*min(?:imum|\.)?\s*(?:of\s+)?"
                             rf"([0-9]+)\s+([a-z][\w-]*)\s*\)", sentence, re.IGNORECASE):
            if norm_words(m.group(2)) & wanted and int(count) < int(m.group(1)):
                return m.group(1)
    return None


# A price per a measure ("£1.10 per m2", "$4 per kg", "€6 per metre").
_PER_MEASURE = r"\s*(?:per|/|a)\s*(m2|m²|sq\.?\s*m|sqm|kg|kilo|metre|meter|linear\s+metre|ft|foot|sq\.?\s*ft|litre|liter)(?![\w²])"


def _measure_of(price: str, sentences: Sequence[str], question: str) -> str | None:
    """The measure `question` gives in the unit `price` is per in `sentences` ("100" for "a 100 m2
    drive" over "Re-sanding: £1.10 per m2"), or None."""
    for sentence in sentences:
        for m in re.finditer(rf"[{CURRENCY_SIGNS}]\s*{re.escape(price)}(?![0-9]){_PER_MEASURE}", sentence, re.IGNORECASE):
            unit = re.sub(r"[\s.]", "", m.group(1).lower())
            found = counts_of(question, unit if unit not in ("m²", "sqm") else "m2")
            if len(found) == 1:
                return found[0]
    return None


# A deposit (paid back): a bill adds it only when the question names it ("incl the deposit"). It is
# the price's own name: after it ("$250 refundable deposit", not "non-refundable") or ending the
# words before it ("A deposit of €200", "Security deposit: £100"; not "no deposit needed").
# (or a bond, or a refundable hold on a card: "a $200 refundable hold is placed on a credit card per rental package",
# blind set 84, was added to the bill)
# (a bond only named so: "Exit clean / bond: $380" is a bond clean's price, review)
_DEPOSIT_AFTER = re.compile(r"\s*(?:(?<!non-)refundable\s+|security\s+|damage\s+)*deposits?\b"
                            r"|\s*(?:(?<!non-)refundable|security|damage)\s+(?:card\s+)?(?:bonds?|holds?|pre-?authori[sz]ations?)\b",
                            re.IGNORECASE)
_DEPOSIT_BEFORE = re.compile(r"\b(?:deposits?|(?:refundable|security|damage)\s+bonds?)\s*(?:of|:|is|=)?\s*$", re.IGNORECASE)
DEPOSIT_WORDS = frozenset({"deposit", "deposits"})
# A list of deposits, its label naming them: "All tattoo bookings need a deposit to secure the date: Sessions of up
# to 4 hours ...: $100" (blind set 77).
# (not an aside on the list that follows: "All prices below (a 30% non-refundable deposit is required to confirm):")
_DEPOSIT_LIST = re.compile(rf"\bdeposits?\b[^.;{CURRENCY_SIGNS}:()%]{{0,40}}:", re.IGNORECASE)


def is_deposit(sentence: str, prices: Sequence[re.Match[str]], i: int) -> bool:
    """Whether the `i`th price of `sentence` is a deposit (_DEPOSIT_AFTER, _DEPOSIT_BEFORE)."""
    m = prices[i]
    before = sentence[prices[i - 1].end() if i else 0:m.start()]
    return (_DEPOSIT_AFTER.match(sentence, m.end()) is not None or _DEPOSIT_BEFORE.search(before) is not None
            or _DEPOSIT_LIST.search(before) is not None)
