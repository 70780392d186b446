"""Packages priced in a table, their extras, and percentages laid on the package's price only
(blind set 96, read after its runs: a table whose first column is "Package", extras with a least
count, a weekday discount and a bank-holiday surcharge "on the package price")."""

from __future__ import annotations

from backend.agent.operations import asks_cost
from backend.agent.tools.basket import basket_items, norm_words, thing_words
from backend.agent.tools.discounts import claimed_discount, excluded_when
from backend.agent.tools.laid_on import laid_on, terms_apart
from backend.agent.tools.pricing import PRICE

from .test_bill_parts import first, value

KARAOKE = """GLOWBOX KARAOKE HIRE - PACKAGES

| Package | Hours | Price |
|---------|-------|-------|
| Starter | 2 hours | $240 |
| Classic | 4 hours | $410 |
| Deluxe  | 6 hours | $560 |

ADD-ONS
* Extra hour: $70 per hour
* Disco ball: $9 per ball (minimum 3 balls)
* Photo backdrop: $120
* Extra microphone: $25

TERMS
Weekday offer. Events held Sunday to Wednesday get 10% off the package price (add-ons are charged at full price).
The weekday offer does not apply on public holidays.
Public holiday events carry a 25% surcharge on the package price.
"""


def test_a_row_under_a_kind_column_is_named_by_it_and_priced_by_its_price_column():
    row = "Classic package: Hours 4 hours; Price $410."
    assert thing_words(row, list(PRICE.finditer(row)), 0) == norm_words("Classic package")
    assert value(first("the Classic package and the photo backdrop, total?", KARAOKE)) == "530"


def test_a_list_opening_the_question_and_a_day_that_is_no_thing():
    assert basket_items("Deluxe package plus 2 extra hours, how much is that?") == [
        ("1?", "Deluxe package"), ("2", "extra hours")]
    assert asks_cost("Deluxe package plus 2 extra hours, how much is that?")
    assert value(first("Deluxe package plus 2 extra hours, how much is that?", KARAOKE)) == "700"
    # "the public holiday monday" is when, not a thing bought
    assert ("1?", "public holiday monday") not in basket_items("the Classic package on the public holiday monday, 2 extra hours")


def test_an_extra_sold_in_a_least_count_is_billed_at_it():
    assert value(first("how much for the Starter package and 2 disco balls?", KARAOKE)) == "267"
    assert value(first("how much for the Starter package and 5 disco balls?", KARAOKE)) == "285"


def test_a_weekday_discount_is_laid_on_the_package_only_and_not_on_a_holiday():
    sentences = ["Events held Sunday to Wednesday get 10% off the package price (add-ons are charged at full price).",
                 "The weekday offer does not apply on public holidays."]
    assert claimed_discount("our party is on a Tuesday, the Classic package", sentences) is not None
    assert excluded_when(sentences[0], sentences, "a public holiday monday party")
    assert not excluded_when(sentences[0], sentences, "a Tuesday party")
    assert value(first("our party is on a Tuesday - what's the total for the Classic package plus the photo backdrop?",
                       KARAOKE)) == "489"  # 410 * 0.9 + 120


def test_a_surcharge_on_the_package_price_leaves_the_extras_alone():
    assert laid_on("Public holiday events carry a 25% surcharge on the package price.") == {"package"}
    assert laid_on("Card payments carry a 2% fee on the total price.") == frozenset()
    sentences = ["Classic package: Hours 4 hours; Price $410.", "* Disco ball: $9 per ball (minimum 3 balls)"]
    assert terms_apart("410 + 3 * 9", frozenset({"package"}), sentences, {}) == ("410", "3 * 9")
    assert terms_apart("410 + 3 * 9", frozenset(), sentences, {}) is None
    # 410 * 1.25 + 3 * 9 (the least count of balls), not (410 + 27) * 1.25 = 546.25
    assert value(first("what would a public holiday monday party cost with the Classic package and 2 disco balls?",
                       KARAOKE)) == "539.50"
