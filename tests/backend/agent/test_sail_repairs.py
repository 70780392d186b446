"""A sail loft's rate card as practice set 5 wrote it (issue 15; scripts/agent_eval_sets/practice5, read): a
least charge of one kind of work with no word of charging ("Minimum for wash & inspection: R450.00 per
sail"), a turnaround in working days that counts no thing, and a count beside a size that picks a band.
Each test fails on the code before them."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.basket import basket_items

from .test_expressions import first

CARD = ("SAIL & CANVAS WORKS - RATE CARD 2025\nAll prices are in South African Rand (R) and EXCLUDE VAT at 15%.\n\n"
        "SAIL CARE\n"
        "Wash, dry & inspection ............ R38.00 per m2 of sail\n"
        "Minimum for wash & inspection ..... R450.00 per sail\n"
        "Patch (up to 30 cm x 30 cm) ....... R220.00 each\n\n"
        "CANVAS WORK\n"
        "| Item                               | Price         |\n"
        "|------------------------------------|---------------|\n"
        "| Zip replacement                    | R340.00 each  |\n"
        "| Clear window replacement           | R640.00 each  |\n\n"
        "EXTRAS\n"
        "Express turnaround (ready within 3 working days): add 30% to the job total before VAT.\n")
TERMS = ("5. Uncollected items. Sails or canvas not collected within 14 days of that notice are charged storage at R25.00 "
         "per item per day.\n")


def test_a_least_charge_of_a_kind_of_work_with_no_word_of_charging():
    assert first("How much will it be, including VAT, to wash and inspect my little 9 m2 jib?", CARD) == Fraction("517.50")
    assert first("How much is it to wash and inspect a 24 m2 mainsail, before VAT?", CARD) == 912


def test_working_days_count_no_thing():
    assert basket_items("two zips and two clear windows replaced, back within 3 working days. Total?") == [
        ("2", "zips"), ("2", "clear windows replaced")]
    assert first("I need two zips and two clear windows replaced on my dodger, and I need it back within 3 working days. "
                 "Total including VAT?", CARD, TERMS) == Fraction("2930.20")


def test_a_count_beside_the_size_of_its_band():
    assert first("How much would 3 patches cost me ex VAT? They're all small, under 30cm square.", CARD) == 660
