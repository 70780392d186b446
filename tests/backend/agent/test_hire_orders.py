"""An event-hire order (issue 15): a table row against a package whose description names it, an
extra-day rate beyond the days a price covers, a flat delivery for a band of distance charged on
every order, a day's delivery surcharge claimed by "delivered" or "drop them off", a discount on
hire charges that a sentence says exclude surcharges, a minimum hire charge before delivery, and a
refund of the deposit paid on a stated order. Read from blind set 101 after its end run; each test
fails on the code before it."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from backend.agent.tools.bands import outside_band
from backend.agent.tools.calculator import evaluate
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.headings import unnamed_labels

from .test_expressions import first, result

PRICES = ("LAKESIDE EVENT HIRE - PRICE LIST\n"
          "All prices exclude VAT. VAT of 20% is added to every invoice.\n\n"
          "FURNITURE HIRE (price per item, covers up to 2 days)\n"
          "| Item | Price |\n"
          "| Trestle table | £12 |\n"
          "| Folding chair | £3 |\n"
          "| Patio heater (with gas bottle) | £45 |\n\n"
          "Extra days beyond 2 days: £2 per item per day (tables and chairs).\n\n"
          "DELIVERY\n"
          "- Within 15 miles of our yard: £40 flat per order\n"
          "- Beyond 15 miles: the £40 plus £1.50 for every mile over 15 miles\n"
          "- Delivery charges apply to all orders.\n\n"
          "SURCHARGES\n"
          "- Saturday delivery: +£25\n"
          "- Sunday delivery: +£40\n\n"
          "PACKAGES\n"
          "- Garden Party Pack: 4 trestle tables + 30 folding chairs for up to 2 days - £120\n\n"
          "DISCOUNTS\n"
          "- Schools and charities: 10% off hire charges. Hire charges include extra-day charges but not delivery or "
          "surcharges.\n\n"
          "MINIMUM HIRE CHARGE: £60 per order, before delivery and surcharges.\n")
TERMS = ("Lakeside Event Hire - Terms\n\n"
         "1. Deposit\nA booking is confirmed once we receive a deposit of 25% of the order total.\n\n"
         "2. Cancellations\n"
         "- More than 14 days before delivery: your deposit is refunded, less a £20 admin fee.\n"
         "- 7 to 14 days before delivery: 50% of your deposit is refunded.\n"
         "- Less than 7 days before delivery: the deposit is forfeited.\n")


def _pack_first(texts):
    """A stand-in embedder that ranks the Garden Party Pack's line nearest any question about tables."""
    return np.array([[3.0 * t.count("Pack") + t.count("trestle"), 1.0] for t in texts])


def test_a_row_the_question_names_over_a_package_whose_description_names_it():
    # "(one day)" is no day beyond the 2 a price covers, and the pack's label names nothing asked (was the pack's £120,
    # ranked first by the embedder)
    question = "We need 6 trestle tables for the village fete (one day). What's the hire cost before VAT?"
    found = candidate_expressions(question, [result(PRICES, TERMS)], _pack_first, evaluate)
    assert found and evaluate(found[0]).q == 72
    lines = ["- Garden Party Pack: 4 trestle tables + 30 folding chairs for up to 2 days - £120",
             "Trestle table: Price £12 per item."]
    assert unnamed_labels("6 trestle tables for the fete", lines) == {lines[0]}
    # (none when no label is named: every line stays)
    assert unnamed_labels("6 benches for the fete", lines) == set()


def test_an_extra_day_rate_is_outside_a_hire_within_the_days_covered():
    line = "Extra days beyond 2 days: £2 per item per day (tables and chairs)."
    assert outside_band("6 tables (one day)", line) and outside_band("a 2-day event", line)
    assert not outside_band("a 4-day event", line)
    # (a notice before a date is no length of hire)
    assert not outside_band("cancel 3 days before", "Refunds more than 2 days before delivery")


def test_a_delivery_surcharge_of_the_day_a_charity_discount_does_not_touch():
    # 10 tables at £12 less 10% (hire charges only), the Sunday delivery, the flat delivery within 15 miles
    assert first("We're a registered charity. We need 10 trestle tables for one day, delivered on a Sunday to a hall 5 "
                 "miles from your yard. What's the total before VAT?", PRICES, TERMS) == Fraction(120 * 9, 10) + 40 + 40


def test_a_drop_off_on_the_day_claims_the_delivery_surcharge():
    assert first("We want 10 trestle tables for one day; the hall is 5 miles from your yard and you'd have to drop them "
                 "off on the Saturday. What's the total before VAT?", PRICES, TERMS) == 120 + 25 + 40


def test_a_minimum_hire_charge_before_the_delivery_of_every_order():
    # one heater: the £60 minimum hire charge, then the £40 delivery, then VAT (was 45 * 1.2)
    assert first("Just one patio heater for a garden party 3 miles from your yard. What's the total with VAT?",
                 PRICES, TERMS) == Fraction((60 + 40) * 12, 10)


def test_a_refund_of_the_deposit_paid_on_a_stated_order():
    # a 25% deposit of £800, half of it back 10 days before (was 800 * 10)
    assert first("We paid the deposit on an order that came to £800, but now we have to cancel - it's 10 days before "
                 "delivery. How much of our money do we get back?", PRICES, TERMS) == 100
