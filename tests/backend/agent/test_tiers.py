"""Prices by the size of a group (backend.agent.tools.tiers) and the group a question is about
(backend.agent.party.group_size)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from backend.agent.party import group_size
from backend.agent.tools.calculator import evaluate
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.tiers import tier_expressions, tiers

from .test_expressions import result

CELLAR = ("Pricing is per group: $90 for 2 players, $120 for 3, $140 for 4, $165 for 5 and $180 for 6, which is the "
          "maximum group size.")


@pytest.mark.parametrize("question, want", [
    ("There are 5 of us and we want to do an escape room", "5"),
    ("group of 6 at the locked cellar, what's that per person?", "6"),
    ("we are 4 players", "4"),
    ("me and 3 friends want to play", "4"),
    ("we're 18 people", "18"),
    ("we are 4 hours away", None),
    ("I have 2 dogs", None),
])
def test_the_group_a_question_is_about(question, want):
    assert group_size(question) == want


def test_a_tier_list():
    assert tiers(CELLAR) == {"2": "90", "3": "120", "4": "140", "5": "165", "6": "180"}
    assert tiers("Tickets are $9 for adults and $5 for 2 hours.") == {}  # one "for N", no tiers
    assert tiers("Boxes are $20 for 10 and $35 for 20.") == {}  # no one named: bundles, not group sizes


@pytest.mark.parametrize("question, want", [
    ("There are 5 of us, what will we pay?", ["165"]),
    ("group of 6, what's that per person?", ["180 / 6"]),
    ("There are 8 of us, what will we pay?", []),  # no tier of that size
    ("what does a game cost?", []),
])
def test_the_price_of_the_question_s_group(question, want):
    assert tier_expressions(question, [CELLAR]) == want


def test_a_tier_price_takes_the_discount_of_its_day_and_time():
    text = "Locked Cellar\n\n" + CELLAR + " On weekdays before 17:00 every booking gets 20 percent off."
    question = "There are 5 of us and we want to do an escape room on a Tuesday at 2pm. What will we pay?"
    assert evaluate(candidate_expressions(question, [result(text)], None, evaluate)[0]).q == Fraction(132)


def test_what_is_no_tier_or_group():
    assert tier_expressions("2 of us for 1 hour?", ["Kayak hire is $30 for 1 hour or $50 for 2 hours, and a guide "
                                                    "costs $60 for 4 people."]) == []
    assert tier_expressions("There are 5 of us. how much is parking for one car?",
                            ["Parking is $5 per car.", "The cafe sells drinks.", CELLAR]) == []  # not about the game
    assert group_size("we are 4.5 hours away") is None
    assert group_size("2 adults and 3 children want to play") == "5"
    assert group_size("last year we were 6") is None
