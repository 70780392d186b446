"""Tables read row by row (backend.agent.tools.sentences.table_sentences): each row a sentence,
each cell after its column's name, so that the calculator and a quoted answer read one row's
prices by what they are for."""

import numpy as np

from backend.agent.tools.sentences import table_sentences, text_sentences

BIKES = """Riverside Wheels - Bike Hire Rates 2024

| Bike type            | 1 hour | Half day (4 hrs) | Full day (8 hrs) |
|----------------------|--------|------------------|------------------|
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
        "Finger Buffet: Price per guest £14.50; Minimum guests 20.", "Afternoon Tea: Price per guest £17.00."]


def test_a_table_cut_from_its_header_reads_row_by_row():
    # a passage that begins inside a table: its first row holds prices, so it is no header
    text = "| Tandem | €14 | €35 |\n| Trailer | €4 | €8 |"
    assert [s for _, s in text_sentences(text)] == ["Tandem: €14; €35.", "Trailer: €4; €8."]


def test_text_that_is_no_table_is_left_as_it_is():
    for text in ("Open Mon-Fri | 9am-5pm\nClosed on Sundays.", "a | b\nc | d | e", "No bars at all.\nSecond line."):
        assert table_sentences(text) == text


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
