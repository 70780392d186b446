"""The conversions a question about the documents implies (backend.agent.tools.units): the unit
it asks for against the passage's, and the period it asks about against a rate's; and the
calculator planned for them only when the passage does not already give what is asked."""

from __future__ import annotations

import pytest

from backend.agent.tools.calculator import evaluate, spec
from backend.agent.tools.units import (areas, asked_period, asked_scale, asked_unit, compound_conversions, conversions,
                                       implied_conversions, stated_conversion,
                                       temperature_conversions)

from .test_expressions import result

ORGAN = "The largest pipe is 9.6 metres tall and weighs 212 kilograms."


@pytest.mark.parametrize("question, sentence, want", [
    ("what's the weight of the biggest pipe in grams", ORGAN, ["212 * 1000"]),
    ("How tall is the largest pipe in centimetres?", ORGAN, ["9.6 * 100"]),
    ("How many days long is the spring tour?", "The troupe tours for 11 weeks every spring.", ["11 * 7"]),
    ("How many minutes does the walk take?", "Walks last 2.5 hours.", ["2.5 * 60"]),
    ("How many kilograms of flour is that?", "The bakery uses 4,500 grams of flour.", ["4500 / 1000"]),
    ("How many grams of meat does a hawk get through in a week?", "Each hawk eats about 140 grams of meat a day.",
     ["140 * 7"]),
    ("If a resident bought the monthly pass every month for a full year, what would they spend?",
     "A monthly pass for residents costs 38 florins.", ["38 * 12"]),
    ("How many litres a day?", "The spring gives 3 cubic metres an hour.", ["3 * 24000"]),  # both at once
    ("How many grams an hour?", "The hawk eats 140 grams a day.", []),  # a day's rate is not cut to an hour
    ("How many hours is the course?", "The course takes 10 weeks.", ["10 * 168"]),
    ("How many months old is the foal?", "The foal is 3 weeks old.", []),  # weeks to months: no exact factor
    # The international yard (0.9144 m) and the nautical mile (1852 m); the unit asked mid-message.
    ("Quenby Tunnel length in metres? nearest whole metre", "The tunnel itself is 2,790 yards long.",
     ["2790 * 1143 / 1250"]),
    ("How far can you see the light, in kilometres? One decimal is fine.", "It is visible for 24 nautical miles.",
     ["24 * 463 / 250"]),
    ("race distance in miles?", "The race is rowed over 5,200 metres.", ["5200 * 125 / 201168"]),
    ("How many kilograms is a 10 lb sack?", "The sack weighs 10 lb.", ["10 * 45359237 / 100000000"]),
    # A rate as an interval counts its events over the period asked.
    ("How many times does the light flash in one hour?", "Its light flashes white every 15 seconds.", ["3600 / 15"]),
    ("How many trams run in a day?", "Trams run every 12 minutes.", ["1440 / 12"]),
])
def test_conversions(question, sentence, want):
    assert conversions(question, sentence) == want
    assert all(evaluate(e) is not None for e in want)


def test_what_a_question_asks_for():
    assert asked_unit("How many cubic metres of water are in the pool?") == "cubic metres"
    assert asked_unit("The pipe weighs how much in kg?") == "kg"
    assert asked_unit("How tall is the pipe?") is None
    assert asked_period("What does a hawk eat in a week?") == "week"
    assert asked_period("How much for a full year?") == "year"
    assert asked_period("How many visitors come each day") == "day"
    assert asked_period("I visited in 2019") is None


def test_a_lookup_in_the_units_the_passage_gives_is_no_conversion():
    ranked = ["The picking season lasts 42 days.", "Each picker works 8 hours a day."]
    assert implied_conversions("How many days does the picking season last?", ranked) == []
    assert implied_conversions("How many hours does the picking season last?", ranked) == ["42 * 24"]
    assert implied_conversions("Who picks the apples?", ranked) == []


def test_the_calculator_is_planned_for_a_conversion_of_the_documents_only():
    passage = "The Quellbrand Organ\n\n" + ORGAN
    calculator = spec(None, passages=lambda user_id, text: [("notes.txt (version 1)", passage)])
    assert calculator.relevant("u", "what's the weight of the biggest pipe in grams")
    assert not calculator.relevant("u", "How many kilograms does the biggest pipe weigh?")  # as given: a lookup
    assert [c["expression"] for c in calculator.candidate_arguments(
        "what's the weight of the biggest pipe in grams", [result(passage)])] == ["212 * 1000"]
    nothing = spec(None, passages=lambda user_id, text: [])
    assert not nothing.relevant("u", "what's the weight of the biggest pipe in grams")  # not about his documents


def test_temperatures_convert_between_celsius_and_fahrenheit():
    furnace = "The furnace holds 450 kilograms of molten glass at about 1,150 degrees Celsius."
    assert asked_scale("What's the furnace temperature in Fahrenheit?") == "f"
    assert asked_scale("How hot is the furnace?") is None
    assert temperature_conversions("What's the furnace temperature in Fahrenheit?", furnace) == ["1150 * 9 / 5 + 32"]
    assert evaluate("1150 * 9 / 5 + 32").q == 2102
    assert temperature_conversions("And in Celsius?", "The oven runs at 212 °F.") == ["(212 - 32) * 5 / 9"]
    assert temperature_conversions("What's the furnace temperature in Celsius?", furnace) == []  # as given
    calculator = spec(None, passages=lambda user_id, text: [("glassworks.txt (version 1)", "Varnaby Glassworks\n\n" + furnace)])
    assert calculator.relevant("u", "What's the Varnaby furnace temperature in Fahrenheit?")


def test_a_conversion_is_offered_for_each_of_the_best_sentences():
    """blind16: "the round trip is 36 miles" ranks above "the tunnel is 2,790 yards long" for
    "Quenby Tunnel length in metres": both are offered, the model chooses."""
    ranked = ["A round trip to Quenby Tunnel and back is 36 miles long.", "The tunnel itself is 2,790 yards long."]
    assert implied_conversions("Quenby Tunnel length in metres?", ranked) == ["36 * 201168 / 125",
                                                                             "2790 * 1143 / 1250"]


def test_pounds_are_money_a_change_of_temperature_and_service_hours():
    """Review: "40 pounds" is a price; "rose by 40 degrees" a change (no + 32); a ferry "every 40
    minutes from 8am to 6pm" runs no 36 times a day."""
    assert implied_conversions("How many grams does the cheese wheel weigh?",
                               ["The cheese wheel costs 40 pounds. It weighs 2 kilograms."]) == ["2 * 1000"]
    assert asked_unit("I'm paid in pounds, how much is the course?") is None
    assert temperature_conversions("By how much did it rise, in Fahrenheit?",
                                   "The temperature in the kiln rose by 40 degrees Celsius.") == ["40 * 9 / 5"]
    assert conversions("How many ferries run in a day?", "The ferry runs every 40 minutes from 8am to 6pm.") == []
    assert conversions("How many trams run in an hour?", "Trams run every 12 minutes from 6:30 until 23:30.") == [
        "60 / 12"]
    assert conversions("How many flashes in one hour?", "It flashes every 7 seconds.") == ["floor(3600 / 7)"]


OBSERVATORY = "The observatory sits at 412 metres above sea level, 11 km from the town."


@pytest.mark.parametrize("question, ranked, want", [
    # The person's factor, not the exact one (412 / 0.3048 rounds to 1352; the asked 3.28 gives 1351)
    ("how high is the observatory in feet? use 1 metre = 3.28 feet and round to the nearest foot", [OBSERVATORY],
     ["412 * 3.28"]),
    ("how far is the town in miles? use 1 km = 0.621 miles", [OBSERVATORY], ["11 * 0.621"]),
    # stated the other way round: the passage's unit is the stated one's target
    ("how far is the meadow in miles? use 1 mile = 1.609 km", ["The launch meadow is 18 km from the city."],
     ["18 / 1.609"]),
    ("building size in square feet? use 1 square metre = 10.764 sq ft", ["The building is 850 square metres."],
     ["850 * 10.764"]),
    ("height in feet, assuming 3.28 feet per metre", [OBSERVATORY], ["412 * 3.28"]),
    # a unit we do not know, stated
    ("how many hands high is the pony if 1 inch = 0.25 hands", ["The pony stands 52 inches at the withers."],
     ["52 * 0.25"]),
    ("how far is the town in miles?", ["The town is 11 km away."], ["11 * 15625 / 25146"]),  # none stated: ours
])
def test_a_conversion_the_question_states_is_used(question, ranked, want):
    assert implied_conversions(question, ranked) == want


def test_what_a_stated_conversion_reads():
    assert stated_conversion("use 1 km = 0.621 miles")[1] == "0.621"
    assert stated_conversion("1 square metre = 10.764 sq ft")[0] == stated_conversion("1 sq m = 2 sq yd")[0]
    assert stated_conversion("how far is it in miles?") is None
    assert stated_conversion("1 km = 1 km") is None  # no conversion
    assert stated_conversion("a ticket is 0 tokens") is None  # no factor


RINK = "The maple floor measures 60 metres by 25 metres and can hold up to 220 skaters at once."


@pytest.mark.parametrize("question, ranked, want", [
    ("How big is the rink floor in square metres?", [RINK], ["60 * 25"]),
    ("what's the area of the floor", [RINK], ["60 * 25"]),
    ("How many square feet is the floor?", [RINK], ["60 * 25 * 1562500 / 145161"]),
    ("a 12 x 8 m hall: area?", ["The hall is 12 x 8 m."], ["12 * 8"]),
    ("How long is the floor?", [RINK], []),  # no area asked
    ("What's the area of the hall?", ["The hall holds 60 people by 25 March."], []),  # no lengths
])
def test_an_area_is_the_product_of_two_lengths(question, ranked, want):
    assert areas(question, ranked) == want


def test_an_area_as_a_place_asks_no_area():
    picnic = ["The picnic area (20 m by 15 m) costs £30 per hour."]
    assert areas("how much to hire the picnic area for 3 hours?", picnic) == []
    assert areas("When does the picnic area open?", picnic) == []
    assert areas("How big is the orchard in acres?", ["The orchard covers 4 acres; the barn is 12 m by 8 m."]) == []
    assert evaluate(areas("How many square feet is the floor?", [RINK])[0]).q.limit_denominator(1000) > 16145


@pytest.mark.parametrize("question, sentence, want", [
    ("What's the record escape time in seconds?", "The record is 38 minutes and 12 seconds.", ["38 * 60 + 12"]),
    ("how long is the hike in minutes", "The hike takes 2 hours 15 minutes.", ["2 * 60 + 15"]),
    ("how many hours is it?", "It takes 1 day, 6 hours.", ["1 * 24 + 6"]),
    ("how many seconds?", "It takes 12 seconds and 38 minutes.", []),  # the smaller first: no compound
    ("how many kilograms?", "It takes 38 minutes and 12 seconds.", []),  # another dimension
    ("how many hours a week is the gym open?", "Open 7 days, 24 hours.", []),  # two facts, not one duration
])
def test_a_duration_in_two_units(question, sentence, want):
    assert compound_conversions(question, sentence) == want
    if want:
        assert implied_conversions(question, [sentence])[0] == want[0]


def test_no_conversion_between_two_words_of_no_unit():
    # "4 boxes to the Community Shred Day" had been read as 4 boxes to one community (blind set 98, read): 5 / 4
    assert stated_conversion("How much would it be to bring 4 boxes to the Community Shred Day?") is None
    assert stated_conversion("at 3.28 feet to the metre")[1] == "3.28"  # known units still
    assert stated_conversion("assume 4 scoops per tub")[1] == "4"  # and "per" between any two words
