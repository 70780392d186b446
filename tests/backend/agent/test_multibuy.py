"""Multi-buy offers, a number that names its thing, an allowance whose rate opens "After that", and
a sales tax stated in a shop's FAQ (blind set 69, read in the twenty-fourth session). Each
assertion failed on the code before it."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.allowances import allowance_expressions
from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.fact_expressions import operands_of
from backend.agent.tools.multibuy import multibuy_expression, with_multibuy
from backend.agent.tools.taxes import claimed_tax

from .test_expressions import first

SHOP = ("PARTS & SUPPLIES (taxable)\nUniversal needles, 5-pack ................... $4.50\n"
        "Bobbin case (most domestic models) ........ $24.00\n\nNEEDLE DEAL\n"
        "Universal needle 5-packs: buy 3, get the 4th free.\n\n"
        "Q: Do you charge sales tax?\nA: Yes - 6% state sales tax on parts, supplies and class kits.\n")


def test_a_multibuy_offer_takes_off_the_free_ones_of_each_full_group():
    sentences = ["Universal needles, 5-pack: $4.50", "Universal needle 5-packs: buy 3, get the 4th free."]
    assert multibuy_expression("8 packs of the universal needles please", sentences) == "(8 - floor(8 / 4) * 1) * 4.50"
    assert multibuy_expression("3 packs of the universal needles please", sentences) is None  # no full group
    assert multibuy_expression("8 bobbin cases please", sentences) is None  # another thing
    doughnuts = ["Glazed doughnut: £1.20", "Doughnuts: buy one get one free"]
    assert evaluate(multibuy_expression("5 glazed doughnuts", doughnuts)).q == Fraction("3.60")
    socks = ["Wool socks: $9 a pair", "Wool socks: 3 for the price of 2"]
    assert evaluate(multibuy_expression("how much for 7 pairs of wool socks?", socks)).q == 45
    # in a bill of several things, the offered thing's term alone
    assert with_multibuy("4.50 * 8 + 24.00", "8 packs of the universal needles and a bobbin case", sentences) == (
        "(8 - floor(8 / 4) * 1) * 4.50 + 24.00")


def test_eight_packs_with_tax():
    assert first("how much would 8 packs of the universal needles come to at the counter, with tax?", SHOP) == (
        Fraction("28.62"))


def test_a_number_joined_to_its_noun_names_the_thing():
    assert operands_of("Universal needles, 5-pack: $4.50", "how much are 8 packs of the universal needles?") == ["4.50"]
    assert operands_of("A 10-visit pass", "how many visits?") == ["10"]  # the only number stays
    # a measure joined to its unit is no name (sets 1-51 lost this one's right value)
    assert "12.5" in operands_of("Clay is sold in 12.5-kilogram bags at €19 a bag.", "how much are 50 kilos of clay?")


def test_a_rate_after_that_takes_the_allowance_of_the_sentence_before():
    sentences = ["Q: What if I can't come get it right away? A: We hold finished machines free for 30 days after we call you.",
                 "After that, storage is $3 per day."]
    assert allowance_expressions("I couldn't get there until 42 days after the call. What's the storage?",
                                 sentences) == ["(42 - 30) * 3"]


def test_a_sales_tax_the_shop_says_it_charges():
    assert claimed_tax("2 bobbin cases with tax?", ["Q: Do you charge sales tax? A: Yes - 6% state sales tax on parts."]) == "6"
    assert claimed_tax("2 bobbin cases with tax?", ["We charge 8.25% sales tax on all items."]) == "8.25"
    assert claimed_tax("2 bobbin cases with tax?", ["All prices include 20% VAT."]) is None


TARIFF = ("PINEBROOK STORAGE YARD\nTARIFF 2024 (all prices in EUR)\n\nSERVICES - prices excl. VAT, VAT 20% is added\n"
          "  Exterior wash (boat or caravan) ----------------- 45.00\n"
          "  Battery trickle charging ---------------- 10.00 / month\n"
          "  Dehumidifier rental (caravans) ---------- 12.00 / month\n"
          "  Tyre check & inflation --------------------------- 8.00\n")


def test_dash_leaders_and_a_declared_currency_make_rows_of_prices():
    from backend.agent.tools.pricing import in_major_units
    from backend.agent.tools.segmentation import text_sentences

    rows = [s for _, s in in_major_units(text_sentences(TARIFF, "x"))]
    assert rows[1:] == ["SERVICES - prices excl. VAT, VAT 20% is added", "Exterior wash (boat or caravan): €45.00",
                        "Battery trickle charging: €10.00 / month", "Dehumidifier rental (caravans): €12.00 / month",
                        "Tyre check & inflation: €8.00"]
    # no currency declared: the amounts stay as written; a sign written: nothing added
    assert "Battery trickle charging: 10.00 / month" in [
        s for _, s in in_major_units(text_sentences(TARIFF.replace("(all prices in EUR)", ""), "x"))]
    # dashes in prose are no leaders
    assert [s for _, s in text_sentences("The room --- which seats 10 --- is ours.", "x")] == [
        "The room --- which seats 10 --- is ours."]
    assert first("dehumidifier rental for my caravan for 3 months, how much?", TARIFF) == 36
