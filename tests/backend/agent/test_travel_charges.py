"""Travel charged for the distance to the customer (the twenty-eighth session: the travel lines of
blind sets 59, 64 and 78, read after their runs, wrote the travel alone as the bill, "2.50 * 25"):
an allowance in the sentence before its rate ("Free within 15 km ... Past that we charge $2.50 per
extra km", "Further out we charge 80p per mile each way"), a rate charged both ways, on every
visit of a job of several visits, and a rate on the whole distance with no allowance. Each
assertion of a reading failed on the code before it."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.allowances import allowance_expressions, travel_charge

from backend.agent.tools.segmentation import text_sentences
from backend.agent.tools.visits import zone_charge

from .test_expressions import first

CASTLES = ("PARTY HIRE PRICES\nCastles (per day)\n  Pirate Ship ........ $210\n  Dino Dome .......... $180\n\n"
           "DELIVERY\nFree within 10 km of our depot. Past that we charge\n$3.00 per extra km, both ways (there and back).\n")
PESTS = ("PRICE LIST\nAnt treatment (2 visits) - £90\nWasp nest - £60\n\nTRAVEL\nFree within 10 miles of our base. "
         "Further out we charge 50p per mile each way, counted from the 10-mile boundary, on every visit.\n")
TREES = ("TREE WORK PRICES\nSmall tree removal: $400\nLarge tree removal: $900\n"
         "Travel outside the city limits: $1.50 per km (one way, counted from the city limits)\n")


def test_an_allowance_in_the_sentence_before_and_a_rate_both_ways():
    # 210 + (16 - 10) km * $3.00, there and back (was 3.00 * 16: the travel alone)
    assert first("we're 16 km from your depot, how much for the Pirate Ship including delivery?", CASTLES) == 246
    one_way = CASTLES.replace("both ways (there and back)", "one way")
    assert first("we're 16 km from your depot, how much for the Pirate Ship including delivery?", one_way) == 228
    assert first("we're 8 km from your depot, the Dino Dome and the Pirate Ship please, total?", CASTLES) == 390  # within
    sentences = ["Free within 10 km of our depot.", "Past that we charge $3.00 per extra km, both ways (there and back)."]
    assert allowance_expressions("we're 16 km from your depot", sentences) == ["2 * (16 - 10) * 3.00"]


def test_a_rate_each_way_on_every_visit_of_a_job_of_several_visits():
    # "each way" is no second unit of the rate (it nulled the reading), and the job's own line names its visits
    sentences = ["Free within 10 miles of our base.",
                 "Further out we charge £0.50 per mile each way, counted from the 10-mile boundary, on every visit."]
    assert travel_charge("I live 18 miles from your base", sentences) == ("2 * (18 - 10) * 0.50", "18", True)
    assert first("ant treatment please, I live 18 miles from your base. how much?", PESTS) == 90 + 8 * Fraction(1, 2) * 2 * 2
    assert first("how much for a wasp nest? I live 18 miles from your base", PESTS) == 60 + 8  # one visit


def test_a_travel_rate_on_the_whole_distance():
    assert travel_charge("we're 12 km outside the city limits", [TREES.splitlines()[3]]) == ("12 * 1.50", "12", False)
    assert first("we're 12 km outside the city limits, how much to remove a small tree?", TREES) == 418
    assert first("how much to remove 2 small trees? we're in town", TREES) == 800
    # (a distance within a free radius is no whole distance charged)
    free = TREES + "Travel is free within 20 km of the yard.\n"
    assert travel_charge("we're 12 km away", free.splitlines()[3:]) is None


def test_review_of_the_twenty_eighth_session_travel():
    # a distance from somewhere else is no travel ("10 miles from the station")
    tuner = "PIANO TUNING\nStandard tune: £75\nPitch raise: £40\n\nMileage: 50p per mile, one way.\n"
    assert first("how much for a standard tune and pitch raise? we're 10 miles from the station", tuner) == 115
    assert first("how much for a standard tune and pitch raise? we're 10 miles from you", tuner) == 120
    # a return said free or not charged is one way
    free_back = tuner.replace("one way.", "one way, return journey free.")
    assert first("I'm 12 miles away, how much for a standard tune and a pitch raise?", free_back) == 121
    not_back = tuner.replace("50p per mile, one way.", "45p per mile (one way, not the return trip).")
    assert first("I'm 20 miles away, how much for a standard tune and a pitch raise?", not_back) == 124
    # the visits of the one line holding the job's price (not another job at the same price)
    pests = ("PRICE LIST\nFlea treatment (2 visits) - £60\nWasp nest - £60\nMouse treatment (3 visits) - £120\n\n"
             "TRAVEL\nFree within 10 miles of our base. Further out we charge 50p per mile each way, counted from "
             "the 10-mile boundary, on every visit.\n")
    assert first("wasp nest please, I live 18 miles from your base. how much?", pests) == 68
    assert first("mouse treatment please, I live 18 miles from your base. how much?", pests) == 120 + 8 * 3
    # a least travel charge beside its rate
    florist = "FLORIST\nBridal bouquet: £90\nButtonhole: £12\n\nDelivery: £2 per mile, minimum charge £10.\n"
    assert first("bridal bouquet delivered 3 miles from you, how much?", florist) == 100
    # the things listed, read without the distance (was "2 * 12 + 3 * 2": the bouquet lost, 3 miles a thing)
    assert first("a bridal bouquet and 2 buttonholes delivered 8 miles from you, how much?", florist) == 90 + 24 + 16


def test_prices_written_with_their_currency_named_are_read():
    # New-user pass: "After that we charge 1.50 dollars per km beyond the first 10 km" was no travel allowance (37.50
    # for 25 km), and "Full groom (any size): 80 dollars" no price of "a full groom and a nail trim" (the trim alone).
    from backend.agent.tools.pricing import with_named_currency
    groomer = ("CAT GROOMING PRICES\n- Full groom (any size): 70 dollars\n- Nail trim: 12 dollars\n\n"
               "Tax: all prices are before sales tax. Add 8 percent sales tax to the total of services.\n\n"
               "Travel charge: the van comes to you. The first 10 km are free. After that we charge 1.50 dollars per km "
               "beyond the first 10 km (one way distance).\n")
    assert first("I live 25 km from you. How much is the travel charge?", groomer) == Fraction("22.50")
    assert first("What is the total with tax for a full groom and a nail trim?", groomer) == Fraction("88.56")
    assert with_named_currency([("h", "a 30 dollar deposit, 12 euros each, 10 pounds of cat litter")]) == [
        ("h", "a $30 deposit, €12 each, 10 pounds of cat litter")]


def test_the_extra_charge_to_come_out_is_the_travel_alone():
    # Blind set 86 (read after its runs): "I'm about 40 km from your Brendale workshop, what's the extra charge for you
    # to come out to me?" added a sensor transfer's $45 to the travel.
    glass = ("MOBILE AUTO GLASS\nRain/light sensor transfer: $45.00\nTint strip: $30.00\n"
             "- Free call-out within 25 km of our workshop.\n- Beyond 25 km: $1.50 per km (one way) for every km past the "
             "first 25 km.\n")
    assert first("I'm about 40 km from your workshop, what's the extra charge for you to come out to me?", glass) == \
        Fraction("22.50")


def test_a_zone_row_listing_places_apart_by_slashes_among_travel_zones():
    # Blind set 94, read after its runs: "Zone C - Canmore / Banff ...... $260.00" (no distance, no word of travel of its
    # own, below "Zone B - up to 60 km (...)") was no zone, and "4 clear blocks delivered to Canmore" left it out.
    ice = ("GLACIER ICE WORKS - PRICES\n\nClear block ........ $90.00 each\nDouble block sculpture ........ $700.00\n\n"
           "DELIVERY (per drop)\n  Zone A - within Red Deer city limits .......... $80.00\n"
           "  Zone B - up to 50 km (Sylvan Lake, Lacombe,\n           Penhold, Innisfail) ............... $130.00\n"
           "  Zone C - Jasper / Hinton ..................... $250.00\n")
    sentences = [s for _, s in text_sentences(ice)]
    assert zone_charge("Can I get 4 clear blocks delivered to Hinton?", sentences) == "250.00"
    assert zone_charge("4 clear blocks delivered to Lacombe please", sentences) == "130.00"
    assert first("Can I get 4 clear blocks delivered to Jasper? what's the full amount?", ice) == 610
    # one place the zone is within (blind set 94, read: "delivered within Calgary" paid no zone)
    assert zone_charge("4 clear blocks delivered within Red Deer", sentences) == "80.00"
    assert zone_charge("4 clear blocks delivered to Red Deer", sentences) == "80.00"
    assert zone_charge("4 clear blocks delivered to Olds", sentences) is None
    # (a gym's zones are no travel)
    gym = ["Zone 1 - Cardio / Weights: $12 per visit", "Zone 2 - Pool / Sauna: $15 per visit"]
    assert zone_charge("I'll use the Weights area, how much?", gym) is None


def test_one_letter_is_no_place_of_a_zone():
    # review: "Zone 3 - A/B roads only" named a place "A", which every question's "a" named
    rows = ["Zone 1 (0-3 miles): £10.00 per delivery", "Zone 2 (3-8 miles): £15.00 per delivery",
            "Zone 3 - A/B roads only: £25.00"]
    assert zone_charge("How much for a delivery 5 miles away?", rows) == "15.00"
