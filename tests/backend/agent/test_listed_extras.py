"""Things listed after a comma, counted by whom they are for, a fee of the service named, and an
amount with its thousands apart by a space after dot leaders (issue 15). Read from blind sets
95-97 after their runs; each test fails when its reading regresses."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.numerals import with_currency_signs

from .test_expressions import first
from .test_word_rates import RATES

DJ = """SOUNDCART DJ HIRE - PACKAGES AND PRICES

| Package  | DJ time | Price |
|----------|---------|-------|
| Bronze   | 3 hours | £395  |
| Silver   | 4 hours | £520  |
| Gold     | 5 hours | £650  |

EXTRAS
* Extra DJ time: £85 per hour
* Uplighting: £12 per uplighter (minimum 6 uplighters)
* Smoke / haze machine: £40
"""

SALON = """NORDKLIPP HERRFRISOR

CUTS
Men's cut (scissor or clipper) ............ 395 kr
Cut + beard combo ......................... 560 kr

GROOM PACKAGE ........................... 1 150 kr
(men's cut, hot towel shave, eyebrow tidy)

DISCOUNTS
- Group bookings of 4 or more people in the salon get 10% off all services in the booking.
"""

# (the bureau of test_word_rates, with a Polish row and a sworn translation's stamp)
TRANSLATION = RATES.replace("Dutch <-> Arabic", "Dutch <-> Polish / Turkish              | 0.17\nDutch <-> Arabic").replace(
    "OTHER SERVICES\n", "OTHER SERVICES\n- Sworn (certified) translation stamp: 25.00 per document\n")


def test_a_thing_listed_after_a_comma():
    # "Silver package, one extra hour and 8 uplighters": the package too (it was "85 + 8 * 12")
    assert first("Saturday in March, Silver package, one extra hour and 8 uplighters. total cost?", DJ) == 701


def test_things_counted_by_whom_they_are_for():
    # "cut + beard combos for the other 4": 4 combos; "1 150 kr" after dot leaders is 1,150 (it was 150)
    assert first("wedding party of 5 in the salon: the groom package for the groom plus cut + beard combos for the other 4."
                 " what's the total?", SALON) == Fraction("3051")
    assert with_currency_signs("GROOM PACKAGE ........ 1 150 kr") == "GROOM PACKAGE ........ ¤1,150"
    # (a count before it is still its own, and a year is no thousands: "from 150 kr")
    assert with_currency_signs("Line design ........ from 150 kr") == "Line design ........ from ¤150"


def test_a_fee_of_the_service_the_question_names():
    # "a sworn translation" takes "Sworn (certified) translation stamp: 25.00 per document" (it was the words alone)
    assert first("I need a sworn translation of my 400-word birth certificate from Dutch into Polish, delivered by email "
                 "only. What's the total including VAT?", TRANSLATION) == Fraction("112.53")
    # an ordinary translation takes no stamp
    assert first("I need a translation of my 400-word letter from Dutch into Polish. What's the total including VAT?",
                 TRANSLATION) == Fraction("82.28")
