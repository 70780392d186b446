"""A helper's review of the fortieth session's readings (issue 15): each case is one the review showed
the session's first code getting wrong. Each test fails on 7a127bb."""

from __future__ import annotations

from backend.agent.tools.basket import basket_items
from backend.agent.tools.identifiers import as_member_kinds
from backend.agent.tools.multibuy import with_multibuy
from backend.agent.tools.plans import upfront_months
from backend.agent.tools.refunds import refund_expression
from backend.agent.tools.sentences import CAPS_RUN_ON


def test_a_deposit_not_refunded_in_words():
    lines = ["Cancellations less than 48 hours before: we do not refund your deposit."]
    assert refund_expression("I paid $200 but need to cancel, it's 1 days away. How much do I get back?", lines) == "200 * 0"


def test_cancelling_before_the_work_starts_reads_its_own_clause():
    lines = ["If you cancel before work has started, we refund your deposit less an administration fee of €25.00; once "
             "work has started the deposit is non-refundable."]
    assert refund_expression("I paid $300 but want to cancel before you start. How much do I get back?",
                             lines) == "300 - 25.00"


def test_a_group_price_of_one_kind_is_no_price_of_another():
    lines = ["Adult day pass: $14.00", "Child day passes are 2 for $10.00"]
    assert with_multibuy("14.00 * 6", "How much are 6 adult day passes?", lines) is None


def test_a_total_or_a_greeting_is_no_thing_measured():
    assert not any(count == "20" for count, _ in basket_items("Shipping 3 parcels with a total of 20 kg, how much?"))
    assert not any("Quote" in thing for _, thing in basket_items("Quote please, 40 m2 and 3 stair treads"))


def test_a_kind_whose_word_opens_no_line_of_its_own():
    lines = ["Small breeds: $30.00", "Large breeds (labrador, retriever, collie, shepherd): $45.00"]
    assert as_member_kinds("how much to groom my labrador", lines) == "how much to groom my labrador"


def test_a_yearly_price_written_alone():
    lines = ["Monthly: $9.00", "Annual: $99.00", "Pay a full year in advance and pay for 11 months instead of 12."]
    assert upfront_months("If I pay the whole year upfront, how much?", lines) is None


def test_short_capitals_open_a_label():
    assert CAPS_RUN_ON.sub("", "UK Delivery: £4.00") == "UK Delivery: £4.00"
    assert CAPS_RUN_ON.sub("", "CALL-OUT & LABOUR Call-out fee, per visit") == "Call-out fee, per visit"
