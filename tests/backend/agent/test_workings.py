"""The workings shown under a calculation over the documents (backend.agent.workings)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from backend.agent.workings import HEADING, figures, workings

WINDOWS = """Sparkle Window Cleaning

PRICES
                 Outside    Inside & out
2 bed terrace    $12        $40
3 bed detached   $18        $60

Gutter clearing: $2.50 per foot, minimum charge $60.
Pay for a year upfront and get 10% off."""


def test_the_figures_of_an_expression_leave_out_the_hundred_of_a_percentage():
    assert figures("(18 * 4) * (100 - 10) / 100") == ["18", "4", "10"]
    assert figures("(78) * (100 + 80) / 100") == ["78", "80"]
    assert figures("240 * 17.5 / 100") == ["240", "17.5"]
    assert figures("max(60, 2.50 * 18)") == ["60", "2.50", "18"]
    assert figures("100 * 3") == ["100", "3"]  # a price of 100 is a figure
    assert figures("floor(100 / 12)") == ["100", "12"]  # 100 divided, not a percentage


def test_each_figure_is_shown_with_the_words_it_was_read_from():
    shown = workings("(18 * 4) * (100 - 10) / 100",
                     "I've got a 3 bed detached and want the regular outside clean every 4 weeks. "
                     "If I pay the whole year upfront what do I pay in total?", [(2, "windows.txt", WINDOWS)])
    assert shown.split("\n") == [
        HEADING,
        "- 18: “3 bed detached: Outside \\$18” [2]",  # a table's row named with the cell holding it
        "- 4: your question “outside clean every 4 weeks”",  # the question's own clause, not the next one
        "- 10: “Pay for a year upfront and get 10% off.” [2]",
    ]


def test_a_figure_found_nowhere_is_said_to_be_worked_out():
    shown = workings("18 * 13", "outside clean on my 3 bed detached every 4 weeks for a year",
                     [(1, "windows.txt", WINDOWS)])
    assert "- 13: worked out, written neither in your question nor in the passages" in shown.split("\n")


def test_a_price_the_message_repeats_is_shown_from_its_passage():
    # "the gutter price is $2.50 right?": the passage is where it comes from; the 40 feet are the user's
    shown = workings("max(60, 2.50 * 40)", "the gutter price is $2.50 right? I have 40 feet",
                     [(3, "windows.txt", WINDOWS)])
    assert "- 2.50: “Gutter clearing: \\$2.50 per foot, minimum charge \\$60.” [3]" in shown.split("\n")
    assert "- 40: your question “I have 40 feet”" in shown.split("\n")


def test_the_passage_cited_first_is_preferred_and_a_long_sentence_is_cut_around_the_figure():
    long_text = ("We have been cleaning windows across the county since 1998 and our friendly team covers every "
                 "village, with conservatory roofs cleaned for $95 each, by appointment only, weather permitting "
                 "and subject to access.")
    shown = workings("95 * 2", "2 conservatory roofs please", [(4, "other.txt", "Roofs: $95 flat."), (5, "long.txt", long_text)])
    assert "- 95: “Roofs: \\$95 flat.” [4]" in shown.split("\n")
    shown = workings("95 * 2", "2 conservatory roofs please", [(5, "long.txt", long_text)])
    line = next(x for x in shown.split("\n") if x.startswith("- 95"))
    assert "$95 each" in line and line.count("…") == 2 and len(line) < 120


def test_quotes_are_data_their_markdown_escaped():
    # a document's text is untrusted: it must not make a link or an image in the answer
    shown = workings("7 * 2", "2 mugs", [(1, "mugs.txt", "Mug [click](http://evil.example) **now** $7 each.")])
    line = next(x for x in shown.split("\n") if x.startswith("- 7"))
    assert "\\[click\\]" in line and "\\*\\*now\\*\\*" in line


def test_minor_units_are_found_as_the_expression_writes_them():
    shown = workings("150 * 0.08", "150 pages", [(2, "print.txt", "Printing is 8p per page. Day pass £25.")])
    assert "- 0.08: “Printing is 8p per page.” [2]" in shown.split("\n")


def test_an_expression_without_numbers_has_no_workings():
    assert workings("pi", "what is pi", [(1, "a.txt", "Pi is 3.14")]) == ""


def _scorer():
    path = Path(__file__).resolve().parents[3] / "scripts" / "agent_policy_eval.py"
    spec = importlib.util.spec_from_file_location("agent_policy_eval", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_eval_looks_for_the_answer_in_the_stated_result_only():
    # With workings under it, "18" appears in every answer over an $18 price: only the stated
    # result counts.
    answered = _scorer().answered
    text = ("That comes to $72: 18 * 4 = 72, from your documents [2].\n\n" + HEADING +
            "\n- 18: “3 bed detached: Outside \\$18” [2]\n- 4: your question “every 4 weeks”")
    calls = [("search_documents", "ok"), ("calculator", "ok")]
    assert answered("chain", "$72", "done", text, calls)
    assert not answered("chain", "$18", "done", text, calls)
    assert not answered("chain", "4", "done", text, calls)
    assert answered("chain", "Paris", "done", "The capital is Paris [1].", [("search_documents", "ok"), ("calculator", "ok")])


def test_the_eval_compares_a_stated_amount_with_a_numeric_want_by_value():
    # A want of "667.00" is the stated "$667" (a helper writes cents the program leaves off).
    answered = _scorer().answered
    calls = [("search_documents", "ok"), ("calculator", "ok")]
    assert answered("chain", "667.00", "done", "That comes to $667: (145.00 * 4) * (100 + 15) / 100 = 667, from your documents [1].", calls)
    assert answered("chain", "1003.75", "done", "That comes to A$1,003.75: 1003.75 = 1003.75, from [1].", calls)
    assert not answered("chain", "667.00", "done", "That comes to $667.50: 667.50 = 667.50, from [1].", calls)
    assert not answered("chain", "66", "done", "That comes to $667: 667 = 667, from [1].", calls)


def test_review_a_figure_is_found_by_its_value_as_the_passage_writes_it():
    # "£1,200" holds 1200 and "£2.50" holds 2.5: not "worked out"
    shown = workings("1200 * 2", "2 kitchens", [(1, "k.txt", "A kitchen fitting costs £1,200 including labour.")])
    assert "- 1200: “A kitchen fitting costs £1,200 including labour.” [1]" in shown.split("\n")
    shown = workings("2.5 * 4", "4 hours", [(1, "p.txt", "Parking is £2.50 per hour.")])
    assert "- 2.5: “Parking is £2.50 per hour.” [1]" in shown.split("\n")
    # but not another number holding its digits
    assert "worked out" in workings("18 * 2", "2 of them", [(1, "a.txt", "Tickets £118 or £18.50.")])


def test_a_figure_is_quoted_as_the_user_wrote_it_and_from_where_the_passage_prices_it():
    # New-user pass: "I have two small dogs" was quoted "I have 2 small dogs"; the 8 of "Add 8 percent sales tax"
    # and the 30 of "a 30 dollar deposit" were quoted from "Opening hours: Tuesday to Saturday, 8:30 am to 5:30 pm."
    text = ("Opening hours: Tuesday to Saturday, 8:30 am to 5:30 pm.\nNail trim: 15 dollars\n"
            "Tax: Add 8 percent sales tax to the total of services.\n"
            "Deposit: a 30 dollar deposit is paid when you book.\n")
    shown = workings("(15 * 2) * (100 + 8) / 100 + 30", "I have two small dogs, nail trims with tax and the deposit?",
                     [(1, "prices.txt (version 1)", text)])
    assert "- 2: your question “I have two small dogs”" in shown
    assert "- 8: “Tax: Add 8 percent sales tax to the total of services.” [1]" in shown
    assert "- 30: “Deposit: a 30 dollar deposit is paid when you book.” [1]" in shown
    assert "8:30" not in shown


def test_a_count_is_not_quoted_from_a_price_of_the_same_value():
    # Review: the 10 of "(13 - 10) * 2" was quoted from "Conservatory: £10", not "Standard house (up to 10 windows)".
    text = "Standard house (up to 10 windows): £25\nEach extra window: £2\nConservatory: £10\n"
    shown = workings("25 + (13 - 10) * 2", "a house with 13 windows, how much?", [(1, "w.txt (version 1)", text)])
    assert "- 10: “Standard house (up to 10 windows): £25” [1]" in shown
