"""A discount the documents grant and the question claims (issue 15): "I'm a student with a valid
card ... 3 hours of labour" over "Students with a valid card get 15% off all labour" -> the
calculator's candidates each times (100 - 15) / 100, first.

A discount is a sentence of the documents with a percentage off ("15% off", "a 20 percent
discount", "a discount of 10%", "at half price"); who or what gets it is the sentence's words before the verb
granting it ("Groups of more than 10 people receive", "Students with a valid card get"). The
question claims it when it names who gets it ("I'm a student", "as a group", "my two siblings"),
or asks for a discount in words ("after the discount", "with the deal") and names something of
the sentence ("the multi-garment discount" of "5 or more garments ... 15% off the total"). Only
the percentage and words are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Sequence

from backend.agent.numerals import CURRENCY_SIGNS, PERCENT_SIGN, SIGNED_PRICE, with_digits
from backend.agent.party import given_ages, group_size
from backend.agent.tools.basket import counts_of, norm_words, singular
from backend.agent.tools.conditions import applies, condition_words, in_date_window, without_date_windows
from backend.agent.tools.sentences import content_words, stem_of, stems
from backend.agent.tools.units import DAY_PARTS, PERIOD_NOUNS, PERIODIC, WEEKDAYS, is_unit

# A percentage off: "15% off", "a 20 percent discount", "a discount of 10%", "12 percent reduction",
# "A weekly box subscription saves 10%".
_OFF = re.compile(rf"(?<![\w.])([0-9]{{1,2}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}\s*(?:off\b|discount\b|reduction\b)"
                  rf"|\bsaves?\s+(?:you\s+)?([0-9]{{1,2}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}"
                  rf"|\b(?:discount|reduction)\s+of\s+([0-9]{{1,2}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}"
                  r"|\b(?:at\s+|for\s+)?half[\s-]+(?:price|off)\b", re.IGNORECASE)  # 50% off
# The percentage of a discount _OFF found ("half price": 50).
HALF = "50"
# The verb granting it: what comes before is who gets it.
_GRANTED = re.compile(r"\b(?:receive|receives|get|gets|earn|earns|enjoy|enjoys|are|is|pay|pays|qualify|qualifies|"
                      r"gives?)\b", re.IGNORECASE)
# What the business does giving a percentage off (a discount's only: "When a single on-site visit includes 50 or more
# boxes, we take 10% off the box charges", blind set 98, read; not "Refer a friend ... and we'll take $30 off your next
# monthly plan bill" for a monthly plan, no referral).
# (the business's own verb: not the customer's, "Buy 3 or more ready-made frames and take 20% off them")
_TAKEN = re.compile(r"\bwe(?:'ll|\s+will)?\s+(?:take|knock|deduct)\b", re.IGNORECASE)
# (or the customer's after what is done for it, with no count: "Collect your order from the nursery and take 5% off the
# plants", practice set 2; not "Buy 3 or more ready-made frames and take 20% off them")
_TAKE_AFTER = re.compile(r"\band\s+take\b", re.IGNORECASE)


@dataclass(frozen=True)
class _Verbs:
    """How a kind of adjustment is given in words: `granted` for one given to someone (a discount, an
    amount off: who gets it is named before `verbs`, "Students | get"), else laid on something (a
    surcharge: what it applies to is before `verbs`, "vans | pay"); `taken`, the business's own
    verbs of a percentage off ("we'll take 10% off"), when they claim it too."""

    granted: bool
    verbs: re.Pattern[str]
    taken: re.Pattern[str] | None = None


# A percentage off; an amount off; an amount or a percentage laid on.
_PERCENT_OFF = _Verbs(granted=True, verbs=_GRANTED, taken=_TAKEN)
_AMOUNT_OFF = _Verbs(granted=True, verbs=_GRANTED)


# An amount read with its verb: what comes before it gets it.
_VERB_FIRST = re.compile(r"(?:saves?|adds?|costs?|charged|priced)\b", re.IGNORECASE)
# A verb granting it to those named after it: "gives members a 10% discount".
_GIVES = re.compile(r"gives?", re.IGNORECASE)
# A question asking for a discount in words.
_ASKS_DISCOUNT = re.compile(r"\b(?:discount|discounted|reduction|reduced|concession|concessions)\b"
                            r"|\b(?:group|student|member|members|senior|family|sibling|loyalty)\s+(?:rate|deal|price)\b",
                            re.IGNORECASE)
# "I'm not a student", "no siblings", "non-member": the words after it are no claim.
_NEGATED = re.compile(r"\b(?:not|no|non|never|without|isn't|aren't|don't|doesn't)\b[\s-]+((?:[\w'-]+\s+){0,2}[\w'-]+)",
                      re.IGNORECASE)
# Where the clause of a discount begins.
_CLAUSE = re.compile(r";|:(?![0-9])|,\s+(?:and|but|while)\s|\.\s", re.IGNORECASE)
# Words naming everyone: no claim ("customers who ...", "every booking").
_ANYONE = frozenset({"customer", "client", "people", "person", "everyone", "every", "all", "booking", "visitor", "guest",
                     "price", "total", "rate", "ticket", "discount", "percent", "receive", "get", "more", "you", "your",
                     "valid", "card", "who", "with", "those",
                     # verbs of a document's own question ("Rush service: need it back the same day? Add 50%"
                     # was claimed by "my desktop needs about 2.5 hours": blind set 60)
                     "need", "want", "like",
                     # a tax the adjustment is reckoned before or after claims nothing ("add 25% of the order subtotal
                     # (after any discount, before tax and shipping)" is no rush of "total with tax?": blind set 76)
                     "tax", "taxes", "gst", "vat", "hst", "pst"})


# Who an age restriction names: claimed by an age within it alone ("Senior citizens (65+)", "Juniors (under 16)").
_AGE_GROUPS = frozenset({"senior", "pensioner", "citizen", "oap", "elderly", "retiree", "junior", "child", "youth",
                         "teen", "teenager", "infant", "toddler", "baby", "kid", "over", "under"})
# Stems of labels naming people: "Seniors (Mon-Fri before 5pm): ...", not "Weekday happy hour (Mon-Thu 4-6pm): ...".
_PEOPLE_LABELS = frozenset(stems("senior seniors pensioner student students child children kid kids junior juniors teen "
                                 "teens member members family families adult adults veteran veterans youth club "
                                 "resident residents staff group groups local locals"))
# Words naming the adjustment itself, not who or what it is for ("Weekend surcharge: £3 per person").
_ADJUSTMENT_WORDS = frozenset({"surcharge", "supplement", "premium", "extra", "discount", "saver", "deal", "offer",
                               "reduction", "concession"})
# Stems of periods: "in a week" names no "Weekly pass holders".
_PERIOD_STEMS = stems(" ".join(PERIOD_NOUNS | set(PERIODIC)))
_IN_ADVANCE = re.compile(r"\s*(?:in\s+advance|ahead|before|beforehand|prior|notice)\b", re.IGNORECASE)
# Verbs an offer opens with ("Play both courses: €4 off", "Stay 7 nights or more"): no head naming who gets it.
_IMPERATIVES = frozenset({"play", "stay", "order", "book", "buy", "get", "pay", "use", "visit", "hire", "rent", "bring",
                          "come", "join", "spend", "try", "sign", "bundle", "combine", "add"})


def claimed_discount(question: str, sentences: Sequence[str]) -> tuple[str, str, str] | None:
    """(the percentage as written: "15", its sentence, the words naming who gets it: "Students
    with a valid card ") of the first discount of `sentences` the question claims (see the module
    docstring); None when it claims none or names a percentage itself."""
    if re.search(rf"[0-9]\s*{PERCENT_SIGN}", question, re.IGNORECASE):
        return None  # "with 15% off": the question's own (backend.agent.operations.named_operations)
    asked, asks = _asked_words(question), _ASKS_DISCOUNT.search(question) is not None
    claims = []
    for sentence in sentences:
        match = _OFF.search(sentence)
        subject = None if match is None else _claims(question, asked, asks, sentence, match.start(), _PERCENT_OFF)
        if subject is None and match is not None and applies(sentence, question) is not False:
            subject = _called_by_name(question, sentence[:match.start()])  # "with the winter offer"
        if (subject is not None and not _onwards_unmet(sentence, question) and not _joint_unmet(subject, question)
                and not excluded_when(sentence, sentences, question)):
            claims.append((next((g for g in match.groups() if g), HALF), sentence, subject))
    # the discount the question calls by its name first: "with your group discount" is "Groups of 6 or more
    # bikes get 10% off", not "Multi-day hire: 15% off" that "the full day" also names (blind set 53)
    called = {singular(m.group(1).lower()) for m in _CALLED.finditer(question)} - _ANYONE
    if called:
        claims.sort(key=lambda claim: not called & {singular(w) for w in norm_words(claim[2])})
    return claims[0] if claims else None


def _called_by_name(question: str, before: str) -> str | None:
    """`before` (a sentence up to a discount's amount) when it names the discount as the question
    calls it (_CALLED): "the winter offer" over "from November to February we run our Winter
    Warmer offer: 15% off ..." (blind set 87, read after its runs); None otherwise."""
    for m in _CALLED.finditer(question):
        word = m.group(1).lower()
        if singular(word) in _ANYONE or word in {"the", "a", "an", "your", "my", "our", "this", "that"}:
            continue
        if re.search(rf"\b{re.escape(word)}\b(?:\s+[a-z]+)?\s+(?:discount|deal|offer|reduction|promotion|concession)\b",
                     before, re.IGNORECASE):
            return before
    return None


_ORDINAL_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
                  "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12}
# A discount the question calls by name: "with your group discount", "the student rate", "long stay deal".
_CALLED = re.compile(r"\b([a-z]+)\s+(?:discount|deal|offer|reduction|concession|rate|plan)\b", re.IGNORECASE)
# A discount from a day on: "15% off ... for each day from the 3rd day onwards", "after the first night",
# "from the third session" (a period or a thing counted: not a date, "from the 1st of May").
_ORDINAL_WORD = "|".join(_ORDINAL_WORDS)
_ONWARDS = re.compile(rf"\b(?:from\s+the\s+([0-9]+(?:st|nd|rd|th)|{_ORDINAL_WORD})|after\s+the\s+"
                      rf"([0-9]+(?:st|nd|rd|th)|{_ORDINAL_WORD}))\s+([a-z]+?)s?\b", re.IGNORECASE)
_COUNTED_FROM = frozenset(PERIOD_NOUNS | {"session", "lesson", "class", "visit", "item", "ticket", "bike", "person",
                                         "guest", "child", "dog", "pet", "room", "bag", "box", "copy", "page", "order",
                                         "booking", "car", "vehicle", "hire", "rental"})


def _ordinal(text: str) -> int:
    """The number of an ordinal written "3rd" or "third"."""
    word = text.lower()
    return _ORDINAL_WORDS[word] if word in _ORDINAL_WORDS else int(re.sub(r"\D", "", word))


def onwards(sentence: str) -> tuple[int, str] | None:
    """(the first counted unit a discount is given for, that unit) when `sentence` gives it from
    one on: "from the 3rd day onwards" -> (3, "day"), "after the first night" -> (2, "night"),
    "from the third session" -> (3, "session"), "a second dog", "each additional dog" -> (2, "dog");
    None otherwise (a date: "from the 1st of May")."""
    for m in _ONWARDS.finditer(sentence):
        unit = m.group(3).lower()
        if unit not in _COUNTED_FROM:
            continue
        return (_ordinal(m.group(1)), unit) if m.group(1) else (_ordinal(m.group(2)) + 1, unit)
    # "each additional dog", "a second cat": from the second on, whatever is counted (not what the discount covers
    # too: "10% off the tub hire price (including any extra nights)", blind set 87, read)
    m = next((m for m in _ADDITIONAL.finditer(sentence) if not _COVERING.search(sentence[:m.start()])), None)
    return (2, singular(m.group(1).lower())) if m is not None else None


_COVERING = re.compile(r"\b(?:including|incl\.?|includes?|plus|and|with)\s*$", re.IGNORECASE)


# A discount for two things done together: "Driveway + patio on the same visit: 10% off", "a wash and a
# groom booked together" (blind set 79).
_JOINT = re.compile(r"^\W*([a-z][\w-]*)\s*(?:\+|&|\band\b|\bwith\b)\s*(?:an?\s+|the\s+)?([a-z][\w-]*)\b[^.;:]{0,30}?"
                    r"\b(?:(?:on|at|in)\s+the\s+same\s+(?:visit|day|booking|time|trip)|together|combined|at\s+once|"
                    r"in\s+one\s+(?:visit|go|booking|trip))\b", re.IGNORECASE)


def _joint_unmet(subject: str, question: str) -> bool:
    """Whether who or what gets a discount (`subject`) is two things done together (_JOINT) that
    `question` does not name both of ("a 60 m2 driveway clean" of "Driveway + patio on the same visit")."""
    m = _JOINT.search(subject)
    if m is None:
        return False
    asked = re.findall(r"[a-z]{3,}", question.lower())
    return not (_names_word(m.group(1), asked) and _names_word(m.group(2), asked))


def _names_word(word: str, asked: Sequence[str]) -> bool:
    """Whether a word of `asked` is `word` by its stem or one begins the other ("drive" of "Driveway")."""
    word = word.lower()
    return any(stems(a) & stems(word) or (min(len(a), len(word)) >= 4 and (a.startswith(word) or word.startswith(a)))
               for a in asked)


def _onwards_unmet(sentence: str, question: str) -> bool:
    """Whether `sentence`'s discount from a day on (onwards) needs more of that unit than the
    question counts (a full day's hire is not its 3rd day)."""
    start = onwards(sentence)
    if start is None:
        return False
    count = counted(question, start[1])
    return count is None or count < start[0]


# A surcharge: a percentage or an amount added ("Rush jobs carry a 25% surcharge", "an express
# service adds 30% to the repair price", "Out-of-hours emergency calls carry a £95 surcharge on
# top of the consultation fee", "Weekend bookings cost 20% extra").
# (a word naming it between: "a 15% holiday surcharge", "a 25% rush surcharge": blind set 94, read)
_EXTRA_PERCENT = re.compile(rf"(?<![\w.])([0-9]{{1,3}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}\s*(?:(?:[a-z]+\s+)?(?:surcharge|supplement|premium)|service\s+charge|"
                            rf"extra|on\s+top|to\s+(?:the|your|its|any|each)\s+(?:\w+\s+)?(?:price|total|bill|fare|fee|cost|rate|order)\b)"
                            rf"|\b(?:surcharge|supplement|premium)\s+of\s+([0-9]{{1,3}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}"
                            rf"|\b(?:costs?|charged|priced)\s+([0-9]{{1,3}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}\s*more\b"
                            rf"|(?<![\w.])([0-9]{{1,3}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}\s*more\s+expensive\b"
                            rf"|\badds?\s+([0-9]{{1,3}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}"
                            # "Express (next working day) +50%.", "+20% on the hourly rate"
                            rf"|(?<![\w.])\+\s*([0-9]{{1,3}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}",
                            re.IGNORECASE)
_EXTRA_AMOUNT = re.compile(rf"{SIGNED_PRICE}\s*(?:surcharge|supplement|premium|call-out\s+(?:fee|charge)|extra)\b"
                           rf"|\b(?:surcharge|supplement|premium)\s+of\s+{SIGNED_PRICE}"
                           rf"|\badds?\s+(?:a\s+)?(?:flat|further|fixed)\s+{SIGNED_PRICE}"
                           rf"|\badds?\s+{SIGNED_PRICE}(?=\s+(?:per|each|a|an|to)\b)"  # "Lamination adds €4 per poster"
                           rf"|{SIGNED_PRICE}\s+more\b(?!\s+than)"
                           rf"|\b(?:surcharge|supplement)s?\s*:\s*{SIGNED_PRICE}"
                           # "Weekdays 6pm-10pm and Saturdays: +$35.00" (a surcharge list's row: blind set 66)
                           rf"|:\s*\+\s*{SIGNED_PRICE}", re.IGNORECASE)  # "Weekend surcharge: £3 per person"  # "Weekend nights cost €5 more per bed"
# A multiple of another price: "Return tickets cost 1.8 times the single fare", "Vehicles over 6
# metres long are charged double the car fare".
_TIMES_PRICE = re.compile(r"(?<![\w.])(?:([0-9]{1,2}(?:\.[0-9]+)?)\s*(?:times|x)|(double|twice|triple|treble))\s+"
                          r"(?:the\s+|a\s+|an\s+)?(?:[a-z-]+\s+){0,3}?(?:price|fare|fee|rate|cost|charge|amount|single)s?\b",
                          re.IGNORECASE)
_FACTOR_WORDS = {"double": "2", "twice": "2", "triple": "3", "treble": "3"}
# The verb laying it on: what comes before is what it applies to.
_LAID = re.compile(r"\b(?:carry|carries|add|adds|incur|incurs|attract|attracts|cost|costs|are|is|pay|pays|"
                   r"have|has)\b", re.IGNORECASE)
_LAID_ON = _Verbs(granted=False, verbs=_LAID)
# A question asking for a surcharge in words.
_ASKS_EXTRA = re.compile(r"\b(?:surcharge|supplement|premium|extra\s+charge|service\s+charge|on\s+top)\b", re.IGNORECASE)


# An amount off: "Senior citizens (65+) receive $5 off each visit", "Pensioners get £10 off any call-out fee",
# "€4 off per person", "save £10 per paying participant".
_OFF_AMOUNT = re.compile(rf"{SIGNED_PRICE}\s+off\b|\bsaves?\s+(?:you\s+)?{SIGNED_PRICE}(?=\s+(?:per|each|a|an|on|off)\b)",
                         re.IGNORECASE)  # "... on a Tuesday and save £10 per paying participant"
# An adjustment named before its amount, what it applies to after it: "Weekend surcharge: £3 per person on ...",
# "Evening saver after 19:00: 25% off all single-course tickets".
_NAMED_BEFORE = re.compile(r"[\w)+]\s*:\s*$", re.IGNORECASE)


# Paying by card, asked and charged: "I'll pay by card", "with my credit card" / "Card payments carry a 3%
# surcharge", "Paying by credit card adds 2%".
_BY_CARD = re.compile(r"\b(?:pay(?:ing)?|paid)\s+(?:by|with|on)\s+(?:a\s+|my\s+)?(?:credit\s+|debit\s+)?card\b"
                      r"|\b(?:by|with)\s+(?:a\s+|my\s+)?(?:credit|debit)\s+card\b"
                      # "with the card fee", "plus the card surcharge" (review)
                      r"|\b(?:with|plus|incl\w*|and)\s+(?:the\s+)?(?:credit\s+|debit\s+)?card\s+(?:processing\s+)?(?:fee|surcharge|charge)\b",
                      re.IGNORECASE)
_CARD_CHARGED = re.compile(r"\b(?:card\s+payments?|(?:credit|debit)\s+cards?|paying\s+by\s+(?:credit\s+|debit\s+)?card"
                           r"|payments?\s+by\s+(?:credit\s+|debit\s+)?card)\b", re.IGNORECASE)


# A card's fee written as one ("3% card fee", "a 2.5% fee for card payments", "2% charge on credit cards").
_CARD_FEE = re.compile(rf"(?<![\w.])([0-9]{{1,2}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}\s*(?:((?:credit|debit)\s+)?card\s+"
                       rf"(?:fee|charge|surcharge|payment\s+fee)|(?:fee|charge|surcharge)\s+(?:for|on)\s+(?:all\s+)?"
                       rf"((?:credit|debit)\s+)?card)", re.IGNORECASE)


# A percentage laid on the whole amount paid: "a 2.5% processing fee on the amount charged", "on the invoice total".
ON_AMOUNT_CHARGED = re.compile(r"\bon\s+the\s+(?:amount\s+(?:charged|paid|due)|(?:full|whole|final|total)\s+(?:amount|bill|"
                               r"invoice)|invoice\s+total|total\s+(?:charged|paid|due))\b", re.IGNORECASE)
# A card's fee after the payments it is on: "Credit card payments carry a 2.5% processing fee", "card payments incur
# a 3% charge".
_CARD_FEE_AFTER = re.compile(rf"\b((?:credit|debit)\s+)?card\s+payments?\s+(?:carry|incur|attract|have|are\s+subject\s+to|"
                             rf"are\s+charged)\s+(?:a\s+|an\s+)?([0-9]{{1,2}}(?:\.[0-9]+)?)\s*{PERCENT_SIGN}\s*"
                             rf"(?:[a-z]+\s+)?(?:fee|charge|surcharge)\b", re.IGNORECASE)


def card_fees(question: str, sentences: Sequence[str]) -> list[tuple[str, str, str, str]]:
    """("%", the fee's percentage, its sentence, its words) for each card fee written as one
    (_CARD_FEE: "Payment: cash, Zelle, or card (3% card fee)") when the question pays by card of
    that kind (_BY_CARD; a debit card is not charged a credit card's fee); blind set 58's boxes
    "paying by card" were billed without it."""
    paying = _BY_CARD.search(question)
    if paying is None:
        return []
    kinds = {kind for kind in ("credit", "debit") if kind in paying.group(0).lower()}
    out = []
    for sentence in sentences:
        m = _CARD_FEE.search(sentence)
        if m is not None:
            percent, kind = m.group(1), m.group(2) or m.group(3) or ""
        else:  # the card named first: "Credit card payments carry a 2.5% processing fee" (blind set 94, read)
            m = _CARD_FEE_AFTER.search(sentence)
            percent, kind = (m.group(2), m.group(1) or "") if m is not None else ("", "")
        named = {k for k in ("credit", "debit") if k in kind.lower()}
        if m is not None and not (kinds and named and not kinds & named):
            out.append(("%", percent, sentence, m.group(0)))
    return out


def _card_charged(question: str, before: str) -> str | None:
    """The clause of `before` (a sentence up to a surcharge's amount) charging a payment by card
    (_CARD_CHARGED, right before the amount: "Card payments carry", not "We accept credit cards and
    cash, and weekend deliveries carry"), when the question pays by card (_BY_CARD) of that kind
    (a debit card is not charged a credit card's fee); None otherwise."""
    paying = _BY_CARD.search(question)
    # (after the last price before it: "Skip hire: £200 per week Card payments carry", a wrapped line run on)
    clause = _PRICED.split(re.split(r"[.;:]\s|,\s*(?:and\s+)?|\s(?:and|but)\s", before)[-1])[-1]
    charged = _CARD_CHARGED.search(clause)
    if paying is None or charged is None:
        return None
    kinds = {kind for kind in ("credit", "debit") if kind in paying.group(0).lower()}
    named = {kind for kind in ("credit", "debit") if kind in charged.group(0).lower()}
    return clause if not (kinds and named and not kinds & named) else None


# What a discount is not given on: "The discount does not apply to parts, travel or surcharges", "not valid on
# add-ons or delivery", "excludes parts".
# ("on all items except delivery and setup charges", blind set 94, read)
_EXCLUDED = re.compile(r"\b(?:(?:does|do|will)\s+not|doesn't|don't|won't)\s+(?:apply|count)\s+(?:to|on)\s+([^.;]+)"
                       # "Surcharges apply to labour only, not to call-out, extras or travel." (practice set 1)
                       r"|\bonly,?\s+not\s+(?:to|on|for)\s+([^.;]+)"
                       r"|\b(?:all|any|every)\s+[a-z]+\s+(?:except|but\s+not|other\s+than)\s+(?:for\s+)?([^.;]+)"
                       r"|\bnot\s+(?:valid|available|applicable)\s+(?:on|for|with)\s+([^.;]+)|\bexclud(?:es|ing)\s+([^.;]+)"
                       # "10% off labour (not parts)"
                       r"|\(\s*not\s+(?:on\s+|for\s+)?([^()]+)\)"
                       # "(Add-ons and delivery are charged at the normal price.)"
                       r"|([^.;()]+?)\s+(?:are|is)\s+(?:charged|priced)\s+at\s+(?:the\s+)?(?:normal|full|standard|usual)\s+"
                       r"(?:price|rate)"
                       # "take 5% off the plants (sundries are not discounted)" (practice set 2)
                       r"|\(\s*([a-z][^.;()]{2,40}?)\s+(?:are|is)\s+not\s+discounted\b"
                       # "Grind surcharges are added after the discount." (blind set 103, read)
                       r"|(?:^|[.;]\s+)([A-Za-z][^.;()]{2,40}?)\s+(?:are|is)\s+(?:added|charged|applied)\s+after\s+(?:the\s+|any\s+)?"
                       r"discounts?\b", re.IGNORECASE)


def excluded_from(sentence: str, sentences: Sequence[str]) -> list[frozenset[str]]:
    """What the discount of `sentence` is not given on, as it or the two sentences after it in
    `sentences` say (_EXCLUDED): the words (norm_words) of each thing listed, [{"part"}, {"travel"},
    {"surcharge"}] for "Seniors (65 and over) receive 10% off labour charges. ... The discount does
    not apply to parts, travel or surcharges."; a thing named by a day or a time, or by words of any
    service ("Not valid on Saturday appointments"), is a condition, none of these; [] when none."""
    out: list[frozenset[str]] = []
    for part in _excluded_parts(sentence, sentences):
        words = frozenset(norm_words(part))
        if words and not words & _WHEN_WORDS and words - _ANY_SERVICE:
            out.append(words - _ANY_SERVICE)
    return out


def _excluded_parts(sentence: str, sentences: Sequence[str]) -> list[str]:
    """Each thing listed as excepted from the adjustment of `sentence` (_EXCLUDED, split at _LISTED),
    by it or the two sentences after it in `sentences`: "parts", "travel", "bank holidays"."""
    at = list(sentences).index(sentence) if sentence in sentences else len(sentences)
    # (or by any sentence saying what the charges it is laid on hold: "Registered charities: 15% off hire charges." and
    # "Hire charges include extra-day charges but not delivery, extras or surcharges.", blind set 101, read)
    defined = [m.group(2) for text in sentences for m in [_DEFINED.search(text)] if m is not None
               and re.search(rf"{PERCENT_SIGN}[^.;]{{0,30}}\b{re.escape(m.group(1).strip())}", sentence, re.IGNORECASE)]
    return [part for text in [sentence, *sentences[at + 1:at + 3]] for m in _EXCLUDED.finditer(text)
            for part in _LISTED.split(next(g for g in m.groups() if g))] + [
        part for listed in defined for part in _LISTED.split(listed)]


# What a kind of charge holds and does not: "Hire charges include extra-day charges but not delivery, extras or
# surcharges", "Labour charges do not include parts".
_DEFINED = re.compile(r"(?:^|[.:]\s+)\W*([a-z][a-z-]*\s+(?:charges?|fees?|costs?|prices?|rates?))\s+(?:"
                      r"(?:include|includes|cover|covers)\b[^.;]*?\bbut\s+not\s+|(?:do|does)\s+not\s+(?:include|cover)\s+)"
                      r"([^.;]+)", re.IGNORECASE)


# An amount's own line saying no discount is laid on it: "This surcharge is not discounted.", "... no discount applies".
_NOT_DISCOUNTED = re.compile(r"\b(?:is|are)\s+(?:not|never)\s+discounted\b|\bno\s+discounts?\s+(?:applies|apply)\b"
                             r"|\bnot\s+(?:subject\s+to|eligible\s+for)\s+(?:any\s+)?discounts?\b", re.IGNORECASE)


# A sentence speaking of the one before it: "This surcharge ...", "It is ...", "The fee ...".
_REFERS_BACK = re.compile(r"\s*(?:this|that|these|those|it|they|the\s+(?:surcharge|supplement|fee|charge|add-on|extra))\b",
                          re.IGNORECASE)


def not_discounted(sentence: str, sentences: Sequence[str]) -> bool:
    """Whether `sentence` (an amount added: "Coloured or metallic ink ...: add €0.40 per item.") or the
    sentence after it in `sentences` says no discount is laid on it ("This surcharge is not
    discounted.", blind set 100)."""
    at = list(sentences).index(sentence) if sentence in sentences else len(sentences)
    # (the sentence after it only when it speaks of it: "This surcharge ...", not "Blank garments ... are not
    # discounted", review)
    return _NOT_DISCOUNTED.search(sentence) is not None or any(
        _REFERS_BACK.match(text) and _NOT_DISCOUNTED.search(text) for text in sentences[at + 1:at + 2])


def excluded_when(sentence: str, sentences: Sequence[str], question: str) -> bool:
    """Whether the adjustment of `sentence` is not given at a day or time the `question` names, as it
    or the two sentences after it say (_EXCLUDED): "Events held Monday to Thursday get 15% off. The
    weekday discount does not apply on bank holidays or New Year's Eve." for "a bank holiday monday
    party" (blind set 96, read); every word of the day named, a service's aside ("Not valid on
    Saturday appointments" for "on a Saturday")."""
    asked = norm_words(question)
    return any(words & _WHEN_WORDS and words <= asked and _on_the_day(question, part)
               for part in _excluded_parts(sentence, sentences)
               for words in [frozenset(norm_words(part)) - _ANY_SERVICE])


def _on_the_day(question: str, part: str) -> bool:
    """Whether `question` books on the day `part` names ("bank holidays": "a bank holiday monday party"), not
    around it ("back before the weekend", "can't do Saturday", review)."""
    first = re.escape(re.sub(r"s\b", "", part.split()[0].lower())) if part.split() else ""
    return bool(first) and re.search(rf"\b(?:before|after|until|till|not|except|can'?t|cannot|won'?t|no)\s+(?:\w+\s+)?"
                                     rf"{first}", question, re.IGNORECASE) is None


_LISTED = re.compile(r"\s*(?:,|\band\b|\bor\b|&|/)\s*", re.IGNORECASE)
# The days left of a list once the question's day is read out of it (conditions.condition_words): "  and holiday
# hires" of "Weekend and holiday hires" (not "BANK HOLIDAY" of "BANK HOLIDAY Mondays": no list).
_OTHER_DAYS = re.compile(r"^\W*(?:and|or|&|/|,)\s+(?:(?:bank|public)\s+)?(?:holidays?|weekends?|weekdays?|evenings?|nights?)\b",
                         re.IGNORECASE)
# Words of a time of day, which a question's clock time or day meets (not a day's: "BANK HOLIDAY Mondays" is no Monday),
# and the "hour" of "After-hours visit (before 8 am, after 6 pm, or Saturday)" on a Saturday (blind set 98, read).
_TIME_OF_DAY = frozenset({"morning", "afternoon", "evening", "night", "hour"})
# Words of a day or a time: an exclusion naming one is a condition ("Not valid on Saturday appointments").
_WHEN_WORDS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "weekend",
                         "weekday", "holiday", "bank", "eve", "evening", "morning", "night", "peak", "day", "week", "month"})


# A section heading over rows of surcharges: "SURCHARGES (per visit)".
# (not "supplements": a health store's "SUPPLEMENTS" lists products, review)
_SURCHARGES_HEADING = re.compile(r"^\W*(?:[\w&/'+-]+\s+){0,3}surcharges\b", re.IGNORECASE)
# A row that is a label and its price alone, or per visit: "Saturday appointment: $40.00" (not "Beyond 25 km: $1.50
# per km (one way) for every km past the first 25 km": a rate of travel, blind set 86).
_ROW_PRICE = re.compile(rf"^([^:.;]{{2,60}}):\s*(?={SIGNED_PRICE}(?:\s*(?:per|a|each)\s+(?:visit|booking|appointment|"
                        rf"call[\s-]?out|job|order|hire|trip))?\.?\s*$)", re.IGNORECASE)


def headed_surcharges(sentences: Sequence[tuple[str, str]], sections: Sequence[str]) -> list[tuple[str, str]]:
    """`sentences` ((heading, sentence) pairs) with each row under a heading of surcharges (`sections`:
    sentences.section_headings of them) written as one (_EXTRA_AMOUNT's "+"): "Saturday appointment:
    $40.00" under "SURCHARGES (per visit)" reads "Saturday appointment: +$40.00", a surcharge a
    Saturday visit claims, no thing of a bill (blind set 88, read after its runs)."""
    return [(h, _ROW_PRICE.sub(r"\1: +", s, count=1) if _SURCHARGES_HEADING.match(section) else s)
            for (h, s), section in zip(sentences, sections)]


def claimed_surcharges(question: str, sentences: Sequence[str]) -> list[tuple[str, str, str, str]]:
    """("%", the percentage as written, its sentence, what it applies to), ("+", the amount as
    written, ...), ("-", an amount off as written, ...: "Pensioners get £10 off any call-out
    fee") or ("x", a factor: "1.8" of "Return tickets cost 1.8 times the single fare", "2" of
    "charged double the car fare") for each surcharge of `sentences` (_EXTRA_PERCENT, _EXTRA_AMOUNT, _OFF_AMOUNT; one a
    sentence) the question claims, as for a discount: the head of what it
    applies to named ("if it's an out-of-hours emergency call" over "Out-of-hours emergency calls
    carry a £95 surcharge"), or two of its words, or one and a surcharge asked in words; one with
    days or times only within them, by one of its words ("a walk on a Sunday" over "Weekend walks
    carry a $5 surcharge") or a surcharge asked in words; paying by card by a question paying by
    card (_BY_CARD, _CARD_CHARGED); each sentence once; [] when none, or
    when the question names a percentage itself."""
    if re.search(rf"[0-9]\s*{PERCENT_SIGN}", question, re.IGNORECASE):
        return []
    asked, asks = _asked_words(question), _ASKS_EXTRA.search(question) is not None
    out = []
    for sentence in sentences:
        for kind, pattern, verb in (("%", _EXTRA_PERCENT, _LAID_ON), ("+", _EXTRA_AMOUNT, _LAID_ON),
                                    ("-", _OFF_AMOUNT, _AMOUNT_OFF), ("x", _TIMES_PRICE, _LAID_ON)):
            match = pattern.search(sentence)
            # "Weekend surcharge: £3 ...": read from its amount
            at = None if match is None else (match.start() + match.group(0).index(":") + 1 if ":" in match.group(0)
                                             else match.start())
            # (an amount off is asked by a discount's words, not a surcharge's: "the Full Day deal, fuel surcharge
            # included?" asks no "Open Water booked 30+ days before the start date: $50 off", blind set 84)
            asked_for = _ASKS_DISCOUNT.search(question) is not None if kind == "-" else asks
            subject = None if match is None else _claims(question, asked, asked_for, sentence, at, verb)
            if subject is None and match is not None and kind != "-":
                subject = _card_charged(question, sentence[:at])  # "I'll pay by card" over "Card payments carry a 3%
                # surcharge" ("card" names no one)
            if subject is not None:
                amount = next(g for g in match.groups() if g).replace(",", "")
                found = (kind, _FACTOR_WORDS.get(amount.lower(), amount), sentence, subject)
                # (a sentence of two passages; or the same amount for the same ones said again: "Rural Delivery
                # addresses: add $4.00 to every order" and "(Rural Delivery addresses still pay the $4.00 surcharge per
                # delivery)", blind set 103, read)
                if all((kind, found[1], sentence) != claimed[:3] and not (
                        (kind, Fraction(found[1])) == (claimed[0], Fraction(claimed[1]))
                        and len(norm_words(subject) & norm_words(claimed[3]) - _ANYONE) >= 2) for claimed in out):
                    out.append(found)
                break
    for fee in card_fees(question, sentences):  # "card (3% card fee)": a fee no surcharge pattern reads
        if all(fee[2] != claimed[2] for claimed in out):
            out.append(fee)
    return out


# An age a discount is restricted to: "guests over 65", "under 12s", "aged 60+", "65 and over" (not a
# count: _COUNT_NOT_AGE).
# (no count of thousands: "over 2,000 board feet", blind set 105, read)
_AGE_LIMIT = re.compile(r"\b(?:over|above|older\s+than)[\s-]+([0-9]{1,3})(?:s\b|\b)(?![,.][0-9])(?!\s+(?!years?\b)[a-z]+\s+(?:get|pay|receive))"
                        r"(?!\s*(?:[0-9%]|(?!years?\b|get\b|pay\b|receive\b|are\b|and\b|on\b)[a-z]))"
                        r"|\b(?:aged\s+)?([0-9]{1,3})\s*(?:\+|and\s+over|or\s+(?:over|older))"
                        r"|\b(?:under|below|younger\s+than)[\s-]+([0-9]{1,3})(?:s\b|\b)(?![,.][0-9])"
                        r"(?!\s*(?:[0-9%]|(?!years?\b|get\b|pay\b|receive\b|are\b|and\b|on\b|go\b)[a-z]))"
                        # "Children's garments (age 12 and under)": 12 itself too
                        r"|\b(?:aged?\s+)?([0-9]{1,3})\s*(?:and\s+(?:under|below|younger)|or\s+(?:under|younger))\b",
                        re.IGNORECASE)
_PRICED = re.compile(rf"{SIGNED_PRICE}(?:\s+(?:per|a|an|each)\s+\w+)?")


# A count written like an age (_AGE_LIMIT's "N+"): a group's size ("Bridal parties of 4+") or things counted
# ("5+ vehicles a month"; not "65+ years", "65+ get", "65+ also get").
_GROUP_OF = re.compile(r"\b(?:groups?|parties|party|bookings?|orders?|teams?|families|classes)\s+of\s*$", re.IGNORECASE)
_THINGS_AFTER = re.compile(r"\s*(?!(?:years|yrs|gets|pays|receives|saves|qualifies|enjoys|earns|is|was|has|does|plus|"
                           r"also|as|us|this|its)\b)[a-z]+s\b", re.IGNORECASE)


# A surcharge asked by its name, nothing else priced: "How much is the weekend appointment surcharge?".
_ASKS_SURCHARGE = re.compile(r"^\W*(?:how\s+much|what)(?:'s|s|\s+is|\s+are)?\s+(?:the|your|a)\s+(?:[\w-]+\s+){0,3}"
                             r"(?:surcharge|supplement)s?\s*\??\s*$", re.IGNORECASE)


# A percentage's fee asked by itself, of a bill named after it: "what is the card fee on a deep clean if I pay by
# credit card?", "how much would the processing fee be for ..." (not the bill with it: "how much with the card fee").
# (a fee of paying, or a surcharge: not a service's own price named a fee, "what's the consultation fee if I pay by
# card?", nor "my total fee", review)
_ASKS_FEE_ITSELF = re.compile(r"^\W*(?:how\s+much|what)(?:'s|s|\s+is|\s+would|\s+will)?\s+(?:be\s+)?(?:the|your|my|a)\s+"
                              r"(?:(?:(?:credit|debit)\s+)?card\s+(?:processing\s+|payment\s+|transaction\s+)?(?:fee|surcharge|charge)"
                              r"|(?:processing|payment|transaction)\s+(?:fee|surcharge|charge)|(?:[\w-]+\s+)?(?:surcharge|supplement))\b"
                              r"(?!\s+(?:included|incl))"
                              r"(?![^?.!]*\b(?:total|altogether|all\s+in|in\s+all|overall|with\s+(?:the|that)\s+fee)\b)",
                              re.IGNORECASE)


def asks_fee_itself(question: str) -> bool:
    """Whether `question` asks a percentage's fee or surcharge by itself (_ASKS_FEE_ITSELF: "what is
    the card fee on a deep clean?"), not the bill it is laid on (review of the thirty-fourth session:
    the card fee asked alone was answered with the whole bill)."""
    return _ASKS_FEE_ITSELF.search(question) is not None


def surcharge_asked(question: str, surcharges: Sequence[tuple[str, str, str, str]]) -> str | None:
    """The amount as written of the one surcharge of an amount (claimed_surcharges' "+") that the
    question asks for by itself, nothing else priced ("How much is the weekend appointment
    surcharge?" over "Weekend appointment: +$40.00": "40.00", review); None otherwise."""
    added = [amount for kind, amount, _, _ in surcharges if kind == "+"]
    return added[0] if len(added) == 1 and _ASKS_SURCHARGE.search(question) else None

def _counts_not_age(subject: str, m: re.Match[str]) -> bool:
    """Whether the "N+" or "N and over" that `m` (an _AGE_LIMIT match in `subject`) found counts
    something other than years of age (_GROUP_OF before it, or a plural noun right after "N+")."""
    if m.group(4):  # "Groups of 10 and under"
        return bool(_GROUP_OF.search(subject[:m.start()]))
    if not m.group(2):
        return False
    return bool(_GROUP_OF.search(subject[:m.start()])) or (
        m.group(0).endswith("+") and _THINGS_AFTER.match(subject, m.end()) is not None)


def _restriction_unmet(subject: str, question: str) -> bool | None:
    """Whether the age `subject` restricts an adjustment to ("guests over 65") is one no age of
    `question` meets ("I'm 30"; none given: unmet); None when it restricts none."""
    limit = next((m for m in _AGE_LIMIT.finditer(subject) if not _counts_not_age(subject, m)), None)
    if limit is None:
        return None
    # "Students and seniors (65+)": the age is the seniors' alone; a student claims it at any age (blind set 60)
    asked = stems(question)
    at = 0
    for part in _LISTED_PEOPLE.split(subject):
        start = subject.find(part, at)
        at = start + len(part)
        words = re.findall(r"[A-Za-z]+", part)
        # by the part's head, its last word ("Full-time students": students, not "full-time")
        if not (start <= limit.start() < at) and words and stems(words[-1]) & asked and not re.search(r"[0-9]", part):
            return None
    if limit.group(0).lower() in question.lower():  # "what do guests over 65 pay", "I'm over 65"
        return False
    ages = [int(a) for a in given_ages(question)]
    if limit.group(3):
        return not any(a < int(limit.group(3)) for a in ages)
    if limit.group(4):
        return not any(a <= int(limit.group(4)) for a in ages)
    bound = int(limit.group(1) or limit.group(2))
    return not any(a > bound if limit.group(1) else a >= bound for a in ages)


# A least count an adjustment needs: "Stay 7 nights or more", "Order 5 or more standard keys", "10+ guests",
# "at least 4 sessions", "more than 3 nights".
_W = r"(?!(?:and|or|get|gets|to|for|of|in|on|at|the|a|an|with|will|can|are|is|receive|receives|pay|pays)\b)[a-z][\w-]*"
_LEAST_COUNT = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}])([0-9]+)\s+((?:{_W}\s+){{0,1}}{_W})\s+or\s+more\b"
                          rf"|(?<![\w.,{CURRENCY_SIGNS}])([0-9]{{1,3}}(?:,[0-9]{{3}})+|[0-9]+)\s+or\s+more\s+((?:{_W}\s+){{0,2}}{_W})"
                          rf"|(?<![\w.,{CURRENCY_SIGNS}])([0-9]+)\+\s*((?:{_W}\s+){{0,1}}{_W})"
                          rf"|\b(?:at\s+least|a\s+minimum\s+of|minimum\s+of)\s+([0-9]+)\s+((?:{_W}\s+){{0,1}}{_W})",
                          re.IGNORECASE)
# "Groups of 10 or more", "parties of 8+": a least head-count (party.group_size).
_LEAST_GROUP = re.compile(r"\b(?:groups?|parties|party|bookings?|tables?)\s+of\s+([0-9]+)\s*(?:\+|or\s+more\b|and\s+over\b|and\s+above\b)",
                          re.IGNORECASE)


def least_group(text: str) -> int | None:
    """The least head-count `text` names ("groups of 4 or more pay £24 each": 4), else None."""
    found = _LEAST_GROUP.search(text)
    return None if found is None else int(found.group(1))


# (its count with thousands apart: "orders of more than 10,000 words", blind set 97, read)
_MORE_THAN_COUNT = re.compile(rf"\b(?:more\s+than|over)\s+([0-9]{{1,3}}(?:,[0-9]{{3}})+|[0-9]+)\s+((?:{_W}\s+){{0,1}}{_W})",
                              re.IGNORECASE)
# A count an offer opening with its verb asks for: "Pay 6 months of board in advance", "Book 3 classes".
_IMPERATIVE_COUNT = re.compile(rf"^[\s*•-]*[a-z]+\s+(?:(?:for|in|along|over)\s+)?([0-9]+)\s+({_W})", re.IGNORECASE)
# A least spend: "Orders over €150", "spend more than $50", "orders of £100 or more".
_LEAST_SPEND = re.compile(rf"\b(?:over|above|more\s+than|exceeding|at\s+least)\s+{SIGNED_PRICE}"
                          rf"|{SIGNED_PRICE}\s+or\s+more\b", re.IGNORECASE)
# Parts of a day counted by the days named ("Monday and Tuesday mornings": 2).
_COUNTED_DAYS = set(DAY_PARTS) | {"morning", "afternoon"}
_WEEKDAY_NAMES = re.compile(rf"\b(?:{'|'.join(WEEKDAYS)})s?\b", re.IGNORECASE)


def counted(question: str, thing: str) -> int | Decimal | None:
    """How many of `thing` (a word) `question` counts: its first count (counts_of: "6 standard
    keys", "for 7 nights", "an 8-metre boat"); for nights and days, the day names listed before it
    ("Thursday, Friday and Saturday nights": 3); None when it counts none."""
    found = counts_of(question, thing)
    if found:
        return int(found[0]) if found[0].isdigit() else Decimal(found[0])  # "3.5 hrs"
    if {singular(w) for w in stems(thing)} & _COUNTED_DAYS or {singular(thing.lower())} & _COUNTED_DAYS:
        named = re.search(rf"((?:{_WEEKDAY_NAMES.pattern}[\s,]*(?:and\s+)?)+)"
                          rf"(?:{thing.lower()}|{singular(thing.lower())}s?)\b", question, re.IGNORECASE)
        if named:
            return len(_WEEKDAY_NAMES.findall(named.group(1)))
    # the things a question lists, when it names them by that word: "my push mower, strimmer and petrol hedge trimmer
    # in for services" books 3 services (blind set 90, read after its runs: "Book 3 or more annual services")
    listed = _THINGS_LISTED.search(question)
    # (not when it names one: "collect my bike ... I'm 8 miles away, total with collection and delivery?" lists no bikes)
    if listed is not None and {singular(w) for w in stems(thing)} & {singular(w) for w in stems(question)} \
            and not _names_one(question, thing):
        return len(re.split(r"\s*,\s*(?:and\s+|&\s*)?|\s+(?:and|&)\s+", listed.group(0).strip()))
    return None


# A list of three things or more, none counted: "push mower, strimmer and petrol hedge trimmer", "a, b, c & d".
_THING_NAMED = r"(?:[A-Za-z][\w'-]*)(?:\s+[A-Za-z][\w'-]*){0,3}"
_THINGS_LISTED = re.compile(rf"\b{_THING_NAMED}(?:\s*,\s*{_THING_NAMED})+\s*,?\s+(?:and|&)\s+{_THING_NAMED}")


def _imperative_count(subject: str) -> re.Match[str] | None:
    """The count an offer opening with its verb asks for ("Pay 6 months of board in advance"), not
    how early ("Book 14 days in advance", "Pay 6 months in advance")."""
    m = _IMPERATIVE_COUNT.match(subject)
    # (nor a bound opening with a preposition: "Within 12 months: Upright $165" is no 12 months asked for, blind set 80)
    if m is not None and re.match(r"[\s*•-]*(?:within|under|over|up|after|before|from|until|till|in|on|at|for|about|"
                                  r"around|below|above|less|more|last|past|per|each|every|since|ago|by)\b", subject,
                                  re.IGNORECASE):
        return None
    return None if m is None or _IN_ADVANCE.match(subject, m.end()) else m


# A discount for each thing after the first: "every additional tank", "each extra dog".
# (or the second: "a second dog in the same household at the same visit gets 20 percent off", new-user pass)
_ADDITIONAL = re.compile(r"\b(?:(?:every|each|any|per)\s+(?:additional|extra|further|subsequent)|(?:a|the|your|each|any)\s+"
                         r"(?:second|2nd))\s+(?!(?:and|or|one|any|the|of|to|for|further|time|half)\b)([a-z]+)", re.IGNORECASE)


def _names_one(question: str, thing: str) -> bool:
    """Whether `question` names one `thing` ("our grand piano", "a 40 gallon freshwater tank"), or
    names it only in the singular and counts nothing ("e-bike tune up on a weekday": simple set 71; not "6 pairs
    of trousers ... after the multi-garment discount")."""
    one = re.escape(singular(thing.lower()))
    if re.search(rf"(?<![\w.])[0-9]+\s+{one}", with_digits(question), re.IGNORECASE):
        return False  # counted: "a block of 10 one-to-one sessions" (blind set 39)
    if re.search(rf"\b(?:a|an|one|our|my|the|his|her|their)\s+(?:[\w'-]+\s+){{0,3}}{one}\b", question, re.IGNORECASE):
        return True
    return (re.search(rf"(?<![\w-]){one}(?![\w-])|(?<=e-){one}\b", question, re.IGNORECASE) is not None
            and not re.search(r"[0-9]", with_digits(question))
            and re.search(rf"\b{one}(?:s|es)\b|\b{re.escape(thing.lower())}\b", question, re.IGNORECASE) is None
            and thing.lower() != singular(thing.lower()))


# A least count of one booking's things together, of any things ("150 or more items of the same type are ordered
# together") or of a herd's ("Flocks of 1,200 or more sheep"); not of one kind named ("3 or more trees removed on the
# same visit" are no 3 stumps, blind set 78; "Orders of 10 or more bags" no "4 boxes and 6 crates").
_ONE_LOT = re.compile(r"\b(?:in|per|on)\s+(?:one|a\s+single|the\s+same|each|an?)\s+(?:booking|order|visit|job|transaction|purchase)\b"
                      r"|\b(?:ordered|booked|bought)\s+together\b", re.IGNORECASE)
_LOT_OF = re.compile(r"[\s*•-]*(?:flocks|herds|mobs)\s+of\s+[0-9]", re.IGNORECASE)
_ANY_THINGS = frozenset({"items", "item", "pieces", "piece", "things", "products", "articles", "units", "garments"})
# The months' names as a date writes them after a day ("6th june"), or "of" ("6th of june").
_MONTHS = r"jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|of\b"
# A party booking places for themselves: "Seven of us", "we're 7", "me and 6 friends".
_OURSELVES = re.compile(r"\b[0-9]+\s+of\s+us\b|\bwe(?:'re|\s+are)\s+(?:a\s+group\s+of\s+)?[0-9]+\b|\bme\s+and\s+[0-9]+\b",
                        re.IGNORECASE)
# What a party books one of each: "6 or more seats", "places", "tickets".
_SEATS = frozenset({"seat", "place", "ticket", "spot", "space", "pass"})
# A least count of one kind alone: "items of the same design", "of the same type".
_SAME_KIND = re.compile(r"\bof\s+the\s+same\s+(?:type|design|kind|item|product|style|size|colour|color)\b", re.IGNORECASE)
# A count of things in a question: "1,300 full-wool ewes", "100 rams" (a unit, "15 km", is no thing; nor a date's day,
# "on 12 June", "March 20", nor a house's number, "at 45 Church Lane", nor a time, review).
_THING_COUNT = re.compile(rf"(?<![\w.,:/{CURRENCY_SIGNS}])([0-9]{{1,3}}(?:,[0-9]{{3}})+|[0-9]+)\s+(?!(?:or|and|to|of|per|percent|am|pm|a\.m|p\.m)\b)"
                          rf"(?!(?:{_MONTHS}))([a-z][\w'-]*)(?:\s+([a-z][\w'-]*))?", re.IGNORECASE)
_MONTH_BEFORE = re.compile(rf"\b(?:{_MONTHS})[a-z]*\.?\s*$", re.IGNORECASE)
# A name's next word after a number: "45 Church | Lane", "120 High | Street".
_NAME_AFTER = re.compile(r"\s+[A-Z][a-z]")


def thing_counts(question: str) -> list[int]:
    """The counts `question` gives of things, in order, not of units, periods or people (_THING_COUNT:
    "1,300 full-wool ewes and 100 rams ... 12 km from" -> [1300, 100]); a number before a name of two
    capitalised words is a house's ("45 Church Lane"), and a day's beside a month's name ("on 12 June")
    is a date's."""
    text = with_digits(question)
    return [int(m.group(1).replace(",", "")) for m in _THING_COUNT.finditer(text)
            if not is_unit(m.group(2)) and not (m.group(3) and is_unit(m.group(3)))  # ("3 working days")
            and not norm_words(m.group(2)) & _ANYONE and not _MONTH_BEFORE.search(text[:m.start()])
            and not (m.group(2)[0].isupper() and _NAME_AFTER.match(text, m.end(2)))]


# A thing listed as one: ", a chest of drawers", "and a queen bed frame" (not "a few", "a couple", "a lot").
_LISTED_ONE = re.compile(r"(?:,|\band\b|\bplus\b|&)\s+(?:a|an|one)\s+(?!(?:few|couple|bit|lot|little|total|quote|price)\b)[a-z]",
                         re.IGNORECASE)


# An offer of things of any size or mix, and a thing named one by its size.
_ANY_SIZE = re.compile(r"\bany\s+(?:size|mix|combination|weight)\b", re.IGNORECASE)
_COUNT_SIZED = re.compile(r"(?<![\w.,])([0-9]+)\s+[0-9]+(?:\.[0-9]+)?\s*(?:g|kg|ml|l|oz|lb|litres?)\s+[a-z]", re.IGNORECASE)
_ONE_SIZED = re.compile(r"\b(?:a|an|one)\s+[0-9]+(?:\.[0-9]+)?\s*(?:g|kg|ml|l|oz|lb|litres?)\s+[a-z]", re.IGNORECASE)
_CLAUSE_VERB = re.compile(r"\b(?:is|are|was|were|has|have|will|would|can|could|be|being|there|needs?|gets?)\b", re.IGNORECASE)


def _listed_ones(question: str) -> int:
    """The things `question` lists as one beside things it counts (_LISTED_ONE), in the sentences that count
    things (thing_counts)."""
    # (a thing listed, not a clause of its own: "and a lift is in the building", "and a parking spot is free", review)
    return sum(1 for part in re.split(r"(?<=[.?!])\s+", question) if thing_counts(part)
               for m in _LISTED_ONE.finditer(part)
               if not _CLAUSE_VERB.search(re.split(r",|\band\b|[.?!]", part[m.end() - 1:], maxsplit=1)[0]))


def things_counted(question: str) -> int | None:
    """The sum of thing_counts; None when it counts none."""
    found = thing_counts(question)
    return sum(found) if found else None


def least_count_met(subject: str, question: str) -> bool | None:
    """Whether the question's count of a thing ("for Thursday, Friday and Saturday nights": 3)
    reaches the least count `subject` needs of it ("Stay 7 nights or more"); None when it needs
    none or the question counts none."""
    met = None
    subject = with_digits(subject)  # "Two or more pianos"
    group = _LEAST_GROUP.search(subject)
    party = group_size(question) if group else None
    if party is not None and Fraction(party) < int(group.group(1)):
        return False
    if party is not None:
        met = True  # "Groups of 6 or more get €5 off per person" for "7 of us"
    for m in _LEAST_COUNT.finditer(subject):
        if _IN_ADVANCE.match(subject, m.end()):
            continue  # "Book 14 days or more in advance": how early, not how many
        least = int(next(g for g in (m.group(1), m.group(3), m.group(5), m.group(7)) if g).replace(",", ""))
        phrase = next(g for g in (m.group(2), m.group(4), m.group(6), m.group(8)) if g).split()
        thing = phrase[-1]
        n = counted(question, thing)
        if n is None and m.group(4):  # "2 or more pianos tuned": the pianos
            thing = phrase[0]
            n = counted(question, thing)
        if n is None and singular(thing.lower()) in _SEATS and _OURSELVES.search(with_digits(question)):
            # "Book 6 or more seats ..." for "Seven of us want to book" (blind set 92); not an event "for 10 people",
            # whose seats are none (blind set 92's off-site workshop)
            party = group_size(question)
            n = int(Fraction(party)) if party is not None else None
        # (any things by a word of the phrase, not only its first tried above: "5 or more fixed-price items", practice set 1)
        generic = next((w for w in phrase if w.lower() in _ANY_THINGS), None) if _ONE_LOT.search(subject) else None
        kind = generic or thing
        if n is None and (generic or _LOT_OF.match(subject)) and not re.search(
                rf"\b{re.escape(singular(kind.lower()))}", question, re.IGNORECASE):
            # the kind of all the things of one booking: "Flocks of 1,200 or more sheep shorn in one booking" for "1,300
            # full-wool ewes and 100 rams" (1,400; blind set 99); of one type, the most of one ("50 or more items of the
            # same design" is no 30 of one design and 25 of another, review)
            found = thing_counts(question)
            # (and each thing listed beside them by "a": "2 bedside tables, a chest of drawers, a queen bed frame and a
            # standard office desk" are 5 items, practice set 1)
            n = (max(found) if _SAME_KIND.search(subject) else sum(found) + _listed_ones(question)) if found else None
        if n is None and _ANY_SIZE.search(subject):
            # (of any size, each one named by its size: "a 1 kg Lane Espresso, a 500 g Colombia Huila and a 250 g Swiss
            # Water Decaf" are 3 bags for "Buy 3 or more bags of roasted coffee (any size, any mix)", blind set 103, read)
            digits = with_digits(question)
            sized = len(_ONE_SIZED.findall(digits)) + sum(int(m.group(1)) for m in _COUNT_SIZED.finditer(digits))
            n = sized if sized >= 2 else None
        if n is None and least >= 2 and _names_one(question, thing):
            return False  # "our grand piano" is one: not "Two or more pianos tuned at the same address"
        if n is not None:
            if n < least:
                return False
            met = True
    for m in _MORE_THAN_COUNT.finditer(subject):
        n = counted(question, m.group(2).split()[-1])
        if n is None and _names_one(question, m.group(2).split()[-1]):
            return False  # "a 40 gallon freshwater tank" is one: not "more than one tank at the same address"
        if n is not None:
            if n <= int(m.group(1).replace(",", "")):
                return False
            met = True
    for m in _ADDITIONAL.finditer(subject):
        n = counted(question, m.group(1))
        if (n is None and _names_one(question, m.group(1))) or (n is not None and n < 2):
            return False  # "every additional tank gets 20% off": not for one tank
        if n is not None and not _names_one(question, m.group(1)):
            met = True  # "I have two small dogs" claims "a second dog ... gets 20 percent off" (not "a new 100 gallon tank")
    m = _imperative_count(subject)
    if m is not None and not _LEAST_COUNT.search(subject):
        n = counted(question, m.group(2))
        after = re.match(r"\s+([a-z][\w-]*)(?:\s+([a-z][\w-]*))?", subject[m.end():], re.IGNORECASE)
        for word in (after.groups() if after is not None and n is None else ()):
            n = counted(question, word) if word and n is None else n  # "10 one-to-one | sessions" (blind set 39)
        if n is None and int(m.group(1)) >= 2 and _names_one(question, m.group(2)):
            return False  # "bring in two machines ... get $20 off" is no deal of "a standard service on an embroidery machine"
        if n is not None:
            if n < int(m.group(1)):
                return False
            met = True
    return met


def least_spend(subject: str) -> str | None:
    """The amount an order must reach for the adjustment whose claimant is `subject` ("Orders
    over €150 (before any discount) get" -> "150"), as written; None when it names none."""
    m = _LEAST_SPEND.search(subject)
    return None if m is None else next(g for g in m.groups() if g).replace(",", "")


def _asked_words(question: str) -> set[str]:
    """The words of `question` that may claim an adjustment: not a word of anyone, not one
    after a negation ("I'm not a student")."""
    negated = {w for m in _NEGATED.finditer(question) for w in norm_words(m.group(1))}
    # (a visit wanted today is a same-day one: "I need someone today" claims "Emergency same-day visit: +$60.00", blind
    # set 88, read)
    today = {"same", "day"} if _TODAY.search(question) and not _NOT_TODAY.search(question) else set()
    return (norm_words(question) | today) - _ANYONE - negated


_TODAY = re.compile(r"\b(?:need|needs|want|wants|can\s+you|could\s+you|come|coming|book|booking)\b[^.?!]{0,25}?\b"
                    r"(?:today|tonight|asap)\b|\bsame[\s-]day\b", re.IGNORECASE)
# "I know you can't do it today", "not today": no visit wanted today (review)
_NOT_TODAY = re.compile(r"\b(?:can't|cannot|can\s+not|won't|not|don't|isn't)\b[^.?!]{0,20}?\btoday\b", re.IGNORECASE)


# The condition of a count after an adjustment's amount: "10% off the per-item price | when 150 or more items of the same
# type are ordered together".
_COUNT_AFTER = re.compile(r"\b(?:when|if)\s+([^.;:]*?[0-9][^.;:]*)", re.IGNORECASE)


def _claims(question: str, asked: set[str], asks: bool, sentence: str, at: int,
            verb: _Verbs) -> str | None:
    """The text of `sentence` naming who or what gets the adjustment whose amount is at `at` (its
    clause up to the amount), when the `question` (its words `asked`) claims it; None otherwise. Who or what gets it is its
    clause's words before the last of `verb`'s verbs ("Students with a valid card | get"; _Verbs: a discount
    given, a surcharge laid on); claimed by its
    head (the first word naming someone: "Students"), by two of its words, or by one when the
    question `asks` for it in words. An adjustment with days or times (conditions.applies:
    "Monday to Thursday, 2:00-4:00 pm, all buckets are 30% off") is claimed only at a day and
    time within them, and then by one of its words, by the question asking for it in words, or
    by none left beside them ("On weekdays before 17:00 every booking gets 20 percent off"). One
    restricted to an age ("guests over 65") only by a question giving an age within it ("my dad
    is 70"). What a surcharge applies to begins after the last price before its amount ("A basic
    wash is €9 and | vans pay a €4 supplement"); who gets a discount is the whole clause, its
    price the claimant's own ("Membership costs €30 per year and gives members 10% off").
    Who a discount is given to may follow its verb ("gives | members | a 10% discount")."""
    parts = _CLAUSE.split(sentence[:at])
    clause = parts[-1]  # "...; junior membership is £30, | and siblings each receive"
    cut = list(_CLAUSE.finditer(sentence[:at]))
    label_named = None
    if (verb.granted and len(parts) > 1 and cut[-1].group(0) == ":" and not _PRICED.search(parts[-2])
            and len(parts[-2].split()) <= 4 and re.match(r"\s*[0-9]", clause)):
        # "Business accounts: | 3 or more devices in one visit get $20 off": a condition with no one of its own
        # after the label, which names who (and must be named: a count met is no claim of it)
        clause = parts[-2] + " " + clause
        label_named = bool((norm_words(parts[-2]) - _ANYONE) & asked)
    to_all, label = False, None
    if _NAMED_BEFORE.search(sentence[:at]) and not _CLAUSE.search(sentence[:at].rstrip(" :")):
        # "Weekend surcharge: £3 per person on Saturday and Sunday taster sessions": named before, applies after
        label = sentence[:at].rstrip(" :")
        rest = _PRICED.sub(" ", sentence[at:], count=1) if not verb.granted else _OFF.sub(" ", sentence[at:], count=1)
        # who gets a discount is the label ("Students with valid ID: 15% off the session price"); what a
        # surcharge applies to is all of it ("Weekend surcharge: £3 per person on Saturday ... sessions")
        clause = label + " " + rest + " has " if not verb.granted else label + " get "
        # (but a label naming a kind of thing, not the surcharge, and a percentage laid on a kind of charge: "Stainless
        # steel: +25% on hourly labour" is a surcharge of stainless steel, not of any hourly labour, practice set 7)
        if (not verb.granted and re.match(rf"\s*\+?\s*[0-9.]+\s*{PERCENT_SIGN}\s+on\s+(?:all\s+|any\s+)?(?:hourly\s+)?"
                                          r"(?:labou?r|work|the\s+labou?r)\b", sentence[at:], re.IGNORECASE)
                and norm_words(label) - _ADJUSTMENT_WORDS - _ANYONE):
            clause = label + " has "
        # "... 25% off all single-course tickets", "$5 off per person on any session"
        # (a label naming people is who gets it, at any time: "Seniors (Mon-Fri before 5pm): $4 off ... any session")
        to_all = (re.match(rf"\s*(?:[{CURRENCY_SIGNS}]\s*[0-9.,]+\s*)?(?:off\s+)?(?:(?:per|a|each)\s+[a-z]+\s+)?(?:on\s+)?(?:all|any|every)\b",
                           rest, re.IGNORECASE) is not None and not stems(label) & _PEOPLE_LABELS)
    priced = list(_PRICED.finditer(clause))
    if priced and not verb.granted:  # "A basic wash is €9 and | vans pay a €4 supplement"; a discount's
        clause = clause[priced[-1].end():]  # claimant keeps its price ("Membership costs €30 and gives members")
    granted = list(verb.verbs.finditer(clause)) or (list(verb.taken.finditer(clause)) if verb.taken else [])
    if verb.taken and not granted:
        granted = [m for m in _TAKE_AFTER.finditer(clause) if not re.search(r"[0-9]", clause[:m.start()])]
    # "Happy hour, Tuesday to Thursday 16:00 to 18:00: all sweet crepes 20% off": a label's list, no verb
    # (or a label in capitals: "2) STUDENT DISCOUNT 15% off labour with a valid student card", simple set 71)
    labelled = (re.search(r":(?![0-9])[^:]*$", sentence[:at]) is not None or sentence.startswith("+", at)
                or _CAPS_LABEL.search(sentence[:at]) is not None)
    if not granted and _VERB_FIRST.match(sentence, at) is None and not labelled:
        return None
    # the amount's own verb ("A weekly box subscription | saves 10%", "Emergency call-outs | add a flat £90")
    subject = clause[:granted[-1].start()] if granted else clause
    if granted and _GIVES.fullmatch(granted[-1].group(0)):  # "Membership ... gives | members | a 10% discount": who is after it
        subject += " " + clause[granted[-1].end():]
    if not stems(subject) and len(parts) > 1 and len(parts[-2].split()) <= 6 and not _PRICED.search(parts[-2]):
        subject = parts[-2]  # "Express (same day): add £1.00 per kg": the label before the verb names what it is for
    when = applies(sentence, question)
    if when is False or label_named is False:
        return None
    # (nor one for what was done within a time before now, unless the question says it was done: "Businesses registered
    # in the last 12 months get 15% off" is no discount of "My business runs about 340 transactions a month", but is of
    # "We registered our company 4 months ago", blind set 106, read)
    recent = _DONE_WITHIN.search(subject)
    if recent is not None and stem_of(recent.group(1).lower()) not in stems(question):
        return None
    # within a window of dates the question's date is in, naming no one else: "Events from December 24 to December 31
    # carry a 15% holiday surcharge" for "New Year's Eve party" (blind set 94, read)
    if in_date_window(sentence, question) and not (
            norm_words(condition_words(without_date_windows(subject))) - _ANYONE - _ADJUSTMENT_WORDS - _ANY_SERVICE
            - _OCCASIONS):
        return clause
    # (a limit's unit names no one: "Same day (order in by 10:00, max 1,000 words)" for a 1,500-word manual, blind set 97)
    words = _BOUND_UNIT.sub(" ", condition_words(subject))
    if when:  # (the other days of a list whose day the question's meets: "Weekend and holiday hires" on a Saturday)
        words = _OTHER_DAYS.sub(" ", words)
    who = norm_words(words) - _ANYONE - _ADJUSTMENT_WORDS
    opening = re.match(r"[\s*•-]*([a-z]+)\b", words, re.IGNORECASE)  # (a list's item: "- Pay 6 months ...")
    if opening and opening.group(1).lower() in _IMPERATIVES:  # "Book 3 or more classes ...": no one named "book"
        who -= {opening.group(1).lower()}                          # (not "Orders of 10 or more books")
    # (not a numbered word, which names the noun after it: "Buy a 20-class pass ..." is no "class", practice set 3)
    head = next((w for w in (norm_words(word) for word in words.split() if not word[:1].isdigit())
                 if w and not w & (_ANYONE | _IMPERATIVES | PERIOD_NOUNS)), set())
    # by the words' stems too ("all laminated" names "Lamination"), not a period's ("in a week" is no "Weekly pass")
    asked_stems = stems(" ".join(asked)) - _PERIOD_STEMS
    named = max(len(who & asked), len(stems(" ".join(who)) & asked_stems))
    least, unmet = least_count_met(subject, question), _restriction_unmet(subject, question)
    condition = _COUNT_AFTER.search(sentence, at)  # "Volume discount: 10% off ... when 150 or more items ..." (blind set 100)
    if least is None and condition is not None:
        least = least_count_met(condition.group(1), question)
    if unmet or least is False:
        return None
    # (a least count of things the question counts none of is not met by naming them: "Board-foot jobs over 2,000 board
    # feet get 10% off" is no discount of "How much do you charge per board foot to mill walnut?", blind set 105)
    if least is None and not asks and group_size(question) is None and (
            _LEAST_COUNT.search(with_digits(subject)) or _MORE_THAN_COUNT.search(with_digits(subject))) and not re.search(
            r"[0-9]", with_digits(question)):
        return None
    ordinal = _ORDINAL.search(with_digits(subject))
    if ordinal is not None and not any(int(n) >= int(ordinal.group(1)) for n in _asked_ordinals(question)):
        return None  # "the 6th full groom is half price": only for the question's 6th (not "at 10am", "on 6th june")
    if least is None and opening and opening.group(1).lower() in _IMPERATIVES and (
            _LEAST_COUNT.search(subject) or _imperative_count(subject) is not None):
        return None  # "hire 6 or more costumes ...", "Pay 6 months of board in advance": a count, not a costume named
    # (or one for an age alone: "Over-65s: €10 off any sweep" for "my mum is 72", blind set 63)
    if least or (unmet is False and (who & _AGE_GROUPS or not who - {"over", "under", "age", "aged"})):
        return clause  # "6 mugs" claims "Order 4 or more mugs"; "I'm 70" "Senior citizens (65+)", not "Students under 25"
    if when:  # "Evening saver after 19:00: 25% off all single-course tickets" at 8pm
        # (a heading in capitals over it names no one: "TIME-OF-DAY SURCHARGES (added to the service call)
        # Weekdays 6pm-10pm and Saturdays: +$35.00" at 7pm on a Thursday, blind set 66)
        unheaded = norm_words(_OTHER_DAYS.sub(" ", condition_words(_CAPS_HEADING.sub("", subject, count=1)))) - _ANYONE - \
            _ADJUSTMENT_WORDS
        # (nor does a visit, an appointment or a job, any of the business's: "Saturday and Sunday visits, and any
        # appointment starting after 6 pm, carry a 15% surcharge on labour" on a Saturday, simple set 71)
        # (nor a word of the time itself, which the question's time meets: "Evening appointments starting after 18:00
        # (Monday to Friday)" at 18:30 on a Thursday, blind set 95, read)
        # (a word named in another form whose stem begins the other's: "delivered on a Sunday" over "Sunday or public
        # holiday delivery: +$95", Snowball's "deliv" and "deliveri", blind set 101, read)
        # (or a delivery by its drop-off: "you'd have to drop them off on the Saturday" over "Saturday delivery: +$60")
        derived = any(_same_root(a, w) for a in asked_stems for w in stems(" ".join(who))) or (
            "delivery" in who and _DROPPED_OFF.search(question) is not None)
        # (or a label naming its day and any work alone, whatever it is laid on after its amount: "Saturday work: +20% on
        # labour (hourly and fixed-price items)" on a Saturday, practice set 1)
        day_only = label is not None and not (norm_words(_OTHER_DAYS.sub(" ", condition_words(label))) - _ANYONE
                                              - _ADJUSTMENT_WORDS - _ANY_SERVICE - _TIME_OF_DAY)
        return clause if (named or derived or asks or not who or not unheaded - _ANY_SERVICE - _TIME_OF_DAY or to_all
                          or day_only) else None
    # a head of several words ("Out-of-hours") is named whole, not by one of them ("5 hours")
    head_named = bool(head) and (head <= asked or bool(stems(" ".join(head))) and stems(" ".join(head)) <= asked_stems)
    # (not when what it was done within a time names it, unless the question says it was: "Businesses registered in
    # the last 12 months get 15% off" is no discount of "My business runs about 340 transactions a month", but is of
    # "We registered our company 4 months ago", blind set 106, read)
    # (a customer's standing, "New customers", is claimed by the asker's own: "I'm new", "first time using you"; not
    # "a brand new tank", "the new apartment", blind set 81)
    if head_named and head <= _STANDING and not _OWN_STANDING.search(question):
        head_named = False
    # (a holder of a contract, by holding one, not by asking its price: "Contract customers receive 10% off chemical
    # washes" is no discount of "the service contract for 4 units", but is of "I'm on your annual contract", practice set 6)
    held = head & _HOLDINGS
    if head_named and held and not re.search(rf"\b(?:i'?m|i\s+am|we'?re|we\s+are|as\s+an?|i\s+have|we\s+have|i'?ve\s+got|"
                                            rf"we'?ve\s+got|on\s+(?:your|my|our|the|an?))\b[^.?!]{{0,30}}\b{next(iter(held))}",
                                            question, re.IGNORECASE):
        head_named = False
    # (a returning customer's standing by saying so: "I used you last year and want to come back" claims "Returning
    # clients receive 10% off", blind set 102, read)
    if not head_named and head and head <= _RETURNING and _CAME_BEFORE.search(question):
        head_named = True
    # each of a list of who gets it is a head: "Schools, churches and community halls" for "St Mary's church"
    # (no count's "or": "Groups booking 3 or more boats"; a part holding a count names no one)
    uncounted = _COUNT_OR.sub(" ", with_digits(words))
    listed = [part for part in _LISTED_WHO.split(uncounted) if part.strip() and not re.search(r"[0-9]", part)]
    # (a discount's: a surcharge's words run on)
    # (a surcharge's too when a label lists them: "Leather, suede and sequinned fabrics: +30%", simple set 65)
    if not head_named and len(listed) > 1 and (verb.granted or labelled):
        # (when each is a kind of its noun, the kind must be named too: "Assistance dogs, retired police dogs and
        # registered rescue-charity pets: 20% off" is no discount of "our dog", simple set 72)
        kinds = all(len(content_words(part)) > 1 for part in listed)
        for part in listed:
            # its noun: the last word ("community halls": halls; not "community" for "a community garden")
            first = next((w for w in (norm_words(word) for word in reversed(part.split()))
                          if w and not w & (_ANYONE | _IMPERATIVES | PERIOD_NOUNS)), set())
            kind = norm_words(" ".join(content_words(part)[:-1])) - _ANYONE
            noun = (first <= asked or bool(stems(" ".join(first))) and stems(" ".join(first)) <= asked_stems)
            # ("I'm a carer" claims "Registered carers" all the same: review)
            if first and noun and (not kinds or kind & asked or _claims_to_be(question, part)) and (
                    verb.granted or kind <= asked):
                # (a surcharge's part named whole: "suede" of "Leather, suede and sequinned fabrics"; no "12 standard
                # windows" for "Third-floor windows and above: add $2 per window", blind set 31)
                head_named = True
    # (a surcharge's kinds of one noun, each a word: "SPECIALIST TEXTS Legal, medical and technical documents carry a
    # 20% surcharge" for "a technical manual", blind set 97, read)
    kinds = [part for part in _LISTED_WHO.split(_CAPS_HEADING.sub("", uncounted, count=1)) if part.strip()]
    if not head_named and len(kinds) > 1 and not verb.granted and all(len(content_words(p)) == 1 for p in kinds[:-1]) and (
            len(content_words(kinds[-1])) == 2):
        # (the kind said of a thing: not "I'm a medical student", "It's nothing technical", review)
        head_named = any(norm_words(kind) and not norm_words(kind) & (_ANYONE | _TIME_OF_DAY) and _kind_of_thing(kind, question)
                         for kind in kinds[:-1] + [content_words(kinds[-1])[0]])
    return clause if named >= 2 or (named > 0 and asks) or head_named else None


# A question saying its things are brought to it: "drop them off", "dropped off at the venue".
_DROPPED_OFF = re.compile(r"\bdrop(?:ped|ping|s)?\s+(?:\w+\s+){0,2}?off\b|\bdrop-?offs?\b", re.IGNORECASE)


def _same_root(one: str, other: str) -> bool:
    """Whether two Snowball stems are one word's in two forms: one of five letters or more begins
    the other, which is at most three letters longer ("deliv" of "delivered", "deliveri" of
    "delivery")."""
    short, long = sorted((one, other), key=len)
    # (not a stem of a "-y" word, Snowball's "i": "parti" of "party" is no "particip", review)
    return len(short) >= 5 and not short.endswith("i") and long.startswith(short) and len(long) - len(short) <= 3


def _kind_of_thing(kind: str, question: str) -> bool:
    """Whether `question` says `kind` (a word) of a thing: right before a noun of no person, not
    after a negation ("a technical manual"; not "a medical student", "nothing technical")."""
    for m in re.finditer(rf"\b{re.escape(kind.strip())}\s+([a-z][\w-]*)", question, re.IGNORECASE):
        if not re.search(r"\b(?:nothing|not|no|non|never)\W+$", question[:m.start()], re.IGNORECASE) and not (
                stems(m.group(1)) & _PEOPLE_LABELS or m.group(1).lower() in _STOP_AFTER_KIND):
            return True
    return False


# Words after an adjective that name no thing: "technical and ...", "medical or not".
_STOP_AFTER_KIND = frozenset({"and", "or", "but", "to", "for", "of", "in", "on", "at", "with", "is", "are", "so", "too"})


# Words of a customer's standing, and a question saying the asker's: "I'm new", "we're regulars", "first time".
_STANDING = frozenset({"new", "existing", "returning", "regular", "loyal", "repeat"})
_HOLDINGS = frozenset({"contract"})
_RETURNING = frozenset({"existing", "returning", "regular", "repeat"})
# (the asker's own: not "My neighbour used you last year", "I used your competitor last year", review)
_CAME_BEFORE = re.compile(r"\b(?:i|we)(?:'ve|\s+have|'d|\s+had)?\s+(?:used|booked|hired|tried)\s+(?:you|with\s+you)(?:\s+guys)?\s+"
                          r"(?:before|previously|last\s+[a-z]+|[a-z]+\s+(?:years?|months?)\s+ago)\b"
                          r"|\b(?:i|we)(?:'m|\s+am|'re|\s+are)?\s+(?:(?:want(?:ing)?|would\s+like|hoping)\s+to\s+)?(?:come|coming)\s+"
                          r"back\s+(?:to\s+you|for)\b", re.IGNORECASE)
_OWN_STANDING = re.compile(r"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:a\s+|an\s+)?(?:new|existing|returning|regular|loyal|repeat)\b"
                           r"|\b(?:new|existing|returning|regular|loyal|repeat)\s+(?:customers?|clients?|members?|patients?|"
                           r"users?|here|to\s+you)\b|\bfirst[\s-]+time\b|\bnever\s+used\s+you\b", re.IGNORECASE)


def _claims_to_be(question: str, part: str) -> bool:
    """Whether `question` says its asker is what `part` names ("I'm a carer" of "Registered carers",
    "I'm in the military" of "serving military")."""
    noun = singular(content_words(part)[-1].lower()) if content_words(part) else ""
    return bool(noun) and re.search(rf"\b(?:i'?m|i\s+am|we'?re|we\s+are|as)\s+(?:an?\s+|in\s+the\s+)?(?:[\w-]+\s+){{0,2}}?"
                                    rf"{re.escape(noun)}", question, re.IGNORECASE) is not None


# A label in capitals right before an amount, a list's number before it: "2) STUDENT DISCOUNT ".
_CAPS_LABEL = re.compile(r"(?:^|[).]\s)\s*(?:[0-9]+[.)]\s*)?[A-Z][A-Z&'/-]+(?:\s+[A-Z][A-Z&'/-]+){0,3}\s*$")


# What any of a business's services is called: no one thing of its own.
# What any booking of a business is held for: no one thing of its own ("Events from December 24 ...").
_OCCASIONS = frozenset({"event", "events", "party", "parties", "booking", "bookings", "order", "orders", "hire", "hires",
                        "stay", "stays", "from", "carry", "carries", "date", "dates", "holiday", "holidays", "festive",
                        "season", "seasonal", "peak", "christmas"})
_ANY_SERVICE = frozenset({"visit", "appointment", "job", "service", "callout", "call", "booking", "order", "start",
                          "starting", "any", "work", "event", "held", "hire", "rental",
                          # ("Saturday installations attract a 15% surcharge" for carpet laid on a Saturday, practice set 8)
                          "installation", "install", "fitting"})  # ("Events held Monday to Thursday", blind set 96)


# A list's heading in capitals naming the kind of charge below it ("TIME-OF-DAY SURCHARGES (added to the service
# call)"; not a condition, "BANK HOLIDAY Mondays").
_CAPS_HEADING = re.compile(r"^\W*(?:[A-Z][A-Z0-9&/'+-]*\s+)*(?:SURCHARGES?|CHARGES|EXTRAS|SUPPLEMENTS?|FEES|RATES|PRICES)"
                           r"\s*(?:\([^)]*\)\s*)?(?=[A-Z][a-z])"
                           # (any heading of capitals, of words of four letters or more: "TERMS Sundays carry a 10% ...")
                           # (not a day's words: "BANK HOLIDAY Mondays: +$35.00" names its days)
                           r"|^\W*(?:(?!(?:BANK|PUBLIC|HOLIDAYS?|WEEKENDS?|WEEKDAYS?|EVENINGS?|NIGHTS?|MORNINGS?|LATE|EARLY|"
                           r"(?:MON|TUES|WEDNES|THURS|FRI|SATUR|SUN)DAYS?)\b)[A-Z][A-Z&/'+-]{3,}\s+){1,3}(?=[A-Z][a-z])")


# What someone did within a time before now: "registered in the last 12 months", "opened within the past year".
_DONE_WITHIN = re.compile(r"\b([a-z]+ed)\s+(?:in|within|during)\s+(?:the\s+)?(?:last|past)\s+(?:[0-9]+\s+|one\s+|two\s+)?"
                          r"(?:days?|weeks?|months?|years?)\b", re.IGNORECASE)


# An ordinal an offer is for: "the 6th full groom", "every 10th wash".
_ORDINAL = re.compile(r"\b([0-9]+)(?:st|nd|rd|th)\b", re.IGNORECASE)


def _asked_ordinals(question: str) -> list[int]:
    """The ordinals `question` writes ("my 6th groom", "my sixth"), not a date's ("on 6th june")."""
    out = [int(m.group(1)) for m in re.finditer(rf"\b([0-9]+)(?:st|nd|rd|th)\b(?!\s*(?:{_MONTHS}))", question,
                                                re.IGNORECASE)]
    out += [n for word, n in _ORDINAL_WORDS.items()
            if re.search(rf"\b{word}\b(?!\s*(?:{_MONTHS}))", question, re.IGNORECASE)]
    return out


# A bound and its unit, which names no one an adjustment is for: "max 1,000 words", "up to 20 kg", "minimum 2 hours".
_BOUND_UNIT = re.compile(r"\b(?:max(?:imum)?|min(?:imum)?|up\s+to|at\s+most|no\s+more\s+than)\.?\s+[0-9][0-9,.]*\s*[a-z]+",
                         re.IGNORECASE)
_COUNT_OR = re.compile(r"\b[0-9]+\s+or\s+(?:more|fewer|less|over|above)\b", re.IGNORECASE)
# Who an adjustment is for, listed without commas (a comma may end a condition: "On Wednesdays, guests over 65").
_LISTED_PEOPLE = re.compile(r"/|\b(?:and|or)\b", re.IGNORECASE)
_LISTED_WHO = re.compile(r",|/|\b(?:and|or)\b", re.IGNORECASE)
