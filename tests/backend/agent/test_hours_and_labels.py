"""Reading fixes from blind sets 59-60 (read after 61-62 were committed): rows of opening hours,
dot leaders before a country's dollar, short day names, owners and addresses in a quote's ranking,
and a number that names a thing ("Grade 4")."""

from __future__ import annotations

from backend.agent.operations import numbers_beyond
from backend.agent.tools.conditions import hours_days, is_days
from backend.agent.tools.segmentation import text_sentences
from backend.agent.tools.sentences import best_sentence, states_answer_kind

from .test_expressions import result

HOURS = """HOURS
Monday          Closed
Tue - Thu       4pm - 11pm
Friday          4pm - midnight
Saturday        11am - midnight
"""


def sentences(text: str) -> list[str]:
    return [s for _, s in text_sentences(text, "x.txt")]


def test_rows_of_days_have_no_header():
    # "Monday  Closed" over rows with times was read as the columns' names: "Saturday: Closed 11am - midnight."
    assert sentences(HOURS)[1:] == ["Monday: Closed.", "Tue - Thu: 4pm - 11pm.", "Friday: 4pm - midnight.",
                                    "Saturday: 11am - midnight."]
    assert is_days("Tue - Thu") and is_days("Weekends:") and is_days("Sat") and not is_days("Adults")
    # a header of prices still names its columns
    assert sentences("               Tue-Thu     Fri-Sun\nAdults         CA$7        CA$10\nStudents       CA$5        CA$8\n")[0] == (
        "Adults: Tue-Thu CA$7; Fri-Sun CA$10.")


def test_leaders_before_a_countrys_dollar_and_two_dots():
    assert sentences("DRINKS\n\nDrip coffee ............ CA$3.25\nPot of loose-leaf tea .. CA$4.75\n") == [
        "Drip coffee: CA$3.25", "Pot of loose-leaf tea: CA$4.75"]
    assert sentences("Pages 1..10 are free.") == ["Pages 1..10 are free."]


def test_a_short_day_name_in_an_hours_line_answers_for_its_day():
    assert hours_days("Sat 10am - 3pm") == {5} and hours_days("Sun closed") == {6}
    assert hours_days("The sun sat low") == frozenset()
    hours = "STORE HOURS\nMon-Fri   9:30am - 6pm\nSat       10am - 3pm\nSun       closed\n"
    assert best_sentence("What time does the computer repair shop open on Saturday?", result(hours), None)[1] == (
        "Sat 10am - 3pm")


def test_the_owner_of_the_thing_asked_about_only_names_it():
    cafe = ("MEEPLE & MUG - Board Game Café\n412 Dundas Street, Hamilton, ON\n700+ games on the shelves and a Game "
            "Guru on every shift to teach you the rules.\n\nThe Dungeon, our private room (seats 14), rents for CA$45 "
            "per hour with a 2-hour minimum. Cover charges are extra.")
    from backend.agent.tools.sentences import CONTEXT_WEIGHT, _quote_weights

    weights = _quote_weights("How many people can the board game cafe's private room seat?")
    assert weights["board"] == weights["cafe"] == CONTEXT_WEIGHT and weights["room"] == weights["seat"] == 1.0
    assert _quote_weights("what's the price?")["price"] == 1.0  # a contraction owns nothing
    assert "seats 14" in best_sentence("How many people can the board game cafe's private room seat?",
                                       result(cafe), None)[1]


def test_a_place_may_have_a_street_number_and_a_month_is_no_place():
    question = "Where do we check in for the kayak tour?"
    assert states_answer_kind(question, "Check in at our shed at 8 Wharf Road 30 minutes before departure.")
    assert not states_answer_kind(question, "Office open 7am to 6pm daily, October to April.")


def test_a_number_naming_a_thing_as_the_documents_do_is_no_count():
    fees = ["Exams: entry fees are €65 for Grades 1-3 and €75 for Grades 4-5."]
    assert numbers_beyond("How much is the entry fee for a Grade 4 RAD exam?", fees) == []
    assert numbers_beyond("how much for 4 exams?", fees) == ["4"]
    assert numbers_beyond("Grade 4 for 3 kids, how much?", fees) == ["3"]


def test_an_email_asked_is_answered_by_a_sentence_holding_one():
    # Blind set 61: "What email address do I use to contact Fernleigh Photography?" quoted a price row.
    prices = ("Fernleigh Photography - Pricing\n\nFamily Session: 90 min, 25 edited images, $395.\n"
              "Questions? Email hello@fernleighphoto.com or call (828) 555-0147.")
    assert states_answer_kind("What email address do I use?", "Questions? Email hello@fernleighphoto.com.")
    assert not states_answer_kind("What email address do I use?", "Family Session: 90 min, $395.")
    assert "hello@fernleighphoto.com" in best_sentence("What email address do I use to contact Fernleigh "
                                                       "Photography?", result(prices), None)[1]


def test_ages_said_with_he_s_and_both_and_a_model_year_are_no_counts():
    # Blind sets 61-62: "my dad, he's 70" was 4.00 * 70; "my grandad's 1962 automatic" was 175 * 1962.
    from backend.agent.numerals import NUMBER_RE
    from backend.agent.operations import names_an_edition
    from backend.agent.party import given_ages, without_ages

    assert given_ages("Evening ticket for me and my dad, he's 70 - what's the total?") == ["70"]
    assert "13" not in without_ages("me and my two kids (both 13) on day tickets")

    def years(text):
        return [names_an_edition(text, m) for m in NUMBER_RE.finditer(text)]
    assert years("a full service on my grandad's 1962 automatic") == [True]
    assert years("my 2015 Golf needs tyres") == [True]
    assert years("print my 2000 flyers") == [False] and years("I need 2000 flyers") == [False]


def test_a_distance_multiplies_only_a_price_per_distance():
    # Blind set 61: "the princess castle ... if we're 27 km from Naas" was 120 * 27 + 45.
    from backend.agent.tools.calculator import evaluate
    from backend.agent.tools.expressions import candidate_expressions

    hire = "Hire prices\n\nPrincess Castle: €120 per day."
    assert candidate_expressions("How much would the princess castle be if we're 27 km from Naas?", [result(hire)],
                                 None, evaluate)[:1] != ["120 * 27"]
    taxi = "Taxi\n\nFares: €1.50 per km."
    assert candidate_expressions("How much for a 27 km ride?", [result(taxi)], None, evaluate)[0] in ("1.50 * 27", "27 * 1.50")
