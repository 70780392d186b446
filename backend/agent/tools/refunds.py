"""What a cancelled booking gets back by how long before it is (issue 15): "If you need to cancel -
More than 14 days before: full refund minus a £10 admin fee. - 7 to 14 days before: 50% refund. -
Less than 7 days before: no refund", asked "I paid £420 ... need to cancel, it's 10 days away. How
much do I get back?" -> "420 * 50 / 100" (blind set 68).

A window is a sentence naming a span of days or weeks before the booking ("more than 14 days",
"7 to 14 days", "less than 7 days", "at least 48 hours") and what is refunded in it ("full refund",
"50% refund", "a refund of 50%", "no refund"), less a fee it names ("minus a £10 admin fee"). The
question gives what was paid ("I paid £420") and how long is left ("it's 10 days away", "in 3
weeks", "10 days before"). Only numbers and words are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Sequence

from backend.agent.numerals import SIGNED_PRICE, with_digits
from backend.agent.tools.sentences import stem_of, stems

# The question asks what comes back.
# ("How much deposit comes back to me?", practice set 2)
_ASKS_REFUND = re.compile(r"\b(?:get\s+back|refund(?:ed)?|money\s+back|back\s+if\s+I\s+cancel|comes?\s+back\s+to\s+(?:me|us))\b",
                          re.IGNORECASE)
# What the question says was paid: "I paid £420", "we've paid $300", "it cost me £420".
_PAID = re.compile(rf"\b(?:paid|spent|cost\s+(?:me|us))\s+(?:about\s+)?(?:a\s+|an\s+|the\s+|my\s+)?{SIGNED_PRICE}", re.IGNORECASE)
# How long before the booking the question cancels: "it's 10 days away", "in 10 days", "10 days before".
_UNIT = r"(hours?|days?|weeks?)"
# ("with 4 days' notice", practice set 7)
_LEFT = re.compile(rf"(?<![\w.])([0-9]+)\s*{_UNIT}(?:\s+(?:away|before|ahead|to\s+go|from\s+now|until|till)|['’]?\s*notice)\b"
                   rf"|\bin\s+([0-9]+)\s*{_UNIT}\b", re.IGNORECASE)
# A window's span: "more than 14 days", "7 to 14 days", "7-14 days", "less than 7 days", "at least 48 hours".
_MORE = re.compile(rf"\b(?:more\s+than|over|at\s+least|(?<![\w-])([0-9]+)\s*(?:\+|or\s+more))\s*([0-9]+)?\s*{_UNIT}",
                   re.IGNORECASE)  # ("7 or more days before")
# (its two ends in units of their own: "48 hours to 7 days before", blind set 105, read)
_SPAN = re.compile(rf"(?<![\w.])([0-9]+)\s*(?:(hours?|days?|weeks?)\s+)?(?:to|-|–|and)\s*([0-9]+)\s*{_UNIT}", re.IGNORECASE)
_LESS = re.compile(rf"\b(?:less\s+than|under|fewer\s+than|within)\s+([0-9]+)\s*{_UNIT}", re.IGNORECASE)
# (the bound first: "7 days' notice or more", "14 days or more before", "2 days' notice or less", practice sets 7 and 8)
_BOUND_FIRST = re.compile(rf"(?<![\w.])([0-9]+)\s*{_UNIT}(?:['’]?\s*notice)?\s+or\s+(more|longer|less|fewer)\b", re.IGNORECASE)
# What it refunds.
_FULL = re.compile(r"\bfull\s+refund\b|\brefund(?:ed)?\s+in\s+full\b|\b100\s*%\s+refund", re.IGNORECASE)
_SHARE = re.compile(r"(?<![\w.])([0-9]{1,2})\s*%\s+(?:refund|back)\b|\brefund\s+of\s+([0-9]{1,2})\s*%"
                    r"|\b(half)\s+(?:of\s+)?(?:the|your)\s+deposit\s+(?:is\s+|will\s+be\s+)?refunded\b"  # (practice set 8)
                    r"|(?<![\w.])([0-9]{1,2})\s*%\s+(?:of\s+(?:the|your)\s+[a-z]+\s+)?(?:is\s+|will\s+be\s+)?refunded\b",
                    re.IGNORECASE)  # ("50% of the deposit is refunded")
_NONE = re.compile(r"\bno\s+refund|\bnon[\s-]?refundable\b|\bnothing\s+(?:is\s+)?refunded\b|\bnot\s+refunded\b"
                   r"|\b(?:do|does|will|can)\s+not\s+refund\b|\bcannot\s+refund\b|\b(?:don|doesn|won|can)['’]t\s+refund\b",
                   re.IGNORECASE)
# A fee kept back: "minus a £10 admin fee", "less a £15 fee".
# ("less an administration fee of EUR 25.00", blind set 106, read)
_KEPT = re.compile(rf"\b(?:minus|less|after|deducting)\s+(?:an?\s+|the\s+|our\s+)?(?:(?:[a-z-]+\s+){{0,2}}(?:fee|charge)\s+(?:of\s+)?)?"
                   rf"{SIGNED_PRICE}", re.IGNORECASE)

def asks_refund(question: str) -> bool:
    """Whether `question` asks what comes back ("how much do I get back", "refunded")."""
    return _ASKS_REFUND.search(with_digits(question)) is not None


def booking_of(question: str) -> str | None:
    """The sentences of `question` that say what was booked, neither cancelling nor asking what comes
    back ("I booked a weekday job for two 2-door wardrobes and a bunk bed and paid the deposit." of
    "... Something's come up and I have to cancel, about 36 hours before. How much of the deposit will
    I get back?", practice set 1); None when every sentence does."""
    kept = [part for part in re.split(r"(?<=[.?!])\s+", question.strip())
            if part and not _ASKS_REFUND.search(part) and not re.search(r"\bcancel", part, re.IGNORECASE)]
    # (or what the deposit was paid for: "I paid the deposit for sole trader year-end accounts but want to cancel",
    # blind set 106, read)
    paid_for = _DEPOSIT_FOR.search(question) if not kept else None
    return " ".join(kept) or (f"I booked {paid_for.group(1)}." if paid_for else None)


# What a deposit was paid for: "the deposit for sole trader year-end accounts but ...".
_DEPOSIT_FOR = re.compile(r"\bpaid\s+(?:the|a|my|our)\s+deposit\s+(?:for|on)\s+((?:the\s+|a\s+|my\s+|our\s+)?[\w'-]+(?:\s+(?!but\b|and\b|because\b|as\b|so\b)[\w'-]+){0,6})",
                          re.IGNORECASE)


_HOURS = {"hour": Fraction(1, 24), "day": Fraction(1), "week": Fraction(7)}
# Where a sentence's windows part: a comma or a semicolon (not in "£1,000"), or "and" before the next.
_WINDOW_BREAK = re.compile(r"(?<![0-9]),(?![0-9])\s*(?:and\s+)?|;\s*|\s+and\s+(?=(?:a|an|no|full|[0-9]+\s*%)\b)", re.IGNORECASE)


def _days(count: str, unit: str) -> Fraction:
    return Fraction(count) * _HOURS[unit.lower().rstrip("s")]


def _days_left(text: str) -> Fraction | None:
    """How many days before the booking `text` says it is (_LEFT: "it's 10 days away", "in 3 weeks")."""
    m = _LEFT.search(text)
    if m is None:
        return None
    return _days(m.group(1), m.group(2)) if m.group(1) else _days(m.group(3), m.group(4))


def _window(sentence: str) -> tuple[Fraction, Fraction | None, bool] | None:
    """(the least days before, the most or None, whether the least is itself out) of `sentence`'s span."""
    m = _SPAN.search(sentence)
    if m is not None:
        return _days(m.group(1), m.group(2) or m.group(4)), _days(m.group(3), m.group(4)), False
    m = _LESS.search(sentence)
    if m is not None:
        return Fraction(0), _days(m.group(1), m.group(2)) - Fraction(1, 10**6), False
    m = _BOUND_FIRST.search(sentence)
    if m is not None:
        bound = _days(m.group(1), m.group(2))
        return (bound, None, False) if m.group(3).lower() in ("more", "longer") else (Fraction(0), bound, False)
    m = _MORE.search(sentence)
    if m is not None and (m.group(1) or m.group(2)):
        count = m.group(1) or m.group(2)
        exclusive = m.group(0).lower().startswith(("more", "over"))
        return _days(count, m.group(3)), None, exclusive
    return None


# What the question booked or bought before cancelling it: "I booked Copperplate Foundations for two people" (its own
# booking, not "my friend booked", review).
_BOOKED = re.compile(r"\b(?:i|we|i've|we've|i\s+have|we\s+have)\s+(?:just\s+|already\s+)?(?:booked|bought|ordered|reserved|"
                     r"signed\s+up)\b"
                     # ("I need to cancel my seat on the intro container candle class", blind set 92)
                     r"|\bcancel\s+(?:my|our)\s+(?:seat|place|spot|booking|ticket|reservation|order)s?\b", re.IGNORECASE)
# What makes the bill read from the documents no price of what is cancelled: a deposit paid only, another booking of
# the past ("I booked the Kayak Taster last year ... This time I booked ...", review).
_OTHER_BOOKINGS = re.compile(r"\bdeposit\b|\blast\s+(?:week|month|year|time|summer|season)\b|\bago\b|\bpreviously\b"
                             r"|\bthis\s+time\b|\bbefore\s+that\b", re.IGNORECASE)


def _days_left_count(text: str) -> str:
    """The count of the time left `text` gives, as a pattern ("10 days before" -> "10"); one matching
    nothing when it gives none."""
    m = _LEFT.search(text)
    return re.escape(m.group(1) or m.group(3)) if m else r"(?!)"


def refund_expression(question: str, sentences: Sequence[str], bill: str | None = None,
                      deposit: str | None = None) -> str | None:
    """What comes back of what `question` says was paid, cancelled as long before as it says,
    under the window of `sentences` holding that time ("420 * 50 / 100", "420 - 10" for a full
    refund less a £10 fee, "420 * 0" for none); with no amount paid stated, of `bill` (the price of
    what it booked, read from the documents: "(195.00 * 2) * 50 / 100" for "I booked Copperplate
    Foundations for two people but have to cancel 10 days before", blind set 100) when the question
    cancels its own booking (_BOOKED) and no deposit or other booking (_OTHER_BOOKINGS); a bill that
    is a price times the days left is that price ("48 * 5" for "it's 5 days away"), one holding the
    days otherwise gives none; with `deposit` (a deposit paid, deposits.paid_deposit_share: "1540 * 30
    / 100"), of it; None when the question asks no refund, gives no amount paid nor a bill, or no
    time left, or no window holds it."""
    text = with_digits(question)
    if _ASKS_REFUND.search(text) is None:
        return None
    paid, days = _PAID.search(text), _days_left(text)
    # (or an event passed instead of a time left: "you've already ordered the parts" over "Once parts are ordered, 70%
    # of the deposit is refunded", practice set 4)
    event = (_event_clause(text, sentences) or _before_start_clause(text, sentences)) if days is None else None
    if days is None and event is None:
        return None
    if paid is not None:
        amount = next(g for g in paid.groups() if g).replace(",", "")
    elif deposit is not None:  # (the deposit paid on the bill the question states: deposits.paid_deposit_share)
        amount = f"({deposit})"
    elif bill is not None and _BOOKED.search(text) and not _OTHER_BOOKINGS.search(text):
        # (a bill counting the days left is the price of one: "48 * 5" for "it's 5 days away" is 48, blind set 92)
        days_count = _days_left_count(text)
        bill = re.sub(rf"^([0-9.]+) \* {days_count}$|^{days_count} \* ([0-9.]+)$", lambda m: m.group(1) or m.group(2), bill)
        if re.search(rf"(?<![\w.]){days_count}(?![\w.])", bill):
            return None
        amount = bill if re.fullmatch(r"[0-9.]+", bill) else f"({bill})"
    else:
        return None
    # each window of a sentence by its clause ("a full refund more than 7 days before, a 50% refund between 3 and 7
    # days before, and no refund within 72 hours")
    clauses = [c for s in sentences for c in _WINDOW_BREAK.split(s) if c.strip()]
    for sentence in clauses if event is None else [event]:
        window = _window(sentence) if event is None else None
        if window is None and event is None:
            continue
        if window is not None and days is not None:
            least, most, exclusive = window
            if days < least or (exclusive and days == least) or (most is not None and days > most):
                continue
        kept = _KEPT.search(sentence)
        fee = f" - {next(g for g in kept.groups() if g).replace(',', '')}" if kept else ""
        if _FULL.search(sentence):
            return f"{amount}{fee}"
        share = _SHARE.search(sentence)
        if share is not None:
            percent = next(g for g in share.groups() if g)
            return f"{amount} * {50 if percent.lower() == 'half' else percent} / 100{fee}"
        if _NONE.search(sentence):
            return f"{amount} * 0"
        if _WHOLE.search(sentence):  # ("we refund your deposit less an administration fee of EUR 25.00")
            return f"{amount}{fee}"
    return None


# The whole of what was paid given back: "we refund your deposit", "your deposit is refunded".
_WHOLE = re.compile(r"\brefund\s+(?:your|the)\s+(?:deposit|payment|fee)s?\b|\b(?:your|the)\s+deposit\s+(?:is|will\s+be)\s+refunded\b"
                    r"|(?:^\W*|:\s*)deposit\s+refunded\s+(?:less|minus)\b",  # ("...: deposit refunded less a $50.00 admin fee")
                    re.IGNORECASE)
# Cancelling before the work starts, in the documents ("If you cancel before work has started, we refund ...") and in
# the question ("want to cancel before you start").
_BEFORE_START = re.compile(r"\bbefore\s+(?:the\s+)?(?:work|job|we|you)\s+(?:has\s+|have\s+)?(?:start|begin|began|begun)(?:s|ed)?\b",
                           re.IGNORECASE)


def refund_window(question: str, sentences: Sequence[str]) -> bool:
    """Whether `question` asks a refund and gives when it cancels as refund_expression reads it: a time
    left ("my date is 4 days away"), a thing that has happened (_event_clause) or before the work starts
    (_before_start_clause) when `sentences` state a refund then."""
    text = with_digits(question)
    return _ASKS_REFUND.search(text) is not None and (
        _days_left(text) is not None or (_event_clause(text, sentences) or _before_start_clause(text, sentences)) is not None)


def _before_start_clause(question: str, sentences: Sequence[str]) -> str | None:
    """The sentence of `sentences` stating a refund for cancelling before the work starts (_BEFORE_START) when
    `question` cancels then ("want to cancel before you start", blind set 106, read); None otherwise."""
    if _BEFORE_START.search(question) is None or not re.search(r"\bcancel", question, re.IGNORECASE):
        return None
    # (its own clause: not "...; once work has started the deposit is non-refundable", review)
    clauses = [c for s in sentences for c in re.split(r";\s*|(?<=[.!?])\s+", s)]
    return next((c for c in clauses if _BEFORE_START.search(c) and re.search(r"\bcancel", c, re.IGNORECASE)
                 and (_WHOLE.search(c) or _SHARE.search(c) or _FULL.search(c))), None)


# A refund's share once something has happened: "Once parts are ordered, 70% of the deposit is refunded".
_ONCE = re.compile(r"\b(?:once|after)\s+(?:the\s+|your\s+|any\s+)?([a-z]+)\s+(?:is|are|has\s+been|have\s+been)\s+([a-z]+ed)\b",
                   re.IGNORECASE)
# The question saying it has happened: "you've already ordered the parts", "the parts have been ordered".
_HAPPENED = re.compile(r"\b(?:already|has\s+been|have\s+been|had\s+been)\b", re.IGNORECASE)


def _event_clause(question: str, sentences: Sequence[str]) -> str | None:
    """The clause of `sentences` stating a refund once a thing has happened (_ONCE: "Once parts are
    ordered, 70% of the deposit is refunded") when `question` says it has ("you've already ordered
    the parts"): the thing and the verb in other forms, without a negation; None otherwise."""
    said = stems(question)
    if _HAPPENED.search(question) is None or re.search(r"\b(?:not|yet|before)\b|n['’]t\b", question, re.IGNORECASE):
        return None
    for sentence in sentences:
        for clause in re.split(r"(?<=[.;])\s+|\s*\(", sentence):
            m = _ONCE.search(clause)
            if m is not None and {stem_of(m.group(1).lower()), stem_of(m.group(2).lower())} <= said and (
                    _SHARE.search(clause) or _FULL.search(clause) or _NONE.search(clause)):
                return clause
    return None


# A charge for cancelling late: "Late cancellations are charged 50% of the visit price", "cancellations with less
# than 24 hours' notice are charged at 100%".
_LATE_CHARGE = re.compile(r"\bcancell?ations?\b[^.]{0,80}?\b(?:charged|charge\s+of|fee\s+of|pay)\s+(?:at\s+)?"
                          r"([0-9]{1,3})\s*%", re.IGNORECASE)
# The notice a cancellation needs: "at least 48 hours' notice", "24 hours notice".
_NOTICE = re.compile(r"(?<![\w.])([0-9]+)\s*(hours?|days?)['’]?\s+notice\b", re.IGNORECASE)
# The question cancels (not "I might need to cancel", "in case"), and how soon: "I have to cancel tomorrow's visit",
# "cancelling today" (not "Do you charge if we cancel?").
_CANCELS = re.compile(r"\b(?:have|need|got|going|want|had)\s+to\s+cancel\b|\bcancell?ing\b|\bcancel(?:led)?\s+"
                      r"(?:my|our|the|tomorrow|today|tonight|it|this|that)\b", re.IGNORECASE)
# Not turning up (blind set 95, read): "If I no-show", "we didn't show up", "missed my appointment"; and what it costs:
# "No-shows are charged 50% of the service price".
# (the asker's own: "if I no-show", "I was a no-show", "we didn't turn up"; not "to avoid being a no-show", review)
_NO_SHOW = re.compile(r"\b(?:if|when)\s+(?:i|we)\s+(?:(?:just|simply)\s+)?(?:no[\s-]?show|(?:don'?t|do\s+not)\s+(?:show|turn)\s+up"
                      r"|miss\s+(?:my|our|the)\s+(?:appointment|booking|session|slot))\b"
                      r"|\b(?:i|we)\s+(?:was|were|am|are)\s+a\s+no[\s-]?show\b|\b(?:i|we)\s+(?:no[\s-]?showed|didn'?t\s+(?:show|turn)\s+up"
                      r"|did\s+not\s+(?:show|turn)\s+up|missed\s+(?:my|our|the)\s+(?:appointment|booking|session|slot))\b",
                      re.IGNORECASE)
_NO_SHOW_CHARGE = re.compile(r"\bno[\s-]?shows?\b[^.]{0,80}?\b(?:charged|charge\s+of|fee\s+of|pay)\s+(?:at\s+)?"
                             r"([0-9]{1,3})\s*%", re.IGNORECASE)
# Less notice than an amount, as the question gives it: "it's less than 24 hours away", "under 2 days' notice".
# (of the booking: "away", "to go", "from now", "before it", not "you charge for less than 24 hours' notice", review)
_WITHIN_LEFT = re.compile(r"\b(?:less\s+than|under|within)\s+([0-9]+)\s*(hours?|days?|weeks?)\s+(?:away|to\s+go|left|from\s+now|"
                          r"before\s+(?:it|the|my|our))\b", re.IGNORECASE)
_UNSURE = re.compile(r"\b(?:might|may|could|in\s+case|possibly|maybe)\b[^.?!]*$", re.IGNORECASE)
_SOON = {"today": Fraction(0), "tonight": Fraction(0), "tomorrow": Fraction(1)}
_SOON_WORD = re.compile(r"\b(today|tonight|tomorrow)(?:'s)?\b", re.IGNORECASE)


def late_cancellation(question: str, sentences: Sequence[str]) -> str | None:
    """The percentage (as written) of the price a cancellation the `question` makes ("I have to
    cancel tomorrow's visit ... how much will I be charged?") is charged when it gives less notice
    than `sentences` ask ("give us at least 48 hours' notice ... Late cancellations are charged 50%
    of the visit price"); None when it does not cancel, asks back no charge, or gives enough."""
    text = with_digits(question)
    if _ASKS_REFUND.search(text):
        return None  # what comes back, not what is charged (refund_expression)
    if _NO_SHOW.search(text):  # "If I no-show on a skin fade booking" over "No-shows are charged 50% of the service price"
        return next((m.group(1) for m in (_NO_SHOW_CHARGE.search(s) for s in sentences) if m is not None), None)
    cancels = _CANCELS.search(text)
    if cancels is None or _UNSURE.search(text[:cancels.start()]):
        return None
    soon = _SOON_WORD.search(text)
    left = _SOON[soon.group(1).lower()] if soon else None
    within = _WITHIN_LEFT.search(text)  # "it's less than 24 hours away": less than that (not the days it gives itself)
    given = _LEFT.search(text)
    if within is not None and (given is None or within.start() <= given.start() < within.end()):
        left = _days(within.group(1), within.group(2)) - Fraction(1, 10**6)
    if left is None:
        left = _days_left(text)
    if left is None:
        return None
    # the notice a cancellation needs: of a sentence about cancelling first ("Gluten-free menus need 72 hours' notice")
    noticed = sorted((s for s in sentences if _NOTICE.search(s)), key=lambda s: not re.search(r"cancel", s, re.IGNORECASE))
    notice = _NOTICE.search(noticed[0]) if noticed else None
    if notice is not None and left >= _days(notice.group(1), notice.group(2)):
        return None
    return next((m.group(1) for m in (_LATE_CHARGE.search(s) for s in sentences) if m is not None), None)
