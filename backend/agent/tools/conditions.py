"""When a price adjustment of the documents applies: the days and times its sentence names (issue
15). "Happy hour: Monday to Thursday, 2:00-4:00 pm, all buckets are 30% off" applies to a
question about "a Tuesday at 3pm", not to one about "a Saturday" nor to one naming no day or time;
"Weekend walks carry a $5 surcharge" applies "on a Sunday".

Days: their names ("Wednesdays"), ranges of them ("Monday to Thursday", "Mon-Fri"), "weekdays"
and "weekends". Times: ranges ("2:00-4:00 pm", "from 6pm to 9pm", "between 10am and 2pm"),
"before 17:00", "after 6pm", a question's "at 3pm", "15:00"; what an exception names is excepted
("except on Saturdays", "not valid after 6pm"). Only words and numbers are read from the passages (untrusted data).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from backend.agent.numerals import CURRENCY_SIGNS
from backend.agent.tools.units import WEEKDAYS

_DAY_NAMES = WEEKDAYS
_FULL_DAY = rf"({'|'.join(WEEKDAYS)})s?"
_SHORT_DAY = r"(mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\.?"
_ANY_DAY = rf"(?:{_FULL_DAY}|{_SHORT_DAY})"
_RANGE_WORD = r"\s*(?:-|–|to|through|thru|until|till)\s*"
# "Monday to Thursday", "Mon-Fri": a short name only in a range ("sat" and "sun" are words too).
_DAY_RANGE = re.compile(rf"\b{_ANY_DAY}{_RANGE_WORD}{_ANY_DAY}\b", re.IGNORECASE)
_DAY = re.compile(rf"\b{_FULL_DAY}\b", re.IGNORECASE)
_GROUPS = {"weekday": range(0, 5), "weekdays": range(0, 5), "weekend": range(5, 7), "weekends": range(5, 7)}
_GROUP = re.compile(r"\b(weekdays?|weekends?)\b", re.IGNORECASE)

# A clock time: "14:00", "2pm", "2:30 pm", "6.30" in a range (not "£9.50", a price, nor "until 15.08", a date).
_CLOCK = r"(\d{1,2})(?:[:.](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?"
_NOT_MONEY = rf"(?<![\d:.,{CURRENCY_SIGNS}])"
# "2:00-4:00 pm", "from 6pm to 9pm", "between 10am and 2pm"
_TIME_RANGE = re.compile(rf"{_NOT_MONEY}{_CLOCK}\s*(?:-|–|to|until|till)\s*{_CLOCK}(?!\d|[:.,]\d)"
                         rf"|\bbetween\s+{_CLOCK}\s+and\s+{_CLOCK}(?!\d|[:.,]\d)", re.IGNORECASE)
_BEFORE = re.compile(rf"\b(?:before|until|till)\s+{_CLOCK}(?!\d|[:.,]\d)", re.IGNORECASE)
_AFTER = re.compile(rf"\b(?:after|from)\s+{_CLOCK}(?!\d|[:.,]\d)", re.IGNORECASE)
# What an adjustment is not valid at: "except on Saturdays", "not valid after 6pm".
_EXCEPT = re.compile(r"\b(?:except|excluding|not\s+(?:valid|available|on|at)|other\s+than|apart\s+from|but\s+not)\b",
                     re.IGNORECASE)
# A time of day the question names: "at 3pm", "3 pm", "15:00", "at 9.30".
_AT = re.compile(rf"{_NOT_MONEY}{_CLOCK}(?!\d|[:.,]\d)", re.IGNORECASE)
_DAY_MINUTES = 24 * 60
# A part of the day a question names with no clock, as the span it surely means: "on a Thursday evening" is
# within "after 6pm" and "Evening rate", not within "2:00-4:00 pm" nor "after 7pm" (either may be meant).
_PART_ASKED = {"morning": (9 * 60, 11 * 60 + 30), "afternoon": (13 * 60, 16 * 60 + 30), "evening": (18 * 60 + 30, 21 * 60),
               "tonight": (19 * 60, 22 * 60), "lunchtime": (12 * 60, 13 * 60 + 30)}
# (not a greeting nor a thing's name: "Good evening", "afternoon tea", "a morning suit": review)
_NOT_A_TIME = r"(?!\s+(?:tea|teas|suit|suits|dress|dresses|gown|gowns|wear|jacket|bag|paper|glory|star|sickness)\b)"
_PART_WORD = re.compile(rf"(?<!\bgood\s)\b(mornings?|afternoons?|evenings?|tonight|lunchtime)\b{_NOT_A_TIME}",
                        re.IGNORECASE)
# A part of the day a price's words name with no clock, as a span: "Evening rate", "Daytime", "evenings".
_PART_SPANS = {"morning": (0, 12 * 60), "afternoon": (12 * 60, 17 * 60), "evening": (17 * 60, _DAY_MINUTES),
               "daytime": (8 * 60, 17 * 60)}
_PART_CONDITION = re.compile(rf"\b(mornings?|afternoons?|evenings?|daytime)\b{_NOT_A_TIME}", re.IGNORECASE)
# A part of the day or days, either: "Evening/weekend rate", "evenings & weekends", "weekends or evenings".
_DAYS_WORD = rf"(?:weekends?|weekdays?|{_FULL_DAY}|bank\s+holidays?)"
_PART_OR_DAYS = re.compile(rf"\b(?:(?:mornings?|afternoons?|evenings?)\s*(?:/|&|\band\b|\bor\b)\s*{_DAYS_WORD}"
                           rf"|{_DAYS_WORD}\s*(?:/|&|\band\b|\bor\b)\s*(?:mornings?|afternoons?|evenings?))\b",
                           re.IGNORECASE)


@dataclass(frozen=True)
class When:
    """The days (0 = Monday) and the spans of the day (minutes from midnight, end excluded) a
    text names; None where it names none."""

    days: frozenset[int] | None
    spans: tuple[tuple[int, int], ...] | None


def _minutes(hour: str, minute: str | None, half: str | None, default_half: str | None = None) -> int | None:
    h, m = int(hour), int(minute or 0)
    half = (half or default_half or "").lower().replace(".", "")
    if half and not 1 <= h <= 12:
        return None
    if half == "pm" and h != 12:
        h += 12
    elif half == "am" and h == 12:
        h = 0
    if h > 24 or m > 59:
        return None
    return h * 60 + m


def _day_index(word: str) -> int:
    word = word.lower().rstrip(".")
    return next(i for i, name in enumerate(_DAY_NAMES) if name.startswith(word[:3]))


def named_days(text: str) -> frozenset[int] | None:
    """The days `text` names (0 = Monday): "Monday to Thursday" -> {0, 1, 2, 3}, "Fri-Sun" ->
    {4, 5, 6}, "weekends" -> {5, 6}, "on a Tuesday" -> {1}; None when it names none."""
    days: set[int] = set()
    rest = text
    for match in _DAY_RANGE.finditer(text):
        first = _day_index(match.group(1) or match.group(2))
        last = _day_index(match.group(3) or match.group(4))
        days.update((first + i) % 7 for i in range((last - first) % 7 + 1))
        rest = rest.replace(match.group(0), " ")
    days.update(_day_index(m.group(1)) for m in _DAY.finditer(rest))
    for m in _GROUP.finditer(rest):
        days.update(_GROUPS[m.group(1).lower()])
    return frozenset(days) if days else None


# A short day name that opens an hours line: "Sat 10am - 3pm", "Sun: closed", "Thurs 9-5".
_SHORT_DAY_HOURS = re.compile(rf"\b{_SHORT_DAY}:?\s+(?:closed\b|\d)", re.IGNORECASE)
# Short day names closed, or listed together: "Closed Sun & Mon", "closed Mon", "Sat, Sun & bank holidays"
# (blind sets 69, 64: "are you open on mondays?" found no day in "Closed Sun & Mon.").
_SHORT_DAY_LIST = re.compile(rf"\bclosed:?\s+(?:on\s+)?{_SHORT_DAY}\b(?:\s*(?:&|,|/|\band\b)\s*{_SHORT_DAY}\b)*"
                             rf"|\b{_SHORT_DAY}(?:\s*(?:&|,|/|\band\b)\s*{_SHORT_DAY}\b)+", re.IGNORECASE)
_SHORT_DAY_NAME = re.compile(rf"\b{_SHORT_DAY}(?![a-z])", re.IGNORECASE)


_DAYS_ALONE = re.compile(rf"\s*(?:{_ANY_DAY}(?:{_RANGE_WORD}{_ANY_DAY})?|weekdays?|weekends?|bank\s+holidays?)\s*:?\s*",
                         re.IGNORECASE)


_ANY_DAY_NAME = re.compile(rf"\b(?:{_ANY_DAY}|weekdays?|weekends?)(?![a-z])", re.IGNORECASE)


def without_days(text: str) -> str:
    """`text` with the days it names taken out ("is the library closed on mondays?" -> "is the library
    closed on  ?"): full or short names, weekdays, weekends."""
    return _ANY_DAY_NAME.sub(" ", text)


def is_days(text: str) -> bool:
    """Whether `text` is a day's name alone or a range of them ("Monday", "Tue - Thu", "Sat",
    "Weekends:"): a row of opening hours, not a table's header."""
    return _DAYS_ALONE.fullmatch(text) is not None


def hours_days(text: str) -> frozenset[int]:
    """The days `text` names (named_days), with a short name opening an hours line too ("Sat 10am -
    3pm" -> {5}: blind set 60's "open on Saturday" ranked "Mon-Fri 9:30am - 6pm" first), and short
    names closed or listed together ("Closed Sun & Mon" -> {6, 0}); empty when none."""
    days = set(named_days(text) or ())
    days.update(_day_index(m.group(1)) for m in _SHORT_DAY_HOURS.finditer(text))
    for listed in _SHORT_DAY_LIST.finditer(text):
        days.update(_day_index(m.group(1)) for m in _SHORT_DAY_NAME.finditer(listed.group(0)))
    return frozenset(days)


def _range(match: re.Match[str]) -> tuple[str | None, ...]:
    groups = match.groups()
    return groups[:6] if groups[0] is not None else groups[6:]


def named_spans(text: str) -> tuple[tuple[int, int], ...] | None:
    """The spans of the day `text` names as conditions, in minutes from midnight: "2:00-4:00 pm"
    -> ((840, 960),), "11-1pm" -> ((660, 780),), "9:00-5:00" -> ((540, 1020),), "10pm to 2am" ->
    ((1320, 1440), (0, 120)), "before 17:00" -> ((0, 1020),), "after 6pm" -> ((1080, 1440),);
    None when none."""
    spans: list[tuple[int, int]] = []
    rest = text
    for match in _TIME_RANGE.finditer(text):
        h1, m1, half1, h2, m2, half2 = _range(match)
        if not (m1 or half1 or half2):
            continue  # "2 - 6 players": no clock
        end = _minutes(h2, m2, half2)
        start = _minutes(h1, m1, half1, half2)
        if start is not None and end is not None and start > end and not half1 and half2:
            start = _minutes(h1, m1, None, "am" if half2.lower().startswith("p") else "pm")  # "11-1pm"
        if start is not None and end is not None and start > end and not (half1 or half2) and end < 12 * 60:
            end += 12 * 60  # "9:00-5:00"
        if start is None or end is None:
            continue
        spans.extend([(start, end)] if start < end else [(start, _DAY_MINUTES), (0, end)])  # "10pm to 2am"
        rest = rest.replace(match.group(0), " ")
    for pattern, before in ((_BEFORE, True), (_AFTER, False)):
        for match in pattern.finditer(rest):
            if not (match.group(3) or ":" in match.group(0)):
                continue  # "until 5": no clock; "until 15.08": a date
            at = _minutes(match.group(1), match.group(2), match.group(3))
            if at is not None:
                spans.append((0, at) if before else (at, _DAY_MINUTES))
    return tuple(spans) if spans else None


@functools.lru_cache(maxsize=256)
def asked_when(question: str) -> When:
    """The days and the time of day `question` names ("on a Tuesday at 3pm" -> {1}, ((900, 901),));
    a time range it names ("after 6pm") counts as that span."""
    spans = named_spans(question)
    if spans is None:
        times = [t for t in (_minutes(m.group(1), m.group(2), m.group(3)) for m in _AT.finditer(question)
                             if m.group(2) or m.group(3)) if t is not None]
        # ("on a Thursday evening", "saturday morning": a time in that part of the day)
        spans = tuple((t, t + 1) for t in times) or None
        if spans is None:  # ("on a Thursday evening", "saturday morning": that part of the day)
            spans = tuple(_PART_ASKED[m.group(1).lower().rstrip("s")] for m in _PART_WORD.finditer(question))[:1] or None
    return When(named_days(question), spans)


def _excepted(sentence: str) -> tuple[str, str]:
    """(the part of `sentence` naming when it applies, the part naming when it does not): an
    exception of a day or a time only ("except on Saturdays", "not valid after 6pm"; not "All
    classes except yoga")."""
    for match in _EXCEPT.finditer(sentence):
        after = " ".join(sentence[match.end():].split()[:4])
        if named_days(after) is not None or named_spans(after) is not None:
            return sentence[:match.start()], sentence[match.end():]
    return sentence, ""


def condition(sentence: str) -> When:
    """The days and spans of the day `sentence` names: when what it grants applies (not those
    after an exception: "except on Saturdays"); a part of the day named with no clock is its span
    ("Evening rate": from 5 pm, "Daytime": 8 am to 5 pm)."""
    valid = _excepted(sentence)[0]
    spans, days = named_spans(valid), named_days(valid)
    if spans is None and days is None:  # (not "Saturday afternoons, Sundays and bank holidays": whose afternoons)
        spans = tuple(dict.fromkeys(_PART_SPANS[m.group(1).lower().rstrip("s")]
                                    for m in _PART_CONDITION.finditer(valid))) or None
    return When(days, spans)


def exception(sentence: str) -> When:
    """The days and spans of the day `sentence` excepts ("except on Saturdays", "not valid after
    6pm")."""
    excepted = _excepted(sentence)[1]
    return When(named_days(excepted), named_spans(excepted)) if excepted else When(None, None)


# A second condition of whole days beside a time range: "between 6pm and 8am, and all day on Sundays",
# "Evening lessons starting after 6pm and all Sunday lessons".
_ALL_DAY = re.compile(rf"(?<![\s,])(?:,\s*|\s+)(?:(?:and|or)\s+)?all\s+day\s+(?:on\s+)?((?:{_ANY_DAY}|weekends?|weekdays?)"
                      rf"(?:\s*(?:,|and|or|&)\s*(?:{_ANY_DAY}|weekends?|weekdays?|bank\s+holidays|public\s+holidays))*)"
                      # "and all Sunday lessons": a day's name before what it is of (not "on all weekdays")
                      rf"|(?<![\s,])\s+(?:and|or)\s+all\s+((?:{_FULL_DAY})(?=\s+[a-z]))", re.IGNORECASE)


# Where conditions part as alternatives: ", and any", ", or any", ", or ".
_EITHER = re.compile(r",\s*(?:and|or)\s+(?:any|all|every)\b|,\s*or\b", re.IGNORECASE)


def applies(sentence: str, question: str) -> bool | None:
    """Whether what `sentence` grants applies at the days and times `question` names: False when
    the question names a day or time it excepts ("except on Saturdays"), or when it names a
    condition (conditions) the question does not name or names one outside it; True when every
    day and time the question names is within the sentence's; None when the sentence names no
    condition (and the question no exception)."""
    # a date bound: "Installs scheduled before November 1" is not met by "install mid november"
    dated = date_bound_met(sentence, question)
    if dated is False:
        return False
    asked = asked_when(question)
    whole = _ALL_DAY.search(sentence)
    if whole is not None:  # "£75 between 6pm and 8am, and all day on Sundays": either
        days = named_days(whole.group(1) or whole.group(whole.lastindex))
        if days is not None and asked.days is not None and asked.days <= days:
            return True
        sentence = sentence[:whole.start()] + " " + sentence[whole.end():]
    excepted = exception(sentence)
    if excepted.days is not None and asked.days is not None and asked.days & excepted.days:
        return False
    if excepted.spans is not None and asked.spans is not None and any(
            s <= a and b <= e for a, b in asked.spans for s, e in excepted.spans):
        return False
    # conditions given as alternatives: "Saturday and Sunday visits, and any appointment starting after 6 pm, carry
    # a 15% surcharge" on a Saturday (simple set 71): either met
    either = [applies(part, question) for part in _EITHER.split(sentence)] if _EITHER.search(sentence) else []
    if sum(verdict is not None for verdict in either) > 1:
        return any(either)
    joined = _PART_OR_DAYS.search(sentence)
    if joined is not None:  # "Evening/weekend rate" on a Thursday evening or on a Saturday: either
        part, days = (_PART_CONDITION.search(joined.group(0)), named_days(joined.group(0)))
        rest = sentence[:joined.start()] + " " + sentence[joined.end():]
        asked_part = applies(f"{rest} {part.group(0)}", question) if part else None
        return bool(asked_part) or bool(days is not None and asked.days is not None and asked.days <= days)
    when = condition(sentence)
    if when.days is None and when.spans is None:
        return dated
    if when.days is not None and (asked.days is None or not asked.days <= when.days):
        return False
    if when.spans is not None:
        if asked.spans is None:
            return False
        inside = all(any(s <= a and b <= e for s, e in when.spans) for a, b in asked.spans)
        if not inside:
            return False
    return True


# Months: full names, three-letter names in a range ("Jul-Aug"), "Sept".
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH_NAME = (r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
               r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
# A day or a part of the month before a month's name: "1 June", "mid-May", "the 3rd of".
_MONTH_DAY = r"(?:(?:the\s+)?[0-9]{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?|(?:mid|early|late|end\s+of)[\s-]+)?"
_MONTH_RANGE = re.compile(rf"\b{_MONTH_DAY}{_MONTH_NAME}{_RANGE_WORD}{_MONTH_DAY}{_MONTH_NAME}\b", re.IGNORECASE)
# A month named alone: its full name ("in August", "July and August"); "May" capitalised (not "May we
# stay ...?") or after "in", "during", ... ("in may"), not the verb ("may I bring a dog"); a short name
# after "in", "during", ... ("in Aug", "in sept").
_FULL_MONTH = re.compile(r"\b(january|february|march|april|june|july|august|september|october|november|december)\b"
                         r"|\b(May)\b(?!\s+(?:i|we|you|they|he|she|it|my|our|the|a|an|one|someone|guests?|children|"
                         r"dogs?|pets?)\b)"
                         r"|\b(?:in|during|for|of|this|next|last|early|late|mid|until|till|from)[\s-]+"
                         r"(may|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b\.?", re.IGNORECASE)


def _month_index(word: str) -> int:
    word = word.lower().rstrip(".")
    return next(i for i, name in enumerate(MONTHS) if name.startswith(word[:3]))


@functools.lru_cache(maxsize=256)
def named_months(text: str) -> frozenset[int] | None:
    """The months `text` names (0 = January): "November to March" -> {10, 11, 0, 1, 2}, "Jul-Aug"
    -> {6, 7}, "April, May and October" -> {3, 4, 9}, "in may" -> {4}; None when it names none
    ("may I bring a dog": the verb)."""
    months: set[int] = set()
    rest = text
    for match in _MONTH_RANGE.finditer(text):
        first, last = _month_index(match.group(1)), _month_index(match.group(2))
        months.update((first + i) % 12 for i in range((last - first) % 12 + 1))
        rest = rest.replace(match.group(0), " ")
    for match in _FULL_MONTH.finditer(rest):
        word = next(g for g in match.groups() if g)
        if word == "May" or word.lower() != "may" or match.group(3):
            months.add(_month_index(word))
    return frozenset(months) if months else None


# A date, not a season: "effective 1 March 2025", "from March 3rd", "March 2025".
_MONTH_WORD = (r"(?:january|jan|february|feb|march|mar|april|apr|may|june|jun|july|jul|august|aug|september|sept|sep|"
               r"october|oct|november|nov|december|dec)\b\.?")
_DATE = re.compile(rf"\b[0-9]{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH_WORD}(?:\s+[0-9]{{4}})?"
                   rf"|\b{_MONTH_WORD}\s+(?:[0-9]{{1,2}}(?:st|nd|rd|th)?\b,?\s*)?[0-9]{{4}}\b"
                   rf"|\b{_MONTH_WORD}\s+[0-9]{{1,2}}(?:st|nd|rd|th)?\b", re.IGNORECASE)


# Words limiting an offer to months: "throughout August", "during December", "in August only", "(Jul-Aug)".
_SEASONAL = re.compile(rf"\b(?:throughout|during|all(?:\s+of)?|only\s+in|for\s+the\s+whole\s+of)\s+{_MONTH_WORD}"
                       rf"|\bin\s+{_MONTH_WORD}\s+only\b|\(\s*{_MONTH_WORD}\s*[-–]\s*{_MONTH_WORD}\s*\)", re.IGNORECASE)


def out_of_season(sentence: str, question: str) -> bool:
    """Whether `sentence` limits what it offers to some months (_SEASONAL: "school trouser hemming
    £8.00 per pair, throughout August"; not a date, "effective 1 March 2025", nor an event held
    "every August") and `question` asks in others ("it's October"). A question naming no month
    keeps it: "Summer camp (Jul-Aug): £150 per child" is what "3 kids at the summer camp" asks."""
    undated = _DATE.sub(" ", sentence)
    return _SEASONAL.search(undated) is not None and in_months(undated, question) is False


def in_months(clause: str, question: str) -> bool | None:
    """Whether the price `clause` names applies in the months `question` names: "mid season (April,
    May and October) €130 per night" for "4 nights in May" -> True, for "in August" -> False;
    None when either names no month."""
    asked, named = named_months(question), named_months(clause)
    if asked is None or named is None:
        return None
    return asked <= named


def condition_words(sentence: str) -> str:
    """`sentence` without the days and times it names (the words left name who or what)."""
    out = sentence
    for pattern in (_DAY_RANGE, _TIME_RANGE, _BEFORE, _AFTER, _DAY, _GROUP):
        out = pattern.sub(" ", out)
    return out


# A date a sentence bounds what it grants by: "Installs scheduled before November 1", "book by September 30",
# "after January 31", "on or after 15 October".
_DATE_AT = (rf"(?:(?P<m1>{_MONTH_WORD})\s+(?P<d1>[0-9]{{1,2}})(?:st|nd|rd|th)?\b"
            rf"|(?P<d2>[0-9]{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH_WORD}))")
_BOUND = re.compile(rf"\b(?P<word>on\s+or\s+(?:before|after)|before|by|until|till|after|from)\s+(?:the\s+)?{_DATE_AT}",
                    re.IGNORECASE)
# A window of dates a sentence bounds what it grants by: "Between 1 November and 28 February", "from 1 June to
# 31 August", "1 Nov - 28 Feb" (blind set 90, read after its runs).
def _date_at(n: str) -> str:
    return (rf"(?:(?P<m{n}a>{_MONTH_WORD})\s+(?P<d{n}a>[0-9]{{1,2}})(?:st|nd|rd|th)?\b"
            rf"|(?P<d{n}b>[0-9]{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m{n}b>{_MONTH_WORD}))")


_WINDOW = re.compile(rf"\b(?:between\s+(?:the\s+)?{_date_at('1')}\s+and\s+(?:the\s+)?{_date_at('2')}"
                     rf"|(?:from\s+(?:the\s+)?)?{_date_at('3')}\s*(?:-|–|to|until|till|through)\s*(?:the\s+)?"
                     rf"{_date_at('4')})", re.IGNORECASE)
# A date or a part of a month a question names: "on October 28", "the 3rd of May", "mid november", "late Nov".
_ASKED_DATE = re.compile(rf"{_DATE_AT}|\b(?P<part>early|mid|late|end\s+of)[\s-]+(?P<m3>{_MONTH_WORD})", re.IGNORECASE)
# The days of a month's parts: early 1-10, mid 11-20, late 21-31.
_PARTS = {"early": (1, 10), "mid": (11, 20), "late": (21, 31), "end of": (21, 31)}
# Words of booking: a bound on when one books is met by the date one books on.
_BOOKING = re.compile(r"\b(?:book|booking|booked|reserve|reserving|order|ordering|ordered)\b", re.IGNORECASE)


def _day_of_year(month: str, day: int) -> int:
    return _month_index(month) * 31 + day


# Days named by their holiday: "New Year's Eve" is December 31 (blind set 94, read: its holiday surcharge "from December
# 24 to December 31" was not laid on a New Year's Eve party).
_HOLIDAYS = {"new year's eve": "December 31", "new years eve": "December 31", "christmas eve": "December 24",
             "christmas day": "December 25", "boxing day": "December 26", "new year's day": "January 1",
             "new years day": "January 1", "halloween": "October 31", "valentine's day": "February 14",
             "valentines day": "February 14"}
_HOLIDAY = re.compile(r"\b(?:" + "|".join(re.escape(name) for name in _HOLIDAYS) + r")\b", re.IGNORECASE)


def _asked_dates(question: str) -> list[tuple[int, int, int]]:
    """(first day, last day, where) of each date or month `question` names, as day numbers
    (month * 31 + day): "on October 28" one day, "mid november" the 11th to the 20th, "in
    November" the whole month, "New Year's Eve" December 31 (_HOLIDAYS)."""
    question = _HOLIDAY.sub(lambda m: _HOLIDAYS[m.group(0).lower().replace("’", "'")].ljust(len(m.group(0))),
                            question.replace("’", "'"))
    out: list[tuple[int, int, int]] = []
    rest = question
    for m in _ASKED_DATE.finditer(question):
        if m.group("part"):
            low, high = _PARTS[" ".join(m.group("part").lower().split())]
            month = m.group("m3")
        else:
            month, day = (m.group("m1"), m.group("d1")) if m.group("m1") else (m.group("m2"), m.group("d2"))
            low = high = int(day)
        out.append((_day_of_year(month, low), _day_of_year(month, high), m.start()))
        rest = rest[:m.start()] + " " * (m.end() - m.start()) + rest[m.end():]
    for m in _FULL_MONTH.finditer(rest):
        word = next(g for g in m.groups() if g)
        if word == "May" or word.lower() != "may" or m.group(3):
            out.append((_day_of_year(word, 1), _day_of_year(word, 31), m.start()))
    return sorted(out, key=lambda d: d[2])


def names_date(question: str) -> bool:
    """Whether `question` names a date or a month ("on October 28", "mid november", "in May")."""
    return bool(_asked_dates(question))


def in_date_window(sentence: str, question: str) -> bool:
    """Whether `sentence` names a window of dates ("Events from December 24 to December 31 carry a 15%
    holiday surcharge") that holds the date `question` names ("a New Year's Eve party")."""
    return _WINDOW.search(sentence) is not None and date_bound_met(sentence, question) is True


def without_date_windows(text: str) -> str:
    """`text` without the windows of dates it names."""
    return _WINDOW.sub(" ", text)


def date_bound_met(sentence: str, question: str) -> bool | None:
    """Whether the date `question` names meets the date bound of `sentence` ("Installs scheduled
    before November 1: $100 surcharge" for "install mid november" -> False, for "Can you install on
    October 28?" -> True; "Early bird (book by September 30): 10% off" for "booking now in October"
    -> False); a bound on booking is read against the date the question books on, another against
    the others; when the question names no date, False for a deadline ("before", "by", "until") and
    None for a start ("from the 1st of May"); None when the sentence names no bound."""
    window = _WINDOW.search(sentence)
    if window is not None:  # a window: met by a date the question names inside it (the window may span the new year)
        first, last = [_day_of_year(window.group(f"m{n}a") or window.group(f"m{n}b"),
                                    int(window.group(f"d{n}a") or window.group(f"d{n}b")))
                       for n in (("1", "2") if window.group("m1a") or window.group("m1b") else ("3", "4"))]
        dates = _asked_dates(question)
        # (a bound beside it is read too, on the rest of the sentence: "Book before 1 March for stays between 1 June
        # and 31 August", review; the window's dates are the stay's, the booking date the bound's)
        rest = sentence[:window.start()] + " " * (window.end() - window.start()) + sentence[window.end():]
        bounded = date_bound_met(rest, question) if _BOUND.search(rest) else None
        stays = [d for d in dates if not _BOOKING.search(question[max(0, d[2] - 30):d[2]])] or dates
        if not stays or bounded is False:
            return False
        low, high, _ = stays[0]
        return first <= low and high <= last if first <= last else low >= first or high <= last
    bound = _BOUND.search(sentence)
    if bound is None:
        return None
    month, day = (bound.group("m1"), bound.group("d1")) if bound.group("m1") else (bound.group("m2"), bound.group("d2"))
    at = _day_of_year(month, int(day))
    booking = _BOOKING.search(sentence[:bound.end()]) is not None
    dates = _asked_dates(question)
    # (a booking word in the words right before a date, no other date between: "I booked on 2 September for a
    # mid-November install" books on 2 September; or right after it: "in October I'm booking")
    near = [d for i, d in enumerate(dates)
            if _BOOKING.search(question[max(0, d[2] - 30, dates[i - 1][2] + 1 if i else 0):d[2]])
            or _BOOKING.search(question[d[2]:d[2] + 12])]
    chosen = (near if booking else [d for d in dates if d not in near]) or dates
    word = " ".join(bound.group("word").lower().split())
    if not chosen:  # no date asked: a deadline not met ("book by September 30"), a start ("from the 1st of May") kept
        return None if word in ("after", "from", "on or after") else False
    low, high, _ = chosen[0]
    if word == "before":
        return high < at
    if word in ("by", "until", "till", "on or before"):
        return high <= at
    if word == "after":
        return low > at
    return low >= at  # "from", "on or after"
