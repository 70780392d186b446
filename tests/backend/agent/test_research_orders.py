"""A researcher's order (issue 15): a package named by its own name over a rate per the same word,
a list line whose label is followed by how the thing is done ("ordered for you"), a returning
client's discount claimed by "I used you last year", and a travel rate on the round trip for a
customer's one-way distance. Read from blind set 102 after its end run; each test fails on the
code before it."""

from __future__ import annotations

from backend.agent.tools.basket import PRICE, naming_words
from backend.agent.tools.discounts import claimed_discount

from .test_expressions import first

FEES = ("HOUSE HISTORY RESEARCH - FEES\n"
        "All fees exclude VAT. VAT at 20% is added to all fees.\n\n"
        "RESEARCH PACKAGES\n"
        "| Package | What's included | Fee |\n"
        "| Deed Trace | Tracing your house's deeds, up to 6 hours | £360 |\n"
        "| Street Story | The history of your street, up to 12 hours | £640 |\n\n"
        "Hourly research: £50 per hour, minimum 2 hours per order.\n\n"
        "RECORDS\n"
        "- Deed copies (conveyance or lease), ordered for you: £15 each\n"
        "- Census lookup (one household, one year): £12 per entry\n"
        "- Map search (tithe and enclosure maps): £30 per street\n\n"
        "SITE VISITS\n"
        "- Guided walk of your street: £150 per party of up to 4 people\n"
        "- Each additional person beyond 4: £20\n"
        "- Travel charge: £0.50 per mile for every mile of the round trip over 40 miles\n\n"
        "REPORTS\n"
        "- Printed and bound report: £35\n\n"
        "DISCOUNTS\n"
        "Returning clients receive 10% off research packages (not hourly research, records, visits or reports).\n")


def test_a_returning_client_orders_a_package_by_its_name_with_records():
    # the Street Story package less 10% (was the map search's £30 "per street"), 3 deed copies (were unpriced: the
    # label before "ordered for you"), the bound report
    assert first("I used you last year and want to come back for the Street Story, plus 3 deed copies and a printed "
                 "bound report. What's the total excluding VAT?", FEES) == 640 * 9 / 10 + 3 * 15 + 35


def test_the_label_before_how_the_thing_is_done_names_its_price():
    line = "- Deed copies (conveyance or lease), ordered for you: £15 each"
    assert {"deed", "copy"} <= naming_words(line, list(PRICE.finditer(line)), 0)
    # (a comma's clause of another thing still parts them: "£0.08 per page black and white, £0.30 per page colour")
    two = "Printing: £0.08 per page black and white, colour £0.30 per page"
    assert "black" not in naming_words(two, list(PRICE.finditer(two)), 1)


def test_a_returning_client_is_said_in_so_many_words():
    lines = ["Returning clients receive 10% off research packages (not hourly research, records, visits or reports)."]
    assert claimed_discount("I used you last year and want the Deed Trace. Price?", lines) is not None
    assert claimed_discount("We're coming back to you for the Deed Trace. Price?", lines) is not None
    # (a first order claims nothing)
    assert claimed_discount("I'd like the Deed Trace. Price?", lines) is None


def test_a_round_trip_rate_for_a_one_way_distance():
    # 5 people on the walk, and 2 * 30 miles of round trip, 20 of them over the 40 free
    assert first("We're 5 people and would like the guided walk of our street. It's 30 miles from your office (one "
                 "way). What will it cost in total before VAT?", FEES) == 150 + 20 + (2 * 30 - 40) * 0.5
