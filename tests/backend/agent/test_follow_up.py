"""A follow-up read with the question before it (backend.agent.follow_up)."""

from __future__ import annotations

import pytest

from backend.agent.follow_up import follow_up_question

TYRES = "How much for 4 budget 16 inch tyres fitted?"


@pytest.mark.parametrize("text, want", [
    # a new count: the count of the question, not its size (16 inch)
    ("and for 6?", "How much for 6 budget 16 inch tyres fitted?"),
    ("what about 8?", "How much for 8 budget 16 inch tyres fitted?"),
    ("And for six?", "How much for 6 budget 16 inch tyres fitted?"),
    ("ok and 3?", "How much for 3 budget 16 inch tyres fitted?"),
    ("make it 5", "How much for 5 budget 16 inch tyres fitted?"),
    ("and for 6 tyres?", "How much for 6 budget 16 inch tyres fitted?"),
    # a thing added
    ("add a wheel alignment to that", "How much for 4 budget 16 inch tyres fitted plus a wheel alignment?"),
    ("plus a puncture repair", "How much for 4 budget 16 inch tyres fitted plus a puncture repair?"),
    ("and a wheel alignment too?", "How much for 4 budget 16 inch tyres fitted plus a wheel alignment?"),
    # a message of its own
    ("what time do you close on saturday?", None),
    ("How much is a 10-class pass?", None),
    ("thanks!", None),
    ("and what about your opening hours on a bank holiday, are you open then or closed?", None),
])
def test_a_follow_up_asks_the_whole_question(text, want):
    assert follow_up_question(text, [TYRES]) == want


def test_the_count_of_the_thing_the_follow_up_names():
    assert follow_up_question("And for 8 classes?", ["How much are 5 drop-in classes with 2 hours of parking?"]) == (
        "How much are 8 drop-in classes with 2 hours of parking?")


def test_a_follow_up_of_a_follow_up_and_nothing_before():
    assert follow_up_question("and for 6?", [TYRES, "add a wheel alignment to that"]) == (
        "How much for 6 budget 16 inch tyres fitted plus a wheel alignment?")
    assert follow_up_question("and for 6?", []) is None
    assert follow_up_question("and for 6?", ["Hi there"]) is None  # no count to change


@pytest.mark.parametrize("text, want", [
    # another kind of the same thing (new-user pass: "what about premium 18 inch ones instead?")
    ("what about premium 18 inch ones instead?", "How much for 4 premium 18 inch tyres fitted?"),
    ("and the premium tyres instead?", "How much for 4 premium tyres fitted?"),
    # another size: the size, not the count
    ("what about 18 inch?", "How much for 4 budget 18 inch tyres fitted?"),
    ("what about 18 inch ones instead?", "How much for 4 budget 18 inch tyres fitted?"),
    # a thing the question does not count is no swap
    ("what about the 10-class pass instead?", None),
])
def test_a_follow_up_swaps_the_kind_or_the_size(text, want):
    assert follow_up_question(text, [TYRES]) == want


@pytest.mark.parametrize("text, before, want", [
    # review: the count of the thing named, read up to the next count
    ("and for 6 nights?", "How much for 2 people for 3 nights?", "How much for 2 people for 6 nights?"),
    # more of it, a time, a thing the question does not count: no new count
    ("and 2 more?", TYRES, None),
    ("what about 3 pm?", "Are you open at 10 am?", None),
    ("thanks 5 stars", TYRES, None),
])
def test_review_of_follow_ups(text, before, want):
    assert follow_up_question(text, [before]) == want
