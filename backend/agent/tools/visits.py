"""A trade's charge for coming out, added to a bill the question asks of a visit (issue 15).

A mobile trade (a locksmith, a plumber, an appliance engineer) prices a job as its labour plus a
charge for every visit: "SERVICE CALL (TRIP CHARGE) Every mobile visit within our service area:
$45.00", "Call-out fee: £60", "Home visits carry a £25 travel fee". A question asking the price of
a job done where the customer is ("locked out of my house", "can you come Wednesday", "at my
flat") owes it; one done in the shop ("if I just pick it up at the shop", "I'll drop it in") does
not. Blind set 66: six of twelve bills were labour plus the service call, and the program stated
the labour alone. Only the amount and words are read from the passages (untrusted data).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Sequence

from backend.agent.numerals import CURRENCY_SIGNS
from backend.agent.tools.allowances import DISTANCE_UNIT, where_customer_is
from backend.agent.tools.basket import TABLE_ROW, norm_words
from backend.agent.tools.fact_expressions import prices_in
from backend.agent.tools.headings import fully_named, named_by_two
from backend.agent.tools.pricing import PRICE

# A charge for every visit, named before its price ("service call", "call-out fee", "trip charge", "travel
# fee", "visit fee") or said of every visit ("Every mobile visit ...: $45.00"); not "Regular clean: £60 each
# visit" (a job's price per visit).
_VISIT_CHARGE = re.compile(r"\b(?:service[\s-]+call|call[\s-]?out(?:\s+(?:fee|charge))?|trip\s+(?:charge|fee)|"
                           r"travel\s+(?:fee|charge)|visit(?:ing)?\s+(?:fee|charge)|attendance\s+(?:fee|charge))\b"
                           r"|\b(?:every|each|any)\s+(?:mobile\s+|home\s+|site\s+|on[\s-]?site\s+)?(?:visit|call[\s-]?out)\b",
                           re.IGNORECASE)
# Not a charge every visit owes: a surcharge, a minimum, a rate per mile or hour, a percentage, extra time, a
# cancellation, one for emergencies, out of hours or beyond an area, one waived or deducted when the work goes
# ahead ("Call-out charge £40. This is waived if we carry out the repair.": read in the sentence after too).
_NOT_A_VISIT_CHARGE = re.compile(r"%|\bsurcharges?\b|\bminimum\b|\bper\s+(?:(?:additional|extra)\s+)?(?:half\s+)?"
                                 r"(?:mile|km|kilomet\w*|hour|hr)\b|/\s*(?:mile|km|hr)\b|\bfree\b|\bno\s+(?:call[\s-]?out\s+)?"
                                 r"(?:charge|fee)\b|\bwaived\b|\bdeducted\b|\brefund\w*|\bcredited\b|\bdiscount|\boff\b"
                                 r"|\bemergenc|\bout[\s-]of[\s-]hours\b|\bafter[\s-]hours\b|\bovernight\b|\bbeyond\b|"
                                 r"\boutside\b|\bcancel\w*|\badditional\b|\bextra\b|\bover\s+[0-9]|\+\s*$"
                                 # a charge of a visit that goes wrong: "If nobody is home or the piano cannot be
                                 # reached, we charge the travel fee for your zone plus $75" (blind set 80)
                                 r"|\bno[\s-]?shows?\b|\bnobody\b|\bno\s+one\s+(?:is\s+)?(?:home|in)\b"
                                 r"|\bno\s+access\b|\bcan(?:not|'t|’t)\s+be\s+(?:reached|accessed)\b", re.IGNORECASE)
_WAIVED = re.compile(r"\b(?:waived|deducted|refunded|credited|free\s+(?:if|when|with))\b", re.IGNORECASE)
# A job asked of a visit: the trade comes to the customer.
_ASKS_VISIT = re.compile(r"\b(?:can|could|would|will)\s+(?:you|someone|somebody)\s+(?:come|pop\s+(?:out|over|round)|get\s+out)\b"
                         r"|\b(?:come|coming)\s+(?:out|over|round|around|to\s+(?:me|us|my|our))\b"
                         r"|\bcall[\s-]?out\b|\bhome\s+visit\b|\bvisit\s+(?:me|us|my|our)\b|\blocked\s+(?:myself\s+|ourselves\s+)?out\b"
                         r"|\bat\s+(?:my|our)\s+(?:house|home|flat|apartment|place|office|property|rental)\b"
                         r"|\bat\s+a\s+(?:rental|property)\b|\bmiles?\s+(?:from|away)\b|\bkm\s+(?:from|away)\b"
                         r"|\bwhen\s+you(?:'d|\s+would)?\s+come\b"
                         # ("weekday on-site visit", "shredded on-site", blind set 98, read; not "on-site parking", review)
                         r"|\bon[\s-]?site\s+(?:visit|service|job|work|appointment|shredding|repair|clean\w*)\b"
                         r"|\b(?:done|shredded|serviced|cleaned|repaired|fitted|installed|carried\s+out|come)\s+on[\s-]?site\b"
                         r"|\bsite\s+visit\b"
                         # ("Weekday visit, I live 5 miles from you", practice set 7)
                         r"|\b(?:a|one|weekday|weekend|saturday|sunday|evening|morning|afternoon)\s+visit\b", re.IGNORECASE)
# A job done at the business: no visit.
_PLACE = r"(?:shop|store|counter|branch|workshop|garage|surgery|clinic|salon|studio|premises|office|yard|unit)"
_IN_SHOP = re.compile(rf"\b(?:in|at|to|into|visit|visiting)\s+(?:the|your)\s+{_PLACE}\b"
                      r"|\bpick(?:ed|ing)?\s+(?:it\s+|them\s+)?up\b"
                      r"|\bdrop(?:ped|ping)?\s+(?:it\s+|them\s+)?(?:off|in|round)\b|\bbring(?:ing)?\s+(?:it\s+|them\s+)?in\b"
                      r"|\bcollect(?:ion)?\b|\bin[\s-]store\b|\bwhile\s+I\s+wait\b", re.IGNORECASE)
# The visits a question counts ("walk my dog 5 times", "3 visits", "7 feeding visits"): a charge per visit is owed each time.
_VISITS_COUNTED = re.compile(r"\b([0-9]+)\s+(?:[a-z]+\s+){0,2}(?:times|visits|call[\s-]?outs|sessions|walks|cleans|lessons|appointments)\b",
                             re.IGNORECASE)


def visit_charge(question: str, sentences: Sequence[str]) -> str | None:
    """The amount, as written ("45.00"), of the one charge `sentences` lay on every visit
    (_VISIT_CHARGE before its one price, _NOT_A_VISIT_CHARGE nowhere in the sentence, _WAIVED not
    in the one after), when `question` asks a job done where the customer is (_ASKS_VISIT) and
    not at the business (_IN_SHOP); None otherwise, or when the sentences name two different such
    charges."""
    if _ASKS_VISIT.search(question) is None or _IN_SHOP.search(question) is not None:
        return None
    found: dict[Fraction, str] = {}
    for i, sentence in enumerate(sentences):
        prices = list(PRICE.finditer(sentence))
        # (named in the price's own clause: not "The first 30 minutes are included in the call-out fee; after
        # that, labour is charged at £12 per 15 minutes")
        label = re.split(r"[;.]\s|,\s*(?:after|then|and|but)\b", sentence[:prices[0].start()])[-1] if prices else ""
        if len(prices) != 1 or _VISIT_CHARGE.search(label) is None:
            continue
        after = sentences[i + 1] if i + 1 < len(sentences) else ""
        if _NOT_A_VISIT_CHARGE.search(sentence) or _WAIVED.search(after):
            continue
        amount = next(g for g in prices[0].groups() if g).replace(",", "")
        found.setdefault(Fraction(amount), amount)
    return next(iter(found.values())) if len(found) == 1 else None


# A fee of places listed by name: "Outside the Greenbelt (Kanata, Orleans, Barrhaven, Stittsville) there is a flat
# travel fee of CA$20 per visit", "Zone B - Leith, Portobello and Musselburgh: £8 delivery".
_ZONE_FEE = re.compile(r"\b(?:travel|delivery|call[\s-]?out|mileage|zone|area|distance)\s+(?:fee|charge|surcharge|supplement)\b",
                       re.IGNORECASE)
# (in brackets: "Cut, Colour and Blow Dry: £95" lists no places)
_PLACE_LIST = re.compile(r"\(([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*(?:\s*(?:,|and|or|&)\s*[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)+)\)")
# The places listed are those that pay nothing ("No travel fee for Kanata, Orleans or Barrhaven").
_NOTHING = re.compile(r"\b(?:free|no|included|nothing|waived)\b|%", re.IGNORECASE)


# A zone's row: "Zone B - 10 to 25 km: Hamilton East, Te Awamutu, Ohaupo, Tamahere: $55.00 per load", "Zone B - 3 to
# 10 miles: £8.50"; a sentence holding several is read a zone at a time ("Zone A - Galway city no charge Zone B - up to
# 25 km outside €15 travel ...").
ZONE_ROW = re.compile(r"\b[Zz]one\s+(?:[A-Z]|[0-9]+)\b(?!\s*(?:fee|charge|rate|surcharge))")
_TRAVEL_ZONES = re.compile(r"\b(?:travel|call[\s-]?out|mileage)\s+(?:zones|areas)\b|\bzones\s+(?:for|of)\s+travel\b",
                           re.IGNORECASE)
_DISTANCE = re.compile(rf"[0-9]\s*{DISTANCE_UNIT}\b", re.IGNORECASE)
_TRAVEL_WORD = re.compile(r"\b(?:deliver\w*|travel\w*|call[\s-]?outs?|loads?|mileage)\b", re.IGNORECASE)
# Places listed by name after a zone's head: two or more capitalised names apart by commas or slashes ("Canmore /
# Banff", blind set 94, read after its runs).
_NAME = r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*"
_NAMES = re.compile(rf"{_NAME}(?:\s*[,/]\s*(?:and\s+|or\s+)?{_NAME})+")
# One place a zone is within: "Zone A - within Calgary city limits: $85.00" (blind set 94, read: "delivered within
# Calgary" paid no zone).
_WITHIN_PLACE = re.compile(rf"\b(?:within|inside|in)\s+(?:the\s+)?({_NAME})")


def zone_charge(question: str, sentences: Sequence[str]) -> str | None:
    """The amount, as written ("20"), of the one fee of a sentence that lists places by name, one of
    which `question` names ("if I'm in Kanata" over "Outside the Greenbelt (Kanata, Orleans,
    Barrhaven, Stittsville) there is a flat travel fee of CA$20 per visit": simple set 71), or of
    the one zone (ZONE_ROW) whose places or distance band hold where the question is ("delivered
    to te awamutu" over "Zone B - 10 to 25 km: Hamilton East, Te Awamutu, Ohaupo, Tamahere: $55.00
    per load"; "we're 5 miles away" over "Zone B - 3 to 10 miles: £8.50"); None when none, or when
    the question names places of two such fees, or a zone that pays nothing ("no charge", "free")."""
    asked = {w.lower() for w in re.findall(r"[A-Za-z][\w'-]*", question)}

    def named(places: Sequence[str]) -> bool:
        return any(place and {w.lower() for w in place.split()} <= asked for place in places)

    found: set[str] = set()
    for sentence in sentences:
        prices = list(PRICE.finditer(sentence))
        if len(prices) != 1 or _ZONE_FEE.search(sentence) is None or _NOTHING.search(sentence):
            continue
        for m in _PLACE_LIST.finditer(sentence[:prices[0].start()]):
            if named(re.split(r"\s*(?:,|\band\b|\bor\b|&)\s*", m.group(1))):
                found.add(next(g for g in prices[0].groups() if g).replace(",", ""))
    # (how far the customer is, not a trip: "a 30 mile round trip ... we're 3 miles from you", review)
    where = where_customer_is(question) or ""
    # (or under a heading of travel zones: "TRAVEL ZONES" over "Zone B - Kanata, Orleans: $25.00", blind set 88, read)
    # (not a courier's "Delivery zones:" over "Zone 3 (5-8 miles): £21.00 per delivery", its price: review)
    travelled = any(_TRAVEL_ZONES.search(s) for s in sentences)

    def of_travel(sentence: str) -> bool:
        return bool(_DISTANCE.search(sentence) or _ZONE_FEE.search(sentence) or _TRAVEL_WORD.search(sentence))

    # (a zone row among zone rows of travel: "Zone C - Canmore / Banff: $260.00" below "Zone B - up to 60 km (...)")
    zoned = travelled or any(ZONE_ROW.match(s) and of_travel(s) for s in sentences)
    for sentence in sentences:
        # (zones of where the business goes: a distance or a fee of travel or delivery; not a gym's "Zone 1 -
        # Cardio, Weights: $12 per visit", review)
        if not (of_travel(sentence) or zoned and ZONE_ROW.match(sentence)):
            continue
        starts = [m.start() for m in ZONE_ROW.finditer(sentence)]
        for start, end in zip(starts, starts[1:] + [len(sentence)]):
            row = sentence[start:end]
            prices = list(PRICE.finditer(row))
            head = row[:prices[0].start()] if prices else row
            # (no one letter: "Zone 3 - A/B roads only" names no place "A", review)
            places = [p.strip() for m in _NAMES.finditer(head) for p in re.split(r"[,/]", m.group(0)) if len(p.strip()) > 1]
            # (only where the question is in it: "delivered in Calgary", not "30 km from Calgary", "just outside
            # Calgary", "south of Calgary", review)
            places += [m.group(1) for m in _WITHIN_PLACE.finditer(head) if len(m.group(1)) > 1
                       and re.search(rf"\b(?<!outside\s)(?:in|within|inside|to|into)\s+(?:the\s+)?(?:city\s+of\s+)?"
                                     rf"{re.escape(m.group(1))}\b", question, re.IGNORECASE)
                       and not _DISTANCE_GIVEN.search(question)]
            # (or the zone itself, under a heading of travel zones: "I'm in Zone C" over "Zone C - everywhere else within
            # 60 km: $45.00", blind set 88, read; not a courier's "Zone 3 (5-8 miles): $21.00 per delivery", its price)
            zone = ZONE_ROW.match(row)
            if (named([re.sub(r"^(?:and|or)\s+", "", p) for p in places]) or _within(where, head)
                    or travelled and zone and re.search(rf"\b{re.escape(zone.group(0))}\b", question, re.IGNORECASE)):
                if _NOTHING.search(row):
                    return None  # the customer's zone pays nothing ("Zone 1 - up to 5 miles: free")
                if len(prices) == 1:
                    found.add(next(g for g in prices[0].groups() if g).replace(",", ""))
        # (or a line of one flat fee for a band of distance, no zone named: "Within 20 km of the Toowoomba CBD: $90 flat
        # per order" for "about 5 km from the CBD", blind set 101, read; not a rate per mile: "Over 20 miles: £1.50 per
        # mile")
        prices = list(PRICE.finditer(sentence))
        if not starts and len(prices) == 1 and _within(where, sentence[:prices[0].start()]) and not _NOTHING.search(
                sentence) and _PER_DISTANCE.match(sentence, prices[0].end()) is None:
            found.add(next(g for g in prices[0].groups() if g).replace(",", ""))
        # (or a table's row of a fee of travel listing the places the question names: "A: Areas Pretoria East, Lynnwood,
        # Menlo Park; Call-out R450." for "I'm in Lynnwood", practice set 4)
        elif not starts and len(prices) == 1 and TABLE_ROW.match(sentence) and not _NOTHING.search(sentence) and named(
                [p.strip() for m in _NAMES.finditer(sentence[:prices[0].start()]) for p in re.split(r"[,/]", m.group(0))
                 if len(p.strip()) > 1]):
            found.add(next(g for g in prices[0].groups() if g).replace(",", ""))
    return next(iter(found)) if len(found) == 1 else None


# A rate per distance after its price: " per mile", "/km", " for every mile".
_PER_DISTANCE = re.compile(rf"\s*(?:per|an?|/|for\s+(?:every|each))\s*{DISTANCE_UNIT}\b", re.IGNORECASE)


_AWAY_AT = re.compile(rf"([0-9]+(?:\.[0-9]+)?)\s*-?\s*{DISTANCE_UNIT}\b", re.IGNORECASE)
_ZONE_BAND = re.compile(r"(?:([0-9]+(?:\.[0-9]+)?)\s*(?:to|-|–)\s*|\b(up\s+to|within|under|over|beyond|more\s+than)\s+)"
                        rf"([0-9]+(?:\.[0-9]+)?)\s*{DISTANCE_UNIT}\b", re.IGNORECASE)


def _within(where: str, head: str) -> bool:
    """Whether a zone's distance band in `head` ("5 to 20 miles", "up to 25 km", "beyond 40 km")
    holds the customer's distance in `where` ("3 miles from") in the same unit."""
    at = _AWAY_AT.search(where)
    if at is None:
        return False
    distance, unit = Fraction(at.group(1)), at.group(2).lower().startswith("k")
    for m in _ZONE_BAND.finditer(head):
        if m.group(4).lower().startswith("k") != unit:  # (km, kms, kilometres; miles, mi)
            continue
        bound = Fraction(m.group(3))
        if m.group(1) is not None and Fraction(m.group(1)) <= distance <= bound:
            return True
        word = (m.group(2) or "").lower()
        if word.startswith(("up", "within", "under")) and distance <= bound:
            return True
        if word.startswith(("over", "beyond", "more")) and distance > bound:
            return True
    return False


# A fee's condition on the order's value: "order of £150 or more (ex VAT)", "order under £150", "orders over $80".
_ORDER_VALUE = re.compile(rf"\borders?\s+(?:value\s+|total\s+)?(of|under|below|over|above|less\s+than|more\s+than)\s+"
                          rf"[{CURRENCY_SIGNS}]\s*([0-9][0-9,]*(?:\.[0-9]+)?)(\s+or\s+(?:more|over|above))?", re.IGNORECASE)


def order_band_charge(question: str, sentences: Sequence[str], bill: Fraction) -> str | None:
    """The one fee, as written ("14.00"), of the lines of `sentences` whose distance band holds
    where `question` is and whose condition on the order's value `bill` meets ("* Up to 25 miles,
    order under £150 (ex VAT): £14.00 flat" for a £135 order "about 10 miles from you"; practice set
    2); None when none, or two, or when the line met charges nothing ("... order of £150 or more:
    FREE")."""
    where = where_customer_is(question) or ""
    found: set[str] = set()
    for sentence in sentences:
        m = _ORDER_VALUE.search(sentence)
        if m is None or not _within(where, sentence[:m.start()]):
            continue
        bound, word = Fraction(m.group(2).replace(",", "")), m.group(1).lower()
        if word == "of" and m.group(3) is None:
            continue  # ("order of £150": no bound)
        met = bill >= bound if word == "of" else (bill < bound if word in ("under", "below") or word.startswith("less")
                                                  else bill > bound)
        if not met:
            continue
        prices = [p for p in PRICE.finditer(sentence, m.end()) if _PER_DISTANCE.match(sentence, p.end()) is None]
        found.add("" if _NOTHING.search(sentence[m.end():]) or not prices
                  else next(g for g in prices[0].groups() if g).replace(",", ""))
    return next(iter(found)) or None if len(found) == 1 else None


def visits_counted(question: str) -> str | None:
    """How many visits `question` counts ("5 times", "3 visits"), as written; None for one."""
    m = _VISITS_COUNTED.search(question)
    return m.group(1) if m else None


# A surcharge laid on a zone's charge: "add £20.00 to any zone", "added to the zone price".
_TO_A_ZONE = re.compile(r"\b(?:add|adds|added)\b(?:[^.;]|(?<=[0-9])\.(?=[0-9])){0,30}?\bto\s+(?:any|each|every|the|your)"
                        r"\s+(?:travel\s+|delivery\s+)?zone\b", re.IGNORECASE)


def zone_surcharges(surcharges: Sequence[tuple[str, str, str]], sentences: Sequence[str],
                    zone: str | None) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The amounts of the claimed `surcharges` (discounts.claimed_surcharges: (sign, amount,
    sentence)) laid on the zone's charge ("Ride-ons & lawn tractors: add £20.00 to any zone"),
    added with the `zone` charged and none without one (blind set 90, read after its runs); and
    the surcharges left for the bill. Passages listing no zone rows (ZONE_ROW) keep such a
    surcharge as any other ("Grand pianos: add £60.00 to any zone" beside "Local move: £180",
    review)."""
    zoned_rows = any(ZONE_ROW.match(s) for s in sentences)
    on_zone = [c[1] for c in surcharges if c[0] == "+" and _TO_A_ZONE.search(c[2])] if zone is not None else []
    return on_zone, [c for c in surcharges if not (zoned_rows and _TO_A_ZONE.search(c[2]))]


_DISTANCE_GIVEN = re.compile(rf"(?<![\w.])[0-9]+(?:\.[0-9]+)?\s*-?\s*{DISTANCE_UNIT}\b", re.IGNORECASE)


def without_distances(question: str) -> str:
    """`question` without the distances it gives ("(I'm 3 miles from TA2)"): a distance that picks
    a zone counts nothing bought."""
    return _DISTANCE_GIVEN.sub(" ", question)


# Words of a heading that name no service: "COLLECTION & DELIVERY (price is for the return trip)" is named by
# "collection" or "delivery", not by "price"; "TRAVEL ZONES" is not asked by "I'm in Zone C".
_NOT_THE_SERVICE = frozenset({"price", "prices", "cost", "costs", "charge", "charges", "fee", "fees", "rate", "rates",
                              "return", "trip", "each", "way", "per", "all", "any", "zone", "zones", "area", "areas"})
_ANOTHER_THING = re.compile(r"\b(?:plus|as\s+well\s+as|along\s+with|together\s+with|and\s+also)\b|\+", re.IGNORECASE)
_ZONE_WORDS = re.compile(rf"\bzones?\b|\b{DISTANCE_UNIT}\b", re.IGNORECASE)


def asks_zone(question: str, zone: str, priced: Sequence[tuple[str, str]], sections: dict[str, str]) -> bool:
    """Whether `question` asks the zone's charge itself: it names a word of the heading over the
    zone's row ("how much would collection and delivery be ... i'm about 8 miles away" over
    "COLLECTION & DELIVERY" and "Zone B — 5 to 12 miles: £25.00", blind set 90, read after its
    runs). zone: the zone's charge (zone_charge); priced: the (heading, sentence) pairs pricing
    things; sections: each sentence's section heading."""
    if _ANOTHER_THING.search(question):  # ("a basic service call plus the travel charge": the call too)
        return False
    # (the zone's own row, a zone or a distance: not "Spoke replacement: CA$20" under "TUNE-UPS", simple set 71)
    rows = [p for _, p in priced if Fraction(zone) in {Fraction(x) for x in prices_in(p)} and _ZONE_WORDS.search(p)]
    # (nor another thing named by its label: "Push mower service and collection, I live 15 miles away", review; the
    # thing collected is none: "collection and delivery ... for my lawn tractor")
    others = [p for _, p in priced if p not in rows and not _ZONE_WORDS.search(p)]
    bought = re.sub(r"\bfor\s+(?:my|our|his|her|their)\s+[^?.!,;]*", " ", question, flags=re.IGNORECASE)
    if named_by_two(bought, others) or fully_named(bought, others):
        return False
    heading = {w for p in rows for w in norm_words(sections.get(p, ""))} - _NOT_THE_SERVICE
    return bool(heading & norm_words(question))
