"""A bookkeeper's fee schedule and terms as blind set 106 wrote them (issue 15; read after its runs): a
start-up offer for what was done within a time before now (not claimed by "before you start"),
two indented rows each with its price, a year of a named package paid up front, a deposit of a share
of the fee with its tax, and its refund before the work starts less a fee. Each test fails on the
code before them."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.discounts import claimed_discount
from backend.agent.tools.minimums import with_least_people

from .test_expressions import first

FEES = ("CORRIB LEDGER BOOKKEEPING - FEE SCHEDULE 2025\n"
        "All fees are in euro and EXCLUDE VAT, which is added at 23%.\n\n"
        "MONTHLY BOOKKEEPING PACKAGES (price per month)\n"
        "  Starter  - up to 50 transactions a month ........ EUR 120.00\n"
        "  Standard - 51 to 150 transactions a month ....... EUR 220.00\n"
        "  Plus     - 151 to 300 transactions a month ...... EUR 375.00\n"
        "  Pay a full year in advance and pay for 11 months instead of 12.\n\n"
        "PAYROLL\n"
        "  EUR 9.50 per employee per pay run\n"
        "  Minimum charge EUR 45.00 per pay run\n\n"
        "TAX RETURNS & ACCOUNTS\n"
        "  VAT return (per return) ......................... EUR 95.00\n"
        "  Year-end accounts - sole trader ................. EUR 650.00\n"
        "  Year-end accounts - limited company ............. EUR 1,200.00\n"
        "  CRO annual return (B1) filing ................... EUR 110.00\n\n"
        "START-UP OFFER\n"
        "Businesses registered in the last 12 months get 15% off their\n"
        "monthly package fee for the first 6 months. The offer doesn't apply\n"
        "to onboarding, payroll, returns or any other fee.\n")
TERMS = ("3. One-off work (year-end accounts, tax returns, catch-up)\n"
         "A deposit of 50% of the quoted fee, including VAT, is payable\nbefore work starts. The balance is due on completion.\n\n"
         "4. Cancelling one-off work\n"
         "If you cancel before work has started, we refund your deposit less\n"
         "an administration fee of EUR 25.00. Once work has started, the\ndeposit is not refundable.\n")


def test_before_you_start_claims_no_offer_for_the_lately_registered():
    assert first("What deposit do I pay before you start on our limited company year-end accounts?", FEES, TERMS) == 738


def test_an_offer_for_what_was_done_lately_needs_the_question_to_say_it_was():
    sentences = ["Businesses registered in the last 12 months get 15% off their monthly package fee."]
    assert claimed_discount("My business runs about 120 transactions a month. What's my monthly fee?", sentences) is None
    assert claimed_discount("We registered our business 4 months ago. What's the Standard package?", sentences) is not None


def test_two_indented_rows_each_with_its_price():
    assert first("We have 8 staff on payroll. What would one pay run cost, before VAT?", FEES) == 76


def test_a_year_of_a_named_package_paid_up_front():
    assert first("If I pay a year of the Plus package up front, what's the total including VAT?", FEES) == Fraction("5073.75")


def test_a_deposit_refunded_before_the_work_starts_less_a_fee():
    assert first("I paid the deposit for sole trader year-end accounts but want to cancel before you start. How much would "
                 "I get back?", FEES, TERMS) == Fraction("374.75")


def test_a_least_head_count_beside_words_of_a_reduction_is_its_threshold():
    # (the words of a reduction were written with backspaces in the pattern, so only "%" was read)
    lines = [("p", "Tasting menu: $55.00 per person"), ("p", "Groups with a minimum of 12 people get a discount")]
    assert with_least_people("55.00 * 6", lines, "6") == "55.00 * 6"
    assert with_least_people("55.00 * 6", [("p", "Tasting menu: $55.00 per person"), ("p", "Minimum of 8 people")],
                             "6") == "55.00 * max(8, 6)"
