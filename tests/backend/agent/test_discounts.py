"""A discount the documents grant and the question claims (backend.agent.tools.discounts): the
calculator's first candidates times (100 - p) / 100, the price read outside the discount's own
sentence."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.calculator import evaluate
from backend.agent.tools.discounts import claimed_discount
from backend.agent.tools.expressions import candidate_expressions

from .test_expressions import result

SHOP = ("Spokesmith Cycles\n\nA basic service costs £45. Labour not on the price list is charged at £36 per hour. "
        "Students with a valid card get 15% off all labour.")
MUSEUM = ("Ravella Museum\n\nAdult tickets cost £9 and child tickets £4. Groups of more than 10 people receive a 15% "
          "discount on adult tickets.")
FENCING = ("Larkspur Fencing\n\nAdult membership is £48 per month; junior membership (under 18) is £30 per month, "
           "and siblings each receive 10% off junior membership.")


def test_who_gets_it_named_claims_it():
    sentences = SHOP.split("\n\n")[1].split(". ")
    assert claimed_discount("I'm a student with a valid card. My repair takes 3 hours of labour, what's the cost?",
                            sentences)[0] == "15"
    # one word of who gets it and a discount asked in words
    assert claimed_discount("Twelve of us adults are going as a group. What's the total after the group discount?",
                            MUSEUM.split("\n\n")[1].split(". "))[0] == "15"


def test_what_claims_no_discount():
    museum = MUSEUM.split("\n\n")[1].split(". ")
    assert claimed_discount("How much is an adult ticket for 3 adults?", museum) is None
    assert claimed_discount("3 hours of labour with 20% off, what's the cost?", SHOP.split("\n\n")[1].split(". ")) is None
    # who gets it is the discount's own clause ("siblings"), not the sentence's first words ("adult membership")
    assert claimed_discount("how much is adult membership for a year?", [FENCING.split("\n\n")[1]]) is None
    # a negation, a modifier, a word of anyone
    shop = SHOP.split("\n\n")[1].split(". ")
    assert claimed_discount("I'm not a student but I have a valid card, 3 hours of labour?", shop) is None
    assert claimed_discount("Is my card still valid? how much for 3 hours labour", shop) is None
    assert claimed_discount("What's the hourly rate for labour if I pay by card?", shop) is None


def test_the_claimed_discount_is_applied_to_the_price_of_another_sentence():
    question = "I'm a student with a valid card. My repair isn't on the list and takes 3 hours of labour. Cost?"
    first = candidate_expressions(question, [result(SHOP)], None, evaluate)[0]
    assert first == "(36 * 3) * (100 - 15) / 100"
    assert evaluate(first).q == Fraction("91.8")


def test_what_a_claimed_discount_saves_when_that_is_asked():
    question = "I'm a student. My repair takes 3 hours of labour, how much do I save with the student discount?"
    assert evaluate(candidate_expressions(question, [result(SHOP)], None, evaluate)[0]).q == Fraction("16.2")
