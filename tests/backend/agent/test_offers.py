"""Two ways of paying compared, and a bundle's price per unit (backend.agent.tools.offers): the
difference of two offers' costs for the amount the question asks, or a bundle's price over its
measure, as the first of the calculator's candidates; the calculator is planned for them."""

from __future__ import annotations

from fractions import Fraction

import pytest

from backend.agent.tools.calculator import evaluate, spec
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.offers import asked_amount, measure_of, offer_expressions
from backend.agent.tools.segmentation import split_sentences

from .test_expressions import result

FERRY = ("Gull Sound Ferry\n\nA single foot-passenger ticket costs £6.50, and a car with driver costs £28. "
         "A book of 20 foot-passenger tickets sells for £104. The crossing takes 25 minutes.")
SHOP = "Ostrel Glass\n\nThe Ostrel tumbler is sold at $34 each or $180 for a set of six."
GYM = ("Halden Climbing\n\nMonthly membership is £52, or £540 if paid for a full year up front. "
       "A day pass costs £13.")
BIKES = ("Spokesmith\n\nThe shop rents out 10 hybrid bikes at £18 per day or £75 per week. In 2017 it started a "
         "Saturday maintenance class: 6 sessions of 2 hours each for £90.")
DESKS = ("Harbour Desks\n\nA day pass costs £18, a hot desk membership is £165 per month, and a dedicated desk is "
         "£240 per month.")
LESSONS = ("Marlowe Driving\n\nA single 1-hour lesson costs $55 in a manual car and $62 in an automatic. "
           "A block of 10 manual lessons is sold for $495. Intensive one-week courses include 20 hours of lessons "
           "for $1,050.")
TRAM = "Tram 9\n\nA single ticket costs €2.10, a day pass costs €7.50, and a monthly pass costs €38."
COURSE = "Clayhatch\n\nA 10-week wheel-throwing course costs €290, with one 150-minute session each week."
CLUB = ("Chess Club\n\nThe club meets every Wednesday. Adult membership costs £60 a year and junior membership £20 a "
        "year; visitors may play for £3 a night.")
BATTERIES = "Tick Tock Repairs\n\nA full service costs $85. Replacement watch batteries are $9 each, or 3 for $24."
FENCING = ("Larkspur Fencing\n\nBeginners' courses run for 6 weeks, with one 90-minute session per week, and cost £96. "
           "After the course, adult membership is £48 per month or £480 per year; junior membership is £30 per month. "
           "Full livery at the stables next door is €140 per week.")
PLAN = ("Brambleway Vets\n\nThe Pet Health Plan costs £16 per month per pet and covers two check-ups a year; paying "
        "annually costs £175 per pet instead. Boosters are £62.")
STARS = ("Hollin Observatory\n\nTickets cost $14 for adults and $7 for children, and a family ticket for up to 5 "
         "people costs $38. The telescope weighs 90 kg.")
RINK = ("Copperline Rink\n\nGeneral admission is £8 for adults and £5.50 for children, and skate hire costs £3 per "
        "person per session. A ten-session punch card for adults costs £65, excluding skate hire.")
WASH = "Suds\n\nA standard 8 kg washer costs $4.50 per load and a large 14 kg washer costs $7.25 per load."
WALKS = ("Tailwag Walks\n\nPark walks last 60 minutes, with no more than 5 dogs per walker, and cost $20 per dog. "
         "Bundles: 5 park walks for $90, or 10 park walks for $170.")
ORCHESTRA = ("Elm Orchestra\n\nFees: £95 per term, or £260 for the full year if paid in September. "
             "Scores cost £12.")


@pytest.mark.parametrize("question, text, want", [
    # one crossing: a single ticket against a twentieth of the book
    ("How much do I save per crossing if I buy the 20-ticket book instead of single foot-passenger tickets?",
     FERRY, "6.50 - 104 / 20"),
    # six at $34 against the set of six
    ("how much do I save buying the set of six tumblers vs six bought separately", SHOP, "6 * 34 - 180"),
    # a year: 12 months at £52 against the year up front
    ("If I pay for a whole year up front instead of paying monthly for 12 months, how much do I save?",
     GYM, "12 * 52 - 540"),
    # 2 weeks: 14 days at the daily rate against 2 weeks at the weekly one
    ("renting a hybrid for 2 weeks - how much do I save paying the weekly rate vs the daily rate?",
     BIKES, "14 * 18 - 2 * 75"),
    # 12 days a month of day passes against a month's hot desk membership (not the dedicated desk)
    ("I'd be coming in about 12 days a month. How much would I save each month with a hot desk membership "
     "instead of buying day passes?", DESKS, "12 * 18 - 165"),
    # a lesson: the single manual lesson against a tenth of the block (not the automatic one)
    ("how much do i save per lesson buying the 10 manual lesson block instead of single lessons", LESSONS,
     "55 - 495 / 10"),
    # there and back on 22 days: 44 single tickets against the monthly pass
    ("I ride the tram there and back on 22 working days a month using single tickets. How much more is that "
     "than buying the monthly pass?", TRAM, "44 * 2.10 - 38"),
    # 25 nights at £3 against the adult year
    ("I'd turn up 25 wednesdays a year. how much more would I pay over a year as a visitor than with adult "
     "membership", CLUB, "25 * 3 - 60"),
    # "or 3 for $24": three bought together
    ("I need 3 watch batteries. How much do I save getting the 3-pack vs buying them one at a time?", BATTERIES,
     "3 * 9 - 24"),
    # the year's price names what the month's price names ("£48 per month or £480 per year"): not the livery
    ("thinking of joining as an adult for a full year. how much do i save paying annually vs monthly for 12 months?",
     FENCING, "12 * 48 - 480"),
    # the period nearest the price ("per month"), not the check-ups' "a year"
    ("For the pet health plan, how much do I save in a year by paying annually instead of monthly? just one pet",
     PLAN, "12 * 16 - 175"),
    # a listed party against the one ticket for all of them
    ("we're 2 adults and 3 kids going stargazing - how much cheaper is the family ticket than buying separate "
     "tickets?", STARS, "2 * 14 + 3 * 7 - 38"),
    # "ten-session": a bundle of 10; "(ignore skate hire)" names no offer
    ("If I buy the adult punch card, how much do I save per session compared to normal adult admission? (ignore "
     "skate hire)", RINK, "8 - 65 / 10"),
    # one of each: the sizes name the washers, they are no amount
    ("How much more does a large 14 kg wash cost than a standard 8 kg one?", WASH, "7.25 - 4.50"),
    # a limit ("no more than 5 dogs") and a length ("last 60 minutes") are not what $20 buys; "one by one" is
    # the single price against the bundle of the amount (not two bundles of 5)
    ("how much do i save with the 10 walk bundle vs paying for 10 park walks one by one", WALKS, "10 * 20 - 170"),
    # "the full year" names the year's price, bought once; "the 3 terms" are three
    ("How much do I save paying for the full orchestra year instead of paying for the 3 terms separately?",
     ORCHESTRA, "3 * 95 - 260"),
])
def test_two_ways_of_paying_are_compared_for_the_amount_asked(question, text, want):
    _, body = text.split("\n\n", 1)
    assert offer_expressions(question, split_sentences(body))[0] == want
    first = candidate_expressions(question, [result(text)], None, evaluate)[0]
    assert evaluate(first).q == evaluate(want).q


@pytest.mark.parametrize("question, text, want", [
    ("what's the price per hour of the intensive course", LESSONS, "1050 / 20"),
    # 6 weeks of one 90-minute session: 9 hours
    ("What does the beginners' course work out to per hour of tuition?", FENCING, "96 / 9"),
    # 6 sessions of 2 hours each: 12 hours
    ("What does the Saturday maintenance class work out to per hour of teaching?", BIKES, "90 / 12"),
    # 10 weeks of one 150-minute session: 25 hours
    ("what does the 10 week wheel throwing course work out to per hour of class time", COURSE, "290 / 25"),
])
def test_a_bundles_price_per_unit(question, text, want):
    _, body = text.split("\n\n", 1)
    assert offer_expressions(question, split_sentences(body))[0] == want
    assert evaluate(candidate_expressions(question, [result(text)], None, evaluate)[0]).q == evaluate(want).q


def test_measures_and_amounts():
    assert measure_of("A block of 10 manual lessons is sold for") == {"lesson": 10, "item": 10}
    assert measure_of("6 sessions of 2 hours each for") == {"session": 6, "hour": 12, "item": 6}
    assert measure_of("for a set of 6.") == {"item": 6}
    assert measure_of("if paid for a full year up front") == {"year": 1}
    assert measure_of("costs") == {"item": 1}
    assert measure_of("for small dogs under 10 kg") == {"kg": 10, "item": 1}  # a size, not ten things
    # a limit of what the price is for, nothing bought: "up to 2 metres tall", "taller than 2 metres"
    assert measure_of("Hedge trimming is @price per metre of hedge for hedges up to 2 metres tall") == {"item": 1}
    assert measure_of("@price per metre for hedges taller than 2 metres") == {"item": 1}
    assert measure_of("A lawn cut covers lawns up to 200 square metres and costs @price") == {"item": 1}
    # a length of time is what a price buys, a size is not
    assert measure_of("The beginners' course is 6 weeks long and costs @price") == {"week": 6}
    assert offer_expressions("what's the price per hour of the private lessons",
                             ["Private lessons are 2 hours long and cost £70."]) == ["70 / 2"]
    assert measure_of("@price for 12 square tiles") == {"tile": 12, "item": 12}
    assert asked_amount("for 2 weeks, how much do I save") == {"week": 2}
    assert asked_amount("coming in 12 days a month") == {"day": 12, "month": 1}
    assert asked_amount("how much do I save per lesson with the block of 10") == {"lesson": 1, "item": 1}
    assert asked_amount("the 10 manual lesson block instead of 3 single lessons") == {"lesson": 3, "item": 3}
    assert asked_amount("how much more does a large 14 kg wash cost") == {}
    assert asked_amount("paying for the 3 terms separately") == {"term": 3, "item": 3}
    assert measure_of("with no more than 6 dogs per walker, @price") == {"walker": 1, "item": 1}  # a limit
    assert measure_of("A flexi pass covering up to 10 visits costs @price") == {"visit": 10, "item": 10}  # bought
    assert measure_of("Walks last 45 minutes and cost @price") == {"minute": 45, "item": 1}  # one walk that long


def test_what_is_no_comparison():
    # no comparison and no price per unit asked; or nothing to compare with
    assert offer_expressions("How much is a monthly membership?", [GYM.split("\n\n")[1]]) == []
    assert offer_expressions("How much do I save with the family ticket?", ["The museum opened in 1987."]) == []
    assert offer_expressions("How much more is the ferry than the bus?", ["A ferry ticket costs £6.50."]) == []


def test_the_calculator_is_planned_for_a_comparison_over_the_documents():
    calc = spec(None, passages=lambda user, text: [("ferry.txt (version 1)", FERRY), ("lessons.txt (version 1)", LESSONS)])
    assert calc.relevant("u", "how much do i save per lesson buying the 10 manual lesson block instead of single lessons")
    assert calc.relevant("u", "what's the price per hour of the intensive course")
    assert not calc.relevant("u", "what's the price of the intensive course")
    values = [evaluate(c["expression"]).q for c in calc.candidate_arguments(
        "How much do I save per crossing if I buy the 20-ticket book instead of single tickets?", [result(FERRY)])]
    assert values[0] == Fraction("1.3")


def test_bundles_are_bought_whole_unless_a_price_per_unit_is_asked():
    bikes = split_sentences(BIKES.split("\n\n")[1])
    # 3 days: one week at the weekly rate, not three sevenths of it
    assert offer_expressions("renting a hybrid for 3 days - how much do I save paying the daily rate vs the weekly "
                             "rate?", bikes)[0] == "75 - 3 * 18"
    shop = split_sentences(SHOP.split("\n\n")[1])
    assert offer_expressions("I need 4 tumblers, how much more is the set of six than 4 bought separately?",
                             shop)[0] == "180 - 4 * 34"
    # per lesson: a tenth of the block is what is asked
    lessons = split_sentences(LESSONS.split("\n\n")[1])
    assert offer_expressions("how much do i save per lesson with the 10 manual lesson block instead of single "
                             "lessons", lessons)[0] == "55 - 495 / 10"


def test_odd_counts_and_prices_offer_nothing_wrong():
    # a zero-length bundle or a zero amount: no cost of it, no crash
    assert offer_expressions("what's the price per hour of the course", ["A 0-hour course costs $50."]) == []
    assert offer_expressions("what's the price per hour of the course",  # the 0 weeks read as none
                             ["A 0-week course costs $40, with one 150-minute session each week."]) == ["0.4 * 40"]
    assert all(evaluate(e).q != 0 for e in offer_expressions(
        "how much do I save for 0 days paying weekly vs daily", ["Bikes are £18 per day or £75 per week."]))
    # exact factors: 10001 of a pack of 8 is 1250.125 packs, bought whole as 1251
    assert offer_expressions("I need 10001 batteries, how much do I save with packs of 8 instead of single ones",
                             ["Batteries are $3 each, or a pack of 8 for $20."])[0] == "10001 * 3 - 1251 * 20"
    # a bundle the question names with its count is no basket item: 5 single lessons against the whole block
    # (the difference, larger first: the block costs 220 more)
    lessons = split_sentences(LESSONS.split("\n\n")[1])
    assert offer_expressions("I need 5 lessons. how much do i save buying the 10 manual lesson block instead of "
                             "single lessons", lessons)[0] == "495 - 5 * 55"


def test_rates_stay_exact_and_things_named_by_bundle_words_stay_things():
    # 3.5 hours at an hourly rate are 3.5 hours, not 4; the 4-hour block is bought whole
    assert offer_expressions("the job takes 3.5 hours, how much do I save with the 4-hour block instead of the "
                             "hourly rate?", ["Labour is £36 per hour, or £100 for a 4-hour block."])[0] == "3.5 * 36 - 100"
    # "2 child day passes" are things of the party, not a bundle's count
    text = "Adult day passes cost £13, child day passes £8, and a family pass costs £26."
    assert offer_expressions("1 adult day pass and 2 child day passes, how much cheaper is the family pass than "
                             "buying separately?", [text])[0] == "13 + 2 * 8 - 26"


def test_a_bundle_named_for_who_buys_it_counts_what_it_buys():
    # Set 49: "A 10-journey adult carnet" was read as one adult (item 1), so the saving over 10
    # single tickets came out as 10 * 55 - 10 * 7.40.
    sentences = ["A 10-journey adult carnet costs £55 and never expires.", "- Adult: £7.40", "- Child (5-15): £3.70"]
    question = "I cross 10 times a month for work (adult). how much do I save with the carnet compared to 10 single tickets?"
    assert offer_expressions(question, sentences)[0] == "10 * 7.40 - 55"
