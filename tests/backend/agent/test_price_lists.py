"""How a price list's layout is read into the calculator's candidates (backend.agent.tools):
dot leaders, headings in capitals and label lines as sentence ends, a table cell named by its
row and its column, a discount called by its name, a discount from a day on, a count written
"4+" (no age), and a table's other cells (no extras). Each test's first candidate is the call the
planned policy makes (backend.agent.choice.FIRST_PRIOR). Found on blind set 53."""

from __future__ import annotations

from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.discounts import claimed_discount, onwards
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.mentions import named_extras
from backend.agent.tools.segmentation import text_sentences, without_leaders

from .test_expressions import result

CYCLES = """QUAYSIDE CYCLES
Pier Road, Whitby  |  Tel: 01947 555 210

HIRE PRICES (per bike)
Bike type      | 2 hours | Half day (4 hrs) | Full day
Road bike      | £14     | £20              | £30
Tandem         | £20     | £28              | £40
E-bike         | £25     | £36              | £55

- Multi-day hire: 20% off the full day rate for each day from the 3rd day onwards
- Groups of 5 or more bikes get 10% off the total
- Child seat or trailer: £7 extra per day
"""

SALON = """POLISHED NAIL BAR
Phone 0161 555 0100 | Walk-ins welcome
Hours: Tue-Sat 9am-6pm, closed Sundays
MANICURES
- Quick manicure ........ $30
- Gel manicure ... $50
- Builder gel … $65
EXTRAS
- Nail art from $2 per nail
- Chrome finish $12 extra
Hen parties of 4+: 20% off all services booked together.
"""

WASH = """Service              | Car  | Van
Wash & vacuum        | €20  | €30
Mini valet           | €45  | €65
Fleet accounts (5+ vehicles a month): 10% off all services."""


def first(question: str, *documents: str) -> str:
    found = candidate_expressions(question, [result(*documents)], None, evaluate)
    assert found, question
    return found[0]


def value(expression: str) -> str:
    q = evaluate(expression).q
    return str(q.numerator) if q.denominator == 1 else f"{float(q):.2f}"


def test_leaders_headings_in_capitals_and_label_lines_end_sentences():
    # "- Gel manicure ... $58" was two sentences (an ellipsis), "closed Mondays MANICURES" one, and
    # "Bookings online or by phone Hours: ..." one.
    sentences = [s for _, s in text_sentences(SALON)]
    assert "- Quick manicure: $30" in sentences
    assert "- Gel manicure: $50" in sentences
    assert "- Builder gel: $65" in sentences
    assert "Hours: Tue-Sat 9am-6pm, closed Sundays" in sentences
    assert "POLISHED NAIL BAR Phone 0161 555 0100 | Walk-ins welcome" in sentences
    assert "- Chrome finish $12 extra" in sentences
    assert "MANICURES" in sentences
    # a heading in capitals stays with the line after it ("TRADE ROTA ... Knives swapped ...")
    assert [s for _, s in text_sentences("Open daily.\nTRADE ROTA\nKnives swapped at £3 per knife.")] == [
        "Open daily.", "TRADE ROTA Knives swapped at £3 per knife."]
    # a sentence's own ellipsis before a number is left alone when no number follows on its line
    assert without_leaders("We close early... sometimes.\nOpen 9am.") == "We close early... sometimes.\nOpen 9am."
    assert without_leaders("Gel manicure . . . . $50") == "Gel manicure: $50"
    assert value(first("gel manicure with the chrome finish, how much altogether?", SALON)) == "62"


def test_a_table_cell_is_named_by_its_row_and_its_column():
    # "4 hybrid bikes for a full day plus one child trailer" read the row's first cell (4 * 15), and the
    # trailer twice (+ 6 + 6).
    assert value(first("how much for 3 tandems for a full day plus one child trailer?", CYCLES)) == "127"
    assert value(first("how much for 2 road bikes for a half day?", CYCLES)) == "40"


def test_a_discount_called_by_its_name_and_one_from_a_day_on():
    # "with your group discount" took "Multi-day hire: 15% off the full day rate" ("full day" named it).
    question = "we're a group of 6 and want road bikes for the full day. total with your group discount?"
    assert claimed_discount(question, [s for _, s in text_sentences(CYCLES)])[0] == "10"
    assert value(first(question, CYCLES)) == "162"
    # "from the 3rd day onwards": only days 3 and 4 are 20% off; one day is no 3rd day
    assert onwards("20% off the full day rate for each day from the 3rd day onwards") == (3, "day")
    assert onwards("10% off each night after the first night") == (2, "night")
    assert value(first("id like to hire a tandem for 4 days in a row, how much?", CYCLES)) == "144"
    assert claimed_discount("how much for 2 tandems for a full day?", [s for _, s in text_sentences(CYCLES)]) is None
    assert value(first("how much for 2 tandems for a full day?", CYCLES)) == "80"


def test_a_count_written_with_a_plus_is_no_age():
    # "Bridal parties of 4+" and "5+ vehicles a month" were read as ages ("aged 60+"): never claimed.
    question = "There are 5 of us in my hen party and we all want gel manicures booked together. Total after the discount?"
    assert value(first(question, SALON)) == "200"
    fleet = "We have a fleet account and need a mini valet on 5 vans this month. Total after the fleet discount?"
    assert claimed_discount(fleet, [s for _, s in text_sentences(WASH)])[0] == "10"


def test_a_tables_other_cells_are_no_extras():
    # "need a mini valet on 5 vans" added every van cell of the table (+ 30 + 65 + 120)
    sentences = [s for _, s in text_sentences(WASH)]
    assert named_extras("We have a fleet account and need a mini valet on 5 vans, total?", sentences, "65 * 5") == []
