"""Things a question names without counting them (backend.agent.tools.mentions): each at the
price of the list entry naming it, summed ("a midi skip plus a road permit"), or two weighed
against each other ("how much more is the sourdough weekend than the pasta class")."""

from __future__ import annotations

import pytest

from backend.agent.tools.calculator import evaluate
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.mentions import mentioned_difference, mentioned_total
from backend.agent.tools.segmentation import text_sentences

from .test_expressions import result

# Things a question names without counting them: each at its price, times the count it gives of it.
KENNEL = ("Fernhill Kennels\n\nKennel sizes:\nCompact kennel: £18 per night\nFamily kennel (2 dogs): £30 per night\n"
          "Grooming bath: £25\nNail clip: £8\nCollection from your home: £15 each way\nSame-day booking, surcharge "
          "£10.\nA lead left behind is charged at £6 each.")
CAFE_CLASSES = ("Larder Lane Classes\n\nClass prices (per person):\nBread from scratch (3 hours): €60\nCurry night "
                "(3 hours): €70\nKnife skills basics (2 hours): €45\nKids' cupcakes, ages 6-12 (90 minutes): €25\n"
                "Tempered glass chopping board: €12\nMembers get €5 off any class.")


@pytest.mark.parametrize("question, text, want", [
    # uncounted things named by their words: one of each
    ("At Fernhill, what would a grooming bath plus a nail clip come to?", KENNEL, "25 + 8"),
    # a price per night counted by the nights asked, another thing once
    ("Fernhill kennels: compact kennel for 4 nights and a grooming bath, total?", KENNEL, "4 * 18 + 25"),
    # the count before a thing's name, by a word naming the same ("2 kids" for "Kids' cupcakes")
    ("At Larder Lane my 2 kids want the kids' cupcakes class and I'll do knife skills basics. How much altogether?",
     CAFE_CLASSES, "2 * 25 + 45"),
    # a thing named by its head word alone ("the bread" for "Bread from scratch"), not by a modifier
    # of another's ("chopping" names no board bought)
    ("I'd like the bread class and the curry night at Larder Lane, what's my total?", CAFE_CLASSES, "60 + 70"),
])
def test_things_named_without_a_count_are_priced_and_summed(question, text, want):
    _, body = text.split("\n\n", 1)
    assert mentioned_total(question, [body]) == want
    assert candidate_expressions(question, [result(text)], None, evaluate)[0] == want


@pytest.mark.parametrize("question", [
    "At Fernhill, how much is a grooming bath?",  # one thing: no basket (the price itself)
    "How much more is a grooming bath than a nail clip at Fernhill?",  # a difference
    "Is a nail clip at Fernhill gentle on the dog?",  # no cost asked
    "How much for the knife skills class at Larder Lane with the member discount?",  # "€5 off" is no thing
])
def test_what_names_no_two_things(question):
    body = (KENNEL if "Fernhill" in question else CAFE_CLASSES).split("\n\n", 1)[1]
    assert mentioned_total(question, [body]) is None


def test_things_named_plan_the_calculator():
    from backend.agent.tools.calculator import spec
    calculator = spec(None, passages=lambda user_id, q: [("kennel.txt (version 1)", KENNEL)])
    question = "At Fernhill, what would a grooming bath plus a nail clip come to?"
    assert calculator.relevant("u", question)
    assert calculator.candidate_arguments(question, [result(KENNEL)])[0] == {"expression": "25 + 8"}
    assert not calculator.relevant("u", "At Fernhill, is a grooming bath gentle?")


def test_a_things_words_are_named_together_and_the_business_names_no_thing():
    clocks = "Full service: £85\nComplete overhaul: £340\nExpress service: 30% surcharge."
    # "full" and "service" apart in the question name no "Full service"
    assert mentioned_total("what does the express service cost for a full overhaul at Fenwick?", [clocks]) is None
    skips = "Mini skip (2 yard): £145\nMidi skip (4 yard): £210\nRoad permit: £45"
    question = "At Dunmore Skip Hire, what would a midi skip plus a road permit cost altogether?"
    # the business's name ("Skip Hire") names no skip, its thing's name does ("a midi skip")
    assert mentioned_total(question, [skips], ["dunmore_skip_hire.txt"]) == "210 + 45"
    assert mentioned_total("At Dunmore Skip Hire, what would a road permit cost altogether?", [skips],
                           ["dunmore_skip_hire.txt"]) is None
    # things named but not listed together ("the midi skip ... a road permit" with no "and", "plus" or comma)
    assert mentioned_total("I need the midi skip so what will a road permit cost?", [skips]) is None


def test_the_calculator_is_planned_by_the_passages_labels_naming_their_business():
    """The passages the calculator plans over carry their documents' names (as search_documents'
    results do): a passage with no title line, the business named in the question ("At Dunmore
    Skip Hire") names no skip of its list (the first "skip" would count as a third thing)."""
    from backend.agent.tools.calculator import spec
    skips = ("Dunmore Skip Hire & Waste Removal\nYard: Unit 4, Mill Road\nMini skip (2 yard): £145\n"
             "Midi skip (4 yard): £210\nRoad permit (public road): £45")
    question = "At Dunmore Skip Hire, what would a midi skip plus a road permit cost altogether?"
    cattery = ("Standard chalet (1 cat): £16.50 per night\nShared chalet: £27 per night for 2 cats, plus £9 per night "
               "for each additional cat\nDeluxe garden chalet: £22 per night (1 cat), £31 per night (2 cats)")
    labelled = [("dunmore_skip_hire.txt (version 1)", skips), ("whiskerfold_cattery.txt (version 1)", cattery)]
    assert spec(None, passages=lambda user_id, q: labelled).relevant("u", question)
    # unnamed too: the title line is a sentence of its own, apart from the "Yard:" line and the skips' prices
    # (run on, "Dunmore Skip Hire & Waste Removal Yard: Unit 4, Mill Road Mini skip (2 yard): £145" named a third skip)
    unnamed = spec(None, passages=lambda user_id, q: [("", t) for _, t in labelled])
    assert unnamed.relevant("u", question)
    assert [s for _, s in text_sentences(skips)][:3] == [
        "Dunmore Skip Hire & Waste Removal", "Yard: Unit 4, Mill Road", "Mini skip (2 yard): £145"]


@pytest.mark.parametrize("question, want", [
    ("how much more is the sourdough weekend than the bread class at larder lane", "160 - 60"),
    ("what's the difference between the curry night and the knife skills class?", "70 - 45"),
    ("how much is the curry night and the knife skills class?", None),  # no difference asked
    ("how much more is the curry night?", None),  # one thing named
])
def test_two_things_weighed_are_a_difference_the_dearer_first(question, want):
    body = CAFE_CLASSES.split("\n\n", 1)[1] + "\nSourdough weekend (Sat + Sun): €160"
    assert mentioned_difference(question, [body], ["larder_lane_classes.txt"]) == want


def test_a_thing_named_by_all_its_words_wins_over_a_wider_or_a_wordier_one():
    # Blind set 84: "the two-tank reef trip" over "Two-tank reef trip (8:00am): $145" and "Two-tank wreck trip
    # (Spiegel Grove / Duane): $175" was the wreck trip (named wider by "two-tank ... trip"); then, the wreck set
    # aside, it was as much the "Dive Pass: three two-tank reef trips for $390 ..." as the trip.
    sentences = ["Two-hour river tour (9:00am): $60", "Two-hour canyon tour (Red Gorge / Eagle Falls): $85",
                 "Dry bag hire: $5",
                 "DEALS ★ Paddle Pass: three two-hour river tours for $150, for one paddler, valid 12 months."]
    assert mentioned_total("the two-hour river tour and a dry bag hire, how much altogether?", sentences) == "60 + 5"
