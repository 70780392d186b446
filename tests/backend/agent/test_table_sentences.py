"""Tables read row by row (backend.agent.tools.segmentation.table_sentences): each row a sentence,
each cell after its column's name, so that the calculator and a quoted answer read one row's
prices by what they are for."""

import numpy as np
import pytest

from backend.agent.tools.segmentation import table_sentences, text_sentences

from .test_expressions import first

BIKES = """Riverside Wheels - Bike Hire Rates 2024

| Bike type            | 1 hour | Half day (4 hrs) | Full day (8 hrs) |
| City bike            | €8     | €20              | €30              |
| E-bike               | €15    | €40              | €60              |

Helmets are free with every hire. Locks cost €2 each per hire.
"""


def test_each_row_is_a_sentence_naming_its_cells_columns():
    sentences = [s for _, s in text_sentences(BIKES, "bikes.txt")]
    assert sentences == ["City bike: 1 hour €8; Half day (4 hrs) €20; Full day (8 hrs) €30.",
                         "E-bike: 1 hour €15; Half day (4 hrs) €40; Full day (8 hrs) €60.",
                         "Helmets are free with every hire.", "Locks cost €2 each per hire."]


def test_a_table_without_outer_bars_and_empty_cells():
    text = "Package | Price per guest | Minimum guests\nFinger Buffet | £14.50 | 20\nAfternoon Tea | £17.00 |\n"
    assert [s for _, s in text_sentences(text)] == [
        "Finger Buffet package: Price per guest £14.50; Minimum guests 20.",
        "Afternoon Tea package: Price per guest £17.00."]


def test_a_first_column_naming_a_kind_of_thing_names_each_row_by_it():
    # "the Gold package plus the LED dance floor" names the row "Gold package" (blind set 96, read)
    text = ("| Package | DJ time | Price |\n|---|---|---|\n| Bronze | 3 hours | £395 |\n| Gold package | 5 hours | £650 |\n\n"
            "| Bike type | 1 hour |\n|---|---|\n| E-bike | €15 |\n")
    assert [s for _, s in text_sentences(text)] == [
        "Bronze package: DJ time 3 hours; Price £395.", "Gold package: DJ time 5 hours; Price £650.",
        "E-bike: 1 hour €15."]


def test_a_table_cut_from_its_header_reads_row_by_row():
    # a passage that begins inside a table: its first row holds prices, so it is no header
    text = "| Tandem | €14 | €35 |\n| Trailer | €4 | €8 |"
    assert [s for _, s in text_sentences(text)] == ["Tandem: €14; €35.", "Trailer: €4; €8."]


def test_text_that_is_no_table_is_left_as_it_is():
    for text in ("Open Mon-Fri | 9am-5pm\nClosed on Sundays.", "No bars at all.\nSecond line.", "|--|--|\n" * 3):
        assert table_sentences(text) == text


@pytest.mark.parametrize("text, want", [
    # (review) no header: every row is data, none glued into another
    ("| Monday | 9am - 5pm |\n| Tuesday | 9am - 5pm |\n| Sunday | Closed |",
     ["Monday: 9am - 5pm.", "Tuesday: 9am - 5pm.", "Sunday: Closed."]),
    ("Ticket A | valid 1 day\nTicket B | valid 7 days", ["Ticket A: valid 1 day.", "Ticket B: valid 7 days."]),
    # a short row does not end the table; a single-dash rule is a rule
    ("| Class | Day | Time |\n|-|-|-:|\n| Yoga | Monday | 7pm |\n| Pilates | Tuesday |\n| Spin | Wednesday | 8pm |",
     ["Yoga: Day Monday; Time 7pm.", "Pilates: Day Tuesday.", "Spin: Day Wednesday; Time 8pm."]),
    # a header with no digit over rows with prices, no rule line
    ("| Service | Small | Large |\n| Full Groom | $55 | $90 |", ["Full Groom: Small $55; Large $90."]),
    # a header with numbers of its own over rows with prices
    ("| Service | Small (under 20 lb) | Large (over 50 lb) |\n| Full Groom | $55 | $90 |\n| Nail Trim | $12 | $15 |",
     ["Full Groom: Small (under 20 lb) $55; Large (over 50 lb) $90.",
      "Nail Trim: Small (under 20 lb) $12; Large (over 50 lb) $15."]),
])
def test_tables_with_and_without_a_header(text, want):
    assert [s for _, s in text_sentences(text)] == want


def test_the_calculator_reads_the_price_of_the_row_and_column_asked():
    from backend.agent.tools.calculator import evaluate
    from backend.agent.tools.expressions import candidate_expressions
    from backend.agent.tools.passages import format_passages
    from backend.rag import Source

    passage = Source(chunk_id=1, document_id="a" * 32, document_name="riverside_wheels.txt", version=1, position=0,
                     heading_path="", page=None, text=BIKES, score=1.0)
    results = ["1 passage from the user's documents, best first.\n\n" + format_passages([passage])]
    def embed(texts):  # a stand-in embedder: the words that tell the rows apart
        return np.array([[t.lower().count(w) for w in ("e-bike", "city")] + [0.01] for t in texts], dtype=float)

    found = candidate_expressions("How much to hire 2 e-bikes for a full day at Riverside Wheels?", results, embed,
                                  evaluate)
    assert found[0] == "60 * 2"  # not "8 * 2": the 8 of "Full day (8 hrs)"


def test_a_quoted_answer_is_a_row_of_a_table_or_a_question_with_its_answer():
    from backend.agent.tools.passages import format_passages
    from backend.agent.tools.sentences import best_sentence
    from backend.rag import Source

    text = BIKES + "\nPower cut or emergency? Call 0800 555 0199, open 24 hours.\n"
    passage = Source(chunk_id=1, document_id="a" * 32, document_name="riverside_wheels.txt", version=1, position=0,
                     heading_path="", page=None, text=text, score=1.0)
    content = "1 passage from the user's documents, best first.\n\n" + format_passages([passage])
    def embed(texts):  # a stand-in embedder: the words that tell the rows apart
        return np.array([[t.lower().count(w) for w in ("e-bike", "city")] + [0.01] for t in texts], dtype=float)

    assert best_sentence("how much is an e-bike for a half day", content, embed) == (
        1, "E-bike: 1 hour €15; Half day (4 hrs) €40; Full day (8 hrs) €60.")
    assert best_sentence("emergency number? power's gone out", content, None) == (
        1, "Power cut or emergency? Call 0800 555 0199, open 24 hours.")


def test_a_price_said_of_it_takes_the_name_before_it():
    # blind set 98, read: "It's $5.00 per box or bag" named no Shred Day, and the bankers box's $11.00 was taken
    faq = ("Is there a cheaper option for households?\nYes - our Community Shred Day runs on the first Saturday of each "
           "month at the depot, 9 am to noon. It's $5.00 per box or bag, with a limit of 5 boxes or bags per household.")
    sentences = [s for _, s in text_sentences(faq)]
    assert "The Community Shred Day is $5.00 per box or bag, with a limit of 5 boxes or bags per household." in sentences
    prices = "ON-SITE SHREDDING\n- Standard bankers box: $11.00 per box\n\n" + faq
    assert first("How much would it be to bring 4 boxes to the Community Shred Day?", prices) == 20
    # (no name before it: as written; "It is" of no price: as written)
    assert [s for _, s in text_sentences("We sell bread. It's £3 a loaf.")] == ["We sell bread.", "It's £3 a loaf."]
    assert [s for _, s in text_sentences("The Sunset Paddle Tour runs Fridays. It is fun.")][1] == "It is fun."


def test_a_lettered_item_of_a_list_is_a_sentence_of_its_own():
    # "a) Volume: ..." ran on from the line before, whose €0.05 then stood in the sentence of "more than 10,000 words"
    text = "Proofreading: 0.05 EUR per word\na) Volume: orders of more than 10,000 words receive 5% off.\nb) Non-profit: 10% off."
    assert [s for _, s in text_sentences(text)] == ["Proofreading: 0.05 EUR per word",
                                                   "a) Volume: orders of more than 10,000 words receive 5% off.",
                                                   "b) Non-profit: 10% off."]
