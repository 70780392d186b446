"""A nursery's order as practice set 2 wrote it (issue 15; scripts/agent_eval_sets/practice2, read): section
headings in a title's case ("Sundries"), a discount the customer takes for collecting that the sundries
do not get, and a delivery fee by the distance band and the order's value. Each test fails on the code
before them."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.discounts import claimed_discount, excluded_from
from backend.agent.tools.sentences import section_headings
from backend.agent.tools.visits import order_band_charge

from .test_expressions import first

PLANTS = ("HEDGING - PRICE LIST\nAll prices in GBP (£) per plant and EXCLUDE VAT at 20%.\n\n"
          "Variety               1-49      50-249    250+\n"
          "--------------------  --------  --------  --------\n"
          "Hawthorn              £0.95     £0.80     £0.65\n"
          "Green beech           £1.60     £1.40     £1.20\n\n"
          "Sundries\n"
          "  Spiral rabbit guard, 60 cm ............ £0.35 each\n"
          "  Bamboo cane, 90 cm .................... £0.20 each\n"
          "  Hedging fertiliser, 1 kg tub .......... £6.00\n")
TERMS = ("Ordering and Delivery Terms\n\nVAT\nVAT at 20% is added at checkout to plants, sundries and delivery charges "
         "alike.\n\nDelivery (distance measured from the nursery)\n"
         "  * Up to 25 miles, order of £150 or more (ex VAT) ........ FREE\n"
         "  * Up to 25 miles, order under £150 (ex VAT) ............. £14.00 flat\n"
         "  * 25 to 80 miles ......... £35.00 pallet delivery, whatever the order value\n\n"
         "Collection discount\nCollect your order from the nursery and take 5% off the plants (sundries are not "
         "discounted). Collected orders pay no delivery charge.\n")
COLLECT = "Collect your order from the nursery and take 5% off the plants (sundries are not discounted)."


def test_a_heading_in_a_title_s_case_over_priced_lines():
    lines = [("", "Sundries"), ("", "Spiral rabbit guard, 60 cm: £0.35 each"), ("", "Bamboo cane, 90 cm: £0.20 each")]
    assert section_headings(lines) == ["", "Sundries", "Sundries"]
    # (a sentence over no priced line is no heading)
    assert section_headings([("", "Collection discount"), ("", COLLECT)]) == ["", ""]


def test_a_discount_taken_for_collecting_not_on_the_sundries():
    question = "I'm going to collect from the nursery: 260 green beech and 2 tubs of hedging fertiliser. How much?"
    assert claimed_discount(question, [COLLECT]) is not None
    # (no count's condition read as one: "Buy 3 or more ready-made frames and take 20% off them" for one frame)
    assert claimed_discount("a custom 90 cm frame, how much?", ["Buy 3 or more ready-made frames and take 20% off them."]) is None
    assert excluded_from(COLLECT, [COLLECT]) == [frozenset({"sundry"})]
    # 5% off the beech only, the fertiliser at its price, then VAT (was 5% off both)
    assert first("I'm going to collect from the nursery: 260 green beech and 2 tubs of hedging fertiliser. How much will "
                 "I pay including VAT?", PLANTS, TERMS) == Fraction("370.08")


def test_a_delivery_fee_by_distance_band_and_order_value():
    lines = ["* Up to 25 miles, order of £150 or more (ex VAT): FREE.", "* Up to 25 miles, order under £150 (ex VAT): £14.00 flat",
             "* 25 to 80 miles: £35.00 pallet delivery, whatever the order value"]
    assert order_band_charge("delivered about 10 miles from you. Total?", lines, Fraction(135)) == "14.00"
    assert order_band_charge("delivered about 10 miles from you. Total?", lines, Fraction(200)) is None
    # 135 of plants and sundries, under £150 within 25 miles: £14 (was no delivery)
    assert first("Hi there, I'd like 100 hawthorn whips, plus 100 rabbit guards and 100 canes to go with them, delivered "
                 "to my farm about 10 miles from you. What's the total with VAT?", PLANTS, TERMS) == Fraction("178.80")
