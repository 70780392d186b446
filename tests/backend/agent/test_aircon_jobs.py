"""An aircon servicer's jobs as practice set 6 wrote them (issue 15; scripts/agent_eval_sets/practice6, read):
numbered headings in capitals with a note after a dash, rows of BTU bands written with thousands
separators, a count before a unit's size ("two 12,000 BTU wall units"), and a Sunday's percentage laid
on the job "before GST". Each test fails on the code before them."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.bands import banded_measures, outside_band
from backend.agent.tools.basket import basket_items
from backend.agent.tools.pricing import counted_cell_expressions
from backend.agent.tools.segmentation import text_sentences
from backend.agent.tools.sentences import section_headings

from .test_expressions import first

PRICES = ("AIRCON SERVICES\nAll prices are in Singapore dollars (S$) and exclude 9% GST.\n\n"
          "2. CHEMICAL WASH - per indoor unit\n"
          "   Wall-mounted, 9,000 to 12,000 BTU ........ S$80.00\n"
          "   Wall-mounted, 18,000 to 24,000 BTU ....... S$100.00\n"
          "   Ceiling cassette (any size) .............. S$140.00\n\n"
          "3. CHEMICAL OVERHAUL - unit fully dismantled\n"
          "   Wall-mounted, 9,000 to 12,000 BTU ........ S$150.00\n"
          "   Wall-mounted, 18,000 to 24,000 BTU ....... S$180.00\n\n"
          "5. PARTS & EXTRAS (fitting included)\n"
          "   High-ceiling work (above 3 m) ..... S$30.00 per unit\n\n"
          "6. SURCHARGES\n"
          "   Sundays and public holidays: add 20% to the job total (before GST).\n")


def test_a_heading_in_capitals_with_a_note_after_a_dash():
    pairs = text_sentences(PRICES)
    sections = dict(zip([s for _, s in pairs], section_headings(pairs)))
    assert sections["Wall-mounted, 18,000 to 24,000 BTU: S$180.00"] == "CHEMICAL OVERHAUL"


def test_bands_of_btu_with_thousands_separators():
    question = "chemical overhaul for one 24000 btu wall unit, how much excl gst"
    assert outside_band(question, "Wall-mounted, 9,000 to 12,000 BTU: S$150.00")
    assert not outside_band(question, "Wall-mounted, 18,000 to 24,000 BTU: S$180.00")
    assert banded_measures(question, "Wall-mounted, 18,000 to 24,000 BTU: S$180.00") == {"24000"}
    # (was 30.00 * 24000: the size read as a count of units)
    assert first(question, PRICES) == 180
    assert first("how much for chemical wash of 3 9000btu units before gst", PRICES) == 240


def test_a_count_before_a_size_and_a_percentage_before_the_tax():
    assert basket_items("chemical wash two 12,000 BTU wall units and one ceiling cassette?") == [
        ("2", "12000-BTU wall units"), ("1", "ceiling cassette")]
    # 2 * 80 + 140, 20% on Sunday ("before GST" names no tax of it), then GST
    assert first("Can you come on a Sunday to chemical wash two 12,000 BTU wall units and one ceiling cassette? What's the "
                 "total with GST?", PRICES) == Fraction("392.40")


CONTRACT = ("7. ANNUAL SERVICE CONTRACT (4 general services a year)\n"
            "   2 units S$220.00 | 3 units S$300.00 | 4 units S$380.00 | 5 units S$460.00\n"
            "   Each unit above 5: S$88.00 a year.\n"
            "   Contract customers receive 10% off chemical washes and chemical overhauls.\n")


def test_a_cell_of_the_count_asked_and_a_contract_s_holders():
    cells = ["Annual service contract: 2 units S$220.00; 3 units S$300.00; 4 units S$380.00; 5 units S$460.00.",
             "Each unit above 5: S$88.00 a year."]
    assert counted_cell_expressions("the service contract for 4 units?", cells) == ["380.00"]
    assert counted_cell_expressions("the annual contract for 7 units?", cells) == ["460.00 + (7 - 5) * 88.00"]
    # (not the row of another sentence's count, nor cells of a measure)
    assert counted_cell_expressions("I'm on your annual contract. How much for three 9000 BTU wall units?", cells) == []
    assert counted_cell_expressions("600 A5 flyers on 300gsm?", ["250 - 499: A5 130 gsm £0.12; A5 300 gsm £0.20."]) == []
    # the contract's own price, with no discount for its holders (was 25.00 * 4, then 380 * 90 / 100)
    assert first("What's the yearly price of the service contract for 4 units? Excluding GST is fine.", PRICES,
                 CONTRACT) == 380
    assert first("I'm on your annual contract. How much incl GST for a chemical overhaul of three 9000 BTU wall units?",
                 PRICES, CONTRACT) == Fraction("441.45")
