"""A mobile welder's rate card and terms, and a carpet fitter's list, as practice sets 7 and 8 wrote them
(issue 15; scripts/agent_eval_sets/practice7 and practice8, read at once): a call-out the question sets
aside, a free distance said as "no mileage", a card surcharge on a total with VAT, a metal's surcharge
laid on labour only, refund windows written bound first ("7 days' notice or more"), half a deposit
refunded, and a measure written after the thing it measures. Each test fails on the code before them."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.basket import basket_items

from .test_expressions import first

CARD = ("BRASSLEIGH MOBILE WELDING\n"
        "All prices are in pounds sterling and EXCLUDE VAT at 20%.\n\n"
        "CALL-OUT & LABOUR\n"
        "Call-out fee, per visit ................................ £45.00\n"
        "Labour, weekdays 8am-5pm, per hour ..................... £52.00\n"
        "Labour, evenings & Saturdays, per hour ................. £68.00\n\n"
        "FIXED-PRICE REPAIRS (labour included, call-out fee extra)\n\n"
        "  Repair                              Price\n"
        "  ----------------------------------  -------\n"
        "  Gate hinge re-weld, per hinge       £35.00\n"
        "  Railing joint re-weld, per joint    £22.00\n"
        "  Garden furniture frame, per item    £40.00\n\n"
        "METAL SURCHARGES\n"
        "  Stainless steel ..... +25% on hourly labour\n"
        "  Aluminium ........... +30% on hourly labour\n"
        "Surcharges don't apply to fixed-price repairs.\n\n"
        "TRAVEL\n"
        "Call-outs within 15 miles of our Armley workshop carry no mileage.\n"
        "Beyond that we charge £1.10 per mile for every mile over 15,\ncounted one way only.\n")
TERMS = ("2. Deposits\nFabrication work quoted at over £300 + VAT needs a deposit of 40% of\n"
         "the quoted price (excluding VAT) before we order steel.\n\n"
         "3. Cancelling a booked job\n"
         "  * 7 days' notice or more ..... deposit refunded in full\n"
         "  * 3 to 6 days' notice ........ 50% of the deposit refunded\n"
         "  * 2 days' notice or less ..... deposit not refunded\n\n"
         "6. Payment\nCredit card payments carry a 2% surcharge on the invoice total\nincluding VAT.\n")


def test_a_call_out_the_question_sets_aside():
    assert first("how much to re-weld 6 railing joints? just the repair price, no call-out, ex VAT", CARD) == 132
    assert first("I've got 4 garden furniture frames that need fixing - what's the repair cost for those ex VAT, not "
                 "counting the call-out?", CARD) == 160


def test_a_card_surcharge_on_a_total_with_vat_within_a_free_distance():
    assert first("3 gate hinges re-welded on a weekday, 9 miles away, and I'll pay by credit card. what's the final amount "
                 "incl VAT and the card surcharge?", CARD, TERMS) == Fraction("183.60")


def test_a_metal_surcharge_laid_on_labour_only():
    assert first("need some stainless steel welding on a Saturday, should take 2.5 hours of hourly labour, I'm 10 miles "
                 "away. no materials. how much inc VAT?", CARD) == 309


def test_notice_windows_written_bound_first():
    assert first("my fabrication quote was £850 plus VAT and I paid the deposit. now I need to cancel with 4 days' "
                 "notice, how much of the deposit do I get back?", CARD, TERMS) == 170
    assert first("my fabrication quote was £850 plus VAT and I paid the deposit. now I need to cancel with 10 days' "
                 "notice, how much of the deposit do I get back?", CARD, TERMS) == 340


CARPET = ("All prices are in Australian dollars and INCLUDE GST.\n\n"
          "SUPPLY & LAY CARPET (per square metre, underlay included)\n\n"
          "  Range                      Per m2\n"
          "  -------------------------  -------\n"
          "  Budget Twist (nylon)       $42.00\n"
          "  Wool Blend Loop            $68.00\n"
          "  Pure Wool Plush            $95.00\n\n"
          "EXTRAS\n"
          "  Uplift & dispose of old carpet ....... $6.00 per m2\n"
          "  Furniture moving ..................... $30.00 per room\n\n"
          "TRAVEL\n"
          "No travel fee within 25 km of our Broadmeadow showroom. Further\n"
          "out we charge $1.50 per km for each km beyond 25 km (one way).\n")
CANCELLING = ("Deposits\nOrders with a total of more than $1,000 need a deposit of 30% of\nthe order total when you book.\n\n"
              "Cancelling\nBecause carpet is cut to order, deposits are refunded like this:\n"
              "  - 14 days or more before install day: deposit refunded less a\n    $50.00 admin fee\n"
              "  - 7 to 13 days before: half the deposit refunded\n"
              "  - less than 7 days before: deposit is not refunded\n")


def test_a_measure_written_after_the_thing_it_measures():
    assert basket_items("Wool Blend Loop supplied and laid, 20 m2, plus furniture moving for 1 room. What's the total?") == [
        ("20", "m2 Wool Blend Loop supplied and laid"), ("1", "furniture moving")]
    assert first("Wool Blend Loop supplied and laid, 20 m2, plus furniture moving for 1 room. Weekday install, we're 58 km "
                 "from your showroom. What's the total?", CARPET) == Fraction("1439.50")
    assert basket_items("can you do 18 m2 of Budget Twist with uplift of 18 m2 of old carpet?") == [
        ("18", "m2 Budget Twist"), ("18", "m2 uplift old carpet")]


def test_a_deposit_refund_less_a_fee_or_by_half():
    assert first("my order total was $2,400 and I paid the deposit. I need to cancel, install day is 16 days away. how "
                 "much do I get back?", CARPET, CANCELLING) == 670
    assert first("my order total was $2,400 and I paid the deposit. I need to cancel, install day is 10 days away. how "
                 "much do I get back?", CARPET, CANCELLING) == 360


def test_all_up_asks_a_total_and_saturday_installations_are_any_job():
    terms = "Saturday installations attract a 15% surcharge on the job total (the travel fee is not surcharged).\n"
    assert first("can you do 18 m2 of Budget Twist with uplift of 18 m2 of old carpet on a Saturday? we're 20 km away. "
                 "how much all up?", CARPET, terms) == Fraction("993.60")


ARCADE = ("All prices in US dollars. Michigan sales tax (6%) is NOT included\nin pass prices - it is added at the register.\n\n"
          "FREE-PLAY PASSES\n"
          "  Pass               Mon-Thu     Fri-Sun & holidays\n"
          "  ----------------   -------     ------------------\n"
          "  2-hour pass        $14.00      $18.00\n"
          "  4-hour pass        $20.00      $26.00\n\n"
          "TWO-FOR-TUESDAY\n"
          "  After 5pm on Tuesdays, 2-hour passes are 2 for $20.00 (+ tax).\n")


def test_a_price_for_a_group_of_things_when_its_day_and_time_hold():
    # (blind set 104, read after its runs)
    asked = "There are 6 of us coming at {} and we all want 2-hour passes. How much will we pay in total, including tax?"
    assert first(asked.format("7pm next Tuesday"), ARCADE) == Fraction("63.60")
    assert first(asked.format("3pm next Tuesday"), ARCADE) == Fraction("89.04")
    assert first(asked.format("7pm next Wednesday"), ARCADE) == Fraction("89.04")
