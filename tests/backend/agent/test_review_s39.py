"""Right answers the thirty-ninth session's comparison (the program's half, per question, against the code before
the session) caught lost on the way, each with the right value (issue 15). Each test fails on the code that lost it."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.operations import names_a_size
from backend.agent.tools.discounts import claimed_surcharges
from backend.agent.tools.segmentation import split_sentences
from backend.agent.tools.sentences import section_headings

from .test_expressions import first

FERRY = ("ISLAND FERRY - Fares\n\nSingle fares\n- Adult: £7.40\n- Child (5-15): £3.70; under 5s travel free\n"
         "- Senior (65+): £5.20\nReturn tickets cost 1.8 times the single fare.\n"
         "A 10-journey adult carnet costs £55 and never expires.\n")
LAUNDRY = ("Service washes\n- Service wash: £2.80 per kg, minimum charge £12.\n\n"
           "Membership\nStudents with a valid card get 10% off service washes.\n")


def test_a_title_s_section_is_its_list():
    # ("Return tickets cost 1.8 times ..." and the carnet are no line of "Single fares": the adult's single, 1.8 times)
    pairs = [("", s) for s in ["Single fares", "- Adult: £7.40", "Return tickets cost 1.8 times the single fare."]]
    assert section_headings(pairs) == ["", "Single fares", ""]
    assert first("how much is an adult return on the skerrow ferry", FERRY) == Fraction("13.32")


def test_a_weight_priced_per_kg_is_a_count():
    assert not names_a_size("what would a 9 kg service wash cost me?", 17)
    assert names_a_size("a 1 kg Lane Espresso", 2) and names_a_size("a 500 g bag", 2)
    assert first("im a student (have my card) - what would a 9 kg service wash cost me?", LAUNDRY) == Fraction("22.68")


# The thirty-ninth session's review: a helper's own price lists, on which the session's code had lost these.
BOOKLETS = ("QUICKPRINT - BOOKLETS AND CARDS (AUD)\n\nSaddle-stitched booklets, price per copy\n8 pages: $1.90\n"
            "12 pages: $2.60\n16 pages: $3.30\n\nGreeting cards: $1.20 each\nEnvelopes: $0.15 each\n")
PHOTO_BOOKS = ("SNAP PHOTO BOOKS (USD)\nHardcover photo book: 20 pages $35.00; 40 pages $55.00; 60 pages $75.00\n"
               "Softcover photo book: 20 pages $22.00; 40 pages $34.00\nGift box: $6.00\n")
TROPHIES = ("Podium Trophies (USD)\n\nTrophies\nCup trophy, 10 inch: $24.00\nFigure trophy: $18.00\n\nMedals\n"
            "Medal with ribbon: $4.50\nEngraving: $0.20 per letter\nBulk orders: 10 to 24 items 5% off; 25 items or more "
            "10% off.\n")
VEG = "Green Box Veg (GBP)\nSmall veg box: £15\nLarge veg box: £24\nSubscribers get 10% off every box.\n"
VANS = ("City Van Hire (USD)\nSmall van: $120 per day\nLuton van: $160 per day\nHalf days (up to 5 hours) are charged at "
        "half the day rate.\nExtra driver: $15 per hire\n")
HANDY = "Handy Hire (NZD)\nHandyman labour: $80 per hour, 2-hour minimum\nGutter clean, single storey: $150\n"
WASHES = "Bubbles Car Wash (USD)\n\n1. Basic Wash\n$25\n2. Deluxe Wash\n$40\n3. Ultimate Wash\n$55\n"


def test_review_of_the_thirty_ninth_session():
    # a page count is no count of copies: the cell's price per copy times the copies (was 2.60 alone)
    assert first("200 copies of a 12-page booklet - how much?", BOOKLETS) == 520
    assert first("3 hardcover photo books of 20 pages each - total?", PHOTO_BOOKS) == 105
    # a bulk discount in another section holds (the section filter was dropped)
    assert first("12 cup trophies for our awards night - total?", TROPHIES) == Fraction("273.60")
    # a subscriber by saying so
    assert first("I'm subscribed to the weekly delivery. 2 large veg boxes - total?", VEG) == Fraction("43.20")
    # "half the day rate" halves it ("half a day" is a length)
    assert first("What's half the day rate for the Luton van?", VANS) == 80
    # "by the hour" with an hour counted keeps the least hours
    assert first("Do you charge by the hour? Handyman labour for 1 hour - how much?", HANDY) == 160
    # a numbered title over its price alone stays with it
    assert first("2 deluxe washes and a basic wash - total?", WASHES) == 105


FROSTLINE_TERMS = ("FROSTLINE - BOOKING TERMS\n\n5. Rush orders\nSculptures ordered less than 5 business days before the event "
                   "carry a 25% rush surcharge on the sculpture price.\n")
FROSTLINE_PRICES = ("FROSTLINE - PRICE LIST (all prices in CAD, before 5% GST)\n\nSCULPTURES (priced by number of blocks)\n"
                    "  Single block (swan, heart, monogram...) ........ $425.00\n  Double block ........ $780.00\n")


def test_a_numbered_title_over_a_capital_stays_with_it():
    # "5. Rush orders" names the rush of its sentence: no rush surcharge on a swan asked with no rush (was 425 * 1.25)
    assert any(s.startswith("Rush orders Sculptures ordered") for s in split_sentences(FROSTLINE_TERMS))
    assert claimed_surcharges("what's a single block swan sculpture come to with GST?", split_sentences(FROSTLINE_TERMS)) == []
