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
