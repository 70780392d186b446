"""Wrong candidates a review of the calculator's readers found (2026-12-03), each with the value
the user should get."""

from __future__ import annotations

import pytest

from backend.agent.operations import named_operations
from backend.agent.tools.basket import counts_of
from backend.agent.tools.calculator import evaluate
from backend.agent.tools.discounts import claimed_surcharges, counted
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.mentions import mentioned_difference, mentioned_total
from backend.agent.tools.offers import offer_expressions

from .test_expressions import result


def first(question: str, document: str) -> str:
    return candidate_expressions(question, [result(document)], None, evaluate)[0]


TENNIS = ("Riverside Tennis\n\nCourt hire is £20 per hour at weekends (note: book ahead) and £12 per hour on weekdays "
          "(note: walk-ins welcome).")
SKIPS = "Dunmore Skip Hire\n\nMini skip: £145\nMidi skip: £210\nMaxi skip: £320\nRoad permit: £45"
CLASSES = ("Larder Lane\n\nBread from scratch (3 hours): €60\nCurry night (3 hours): €70\nKnife skills basics "
           "(2 hours): €45")


def test_an_aside_with_a_colon_keeps_a_prices_own_days():
    assert first("How much is court hire for 3 hours on a Tuesday?", TENNIS) == "12 * 3"
    assert first("How much is court hire for 3 hours on a Saturday?", TENNIS) == "20 * 3"


def test_a_length_of_another_clause_names_no_price():
    assert first("How much is bike hire for 2 hours?",
                 "Cycle Hub\n\nBike hire is £8 per hour, and for rides over 2 hours helmet hire is £3.") == "8 * 2"


def test_a_trailing_total_is_no_sum_of_one_price_and_a_count():
    assert first("3 nights in a compact kennel, total?", "Fernhill Kennels\n\nA compact kennel is £18 per night.") == "18 * 3"


def test_a_heading_before_a_claim_with_its_own_subject_names_no_one():
    assert claimed_surcharges("How much is kayak hire for 3 hours?", ["Kayak hire: members get $5 off per hour."]) == []
    business = "Business accounts: 3 or more devices in one visit get $20 off each device's repair."
    assert claimed_surcharges("I need 4 devices repaired in one visit, total?", [business]) == []  # no business account


def test_a_label_naming_people_is_who_gets_it_at_its_time():
    document = ("Splitfir Axe Lanes\n\nPrices per person:\n1-hour session: $26\n90-minute session: $34\n"
                "Seniors (Mon-Fri before 5pm): $4 off per person on any session.")
    assert first("If 6 of us book a 90-minute session at Splitfir on a Wednesday at 3pm, how much in total?",
                 document) == "34 * 6"


def test_a_number_between_a_count_and_its_thing_ends_the_count():
    assert counted("How much is room 101 for 3 nights?", "nights") == 3
    assert counts_of("2 adults 3 kids", "kid") == ["3"]


@pytest.mark.parametrize("question", [
    "How much would a midi skip cost, excluding the road permit?",
    "What does a midi skip cost, except the road permit?",
    "How much for a midi skip, not the maxi skip?",
    "Should I get a mini skip, or a midi skip? How much would it cost?",
    "I've paid for the midi skip, so what will the road permit cost?",
])
def test_things_set_aside_or_offered_as_alternatives_are_no_total(question):
    assert mentioned_total(question, [SKIPS.split("\n\n", 1)[1]], ["dunmore_skip_hire.txt"]) is None


def test_a_length_of_a_things_line_counts_nothing_and_a_plain_list_weighs_nothing():
    body = CLASSES.split("\n\n", 1)[1]
    assert mentioned_total("What would the bread from scratch class (3 hours) and the curry night cost?", [body]) == "60 + 70"
    assert mentioned_difference("Can I save by getting a midi skip and a road permit?", [SKIPS.split("\n\n", 1)[1]]) is None


def test_an_off_peak_price_is_a_price():
    assert mentioned_total("What would a swim plus a sauna session cost altogether?",
                           ["Swim: £5 off-peak", "Sauna session: £9"]) == "5 + 9"


def test_a_morning_is_no_day_of_an_offer():
    sentences = ["Breakfast club: £6 per morning.", "Termly breakfast pass (60 mornings): £300."]
    assert offer_expressions("How much do I save with the termly pass instead of paying for 60 mornings?",
                             sentences)[0] == "60 * 6 - 300"


@pytest.mark.parametrize("question, want", [
    ("What would the tasting menu cost for a table of 6?", [("{a} * 6", "6")]),
    ("How much would 2 hours every Saturday cost?", [("{a} * 2", "2")]),
    ("What would 3 hours tuition cost?", [("{a} * 3", "3")]),
    ("How much will 2 hours babysitting cost?", [("{a} * 2", "2")]),
])
def test_counts_a_group_or_a_length_still_give(question, want):
    assert named_operations(question) == want


def test_an_offer_needing_a_count_is_not_claimed_by_naming_its_thing():
    # a lookup naming "a costume" claims no "hire 6 or more costumes" deal, and plans no calculation
    from backend.agent.tools.discounts import claimed_discount
    sentence = "Group deal: hire 6 or more costumes for the same event and get 15% off the costume prices."
    assert claimed_discount("How far ahead can I reserve a costume at the Hall?", [sentence]) is None
    assert claimed_discount("We'll hire 7 costumes for the same party, how much?", [sentence])[0] == "15"
