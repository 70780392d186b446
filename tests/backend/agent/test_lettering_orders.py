"""A lettering studio's orders (issue 15): an amount added per item, a volume discount whose count
follows its amount, a surcharge that says it is not discounted, a least order of several kinds
together, a refund of a booking priced from the documents, and the business's own thing listed
first. Read from blind set 100 after its runs; each test fails when its reading regresses."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.discounts import not_discounted
from backend.agent.tools.refunds import refund_expression

from .test_expressions import first

PRICES = """INKWELL LETTERING STUDIO - PRICE LIST
All prices are in euro and include VAT.

WEDDING LETTERING (per item)
| Item                                   | Price   |
|----------------------------------------|---------|
| Envelope addressing (names + address)  | EUR 3.80 |
| Place card (flat or tented)            | EUR 2.60 |
| Escort card                            | EUR 2.90 |
| Seating plan board (A1)                | EUR 185.00 |
| Welcome sign (A2)                      | EUR 120.00 |

Menu cards: hand-lettered master design EUR 65.00, plus EUR 1.20 per printed copy.

Minimum order for envelopes, place cards and escort cards: EUR 60.00.
Coloured or metallic ink (gold, silver, white): add EUR 0.40 per item. This surcharge is not discounted.
Volume discount: 10% off the per-item price when 150 or more items of the same type are ordered together.

WORKSHOPS
- Copperplate Foundations (4 x 2-hour Thursday evenings): EUR 195.00 per person
"""

TERMS = """INKWELL LETTERING - TERMS

Deposits. A 30% deposit is due on wedding and event orders of EUR 200 or more.
Proofs. One digital proof is included. Further proof rounds are charged at EUR 15.00 each.
Delivery. Collection from the studio is free. Registered post within Ireland is EUR 9.50 per parcel.
Workshop cancellations. Cancel with 14 days' notice or more for a full refund. Cancel 7 to 13 days before the workshop
for a 50% refund. With less than 7 days' notice no refund is given.
"""


def test_an_amount_per_item_a_discount_by_count_and_a_surcharge_not_discounted():
    # 160 envelopes: 10% off the 3.80 (150 or more of a type "ordered together"), the gold ink's 0.40 per item on each
    # envelope after it ("3.80 * 160 + 0.40" had added the ink once, with no discount)
    assert first("We need 160 envelopes addressed in full, all in gold ink. What's the total?", PRICES) == Fraction(
        "611.20")
    # 100 envelopes are no 150: no discount
    assert first("We need 100 envelopes addressed in full, all in gold ink. What's the total?", PRICES) == 420
    assert not_discounted("Coloured or metallic ink (gold, silver, white): add €0.40 per item.",
                          ["Coloured or metallic ink (gold, silver, white): add €0.40 per item.",
                           "This surcharge is not discounted."])
    assert not not_discounted("Express service: add 25% to the order total.", ["Express service: add 25% to the order total.",
                                                                             "Volume discount: 10% off."])


def test_a_least_order_of_several_kinds_is_no_price_of_them():
    # "Minimum order for envelopes, place cards and escort cards: EUR 60.00" is no place card's price (100 * 60 had
    # been read), and 15 place cards are charged at least it, before the post
    assert first("I'd like a seating plan board, a welcome sign and 100 place cards. How much is the deposit?",
                 PRICES, TERMS) == Fraction("169.50")
    assert first("I only need 15 place cards, sent to me by registered post within Ireland. What will I pay in total?",
                 PRICES, TERMS) == Fraction("69.50")
    # 30 place cards are over it
    assert first("I only need 30 place cards, sent to me by registered post within Ireland. What will I pay in total?",
                 PRICES, TERMS) == Fraction("87.50")


def test_a_refund_of_a_booking_priced_from_the_documents():
    assert first("I booked Copperplate Foundations for two people but have to cancel 10 days before it starts. How much "
                 "will I get back?", PRICES, TERMS) == 195
    windows = ["Cancel with 14 days' notice or more for a full refund.", "Cancel 7 to 13 days before the workshop for a "
               "50% refund.", "With less than 7 days' notice no refund is given."]
    assert refund_expression("I booked it but must cancel 10 days before. How much do I get back?", windows,
                             "195.00 * 2") == "(195.00 * 2) * 50 / 100"
    # (a bill counting the days left is the price of one: "48 * 5" for "it's 5 days away", blind set 92; a bill
    # holding them otherwise is no price of the booking; nor is a bill taken when nothing was booked)
    assert refund_expression("I booked it but must cancel 10 days before. How much do I get back?", windows,
                             "195.00 * 10") == "195.00 * 50 / 100"
    assert refund_expression("I booked it but must cancel 10 days before. How much do I get back?", windows,
                             "195.00 * 10 + 10") is None
    assert refund_expression("I need to cancel my seat - it's 10 days away. How much will I get back?", windows,
                             "195.00") == "195.00 * 50 / 100"
    assert refund_expression("If I cancel 10 days before, how much do I get back?", windows, "195.00") is None


def test_the_business_s_own_thing_listed_before_the_counted_ones():
    assert first("We want menu cards: your master design plus 85 printed copies, and we'll probably need 2 extra proof "
                 "rounds. What's the total?", PRICES, TERMS) == 197
