"""Least charges and the bill a question states (the twenty-seventh session: blind sets 77-80
read after their runs): a minimum charge of one kind of work on a line of its own, a least number
of hours beside an hourly rate, a minimum charge per visit with a word between, a discount for two
things done together, a bill the question states with a card surcharge laid on it, and a tax the
prices are said to be before. Each assertion of a reading failed on the code before it."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.taxes import claimed_tax

from .test_expressions import first, result

GARDEN = ("GREENWAY GARDEN CARE - PRICES\nAll prices are before 5% GST, which is added to every invoice.\n\n"
          "GARDEN CREW\nCrew rate (two gardeners + van) ........ $120/hr\nMinimum charge per visit ........ 2 hours\n\n"
          "HEDGES\nHedge cutting ........ $5.00 per linear metre\nMinimum hedge charge ........ $150\n\n"
          "LAWNS\nLawn mowing: $0.20 per m2\n\nEXTRAS\nGreen waste removal: $30 per load\n\n"
          "DISCOUNTS\n- Hedge + lawn on the same visit: 10% off the job\n")
PATIOS = ("BRIGHTSTONE PATIO CLEANING - PRICES\nAll prices exclude VAT, which is added at 20%.\n\n"
          "Patios and paths: £4.00 per m2, any size.\nMinimum cleaning charge per visit: £80.\n\n"
          "ADD-ONS\nMoss treatment: £25 per area\nGum removal: £12 per patch\n")
TERMS = ("PAYMENT\nPayment is due on completion. Cash and debit card: no fee. Credit card: 2% surcharge on the amount "
         "paid. Returned cheques: £25.\n")


def test_a_minimum_charge_of_one_kind_of_work_holds_for_its_lines_only():
    # "Minimum hedge charge: $150" under "Hedge cutting: $5.00 per linear metre": 15 m is 75, charged 150
    assert first("just 15 m of hedge, how much with gst", GARDEN) == Fraction(150 * 105, 100)
    assert first("40 m of hedge please, price before gst?", GARDEN) == 200  # above it: as it is
    # (a hedge's minimum is no minimum of the lawn: 100 m2 at $0.20 is 20)
    assert first("mow my 100 m2 lawn, how much before gst?", GARDEN) == 20


def test_a_least_number_of_hours_holds_for_the_hourly_rate_beside_it():
    assert first("i only need the crew for about an hour, whats that cost including GST", GARDEN) == Fraction(240 * 105, 100)
    assert first("the crew for 3 hours, price before gst?", GARDEN) == 360  # above it: as it is


def test_a_minimum_charge_per_visit_named_by_its_work_is_the_bill_s_least():
    assert first("just need my patio done, its about 15 sq m. whats the total with vat?", PATIOS) == 96  # 80 * 1.2
    assert first("a 30 m2 patio, price ex vat?", PATIOS) == 120
    # (what a thing adds to a bill is charged no least bill: 3 patches of gum are 36)
    assert first("how much extra would it be to get 3 patches of gum removed? (ex vat)", PATIOS) == 36


def test_a_discount_for_two_things_done_together_needs_both():
    # "Hedge + lawn on the same visit: 10% off the job" is no discount of 40 m of hedge alone
    assert first("40 m of hedge please, price before gst?", GARDEN) == 200
    together = GARDEN.replace("- Hedge + lawn on the same visit: 10% off the job", "- Hedge and lawn done together: 10% off")
    assert first("how much to cut 40 m of hedge?", together) == 200
    assert first("a 400 m2 lawn and 40 m of hedge on the same visit, price before gst?", GARDEN) == Fraction(280 * 90, 100)


def test_the_bill_a_question_states_is_what_a_card_surcharge_is_laid_on():
    assert first("My invoice came to £300 and I'd like to pay by credit card. What will the total charge be?",
                 PATIOS, TERMS) == 306
    # (a tax said to be in it is not added again)
    assert first("my invoice is £480 inc VAT and I want to pay by credit card - how much will I actually pay?",
                 PATIOS, TERMS) == Fraction("489.6")


def test_a_card_fee_on_the_amount_charged_is_laid_on_the_whole_bill_and_its_tax_last():
    # blind set 94, read: "Credit card payments carry a 2.5% processing fee on the amount charged" was no fee, and
    # "what's the full amount?" asked no tax
    ice = ("ICE PRICES\nClear block: $95.00 each\n\nDELIVERY\nZone A - within Calgary city limits: $85.00\n"
           "Zone B - up to 60 km (Airdrie, Cochrane): $140.00\nZone C - Canmore / Banff: $260.00\n\n"
           "5% GST is added to every invoice, including delivery. Credit card payments carry a 2.5% processing fee on "
           "the amount charged.\n")
    assert first("4 clear blocks delivered to Canmore, paying by credit card, what's the full amount?", ice) == \
        Fraction("688.80")
    assert first("4 clear blocks delivered to Canmore, paying by credit card, total before GST?", ice) == 656
    assert first("4 clear blocks delivered to Canmore, paying cash, what's the full amount?", ice) == 672
    assert claimed_tax("what's the full amount?", ["5% GST is added to every invoice."]) == "5"
    from backend.agent.tools.discounts import card_fees
    assert card_fees("paying by debit card", ["Credit card payments carry a 2.5% processing fee."]) == []
    assert [f[1] for f in card_fees("by credit card", ["Card payments incur a 3% charge."])] == ["3"]


def test_a_card_fee_on_one_priced_thing_and_the_fee_asked_by_itself():
    # review of the thirty-fourth session: one thing paid by card had no candidate at all (the fee on the amount
    # charged was set apart from the surcharges that lead to the thing's own price), and the fee asked by itself
    # was answered with the whole bill
    cleans = ("PRICES\nStandard clean: $120\nDeep clean: $200\nOven clean: $60\n\nPAYMENT\n"
              "Credit card payments carry a 2.5% processing fee on the amount charged.\n")
    assert first("how much is a deep clean if I pay by credit card?", cleans) == 205
    assert first("how much is a deep clean with the card fee?", cleans) == 205
    assert first("what is the card fee on a deep clean if I pay by credit card?", cleans) == 5
    assert first("how much would the processing fee be if I pay by card for a deep clean and an oven clean?",
                 cleans) == Fraction("6.5")
    assert first("a deep clean and an oven clean paid by credit card, what's the total with the fee?", cleans) == \
        Fraction("266.5")


def test_prices_said_to_be_before_a_tax_add_it():
    assert claimed_tax("2.5 hrs of repair labour with hst", ["All prices in Canadian dollars (CA$) and BEFORE 13% HST."]) == "13"
    # an aside in brackets says nothing of whether the prices hold it
    assert claimed_tax("a tuning with hst", ["Services, then travel, then 13% HST on the whole amount (travel included)."]) == "13"
    assert claimed_tax("a tuning with hst", ["13% HST applies to all services and is included in the prices above."]) is None
    assert claimed_tax("a tuning before hst", ["All prices in Canadian dollars (CA$) and BEFORE 13% HST."]) is None
    assert claimed_tax("a patio clean with vat", ["All prices exclude VAT, which is added at 20%."]) == "20"


DRIVEWAYS = ("KERBSIDE DRIVEWAY CARE - PRICES\nAll prices exclude VAT, which is added at 20%.\n\n"
             "DRIVEWAY CLEANING (rate per m2, set by the driveway's whole area)\n"
             "Driveway area     | Rate per m2\nUp to 50 m2       | £3.00\n51 to 150 m2      | £2.50\n"
             "Over 150 m2       | £2.00\n\nPATHS: £3.50 per m2, any size.\n")
SERVICING = ("HEARTHSIDE STOVE SERVICING - RATES\nAll prices before 13% HST.\n\n"
             "SERVICE (priced by time since the stove was last serviced)\nLast serviced | Wood stove | Pellet stove\n"
             "Within 12 months | $150 | $180\n1 to 3 years ago | $190 | $230\nOver 3 years | $240 | $290\n\n"
             "REPAIRS\nRepair labour: $85 per hour\nGasket replacement: $45\n")


def test_an_area_picks_the_band_of_its_rate_per_square_metre():
    # "101 to 200 m2: Rate per m2 £2.20" is the band's rate times the whole area, however the area is written
    assert first("how much to clean a 120 m2 driveway? ex vat", DRIVEWAYS) == 300
    assert first("Hi, what would a 120 m² driveway clean cost, before VAT?", DRIVEWAYS) == 300
    assert first("my driveway is about 200 sq m, price ex vat?", DRIVEWAYS) == 400
    assert first("a 40 sqm driveway, how much before vat", DRIVEWAYS) == 120


def test_a_time_gone_by_is_no_count_and_a_bound_opening_with_within_asks_none():
    # "last serviced about 8 months ago" is no 8 of anything; "Within 12 months" is no 12 months asked for
    assert first("wood stove, last serviced about 8 months ago. how much for a service with hst?", SERVICING) == Fraction(150 * 113, 100)
    assert first("how much is a pellet stove service incl hst? last serviced 6 months ago", SERVICING) == Fraction(180 * 113, 100)


def test_the_first_of_a_thing_and_each_additional_one():
    stumps = "STUMP GRINDING\nFirst stump (up to 30 cm across): $160\nEach additional stump, same visit (up to 30 cm): $95\n"
    assert first("how much to grind out 3 small stumps in one visit?", stumps) == 160 + 2 * 95
    assert first("3 hours of labour, how much?", "LABOUR\nFirst hour: £60\nEach additional hour: £40\n") == 60 + 2 * 40
    assert first("how much to walk my 3 dogs?", "Dog walking: £15 for the first dog, £8 for each additional dog.\n") == 31
    assert first("how much to fit 4 tyres?", "Tyre fitting: first tyre $25, each extra tyre $15\n") == 25 + 3 * 15


TUNING = ("HARBOUR PIANO CARE - RATES\nAll prices in Canadian dollars and BEFORE 13% HST.\n\n"
          "TUNING (priced by time since the piano was last tuned)\nLast tuned | Upright | Grand\n"
          "Within 12 months | $150 | $180\n1 to 3 years ago | $190 | $225\nOver 3 years | $245 | $280\n\n"
          "TRAVEL\nZone A, within 10 km: free\nZone B, 10 to 30 km: $20\n\n"
          "POLICIES\nIf nobody is home or the piano cannot be reached, we charge the travel fee for your zone plus $60.\n")


def test_a_row_of_the_time_since_a_thing_was_last_done():
    # "hasn't been tuned in like 2 years" is the "1 to 3 years ago" row's grand, not 2 of anything
    assert first("how much to tune a grand that hasnt been tuned in like 2 years? before tax", TUNING) == 225
    assert first("upright, last tuned about 8 months ago. how much for a tuning incl HST?", TUNING) == Fraction(150 * 113, 100)
    assert first("my upright hasn't been tuned in 5 years, how much before hst?", TUNING) == 245
    # ("last year" is on both rows' bound: the row within it; "2 uprights": both of them)
    assert first("2 uprights, both tuned last year. total before hst?", TUNING) == 300


def test_a_charge_of_a_visit_that_goes_wrong_is_no_charge_of_every_visit():
    # "If nobody is home ... the travel fee for your zone plus $60" is not added to a tuning; the zone is, though
    # the customer's distance is the same figure as its fee
    assert first("I'm about 20 km from you. Upright, tuned last year. What's the total before HST including travel?",
                 TUNING) == 170


STUDIO = ("INKWELL TATTOO - PRICES\n\nTATTOO TIME\nResident artists ............. $160 per hour\n"
          "Guest artists ................ $200 per hour\n"
          "Sessions longer than 30 minutes are charged at the hourly rate from the first minute.\n\n"
          "DEPOSITS\nAll bookings need a deposit to secure the date: Sessions of up to 4 hours: $100\n\n"
          "AFTERCARE\nAftercare balm: $18\n")


def test_a_session_s_length_at_an_hourly_rate_and_the_artist_it_is_with():
    # "a 3 hour session" at "$160 per hour" is 3 hours of it; no deposit ("Sessions of up to 4 hours: $100" in a
    # list of deposits) and no other artist ("Guest artists") is added
    assert first("how much would a 3 hour session with one of your resident artists cost", STUDIO) == 480
    # but an extra after a thing named is added ("with the aftercare balm")
    assert first("2 hours with a resident artist, with the aftercare balm too. how much?", STUDIO) == 320 + 18


def test_a_note_under_a_row_is_a_sentence_of_its_own():
    from backend.agent.tools.segmentation import text_sentences
    sentences = [s for _, s in text_sentences(STUDIO)]
    assert "Guest artists: $200 per hour" in sentences
    assert "Sessions longer than 30 minutes are charged at the hourly rate from the first minute." in sentences


def test_an_add_on_per_square_metre_is_laid_on_the_area_and_a_final_amount_is_money():
    # "Re-sanding: £1.10 per m2" for "a 100 m2 drive ... and re-sand it": 100 of it
    assert first("how much to clean a 100 m2 driveway and re-sand it? ex vat",
                 DRIVEWAYS + "\nADD-ONS\nRe-sanding (kiln-dried sand): £1.10 per m2\n") == 100 * Fraction("2.50") + 110
    from backend.agent.operations import asks_money
    assert asks_money("paying on credit card - whats the final amount?")
    assert not asks_money("what amount of flour do I need?")


def test_review_of_the_twenty_seventh_session():
    # what the first version of these readings broke, each right on the code before them
    car = "Cheapo Car Hire\nCompact car: $45 per day\nFull insurance: $15 per day\nChild seat: $8 per day\n"
    assert first("How much for 3 days with full insurance?", car) == 45 * 3 + 15 * 3  # an extra stays an extra
    windows = "Bright Windows\nHouse windows (up to 3 bedrooms): $90\nConservatory: $40\nReturning customers get 10% off.\n"
    assert first("I'm a returning customer. My total last time was $130. What will house windows alone cost now?",
                 windows) == 81  # a bill of another time is not this one's
    cleaning = ("Maple Home Cleaning\nStandard clean: $120\nDeep clean: $220\n"
                "All prices are per visit (13% HST applies and is included).\n")
    assert first("What's the total for a standard clean and a deep clean including tax?", cleaning) == 340
    florist = ("Bloom Events Florist\nAll prices below (a 30% non-refundable deposit is required to confirm):\n"
               "- Bridal bouquet: $180\n- Buttonholes: $15 each\n- Table centrepieces: $45 each\n")
    assert first("How much for a bridal bouquet and 6 buttonholes?", florist) == 270  # an aside names no deposit list
    boiler = "Boiler Care\nBoiler repair (first hour): £85\nHome visit charge: £30 unless you book a service plan.\n"
    assert first("Can someone come out and repair my boiler? It should take under an hour. How much?", boiler) == 115
    paving = "Driveway cleaning: £3 per m2\nPatio cleaning: £4 per m2\nDriveway + patio on the same visit: 10% off\n"
    assert first("How much to clean a 50 m2 drive and a 20 m2 patio on the same visit?", paving) == 207  # "drive" is it
    storage = "Up to 6 months: £40 per month\n6 to 12 months: £35 per month\nOver 12 months: £30 per month\n"
    assert first("I stored with you last year. How much for 3 months of storage?", storage) == 120  # no time since work
    kennels = "First dog: £25 per night\nEach additional dog: £15 per night\n"
    assert first("2 dogs for 3 nights, how much?", kennels) == (25 + 15) * 3
    massage = candidate_expressions("How much for two 1-hour massages?", [result("Massage: £60 per hour\nFacial: £45\n")],
                                    None, evaluate)
    assert not massage or evaluate(massage[0]).q != 60  # two of them: not one hour's price


def test_a_row_of_an_age_band_holding_the_children_s_ages():
    dojo = ("DOJO FEES\n• Monthly membership (adults): $95, unlimited classes\n"
            "• Monthly membership (juniors 6-15): $70, up to 3 classes a week\n"
            "Freeze your membership for up to 2 months a year for $10 per month.\n")
    assert first("My two kids (8 and 11) want to join on monthly memberships. What's that per month?", dojo) == 140


def test_a_tax_added_to_an_invoice_including_its_parts_is_not_a_tax_included():
    # "is added to the final invoice, including labor, extras, travel and parts" adds the tax (blind set 81)
    assert claimed_tax("a maintenance visit with tax?", [
        "Michigan sales tax (6%) is added to the final invoice, including labor, extras, travel and parts."]) == "6"
    assert claimed_tax("a clean incl vat", ["Prices are inclusive of VAT at 20%."]) is None


def test_a_customer_s_standing_is_claimed_by_the_asker_s_own():
    from backend.agent.tools.discounts import claimed_surcharges
    offer = ["* New customers: $25 off your first routine maintenance visit (one per household)."]
    assert not claimed_surcharges("price for setting up a brand new 120 gal tank, incl. the tax?", offer)
    assert not claimed_surcharges("need my tank moved to the new apartment 12 miles away. total?", offer)
    assert claimed_surcharges("I'm a new customer, how much for a routine visit?", offer)


def test_a_least_charge_alone_prices_no_thing():
    # Blind set 81: "need someone to feed my fish 4 times" over "Fish-sitting visit (feed + quick check): $32 per
    # visit" and "Minimum charge per call-out: $60 before tax (does not apply to fish-sitting visits)" was 60 * 4
    # (the embedder ranked the minimum's sentence first).
    from backend.agent.tools.fact_expressions import document_candidates
    from backend.agent.tools.minimums import minimum_only
    least = "Minimum charge per call-out: $40 before tax (does not apply to cat feeding visits)."
    visit = "Cat feeding visit (feed + litter check): $18 per visit"
    assert minimum_only(least)
    assert not minimum_only(visit + ", minimum 2 visits")
    ranked = [("pets.txt", least), ("pets.txt", visit)]  # as the embedder ranked them
    found = document_candidates("need someone to feed my cat 5 times while im away. total?", ranked, evaluate, ranked)
    assert found[:1] == ["18 * 5"]


def test_an_amount_a_percentage_excepts_is_added_after_it():
    # blind set 94, read: "a 15% holiday surcharge on all items except delivery and setup charges" was laid on the
    # late drop-off fee listed under "DELIVERY & SETUP"
    ice = ("ICE PRICES\nIce luge: $495.00\nLED light base (rental, per piece): $45.00\n\n"
           "DELIVERY & SETUP (per drop, one way)\nZone A - within Calgary city limits: $85.00\n"
           "Zone B - up to 60 km (Airdrie, Cochrane): $140.00\nDrop after 9 pm or before 7 am: +$75.00\n\n"
           "Holiday surcharge\nEvents from December 24 to December 31 carry a 15% holiday surcharge on all items except "
           "delivery and setup charges.\n")
    assert first("New Year's Eve party in Cochrane: ice luge and one LED base, dropped off at 10 pm. Total?", ice) == \
        Fraction(540) * Fraction(115, 100) + 75 + 140
    assert first("Party on March 3 in Cochrane: ice luge and one LED base, dropped off at 10 pm. Total?", ice) == 755
    from backend.agent.tools.discounts import excluded_from
    assert excluded_from("10% off all items except sale stock.", ["10% off all items except sale stock."]) == [
        frozenset({"sale", "stock"})]


def test_all_in_asks_no_tax_the_full_amount_does():
    # "how much all in?" wanted its total before the tax in sets 69 and simple 66 and with it in 71: not read as asked
    added = ["5% GST is added to every invoice."]
    assert claimed_tax("how much all in?", added) is None
    assert claimed_tax("what's the full amount?", added) == "5"
