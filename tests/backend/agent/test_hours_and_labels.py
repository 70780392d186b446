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


def test_review_of_the_twentieth_session():
    from backend.agent.tools.calculator import evaluate
    from backend.agent.tools.discounts import claimed_discount
    from backend.agent.tools.expressions import candidate_expressions, own_costs
    from backend.agent.tools.passages import format_passages
    from backend.agent.tools.sentences import _quote_weights, _split_context
    from backend.agent.workings import escaped

    from .test_expressions import source

    # 1. only the user's own thing's cost is added: not a total, a quote heard, nor the documents' own price
    assert own_costs("my invoice says the total is $250 - how much should 2.5 hours of labor be?") == []
    assert own_costs("a friend said it costs $150. how much is 2.5 hours of labor really?") == []
    passes = "Day pass: £18.00 per person."
    assert candidate_expressions("the day pass is £18 right? how much for 3 of them?", [result(passes)], None,
                                 evaluate)[0] == "18.00 * 3"
    # 2. one business's two documents: its offers apply to its prices
    both = ["2 passages\n\n" + format_passages([
        source("Riverside Yoga\n\nTen-class pass: £100.", 1, "riverside_yoga_prices.txt"),
        source("Offers\n\nStudents get 20% off all classes.", 2, "riverside_yoga_offers.txt")])]
    assert candidate_expressions("I'm a student, how much is a ten-class pass?", both, None, evaluate)[0] == (
        "(100) * (100 - 20) / 100")
    # 3. a document's own short question and its answer stay with it beside another business's
    shop = ["2 passages\n\n" + format_passages([
        source("Hartley Laptop Repairs\n\nLaptop screen replacement: $95.\nSame day? Add 50%.", 1, "hartley.txt"),
        source("Rosa's Bakery\n\nSourdough loaf: $6.\nCroissant: $3.50.", 2, "rosa.txt")])]
    assert candidate_expressions("I need my laptop screen replacement done same day, how much?", shop, None,
                                 evaluate)[0] == "(95) * (100 + 50) / 100"
    # 4. the part of a list claimed is named by its head
    assert claimed_discount("I'm 60 and work full-time, how much for labor?",
                            ["Full-time students and seniors (65+) get 10% off labor."]) is None
    # 5. a count is no label: "Stay 7 nights", "For 2 people"
    assert numbers_beyond("how much is it to stay 4 nights?", ["Stay 7 nights or more and save."]) == ["4"]
    assert numbers_beyond("For 6 people, how much?", ["For 2 people: £30"]) == ["6"]
    # 6. "at 9 AM" is no place
    assert not states_answer_kind("where do the kayak tours start?", "Kayak tours start at 9 AM and at 2 PM.")
    # 7. an owner is its own words only, and a day is asked of, not an owner
    assert _split_context("how many people can Lumen's private room seat?")[0] == "Lumen's"
    assert _quote_weights("what are Saturday's opening hours?")["saturday"] == 1.0
    # 9. an amount compared keeps its money
    week = "Week pass: £60."
    assert "75 - 60" in candidate_expressions("what's the difference between a week pass and the £75 at FitCo?",
                                              [result(week)], None, evaluate)
    # 10. a name's dollars are no TeX
    assert escaped("Rosa's $x^{2}$ menu.txt") == r"Rosa's \$x^{2}\$ menu.txt"
