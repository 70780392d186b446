"""A circus school's bookings as practice set 3 wrote them (issue 15; scripts/agent_eval_sets/practice3, read):
numbered sections of a terms document, a party's balance once the
deposit is taken off, and a membership's least term. Each test fails on the code before them."""

from __future__ import annotations

from fractions import Fraction

import pytest

from backend.agent.operations import asks_money
from backend.agent.tools.deposits import PAID_DEPOSIT
from backend.agent.tools.minimums import least_term_expressions
from backend.agent.tools.segmentation import split_sentences

from backend.agent.tools.calculator import evaluate
from backend.agent.tools.expressions import candidate_expressions

from .test_expressions import first, result

TERMS = ("Booking Terms & Group Events\nAll amounts in Canadian dollars.\n\n"
         "4. Birthday Circus Parties (Saturdays and Sundays only)\n"
         "Two hours: one hour of circus games with two coaches, then one hour in the party room.\n"
         "   Base price ............ 495.00 for up to 12 children\n"
         "   Each additional child .. 28.00 (maximum 20 children)\n"
         "   Party prices EXCLUDE 13% HST.\n"
         "A deposit of 150.00 is due when booking and is deducted from the final bill.\n\n"
         "5. Team-building workshops\n"
         "   55.00 per person for 2 hours, HST extra.\n"
         "   Minimum charge of 8 people - smaller groups pay for 8.\n"
         "   Groups of 15 or more get 10% off the per-person rate.\n")
PRICES = ("PRICE LIST\nAll amounts in Canadian dollars. Membership prices INCLUDE 13% HST.\n\n"
          "MEMBERSHIPS (per month)\n"
          "  Open Training ........ 65.00   (requires Aerial Foundations)\n"
          "  Unlimited Classes .... 149.00  (3-month minimum)\n")


def test_a_numbered_title_over_its_first_amount_is_a_sentence_of_its_own():
    assert split_sentences("5. Team-building workshops\n   55.00 per person for 2 hours, HST extra.") == [
        "5.", "Team-building workshops", "55.00 per person for 2 hours, HST extra."]


@pytest.fixture(scope="module")
def real_embedder():
    from backend.rag import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def ranked_first(question: str, embedder) -> Fraction:
    found = candidate_expressions(question, [result(TERMS)], embedder.embed, evaluate)
    assert found, question
    return evaluate(found[0]).q


def test_a_balance_once_the_deposit_is_taken_off(real_embedder):
    assert PAID_DEPOSIT.search("Once the deposit is taken off, what's the remaining balance including HST?")
    assert asks_money("what's the remaining balance including HST?")
    # 12 children and 2 more, HST, less the deposit
    assert ranked_first("We're booking a birthday circus party for 14 kids. Once the deposit is taken off, what's the "
                        "remaining balance including HST?", real_embedder) == Fraction("472.63")


def test_a_membership_s_least_term():
    lines = ["Unlimited Classes: $149.00 per month; (3-month minimum).", "Open Training: $65.00 per month."]
    assert least_term_expressions("If I sign up for Unlimited Classes and only stay the minimum period, how much?",
                                  lines) == ["149.00 * 3"]
    assert least_term_expressions("How much is Unlimited Classes for a month?", lines) == []
    assert first("If I sign up for Unlimited Classes and only stay the minimum period, how much will I have paid "
                 "altogether?", PRICES) == 447
