"""The last check of a calculation over the documents (backend.agent.tools.plausible): a figure
read as the wrong kind of number (an age, a distance, a clock time, a duration, an address, a
year, a percentage) is never multiplied into a total. Each case is a wrong total the program
stated on blind sets 61-64 (twenty-first session), with the readings that must stay."""

from __future__ import annotations

import pytest

from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.plausible import misread_figures, plausible

from .test_expressions import result

SWEEP = """ASHGROVE CHIMNEY SWEEPS
Stove sweep (wood or multi-fuel): €85
Open fire sweep: €70
Second flue, same visit: €45
Smoke test: €25
CALL-OUT AREAS
Zone A - Galway city: no charge
Zone B - up to 25 km outside: €15 travel
Zone C - 25 to 50 km outside: €30 travel
Saturday appointments carry a €20 surcharge.
Each sweep takes roughly 45-60 minutes.
"""

ROOMS = """RIDDLE LANE ESCAPE ROOMS
Unit 4, Tanner's Yard, Leeds LS9 8AB  Tel: 0113 496 0722
Room | Players | Length
The Vault | 2-6 | 60 min
Curse of the Mummy | 3-8 | 75 min
PRICES (per player, from 1 March 2024)
2-6 players: £25.00 each
7-8 players: £21.00 each
Students get 10% off.
"""

CASTLES = """BOUNCE BROS
Jungle Slide Combo: $265 per day
Delivery: free within 10 miles, then $2 per mile.
"""


def sentences(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("question, expression, misread", [
    # an age (blind set 63: "85 * 72")
    ("My mum is 72 and lives in the city. What would a stove sweep cost her?", "85 * 72", ["72"]),
    ("how much for me and my dad, he's 70?", "85 * 70", ["70", "85"]),  # (and €70 is a price)
    # a distance times a price that is not per distance
    ("I'm about 35 km out of the city, what would a stove sweep cost?", "85 * 35", ["35", "85"]),
    # two prices multiplied, neither a count of the question ("20 km" is a distance; €20 the Saturday surcharge)
    ("a stove sweep plus a second flue? I live about 20 km outside Galway", "45 * 20", ["45", "20"]),
    # a clock time
    ("8 of us this Friday at 9pm, how much?", "21.00 * 9", ["9"]),
    # a duration a thing lasts, as a price
    ("There'll be 8 of us doing Curse of the Mummy, how much?", "75 * 8", ["75"]),
    # an address and a year
    ("3 of us, how much?", "4 * 3", ["4"]),
    ("3 of us, how much?", "2024 * 3", ["2024"]),
    # a percentage as a price ("get 10% off")
    ("8 students, how much?", "10 * 8", ["10"]),
])
def test_a_figure_misread_is_named(question, expression, misread):
    text = SWEEP if "sweep" in question or "Galway" in question or "dad" in question else ROOMS
    assert sorted(misread_figures(expression, question, sentences(text))) == sorted(misread)


@pytest.mark.parametrize("question, expression, text", [
    ("There'll be 8 of us doing Curse of the Mummy, how much?", "21.00 * 8", ROOMS),
    ("4 of us, how much?", "25.00 * 4", ROOMS),
    ("4 students, how much with the student discount?", "(25.00 * 4) * (100 - 10) / 100", ROOMS),
    ("3 of us for 2024's season?", "25.00 * 3", ROOMS),
    # a measure priced per that measure
    ("We're 25 miles from your depot. Delivery cost?", "2 * (25 - 10)", CASTLES),
    ("gutters need clearing, roughly 18 feet of gutter. price?", "2.50 * 18", "Gutter clearing: £2.50 per linear foot"),
    # a duration divided into a price (a price per hour)
    ("what's the price per hour of the intensive course", "1050 / 20", "Intensive course: 20 hours over 2 weeks, £1050"),
    # a percentage of a price written like another price ("£20" for 2 hours; "20% off")
    ("a tandem for 4 days, how much do I save?", "40 * 2 * 20 / 100", "Tandem | £20 | £40\nMulti-day hire: 20% off"),
    # a count the question gives and a price
    ("signing up my three kids (9, 10 and 12) for the clay club", "48 * 3", "Kids clay club: £48 per child"),
])
def test_a_figure_read_as_it_is_stays(question, expression, text):
    assert misread_figures(expression, question, sentences(text)) == []


def test_a_distance_multiplies_only_a_price_per_distance():
    question = "We're 25 km from your depot. What's the total for the Jungle Slide Combo?"
    assert plausible(["265 * 25", "265"], question, sentences(CASTLES)) == ["265"]


def test_no_wrong_total_is_offered_for_an_age_or_a_distance():
    # blind set 63: "85 * 72" first, then "85 * 15" (the €15 travel times the 15 km); neither stays
    question = "My mum is 72 and lives around 15 km outside the city. What would a stove sweep cost her?"
    found = candidate_expressions(question, [result(SWEEP)], None, evaluate)
    assert not any(e in found for e in ("85 * 72", "85 * 15")), found


def test_review_of_the_twenty_first_session():
    def first(question: str, text: str) -> list[str]:
        return candidate_expressions(question, [result(text)], None, evaluate)

    # 1. a head-count worked out of the question counts, whatever else the list writes as 4 ("from 4pm")
    assert first("me and 3 friends want a game of bowling, how much?",
                 "LAKESIDE BOWL\nBowling: £8 per person per game\nKids' parties from 4pm.\n")[0] == "8 * 4"
    assert first("me and 3 mates are doing The Vault, total?", ROOMS)[0] == "25.00 * 4"
    # 2. a number the question writes as a count once counts, though it writes it as a distance too
    assert first("4 of us want the river tour, we're staying 4 miles from the quay. how much?",
                 "RIVER TOURS\nRiver tour: £25 per person\n") == ["25 * 4"]
    # 3. prices per a measure written other ways
    assert first("I have 20 lbs of laundry for wash & fold, how much?", "SUDS\nWash & fold: $1.50 per pound\n") == ["1.50 * 20"]
    assert misread_figures("40 * 300", "how much for 300 sq ft?", ["Floor sanding: £40 per ft²"]) == []
    assert misread_figures("2.10 * 12", "12 miles, how much?", ["Saloon: £2.10 per-mile"]) == []
    # 4. minutes a thing lasts are no operand wherever they stand
    assert not [e for e in first("8 students want to do The Vault, how much with the student discount?", ROOMS) if "60" in e]
    # 5. a percentage is no price where it is a factor, though the same number is a percentage elsewhere
    assert misread_figures("(10 * 8) * (100 - 10) / 100", "8 students, how much?", sentences(ROOMS)) == ["10"]
    # 6. a price is per a measure in its own clause
    question = "We're 25 miles from your depot. What's the total for the Jungle Slide Combo?"
    assert "265 * 25" not in first(question, "BOUNCE BROS\nJungle Slide Combo: $265 per day, delivery $2 per mile.\n")
    # 7. ages written other ways
    assert "85 * 72" not in first("My mum's 72 and lives in the city. What would a stove sweep cost her?", SWEEP)
    # 8. a time word that asks no time
    assert "75 * 8" not in first("8 of us doing Curse of the Mummy, we've got a couple of hours free, how much?", ROOMS)
    # 9. "10 am" is no price per metre
    assert misread_figures("30 * 90", "How much deposit for a custom 90 cm frame with non-reflective glass?",
                           ["Non-reflective glass: £30, ready by 10 am"]) == ["30", "90"]
    # 10. a price written without its sign is no year
    assert misread_figures("2000 / 4", "If 4 of us split the Saturday hire, how much each?",
                           ["All prices in EUR", "Saturday hire: 2000", "Friday hire: 1800"]) == []
    # 11. a title's year is no price ("2025 * 250" for "250 records" over "PRICE LIST 2025")
    title = ["Kiln & Co | PRICE LIST 2025", "Bisque firing per piece: 4.10 EUR", "Fees 2024: glaze firing 6.00 EUR"]
    assert misread_figures("2025 * 250", "how much to fire 250 pieces?", title) == ["2025"]
    assert misread_figures("2024 * 3", "how much for 3 glaze firings?", title) == ["2024"]
    assert misread_figures("250 / 2025", "how much to fire 250 pieces?", title) == ["2025"]


def test_review_of_the_thirty_third_session():
    # a price without its sign after a title word is no title's year
    assert misread_figures("4 * 2000", "How much to hire the hall for 4 hours?", ["Hall hire rates 2000 kr per hour."]) == []
    assert misread_figures("2 * 1950", "How much for 2 people?", ["Tour prices 1950 CZK per person."]) == []
    assert misread_figures("0.05 * 2000", "how much for 2000 sheets?", ["Minimum order for 2000 sheets: 0.05 each"]) == []
    # a year opening a title is one
    assert misread_figures("2025 * 3", "3 blocks?", ["2025 PRICE LIST  (all prices in CAD)", "Block: $95"]) == ["2025"]
