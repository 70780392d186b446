"""Arithmetic asked in words (backend.agent.spoken_arithmetic), the calculator's first candidate."""

from __future__ import annotations

import pytest

from backend.agent.spoken_arithmetic import spoken_expression
from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.expressions import candidate_expressions


@pytest.mark.parametrize("question, want", [
    # New-user pass: "square root of 144 plus 2 cubed" was read as "144 + 2" (146).
    ("square root of 144 plus 2 cubed", "20"),
    ("what is the square root of 144?", "12"),
    ("what is 2 to the power of 10?", "1024"),
    ("what is 2 to the 5th power", "32"),
    ("3 squared plus 4 squared?", "25"),
    ("whats 10 divided by 4", "5/2"),
    ("what is two plus two", "4"),
])
def test_arithmetic_in_words_is_the_first_candidate(question, want):
    found = candidate_expressions(question, [], None, evaluate)
    assert found and str(evaluate(found[0]).q) == want, found


@pytest.mark.parametrize("text", [
    "how much is a hybrid for a full day?",  # a question of the documents
    "I have 2 dogs and 3 cats",              # numbers, no arithmetic asked
    "what is 7",                             # one number, nothing to work out
    "12 * 34",                               # typed: backend.agent.operations reads it
    "what is the square root of my problems plus 2",
    "What is 144 and 12?",                   # no operation named
])
def test_other_messages_are_no_spoken_arithmetic(text):
    assert spoken_expression(text) is None


@pytest.mark.parametrize("text, want", [
    ("what is 17% of 240 plus 12?", "(240 * 17 / 100) + 12"),  # new-user pass: 40.8 (17% of 240, the 12 lost)
    ("what is 20 percent of 50 minus 3", "(50 * 20 / 100) - 3"),
    ("what is 15% of 80?", None),  # a percentage alone: the calculator's own candidate (80 * 15 / 100)
])
def test_a_percentage_of_a_number_in_a_longer_calculation(text, want):
    assert spoken_expression(text) == want
