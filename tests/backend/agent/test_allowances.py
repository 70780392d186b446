"""A price with an allowance and a rate beyond it (backend.agent.tools.allowances)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from backend.agent.tools.allowances import allowance_expressions, block_rate_expressions
from backend.agent.tools.calculator import evaluate
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.segmentation import split_sentences

from .test_expressions import result

SAUNA = "Private hire of the whole house costs £240 for 3 hours, for groups of up to 20. Each extra hour is £65."
VAN = ("New customers get free van hire on move-in day for up to 3 hours; after that the van costs $15 per hour. "
       "There is a one-off admin fee of $25.")
DELIVERY = "Local delivery within 5 miles is £6; beyond that, delivery is charged at £1.20 per additional mile."
RADIUS = "We cover a 5-mile radius from the square; beyond that, we add $1.50 for every mile past the radius, per walk."


@pytest.mark.parametrize("question, text, want", [
    # the allowance's price, then the rate beyond it (the allowance in the sentence before the rate)
    ("We're 18 people and want to hire the whole house for 5 hours. Total?", SAUNA, ["240 + (5 - 3) * 65"]),
    # a free allowance: only the rate beyond it
    ("I'll need the van for 5 hours on move-in day. how much will the van cost me?", VAN, ["(5 - 3) * 15"]),
    ("need flowers delivered, it's 12 miles away. what's the delivery charge?", DELIVERY, ["6 + (12 - 5) * 1.20"]),
    ("I live 8 miles from the square, what's the extra for the walk?", RADIUS, ["(8 - 5) * 1.50"]),
    # within the allowance, or in another unit: none
    ("hire the whole house for 2 hours, total?", SAUNA, []),
    ("hire the whole house for 5 days, total?", SAUNA, []),
    ("how much is the house?", SAUNA, []),
])
def test_an_amount_beyond_an_allowance(question, text, want):
    assert allowance_expressions(question, split_sentences(text)) == want


@pytest.mark.parametrize("text", [
    "Live carving demo, 2 hrs incl. 1 block: $950.00\nEach extra hour: $275.00",
    "Live carving demo (2 hours, incl. 1 block): $950.00\nEach extra hour: $275.00",
    "Live carving demo - 2 hours: $950.00\nEach extra hour: $275.00"])
def test_an_allowance_in_a_priced_things_label(text):
    # blind set 94, read: the demo's 2 hours were in its label, not after "for"
    question = "We want a live carving demo but for 4 hours total instead of 2. Price before GST?"
    assert allowance_expressions(question, split_sentences(text)) == ["950.00 + (4 - 2) * 275.00"]


def test_a_rate_going_on_from_a_ranked_allowance_is_ranked_with_it():
    # "Each extra hour: $275.00" shares no word with the question; the line before it names the demo (blind set 94)
    sentences = ["Orders under $300 are paid in full.", "Ice luge: $495.00", "Ice bar: $1,450.00",
                 "Live carving demo, 2 hrs incl. 1 block: $950.00", "Each extra hour: $275.00"]
    question = "a live carving demo for 4 hours, price?"
    assert allowance_expressions(question, sentences, [sentences[0], sentences[3], sentences[1]]) == [
        "950.00 + (4 - 2) * 275.00"]
    assert allowance_expressions(question, sentences, sentences[:3]) == []  # neither line ranked


def test_the_amount_beyond_an_allowance_is_the_first_candidate():
    question = "We're 18 people and want to hire the whole house for 5 hours for a stag do. What's the total?"
    first = candidate_expressions(question, [result("Birchwood Sauna\n\nA session costs £16. " + SAUNA)], None,
                                  evaluate)[0]
    assert evaluate(first).q == Fraction(370)


@pytest.mark.parametrize("question, text, want", [
    ("how much is the 4-hour spa package?", "Private hire costs £240 for 3 hours. Each extra hour is £65. "
     "Spa package (4 hours) is £99.", []),  # "4-hour" names a thing
    ("court hire for 3 hours", "Lessons last for 2 hours and cost £30. Court hire is £10 per hour after 6pm.", []),
    ("hire for 5 hours", "Entry is £10 and hire is £240 for 3 hours. Each extra hour is £65.",
     ["240 + (5 - 3) * 65"]),  # the allowance's own price
    ("hire for 5 hours", "Hire is £240 for 3 hours with free parking. Each extra hour is £65.",
     ["240 + (5 - 3) * 65"]),  # "free" of something else
])
def test_what_is_no_allowance(question, text, want):
    assert allowance_expressions(question, split_sentences(text)) == want


def test_a_rate_per_block_after_an_allowance_included_in_a_fee_named_elsewhere():
    locksmith = ("Lockfast\n\nCall-out fee: £40 between 8am and 6pm; £70 between 6pm and 8am, and all day on Sundays. "
                 "The first 30 minutes of labour are included in the call-out fee; after that, labour is charged at £12 "
                 "per 15 minutes.")
    # 9pm on a Tuesday: the £70 fee; an hour is 60 minutes, 30 beyond the allowance: two blocks of 15
    first = candidate_expressions("locked out at 9pm on a tuesday, the job took an hour. what will it cost?",
                                  [result(locksmith)], None, evaluate)[0]
    assert first == "70 + ceil((60 - 30) / 15) * 12"
    # 11am on a Wednesday, 40 minutes: the £40 fee and one block begun
    first = candidate_expressions("a call-out on a Wednesday at 11am, the job took 40 minutes. what will it cost?",
                                  [result(locksmith)], None, evaluate)[0]
    assert evaluate(first).q == 52


def test_review_allowances():
    # the fee named in another sentence of the same document, an hour and 20 minutes as 80 minutes
    fixit = ("Fixit\n\nThe first 30 minutes of labour are included in the call-out fee; after that, labour is charged at "
             "£12 per 15 minutes. Call-out fee: £70.")
    first = candidate_expressions("the job took an hour and 20 minutes, what will it cost?", [result(fixit)], None,
                                  evaluate)[0]
    assert first == "70 + ceil((80 - 30) / 15) * 12"


@pytest.mark.parametrize("question, sentence, want", [
    # blind sets 43, 44 and 19
    ("Pawsome Parlour charged me for de-matting my spaniel, it took 45 minutes. how much is that part",
     "De-matting is charged at $20 per 15 minutes.", "60"),
    ("I'm declaring £8,000 worth of stuff, how much is the contents insurance each month?",
     "Contents insurance costs £2.50 per month for every £1,000 of declared value (minimum declared value £2,000).",
     "20"),
    ("if i run the dryer for 48 minutes how much is that", "Dryers take quarters: $0.25 for every 6 minutes.", "2"),
    ("de-matting took an hour", "De-matting is charged at $20 per 15 minutes.", "80"),
    # a block begun is charged whole
    ("it took 50 minutes, how much?", "De-matting is charged at $20 per 15 minutes.", "80"),
])
def test_a_price_per_block_of_units(question, sentence, want):
    found = block_rate_expressions(question, [sentence])
    assert found and evaluate(found[0]).q == Fraction(want)
    assert candidate_expressions(question, [result(sentence)], None, evaluate)[0] == found[0]


@pytest.mark.parametrize("question, sentence", [
    ("how much is a 1 hour walk", "Walks cost $20 per 1 hour."),  # a plain rate
    ("20 stamps please", "Stamps are £8 per 100, sold in books."),  # no unit to read
    ("a 45 minute groom", "Grooming costs $20 per dog."),  # no block
    ("for 3 hours", "De-matting is charged at $20 per 15 minutes."),  # hours asked? read in minutes: 180
])
def test_what_is_no_block_rate_or_is_read_in_the_block_unit(question, sentence):
    found = block_rate_expressions(question, [sentence])
    assert found == (["20 * 180 / 15"] if "3 hours" in question else [])


@pytest.mark.parametrize("question, want", [
    ("I'm a landlord, need a CP12 gas cert for a flat with 3 gas appliances. How much before VAT?", "70 + (3 - 1) * 15"),
    ("power flush for a house with 11 radiators, whats the total", "420 + (11 - 8) * 30"),
    ("power flush, we only have 6 radiators", "420"),  # within the allowance: the price alone
    ("how much is delivery to a farm 20 miles away", "5 + (20 - 15) * 1"),
])
def test_a_rate_with_its_allowance_after_it(question, want):
    # "£15 per extra appliance after the first", "£30 per radiator over 8": the allowance follows the rate
    # (blind set 57: read as 15 * 3 and 160 * 11 + 420)
    sentences = ["Gas safety certificate (landlord CP12): £70, plus £15 per extra appliance after the first",
                 "Power flush, up to 8 radiators: £420, then £30 per radiator over 8",
                 "Delivery is £5, plus £1 per mile over 15 miles."]
    assert allowance_expressions(question, sentences)[0] == want


def test_an_age_after_a_rate_is_no_allowance():
    # "over 3 years old" is who pays it, not a count of tickets included
    assert allowance_expressions("4 tickets for the kids", ["Kids pay £4 per ticket over 3 years old."]) == []


def test_review_an_age_after_a_rate_for_people_is_no_allowance():
    # "over 3" after "per child" is an age: 4 children pay 4 * 5, not (4 - 3) * 5
    assert allowance_expressions("entry for 4 children", ["Entry is £5 per child over 3."]) == []
    assert allowance_expressions("room for 2 guests", ["Room £90 per night, £20 per guest over 12."]) == []
    # people beyond an allowance said so still are
    assert allowance_expressions("room for 5 guests", ["Room £90 per night, £20 per extra guest after the first 2."]) == [
        "90 + (5 - 2) * 20"]


def test_a_block_rate_after_the_first_units_free():
    # Blind set 83: "After the first 15 minutes we charge a waiting fee of £10.00 for each further 15 minutes (or part
    # of 15 minutes)" for "kept waiting 50 mins" was 10.00 + 50 (no block read past "further"; "mins" no "minutes").
    waiting = ("After the first 20 minutes we charge a waiting fee of £12.00 for each further 10 minutes (or part of "
               "10 minutes) we are kept waiting.")
    assert block_rate_expressions("we kept you waiting 45 mins, whats the waiting fee?", [waiting]) == [
        "ceil((45 - 20) / 10) * 12.00"]
    assert block_rate_expressions("kept waiting 40 minutes, waiting fee?", [waiting]) == ["12.00 * (40 - 20) / 10"]
    assert block_rate_expressions("kept waiting 15 minutes, waiting fee?", [waiting]) == []  # within the free ones
    assert block_rate_expressions("the job took 50 mins", ["Labour: $20 per 15 minutes"]) == ["ceil(50 / 15) * 20"]
    # a block beyond a base read elsewhere is no rate of the whole amount (set 39, scarifying: the lawn cut's extra)
    cut = ("A standard lawn cut covers lawns up to 200 square metres and costs €30; larger lawns are charged an extra €5 "
           "for every additional 100 square metres or part thereof.")
    assert block_rate_expressions("How much would scarifying a 120 square metre lawn cost?", [cut]) == []
