"""A price asked without "how much" (the twenty-eighth session: blind sets 64 and 82, read after
their runs, had the right reading and no calculator planned): a price asked with its tax ("timing
reset cost with hst pls"), and the difference of two rows of a table whose column says "Price"
("What's the price difference between ..."). Each assertion failed on the code before it."""

from __future__ import annotations

from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.calculator import spec
from backend.agent.tools.expressions import candidate_expressions

from .test_expressions import result

REPAIRS = ("REPAIR PRICES\nAll prices are in Canadian dollars and are BEFORE 13% HST, which is added at checkout.\n\n"
           "| Repair | Price |\n|---|---|\n| Timing reset | $65 |\n| Tension overhaul | $48 |\n")
CASTLES = ("CASTLES (per day)\n  Castle                Size        Price\n  Little Jester         10x10 ft    $150\n"
           "  Rainbow Palace        13x13 ft    $195\n  Ninja Obstacle Course 30 ft long  $340\n")


def planned(question: str, text: str) -> bool:
    calculator = spec(lambda texts: [[1.0] * 4 for _ in texts], passages=lambda user_id, t: [("doc.txt", text)])
    return calculator.relevant("u", question)


def test_a_price_asked_with_its_tax_and_no_how_much():
    assert planned("timing reset cost with hst pls", REPAIRS)
    found = candidate_expressions("timing reset cost with hst pls", [result(REPAIRS)], None, evaluate)
    assert evaluate(found[0]).q * 100 == 65 * 113


def test_the_price_difference_of_two_rows_under_a_price_column():
    for question in ("What's the price difference between the Ninja Obstacle Course and the Little Jester?",
                     "What's the difference in price between the Ninja Obstacle Course and the Little Jester?"):
        assert planned(question, CASTLES), question
        found = candidate_expressions(question, [result(CASTLES)], None, evaluate)
        assert found and evaluate(found[0]).q == 190, question


def test_a_bare_price_asked_with_a_discount_claimed():
    hire = "HIRE PRICES\nGiant slide: $240 per day\nSumo suits: $150 per day\n\nDISCOUNTS\nCommunity groups and charities: 10% off.\n"
    question = "We're a community group and just want the giant slide for the day. Price?"
    assert planned(question, hire)
    found = candidate_expressions(question, [result(hire)], None, evaluate)
    assert evaluate(found[0]).q == 216


def test_a_bill_of_several_things_without_how_much_is_not_planned_by_its_tax():
    # (end to end on blind set 82 such questions became wrong totals where they were declined: review)
    assert not planned("I'm 70, a walking foot fitted and a timing reset. total with hst?", REPAIRS)
    assert planned("timing reset cost with hst pls", REPAIRS)
