"""A price per party of up to so many people with each additional person, and a deposit of a
kind of thing a section heading names (issue 15). Read from blind set 102 after its end run; each
test fails when its reading regresses."""

from __future__ import annotations

from backend.agent.tools.allowances import allowance_expressions
from backend.agent.tools.deposits import asked_deposit

VISITS = ["Guided half-day visit to your ancestral townland: €180 per party of up to 4 people",
          "Guided full-day visit: €320 per party of up to 4 people",
          "Each additional person beyond 4: €30"]


def test_each_additional_person_of_the_party_the_question_names():
    # "6 of us" are 2 beyond the 4 of the half-day visit the question names, two lines above the rate ("180 * 6" before)
    assert allowance_expressions("There will be 6 of us coming over for a half-day visit to our family's townland. How "
                                 "much is that before VAT?", VISITS) == ["180 + (6 - 4) * 30"]
    # the nearest line when the question names the full day
    assert allowance_expressions("We're 5 people and would like the full-day guided visit. Cost?", VISITS) == [
        "320 + (5 - 4) * 30"]
    # within the party: nothing beyond it
    assert allowance_expressions("There will be 3 of us coming over for a half-day visit.", VISITS) == []


def test_a_deposit_of_the_section_the_question_names():
    sentences = [("fees", "RESEARCH PACKAGES"),
                 ("fees", "Family Tree Builder package: 4 generations of one family line, up to 20 hours; Fee €960."),
                 ("fees", "Hourly research: €55 per hour, minimum 2 hours per order."),
                 ("terms", "- Research packages: a deposit of 50% of the package fee (including VAT) is due on acceptance.")]
    deposit = asked_deposit("How much deposit do I pay up front for the Family Tree Builder package, including VAT?",
                            sentences, None)
    assert deposit is not None and deposit.share == "50" and deposit.taxed
    # (a deposit of another kind of work is none of it: "Dental procedures need a deposit of 50%" for a vaccination)
    vet = [("prices", "Vaccination booster: £45."), ("prices", "Dental scale and polish: £180."),
           ("terms", "Dental procedures need a deposit of 50%.")]
    assert asked_deposit("How much is the deposit for a vaccination booster?", vet, None) is None


def test_a_party_counts_no_children():
    # an event "for 10 people" counts no "Each additional child" of a kids' party package (blind set 92's off-site
    # workshop had taken the party package too)
    lines = ["Party package: $320 for up to 8 children", "Each additional child: $32 (maximum 14 children)"]
    assert allowance_expressions("Can you run an off-site workshop at our office for 10 people? How much?", lines) == []
