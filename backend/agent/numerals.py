"""Numbers and counts as a question writes them (issue 15): a number with its thousands
separators and its minus sign ("1,150", "-12 degrees": NUMBER, NUMBER_RE), an amount and a price
("4.60", "£4.60": AMOUNT, SIGNED_PRICE), a currency's name ("27.50 dollars": CURRENCY_NAMES), a
percent ("15%", "20 percent": PERCENT_SIGN), and counts in words as digits ("four adults" -> "4
adults", "three and a half hours" -> "3.5 hours", "my 11m boat" -> "my 11 m boat":
with_digits). What the cues read of a message: at most MAX_CUE_CHARS of it (cue_text). The
operations a question names (backend.agent.operations), the people it is about
(backend.agent.party) and the rounding it asks for (backend.agent.rounding) read numbers
through these; this module reads nothing of theirs.
"""

from __future__ import annotations

import re
import unicodedata

# The cues read at most this many characters of the message (its start and its end): what
# decides is the question, and a 30,000-character message must not cost the event loop anything.
MAX_CUE_CHARS = 2000
PERCENT_SIGN = r"(?:%|percent\b|per\s+cent\b)"


# A number in a pattern, its one group: "1,150", "4.60", "-12".
NUMBER = r"(-?(?:[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?))"
# A number as written: ASCII digits, thousands separators, a minus sign right before it ("-12
# degrees"; not the hyphen of "2024-05-01", whose parts are not numbers here).
NUMBER_RE = re.compile(rf"(?<![\w.,-]){NUMBER}(?!\w|-[0-9]|[.,][0-9])")
_FLAGS = re.IGNORECASE
# A currency's name ("27.50 dollars", "how many rupees").
CURRENCY_NAMES = (r"(?:dollars?|euros?|pounds?|crowns?|marks?|francs?|florins?|guilders?|shillings?|pesos?|rupees?|"
                  r"lira|lire|dinars?|ducats?|thalers?|zloty|rand|yen|yuan|kronor|kroner|krona|krone|pence|cents?|"
                  r"credits?|kr|usd|cad|aud|nzd|eur|gbp|sek|nok|dkk|chf)")
# The currency signs a price is read with: the dollar's, the euro's, the pound's, the yen's and the generic "¤" (a
# currency written by a code, with_currency_signs); each price pattern's character class holds them all.
CURRENCY_SIGNS = "$€£¥¤₹₩₦₱₺₪฿₫₴₽"
# An amount as a price writes it, with or without thousands separators: "1,150", "4.60".
AMOUNT = r"([0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?)"
# A price after a currency sign: "£4.60", "$ 1,150", "¤350" (a currency with no sign of these: with_currency_signs).
SIGNED_PRICE = rf"[{CURRENCY_SIGNS}]\s*{AMOUNT}"

# A currency written by its ISO 4217 code or its short name, before or after an amount ("8.00 EUR",
# "EUR 8.00", "350 kr", "SEK 350", "95 CAD"), and the sign it is read with: the dollars' "$", the euro's
# "€", the pound sterling's "£", the yen's "¥", any other "¤" (the generic currency sign). Not a name the
# price readers know already ("5 dollars", "12 euros": CURRENCY_NAMES; "add 5 dollars handling" beside "8p per
# page" and "£3" keeps the pence read as pounds), nor "pounds", which weighs as often as it pays.
_CODE_SIGN = {"usd": "$", "cad": "$", "aud": "$", "nzd": "$", "sgd": "$", "hkd": "$", "eur": "€", "gbp": "£", "jpy": "¥",
              "kr": "¤", "sek": "¤", "nok": "¤", "dkk": "¤", "isk": "¤", "chf": "¤", "pln": "¤", "zł": "¤", "czk": "¤",
              "kč": "¤", "huf": "¤", "inr": "¤", "rs": "¤", "zar": "¤", "mxn": "¤", "brl": "¤", "kronor": "¤",
              "kroner": "¤", "krona": "¤", "krone": "¤"}
# The codes and short names of _CODE_SIGN, as a pattern's alternatives (longest first).
CURRENCY_CODES = "|".join(sorted((re.escape(code) for code in _CODE_SIGN), key=len, reverse=True))
# (an amount written with a decimal comma first, "1.250,50" and "95,00", as Europe writes it: the review of blind set
# 95; thousands apart by points only with a decimal comma or two points, "1.250.000": "1.859 EUR per litre" is a price
# to the tenth of a cent, review)
# (or thousands apart by a space, "1 150 kr", as Sweden writes them: blind set 95, read; _SPACED_AFTER says where)
_CODED_AMOUNT = (r"([1-9][0-9]{0,2}(?:(?:\.[0-9]{3})+,[0-9]{1,2}|(?:\.[0-9]{3}){2,})(?![0-9])"
                 r"|[1-9][0-9]{0,2}(?:[ \u00a0][0-9]{3})+(?:,[0-9]{1,2})?(?![0-9])|[0-9]+,[0-9]{2}(?![0-9])|" + AMOUNT[1:])
# What an amount with thousands apart by a space follows, when its currency is written after it: a label's colon, a
# bracket, a line's start, or a word of pricing ("GROOM PACKAGE: 1 150 kr", "a minimum spend of 1 200 kr"; not a count
# before a price, "Children under 12 100 SEK", "pack of 6 120 kr", review).
# (or a price list's dot leaders: "GROOM PACKAGE ........ 1 150 kr", blind set 95)
_SPACED_AFTER = re.compile(r"(?:^|[:(=\n]|\.{2,}|…|\b(?:is|costs?|at|from|only|just|be|spend\s+of|minimum\s+of|charge\s+of|fee\s+of|"
                           r"price\s+of|total\s+of))\s*$", re.IGNORECASE)
# (not a year naming a list: "our 2025 USD price list", review)
_CODE_AFTER = re.compile(rf"(?<![\w.,]){_CODED_AMOUNT}[ \t]?({CURRENCY_CODES})(?![\w])"
                         r"(?!\s+(?:price|prices|rates?|tariffs?|list|menu|edition|season)\b)", re.IGNORECASE)
_CODE_BEFORE = re.compile(rf"(?<![\w{CURRENCY_SIGNS}])({CURRENCY_CODES})\.?[ \t]?{_CODED_AMOUNT}(?![\w])(?![.,][0-9])", re.IGNORECASE)
# The signs of the currencies' names (not codes): a list declaring "all prices in euros".
_NAME_SIGN = {"euro": "€", "euros": "€", "pound": "£", "pounds": "£", "sterling": "£"}


def currency_sign(name: str) -> str:
    """The sign a currency's code or name is read with ("EUR" and "euros" -> "€", "SEK" and "kr" ->
    "¤", "GBP" and "sterling" -> "£"); "$" for any other (the dollars: "Canadian dollars")."""
    key = name.lower()
    return _CODE_SIGN.get(key) or _NAME_SIGN.get(key) or "$"


def with_currency_signs(text: str) -> str:
    """`text` with each amount whose currency is written by its code or short name written after
    that currency's sign instead (_CODE_SIGN: "Tickets 8.00 EUR per person" -> "Tickets €8.00 per
    person", "Skin fade 350 kr" -> "Skin fade ¤350", "SEK 1,200" -> "¤1,200"): the price readers
    look for a sign before the amount. Blind set 93 (read) priced in "EUR" after the amount; its
    tour's "8.00 EUR per person" was no price to them."""
    text = _CODE_AFTER.sub(lambda m: _signed_after(m, text), text)
    if _RAND.search(text):  # "All prices in South African rand (R)": "R450", "R1,040" (practice set 4)
        text = _RAND_BEFORE.sub(lambda m: f"¤{_point_decimal(m.group(1))}", text)
    text = _CODE_BEFORE.sub(lambda m: f"{_CODE_SIGN[m.group(1).lower()]}{_point_decimal(m.group(2))}", text)
    declared = _DECLARED.search(text)
    if declared is not None:  # "All amounts in Canadian dollars." over "Intro Aerial Silks  75 min  32.00" (practice set 3)
        sign = _DECLARED_SIGN.get(declared.group(1).lower().split()[0].rstrip("s"), "¤")
        text = _BARE_AMOUNT.sub(lambda m: sign + m.group(0), text)
    return text


# A text declaring the currency its amounts are in, and the sign they are read with: "All amounts in Canadian dollars",
# "Prices are in euros", "All fees shown in pounds sterling", "in New Zealand dollars".
_DECLARED = re.compile(r"\b(?:prices|amounts|fees|rates|charges|costs|figures)\b[^.\n]{0,40}?\b(?:in|are\s+in|shown\s+in|quoted\s+in)\s+"
                       r"(?:[a-z]+\s+){0,2}?(dollars|euros?|pounds(?:\s+sterling)?|sterling|yen|francs|rand|kronor|kroner|rupees|"
                       r"pesos|ringgit|baht|shekels|zloty)\b", re.IGNORECASE)
_DECLARED_SIGN = {"dollar": "$", "euro": "€", "pound": "£", "sterling": "£", "yen": "¥"}
# An amount written with cents and no sign, in a text declaring its currency ("32.00", "1,295.00", "+25.00", "Late fee:
# 15.00."); not a time ("9.30 pm", "at 07.15", "07.00 to 17.00"), a percentage, a dimension ("2.44 x 1.22 m") or a
# measure ("2.50 km", "38.00 °C", "12.50 m²"): review of the thirty-eighth session.
_BARE_AMOUNT = re.compile(rf"(?<![\w.,:/{CURRENCY_SIGNS}-])(?<![x×] )(?<!\bat )(?<!\bto )(?<!\bfrom )(?<!\buntil )(?<!\btill )"
                          rf"(?:[0-9]{{1,3}}(?:,[0-9]{{3}})+|[0-9]+)\.[0-9]{{2}}(?![\w%]|[.,][0-9])"
                          r"(?!\s*(?:%|am\b|pm\b|a\.m|p\.m|h\b|hrs?\b|hours?\b|km\b|kg\b|m\b|cm\b|mm\b|l\b|ml\b|lbs?\b|mi\b|miles?\b|"
                          r"[x×°]|m²|m2\b|sq\b|to\s+[0-9]|[-–]\s*[0-9]))", re.IGNORECASE)
# A text pricing in South African rand, and an amount after the rand's "R" (a capital, right before it or a space
# apart: not "R2" of a road in a text of another currency).
# (the rand declared as the text's currency: not "we accept rand" in a list of another currency, review; thousands apart
# by a space as South Africa writes them: "R9 850", "R1 250,00")
_RAND = re.compile(r"\b(?:in|are|shown\s+in)\s+(?:south\s+african\s+)?rands?\b|\bZAR\b|\brand\s*\(R\)", re.IGNORECASE)
_RAND_BEFORE = re.compile(rf"(?<![\w.,{CURRENCY_SIGNS}])R[ \t]?([1-9][0-9]{{0,2}}(?:[ \u00a0][0-9]{{3}})+(?:[.,][0-9]{{2}})?(?![0-9])"
                          rf"|{AMOUNT[1:-1]})(?![\w])")


def _signed_after(m: re.Match[str], text: str) -> str:
    """An _CODE_AFTER match written with its sign first ("350 kr" -> "¤350"); an amount with thousands
    apart by a space only where _SPACED_AFTER allows, else its last group alone ("12 100 SEK" after
    "under" -> "12 ¤100")."""
    amount, sign = m.group(1), _CODE_SIGN[m.group(2).lower()]
    spaced = re.fullmatch(r"(.*)[ \u00a0]([0-9]{3}(?:,[0-9]{1,2})?)", amount)
    if spaced is not None and not _SPACED_AFTER.search(text[:m.start()]):
        return f"{spaced.group(1)} {sign}{_point_decimal(spaced.group(2))}"
    return f"{sign}{_point_decimal(amount)}"


def _point_decimal(amount: str) -> str:
    """`amount` with a decimal comma written as a point, and its thousands apart by commas ("1.250,50"
    -> "1,250.50", "1 150" -> "1,150", "95,00" -> "95.00"); as it is when written so already ("1,250.50", "8.00")."""
    if re.fullmatch(r"[0-9]{1,3}(?:(?:[. \u00a0][0-9]{3})+,[0-9]{1,2}|(?:\.[0-9]{3}){2,}|(?:[ \u00a0][0-9]{3})+)|[0-9]+,[0-9]{2}",
                    amount):
        return re.sub(r"[. \u00a0]", "\0", amount).replace(",", ".").replace("\0", ",")
    return amount


def written_currency(text: str) -> str | None:
    """The code or short name `text` writes after its amounts, of a currency read with the generic
    sign "¤" ("kr" of "Skin fade 350 kr", "SEK" of "SEK 1,200"), as written: the answer states an
    amount in it after the number ("450 kr"); None when it writes none, or more than one."""
    written = {m.group(2) for m in _CODE_AFTER.finditer(text) if _CODE_SIGN[m.group(2).lower()] == "¤"}
    written |= {m.group(1) for m in _CODE_BEFORE.finditer(text) if _CODE_SIGN[m.group(1).lower()] == "¤"}
    return written.pop() if len(written) == 1 else None


def cue_text(text: str) -> str:
    """What the cues read of `text`: all of it up to MAX_CUE_CHARS, else its first and last
    halves of that, joined by a line break; its pictographs read as spaces (without_pictographs)."""
    if len(text) > MAX_CUE_CHARS:
        half = MAX_CUE_CHARS // 2
        text = text[:half] + "\n" + text[-half:]
    return without_pictographs(text)


# What a pictograph is: a symbol (Unicode categories So "other symbol", Sk "modifier symbol": the
# skin tones); not ASCII ("^", "`"), nor a degree sign ("20°C", "20℃"). A format character (Cf: the
# zero-width joiner of "👩‍👧", a soft hyphen) or a variation selector is dropped.
_PICTOGRAPH_CATEGORIES = frozenset({"So", "Sk", "Co", "Cs"})


def _is_pictograph(char: str) -> bool:
    if char < "\x80" or char in "°℃℉":
        return False
    return unicodedata.category(char) in _PICTOGRAPH_CATEGORIES or "\ufe00" <= char <= "\ufe0f"


def _is_format(char: str) -> bool:
    """A format character or a variation selector: dropped with no space ("book\xadings")."""
    return not char < "\x80" and (unicodedata.category(char) == "Cf" or "\ufe00" <= char <= "\ufe0f")


def without_pictographs(text: str) -> str:
    """`text` with each run of pictographs (emoji and their modifiers, other symbols) read as one
    space: "👋🏽 how much is 6kg wash & fold? 🧺" -> " how much is 6kg wash & fold? ". The cues read
    words; an emoji shifted which price an embedding ranked first (the Express surcharge over the
    kg price, new-user run 2026-12-04). Text with no pictograph is returned as it is."""
    if text.isascii() or not any(_is_pictograph(c) or _is_format(c) for c in text):
        return text
    out: list[str] = []
    spaced = False  # the last character out is a pictograph's space
    for char in text:
        if _is_format(char):
            continue
        if _is_pictograph(char):
            if not out or not out[-1].isspace():
                out.append(" ")
            spaced = True
        elif char.isspace() and spaced:
            out[-1] = char
            spaced = False
        else:
            out.append(char)
            spaced = False
    return "".join(out)


# Counts written in words, as with_digits writes them ("two" -> "2", "a dozen" -> "12").
COUNT_WORDS = {"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
           "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
           "fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
           "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
           "ninety": "90", "a dozen": "12", "half a dozen": "6"}
_COUNT_WORD = re.compile(r"\b(?:" + "|".join(sorted(COUNT_WORDS, key=len, reverse=True)) + r")\b"
                         r"(?=\s+(?!times\b)[a-z]|\s+[0-9]{1,3}\s*x\s*[0-9]|\s*[?.!,;]|\s*$"  # "six 8x10 prints"
                         # "two 500g bags", "four 500 g bags" (blind set 103, read)
                         r"|\s+[0-9][0-9,]*(?:\.[0-9]+)?\s*-?\s*(?:g|kg|ml|l|cm|mm|oz|lb|litres?|liters?|inch|inches|btu)\b"
                         # "three 2-hour passes", "two 2-door wardrobes" (blind set 104, read)
                         r"|\s+[0-9]+-[a-z]+\s+[a-z])", _FLAGS)


_COMPOUND_AFTER = re.compile(r"\s*(?:-\s*)?(?:hundred|thousand|million|billion|dozen|and\s+a\s+half|"
                             + "|".join(COUNT_WORDS) + r")\b", _FLAGS)
_COMPOUND_BEFORE = re.compile(r"\b(?:(?:" + "|".join(COUNT_WORDS) + r")\s*-?|(?:hundred|thousand|million)\s+and)\s*$",
                              _FLAGS)


# "three and a half hours" (not "two and a half thousand", "twenty one and a half", "1.5 and a half").
_AND_A_HALF = re.compile(r"(?<![\d.,-])\b(?:(one|" + "|".join(w for w in COUNT_WORDS if " " not in w)
                         + r")|([0-9]+))\s+and\s+a\s+half\b(?!\s+(?:hundred|thousand|million|billion|dozen)\b)", _FLAGS)


# "an hour and a half", "a day and a half" (a unit of time or distance and half another).
# (not "a night and a half-board supplement", "one day and a half day": a half of its own, review)
_UNIT_AND_A_HALF = re.compile(r"\b(?:an?|one)\s+(hour|day|night|week|month|year|mile|minute)\s+and\s+a\s+half\b"
                              r"(?![-\w])(?!\s+(?:an?\s+)?(?:hours?|days?|nights?|weeks?|terms?|boards?|sessions?|price|size|dozen)\b)", _FLAGS)


def with_digits(text: str) -> str:
    """`text` with a count written as a word before another word as digits ("four adults" ->
    "4 adults"; not "three times": "I told you three times" asks for nothing), for reading the
    operation of a question. A count that is part of a larger one ("two hundred", "twenty five",
    "two dozen") is left as words: it is not that count. A number written against its unit is
    set apart from it ("11m" -> "11 m")."""
    def digits(m: re.Match[str]) -> str:
        if _COMPOUND_AFTER.match(text, m.end()) or _COMPOUND_BEFORE.search(text[max(0, m.start() - 20):m.start()]):
            return m.group(0)
        if m.group(0).lower().endswith("ty") and re.match(r"\s*-?\s*one\b", text[m.end():], _FLAGS):
            return m.group(0)  # "twenty one"
        return COUNT_WORDS[" ".join(m.group(0).lower().split())]

    def half(m: re.Match[str]) -> str:  # "three and a half hours" -> "3.5 hours"
        if m.group(1) and _COMPOUND_BEFORE.search(text[max(0, m.start() - 20):m.start()]):
            return m.group(0)  # "twenty one and a half"
        whole = m.group(2) or ("1" if m.group(1).lower() == "one" else COUNT_WORDS[m.group(1).lower()])
        return f"{whole}.5"

    text = _UNIT_AND_A_HALF.sub(r"1.5 \1s", text)  # "an hour and a half" -> "1.5 hours" (blind set 97, read)
    text = _GLUED_UNIT.sub(r"\1 \2", _AND_A_HALF.sub(half, text))  # "my 11m boat" -> "my 11 m boat"
    return _COUNT_WORD.sub(digits, text)


# A number written against its unit: "11m", "500ml", "4.5kg", "3hrs" (not "3pm", "2nd").
_GLUED_UNIT = re.compile(r"(?<![\w.,])([0-9]+(?:\.[0-9]+)?)(m|km|cm|mm|kg|g|ml|l|ft|lb|lbs|oz|hrs?|mins?|mph|kph|btu)\b",
                         re.IGNORECASE)


# A number of an expression: digits with an optional decimal part, no digit or decimal point
# around it ("2.50", not the "50" of "2.50"); and the 100 of a percentage ("(100 - 10) / 100", "*
# 17.5 / 100"), no figure read from anywhere.
_EXPRESSION_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d]|\.\d)")
_PERCENT_BASE = re.compile(r"\(\s*100(?=\s*[-+])|/\s*100(?![\d.])")


def expression_figures(expression: str) -> list[str]:
    """The distinct numbers of a calculator `expression`, in order of first appearance, but the
    100 of a percentage ("(100 - 10) / 100" -> ["10"])."""
    return list(dict.fromkeys(_EXPRESSION_NUMBER.findall(_PERCENT_BASE.sub(" ", expression))))


def number_pattern(number: str) -> str:
    """A pattern of `number` (digits, an optional decimal part) by value as texts write it:
    thousands separators optional ("1200": "1,200"), trailing zeros of a fraction optional ("2.5":
    "2.50"; "45": "45.00")."""
    whole, _, fraction = number.partition(".")
    head = len(whole) % 3 or 3
    groups = [whole[:head]] + [whole[i:i + 3] for i in range(head, len(whole), 3)]
    fraction = fraction.rstrip("0")
    return ",?".join(groups) + (rf"\.{fraction}0*" if fraction else r"(?:\.0+)?")
