"""The parts of a bill the calculator's candidates are built from (backend.agent.tools): a list's
items under the line introducing them, a season's price chosen by a month, a minimum charge, "half
price", a size naming a thing, a thing served to a count of people, a length written "2hr",
labels written after prices, a table's caption naming its unit, and the extras a question adds to
its bill ("incl the cleaning fee", "with our dog"). Each test's first candidate is the call the
planned policy makes (backend.agent.choice.FIRST_PRIOR)."""

from __future__ import annotations

import pytest

from backend.agent.operations import names_a_size, sizes
from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.basket import basket_items, counts_of, labels_after, set_aside_words
from backend.agent.tools.conditions import in_months, named_months
from backend.agent.tools.discounts import claimed_discount
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.mentions import extra_words, named_extras
from backend.agent.tools.offers import asked_amount
from backend.agent.tools.pricing import PRICE, priced_per_count, with_minimum_charge
from backend.agent.tools.sentences import list_sentences, table_sentences, text_sentences

from .test_expressions import result

COTTAGE = """Larchwood Cabins - Rates

Nightly rates: low season (November to March) £90 per night; mid season (April, May and October) £120 per night; high season (June to September) £160 per night.

A cleaning fee of £50 is charged per stay. Dogs are welcome at £12 per pet per night.

Visitor levy of £2 per adult per night is paid on arrival. Stays of 7 nights or more get 10% off the nightly rate total."""

LAUNDRY = """Bubbles Laundry

Wash & fold:
- £2.50 per kg, minimum charge £10
- Express (same day): add £1.00 per kg

Ironing: £1.50 per shirt, or £12 for a bundle of 10 shirts.
Open daily 8am to 8pm."""

CAMPSITE = """Hilltop Camping

Pitch prices (per night)
| Pitch | Low season | High season (Jul-Aug) |
| Tent pitch | £15 | £22 |
| Caravan pitch | £20 | £30 |

Electric hook-up: £4 per night. Dogs: £3 per dog per night.
Extra adult on any pitch: £5 per night."""

LESSONS = """Greenlight Driving

- Single lesson (1 hour): £40 manual, £44 automatic
- 2-hour lesson: £76 manual, £84 automatic

New pupils get their first lesson at half price.
Evening lessons starting after 6pm and all Sunday lessons carry a £5 surcharge per hour."""

BAKERY = """Oven Door Catering

- Sandwich platter: $60
- Coffee for groups: $2 per person
- Celebration cake: 8-inch $40, 10-inch $55, 12-inch $70"""


def first(question: str, *documents: str) -> str:
    found = candidate_expressions(question, [result(*documents)], None, evaluate)
    assert found, question
    return found[0]


def value(expression: str) -> str:
    q = evaluate(expression).q
    return str(q.numerator) if q.denominator == 1 else f"{float(q):.2f}"


def test_a_lists_items_are_read_after_the_line_introducing_them():
    # "Wash & fold:" alone named the kg price of no thing, and was quoted as an answer.
    assert list_sentences("Wash & fold:\n- £2.50 per kg\n- Express: add £1 per kg\nOpen daily.") == (
        "- Wash & fold: £2.50 per kg\n- Wash & fold: Express: add £1 per kg\nOpen daily.")
    sentences = [s for _, s in text_sentences(LAUNDRY)]
    assert "- Wash & fold: £2.50 per kg, minimum charge £10" in sentences
    assert "Wash & fold:" not in sentences
    # a line ending in ":" with no list after it is left as it is
    assert list_sentences("Note:\nBring ID.") == "Note:\nBring ID."


def test_a_month_chooses_a_seasons_price():
    assert named_months("November to March") == frozenset({10, 11, 0, 1, 2})
    assert named_months("High season (Jul-Aug)") == frozenset({6, 7})
    assert named_months("April, May and October") == frozenset({3, 4, 9})
    assert named_months("3 nights in may") == frozenset({4})
    assert named_months("may I bring my dog?") is None  # the verb
    assert in_months("high season (June to September) £160 per night", "a week in August") is True
    assert in_months("low season (November to March) £90 per night", "a week in August") is False
    assert value(first("4 nights in May at Larchwood, how much?", COTTAGE)) == "480"
    assert value(first("3 nights at larchwood in january, what would it cost", COTTAGE)) == "270"


def test_extras_the_question_adds_are_priced_at_its_counts():
    # the cleaning fee once, the dog per pet per night; the levy is set aside, the discount applies to the nights
    assert value(first("4 nights in May at larchwood incl the cleaning fee (ignore the visitor levy), how much?",
                       COTTAGE)) == "530"
    assert value(first("3 nights in january with our dog - total with cleaning but not the visitor levy pls",
                       COTTAGE)) == "356"
    assert value(first("7 nights in August for 2, no pets. total with the long-stay discount and the cleaning fee?",
                       COTTAGE)) == "1058"
    assert "pet" in extra_words("with our dog") and "pet" not in extra_words("no pets, total with cleaning")
    assert set_aside_words("total, but not the visitor levy") >= {"visitor", "levy"}
    sentences = [s for _, s in text_sentences(COTTAGE)]
    assert named_extras("3 nights with our dog, total?", sentences, "90 * 3") == ["12 * 3"]
    # a question that asks no amount, or compares, adds nothing
    assert named_extras("is the cottage dog friendly, with our dog?", sentences, "90 * 3") == []


def test_a_caption_names_the_unit_of_a_tables_prices_and_a_month_its_column():
    assert "Caravan pitch: Low season £20 per night; High season (Jul-Aug) £30 per night." in table_sentences(CAMPSITE)
    assert priced_per_count("4 nights", "Caravan pitch: Low season £20 per night")
    assert not priced_per_count("4 of us", "Coffee: $2 per person")  # people are the party, counted elsewhere
    assert value(first("Caravan pitch in August for 4 nights, we need electric hook up and we're bringing our dog. cost?",
                       CAMPSITE)) == "148"


def test_a_minimum_charge():
    assert with_minimum_charge("2.50 * 3", ["- Wash & fold: £2.50 per kg, minimum charge £10"], evaluate) == (
        "max(10, 2.50 * 3)")
    assert with_minimum_charge("2.50 * 8", ["- Wash & fold: £2.50 per kg, minimum charge £10"], evaluate) == "2.50 * 8"
    assert with_minimum_charge("3 * 4", ["- Wash & fold: £2.50 per kg, minimum charge £10"], evaluate) == "3 * 4"
    assert value(first("only 3kg of washing for wash and fold, how much?", LAUNDRY)) == "10"
    assert value(first("bubbles express wash & fold for 6kg, cost?", LAUNDRY)) == "21"
    assert counts_of("for 6kg of washing", "kg") == ["6"] and counts_of("a 2hr lesson", "hour") == ["2"]


def test_a_saving_for_the_amount_the_question_counts():
    # "instead of paying per shirt" is the other way of paying, not a saving per shirt
    assert asked_amount("how much do i save getting 10 shirts ironed as the bundle instead of paying per shirt")["shirt"] == 10
    assert asked_amount("how much do I save per lesson buying the 10 lesson block")["lesson"] == 1
    assert value(first("how much do i save getting 10 shirts ironed as the bundle instead of paying per shirt",
                       LAUNDRY)) == "3"


def test_half_price_labels_after_prices_and_a_sunday_beside_an_evening():
    assert claimed_discount("I'm a new pupil", ["New pupils get their first lesson at half price."])[0] == "50"
    assert claimed_discount("how much is a lesson", ["New pupils get their first lesson at half price."]) is None
    assert value(first("I'm a brand new pupil, how much is my first 1 hour manual lesson?", LESSONS)) == "20"
    line = "- Single lesson (1 hour): £40 manual, £44 automatic"
    assert labels_after(line, list(PRICE.finditer(line))) == ["manual", "automatic"]
    cakes = "- Celebration cake: 8-inch $40, 10-inch $55, 12-inch $70"
    assert labels_after(cakes, list(PRICE.finditer(cakes))) == []
    # "all Sunday lessons" holds on a Sunday at any time; "2hr" names the 2-hour lesson and counts its hours
    assert value(first("can i book a 2hr manual lesson on a sunday? what's the price incl the surcharge",
                       LESSONS)) == "86"


def test_a_size_names_a_thing_and_coffee_for_people_counts_them():
    assert names_a_size("a 12 inch cake", 2) and not names_a_size("that's 240 cm all the way round", 7)
    assert not names_a_size("3 inches of snow", 0)
    assert sizes("12-inch $70") == {("12", "inch")}
    assert basket_items("2 sandwich platters and a 12 inch cake, total?") == [("2", "sandwich platters"),
                                                                              ("1", "12-inch cake")]
    assert value(first("2 sandwich platters and a 12 inch cake, total?", BAKERY)) == "190"
    assert basket_items("coffee for 25 people + 2 sandwich platters. total?") == [("25", "coffee"),
                                                                                  ("2", "sandwich platters")]
    assert basket_items("how much for 2 adults and 3 kids")[0] == ("2", "adults")  # "how much" is served nothing
    assert value(first("coffee for 25 people + 2 sandwich platters. total?", BAKERY)) == "170"


@pytest.mark.parametrize("question", ["how much is a 10 inch cake", "price of the 10-inch celebration cake"])
def test_a_size_is_no_count(question):
    assert not any(e.endswith("* 10") for e in candidate_expressions(question, [result(BAKERY)], None, evaluate))
