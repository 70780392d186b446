"""A repair's part charged beside its flat rate (thirtieth session: blind set 88, read after its runs, priced
"Dryer belt replacement: $129.00" and "Dryer belt: $28.00" under "Parts are extra"; "a dryer belt replacement
including the belt" was quoted as $129). Each assertion failed on the code before it."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.calculator import spec
from backend.agent.tools.parts import asks_parts, repair_parts, with_parts

from .test_expressions import first

RATES = ("FLAT-RATE REPAIRS\nFlat rates cover labour and the service call. Parts are extra.\n"
         "Dryer belt replacement: $129.00\nDishwasher drain pump replacement: $159.00\n\n"
         "COMMON PARTS\nDryer belt: $28.00\nDishwasher drain pump: $86.00\n\n"
         "13% HST is added to every invoice.\n")


def test_a_repair_and_its_part():
    lines = [line for line in RATES.splitlines() if "$" in line]
    assert repair_parts(lines) == [("129.00", frozenset({"dryer", "belt"}), "28.00"),
                                   ("159.00", frozenset({"dishwasher", "drain", "pump"}), "86.00")]
    parts = repair_parts(lines)
    assert asks_parts("how much including the belt?", parts)
    assert asks_parts("Total with part and HST?", parts)
    assert not asks_parts("how much with tax?", parts)
    assert with_parts("including the belt", "129.00", lines) == "129.00 + 28.00"
    assert with_parts("including the belt", "129.00 + 28.00", lines) is None  # (held already)
    assert with_parts("how much?", "129.00", lines) is None  # no part asked


def test_the_bill_of_a_repair_with_its_part():
    assert first("how much for a dryer belt replacement including the belt? before tax is fine", RATES) == 157
    assert first("Dishwasher drain pump needs replacing. Total with part and HST?", RATES) == Fraction(245 * 113, 100)
    calculator = spec(lambda texts: [[1.0] * 4 for _ in texts], passages=lambda user_id, text: [("r.txt", RATES)])
    assert calculator.relevant("u", "how much for a dryer belt replacement including the belt?")
    assert not calculator.relevant("u", "do you sell dryer belts?")


def test_review_of_the_parts_reading():
    # A helper probed it with 149 cases of its own; these failed on its first version.
    lines = ["Battery replacement: $15.00 (battery included)", "Battery: $8.00", "SSD install: $50.00", "SSD 1TB: $85.00",
             "SSD: $65.00", "SSD 500GB: $65.00"]
    assert with_parts("battery replacement including the battery", "15.00", lines) is None  # its part is in it
    phone = ("Labour\nScreen replacement: $60.00\nBattery replacement: $40.00\n\nParts\nScreen: $95.00\n"
             "Battery: $35.00\n")
    from backend.agent.tools.parts import asked_repairs
    assert asked_repairs("How much for a screen replacement including the screen? My battery is fine.",
                         [line for line in phone.splitlines() if "$" in line]) == ["60.00"]  # no battery repair asked
    # a tax last of the clause only: "with my wife and tax advisor" asks no tax
    from backend.agent.tools.taxes import claimed_tax
    rates = ["13% HST is added to every invoice."]
    assert claimed_tax("Total with part and HST?", rates) == "13"
    assert claimed_tax("how much for a clean with my wife and tax advisor there?", rates) is None
    assert claimed_tax("standard cleaning with the kids and tax-free weekend discount", rates) is None


def test_an_age_of_a_senior_and_a_count_of_seniors():
    from backend.agent.party import given_ages
    assert given_ages("Im a senior (68), my dryer belt snapped") == ["68"]
    assert given_ages("pensioner, 72") == ["72"]
    assert given_ages("Adult 2, senior 1, how much?") == []  # a count (review)
    assert given_ages("3 seniors and 2 adults") == []
