"""When a price adjustment applies (backend.agent.tools.conditions): the days and times its
sentence names against those the question names."""

from __future__ import annotations

import pytest

from backend.agent.tools.conditions import applies, asked_when, condition, named_days, named_spans

HAPPY_HOUR = "Happy hour: Monday to Thursday, 2:00-4:00 pm, all buckets are 30% off."


@pytest.mark.parametrize("text, want", [
    ("Monday to Thursday", {0, 1, 2, 3}),
    ("Open Fri-Sun", {4, 5, 6}),
    ("Fri to Mon", {4, 5, 6, 0}),  # a range over the week's end
    ("On Wednesdays, guests over 65", {2}),
    ("on weekends", {5, 6}),
    ("weekdays before 17:00", {0, 1, 2, 3, 4}),
    ("Saturday and Sunday", {5, 6}),
    ("the sun sat on the month", None),  # no day named
])
def test_named_days(text, want):
    assert named_days(text) == (None if want is None else frozenset(want))


@pytest.mark.parametrize("text, want", [
    ("2:00-4:00 pm", ((840, 960),)),
    ("from 6pm to 9pm", ((1080, 1260),)),
    ("before 17:00", ((0, 1020),)),
    ("after 6pm", ((1080, 1440),)),
    ("open 10:00-22:00", ((600, 1320),)),
    ("rooms 2 - 6 players", None),  # no clock
    ("by 5 people", None),
])
def test_named_spans(text, want):
    assert named_spans(text) == want


def test_the_time_a_question_names():
    assert asked_when("on a Tuesday at 3pm").spans == ((900, 901),)
    assert asked_when("at 15:00 on Saturday").days == frozenset({5})
    assert asked_when("I have $5 and 3 kids") == condition("no day nor time")


@pytest.mark.parametrize("question, want", [
    ("If I go on a Tuesday at 3pm and get a medium bucket, how much is it?", True),
    ("on a Tuesday at 5pm, a medium bucket?", False),  # outside the hours
    ("on a Saturday at 3pm, a medium bucket?", False),  # outside the days
    ("on a Tuesday, a medium bucket?", False),  # no time named: the condition is not met
    ("how much for 2 large buckets", False),  # neither named
])
def test_an_adjustment_applies_within_its_days_and_times(question, want):
    assert applies(HAPPY_HOUR, question) is want


def test_a_sentence_with_no_day_nor_time_has_no_condition():
    assert applies("Students get 10% off.", "on a Tuesday at 3pm") is None


@pytest.mark.parametrize("text, want", [
    ("11-1pm", ((660, 780),)),  # the start in the morning
    ("9:00-5:00", ((540, 1020),)),  # no half named: the end in the afternoon
    ("10pm to 2am", ((1320, 1440), (0, 120))),  # over midnight
    ("between 10am and 2pm", ((600, 840),)),
    ("lessons priced £9.50-12.00 per hour", None),  # prices, not times
    ("half price until 15.08", None),  # a date
    ("booked by 6pm the day before", None),  # a deadline, not a time of use
])
def test_clock_ranges(text, want):
    assert named_spans(text) == want


def test_an_exception_is_no_condition():
    except_saturdays = "Students get 10% off lessons, except on Saturdays."
    assert applies(except_saturdays, "on a Tuesday") is None
    assert applies(except_saturdays, "a lesson") is None
    assert applies(except_saturdays, "on a Saturday") is False
    not_after = "Seniors get 15% off, not valid after 6pm."
    assert applies(not_after, "at 8pm") is False
    assert applies(not_after, "at 2pm") is None


def test_two_times_a_question_names_are_two_times():
    assert asked_when("at 3pm and 5pm").spans == ((900, 901), (1020, 1021))


@pytest.mark.parametrize("question, want", [
    ("at 9pm on a tuesday", True),
    ("on a Sunday", True),  # all day on Sundays
    ("on a Wednesday at 11am", False),
    ("on a Sunday at 11am", True),
])
def test_a_time_range_or_whole_days(question, want):
    assert applies("£75 between 6pm and 8am, and all day on Sundays and bank holidays", question) is want


@pytest.mark.parametrize("clause, question, want", [
    # (the twenty-eighth session: blind sets 62-64's rehearsal rooms, read after their runs)
    ("Evening/weekend rate $45 per hour", "how much is room c for 2 hours in the evening?", True),
    ("Evening/weekend rate $45 per hour", "Room C on a Saturday", True),
    ("Evening/weekend rate $45 per hour", "Room C on a Tuesday morning", False),
    ("Evening & weekend £19", "Studio 2 on a Thursday evening", True),
    ("Day rate (10am-5pm) $35 per hour", "how much is room c for 2 hours in the evening?", False),
    ("Day rate (9am-5pm) $35 per hour", "Room C on a Tuesday morning", True),
    ("Daytime £15", "Studio 2 on a Thursday evening", False),
    ("Appointments starting after 6 pm carry a 15% surcharge", "an evening appointment", True),
    # a part of the day is the span it surely means: an afternoon is not surely within 2-4 pm
    ("Happy hour: Monday to Thursday, 2:00-4:00 pm, 30% off", "a Tuesday afternoon", False),
    # whose afternoons: a day's part beside other days is left as the days ("a sunday morning" is surcharged)
    ("Visits on Saturday afternoons, Sundays and bank holidays carry a £35 surcharge", "a sunday morning visit", True),
])
def test_a_part_of_the_day_without_a_clock(clause, question, want):
    assert applies(clause, question) is want


def test_the_column_of_the_part_of_the_day_asked():
    from backend.agent.tools.arithmetic import evaluate
    from backend.agent.tools.expressions import candidate_expressions

    from .test_expressions import result
    rooms = ("ROOM RATES (per hour)\nRoom        Size     Day rate (10am-5pm)   Evening/weekend rate\n"
             "Room A      20 m2    $22                   $28\nRoom B      30 m2    $28                   $35\n")
    found = candidate_expressions("how much is room b for 2 hours in the evening?", [result(rooms)], None, evaluate)
    assert evaluate(found[0]).q == 70  # was 28 * 2 (the day rate)


@pytest.mark.parametrize("clause, question, want", [
    # a list of days before a part of the day is no either (review)
    ("Monday to Friday, mornings before 10am: 20% off", "a Friday afternoon", False),
    ("Monday to Friday, mornings before 10am: 20% off", "a Wednesday at 9am", True),
    # a greeting and a thing's name are no part of the day
    ("Evening rate: £30 per hour", "Good evening, how much is 2 hours?", False),
    ("Afternoon tea: £22 per person", "2 afternoon teas on Saturday at 11am", None),
])
def test_review_of_the_twenty_eighth_session_parts_of_the_day(clause, question, want):
    assert applies(clause, question) is want


def test_a_holiday_names_its_date_and_a_window_of_dates_claims_its_surcharge():
    # blind set 94, read: "Events from December 24 to December 31 carry a 15% holiday surcharge" was not laid on a New
    # Year's Eve party ("15% holiday surcharge": a word between the percentage and "surcharge" too)
    from backend.agent.tools.conditions import in_date_window, names_date
    from backend.agent.tools.discounts import claimed_surcharges
    window = "Holiday surcharge Events from December 24 to December 31 carry a 15% holiday surcharge on all items."
    assert names_date("a New Year's Eve party") and in_date_window(window, "a New Year's Eve party")
    assert in_date_window(window, "our Christmas Eve do") and not in_date_window(window, "a Halloween party")
    assert [c[1] for c in claimed_surcharges("New Year's Eve party: an ice luge, total?", [window])] == ["15"]
    assert [c[1] for c in claimed_surcharges("party on 28 December: an ice luge, total?", [window])] == ["15"]
    assert claimed_surcharges("party on March 3: an ice luge, total?", [window]) == []
    assert claimed_surcharges("an ice luge, total?", [window]) == []
    # (a window that names someone is claimed by them only)
    students = "Students booking from December 24 to December 31 pay a 10% holiday surcharge."
    assert claimed_surcharges("New Year's Eve party: an ice luge, total?", [students]) == []
