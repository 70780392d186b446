"""The program's half of a document + arithmetic question, on the agent eval's question sets
(scripts/agent_eval_sets: forty-eight blind sets written by helpers that never saw the method): for each
question, is the calculator planned, and is the right value among the candidates the model
chooses from? The real embedder (all-MiniLM-L6-v2) ranks the fact sentences, each document given
as one passage. The counts are floors measured on 2026-12-03 (sets 43-48: 2026-12-04; docs/BENCHMARKS.md): a change that
loses a question fails here, with the questions it lost printed."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from backend.agent.tools.calculator import evaluate, spec
from backend.agent.tools.passages import format_passages
from backend.rag import Source
from backend.rag.sources import source_label

SETS = Path(__file__).resolve().parents[3] / "scripts" / "agent_eval_sets"
# set -> (questions with the right value among the candidates, questions)
FLOORS = {"blind1": (10, 10), "blind2": (10, 10), "blind3": (12, 12), "blind4": (12, 12), "blind5": (12, 12),
          "blind6": (12, 12), "blind7": (8, 12), "blind8": (10, 12), "blind9": (11, 12), "blind10": (10, 12),
          "blind11": (11, 12), "blind12": (10, 12), "blind13": (8, 12), "blind14": (4, 12), "blind15": (12, 12),
          "blind16": (11, 12), "blind17": (6, 12), "blind18": (7, 12), "blind19": (4, 12), "blind20": (7, 12),
          "blind21": (8, 12), "blind22": (9, 12), "blind23": (6, 12), "blind24": (7, 12), "blind25": (7, 12),
          "blind26": (8, 12), "blind27": (3, 12), "blind28": (6, 12), "blind29": (3, 12),
          "blind30": (2, 12), "blind31": (10, 12), "blind32": (4, 12), "blind33": (3, 12), "blind34": (4, 12),
          "blind35": (7, 12), "blind36": (6, 12), "blind37": (3, 12), "blind38": (2, 12),
          "blind39": (1, 12), "blind40": (3, 12), "blind41": (2, 12), "blind42": (0, 12),
          "blind43": (3, 12), "blind44": (7, 12), "blind45": (3, 12), "blind46": (6, 12), "blind47": (8, 12),
          "blind48": (6, 12)}
# (blind19 was 5: "me and 3 friends want to bowl 2 games each after 6pm ... we all need shoes" had 72 among its later
# candidates under a best one that fails completeness' checks of the best; the program now declines it, thirty-third session.)
# (blind47 was 9: "2 large washes, about 40 mins in the dryer ... my double duvet too" had 36 among its later
# candidates under a best one without the 40 minutes; the program now declines it, thirty-third session.)
# (blind32 was 5: "one extra child who's 7" was 29 + 7 with the age 7 as the extra child's price, equal to
# it by chance, "children (4-12) €7"; since "who's 7" is an age (twenty-first session) it is 4.)
# set -> lookups that still plan the calculator (measured on 2026-12-03, thirteenth session; 0 when absent)
PLANNED_LOOKUPS = {"blind40": 2, "blind41": 4, "blind42": 1}


@pytest.fixture(scope="module")
def embedder():
    from backend.rag import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def sources_of(documents: list[dict]) -> list[Source]:
    """Each document as one passage, as the retriever returns it."""
    return [Source(chunk_id=i + 1, document_id=f"{i:032x}", document_name=d["name"], version=1, position=0,
                   heading_path="", page=None, text=d["text"], score=1.0) for i, d in enumerate(documents)]


def search_result(documents: list[dict]) -> str:
    return "Passages from the user's documents.\n\n" + format_passages(sources_of(documents))


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_the_right_value_is_among_the_candidates(name, embedder):
    data = json.loads((SETS / f"{name}.json").read_text())
    content = search_result(data["documents"])
    found = [(source_label(source), source.text) for source in sources_of(data["documents"])]
    calculator = spec(embedder.embed, passages=lambda user_id, text: found)
    right, lost = 0, []
    for item in data["questions"]:
        planned = calculator.relevant("u", item["question"])
        values = [evaluate(c["expression"]).q for c in calculator.candidate_arguments(item["question"], [content])]
        if planned and Fraction(item["want"]) in values:
            right += 1
        else:
            lost.append((item["question"], item["want"], planned, [str(v) for v in values]))
    floor, total = FLOORS[name]
    assert len(data["questions"]) == total
    print(name, right, "of", total, lost)
    assert right >= floor, lost
    # A fact asked with a number in the question, no arithmetic ("Who founded the club in 1954?"),
    # plans no calculator (but for the sets' known misses: PLANNED_LOOKUPS).
    planned = [item["question"] for item in data.get("lookups", []) if calculator.relevant("u", item["question"])]
    assert len(planned) <= PLANNED_LOOKUPS.get(name, 0), planned


# set -> (lookups whose quoted sentence holds the answer, lookups), every document as one passage.
LOOKUP_FLOORS = {"blind4": (5, 6), "blind5": (6, 6), "blind6": (6, 6), "blind7": (6, 6), "blind8": (6, 6),
                 "blind9": (6, 6), "blind10": (6, 6), "blind11": (10, 10), "blind12": (10, 10), "blind13": (10, 10),
                 "blind14": (10, 10), "blind15": (10, 10), "blind16": (9, 10), "blind17": (10, 10),
                 "blind18": (10, 10), "blind19": (10, 10), "blind20": (8, 10)}


@pytest.mark.parametrize("name", sorted(LOOKUP_FLOORS))
def test_the_sentence_quoted_for_a_lookup_states_its_answer(name, embedder):
    from backend.agent.fact_questions import asks_fact
    from backend.agent.tools.sentences import best_sentence

    data = json.loads((SETS / f"{name}.json").read_text())
    content = search_result(data["documents"])
    right, lost = 0, []
    for item in data["lookups"]:
        _, sentence = best_sentence(item["question"], content, embedder.embed)
        if asks_fact(item["question"]) and item["want"].replace(",", "").lower() in sentence.replace(",", "").lower():
            right += 1
        else:
            lost.append((item["question"], item["want"], sentence))
    floor, total = LOOKUP_FLOORS[name]
    assert len(data["lookups"]) == total
    print(name, right, "of", total, lost)
    assert right >= floor, lost
