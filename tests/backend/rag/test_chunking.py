from __future__ import annotations

import re

import pytest

from backend.rag import Page, approx_token_count, chunk_pages

DOC = """# Manual

Welcome to the manual. It explains things.

## Setup

""" + " ".join(f"Step {i} turns the valve number {i} clockwise." for i in range(30)) + """

A closing paragraph for setup.

## Care

Oil the hinge monthly.

```
# not a heading inside a fence
```
"""


def words(text):
    return re.findall(r"\w+", text)


def test_chunks_respect_headings_limits_and_cover_the_text():
    chunks = chunk_pages([Page(DOC)], max_tokens=50, overlap_tokens=12)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert all(c.num_tokens <= 50 for c in chunks)
    assert all(c.num_tokens == approx_token_count(c.text) for c in chunks)
    paths = [c.heading_path for c in chunks]
    assert paths[0] == "Manual" and paths[-1] == "Manual > Care"
    assert set(paths) == {"Manual", "Manual > Setup", "Manual > Care"}
    # No chunk mixes two sections: every heading line starts a chunk.
    for c in chunks:
        headings = [line for line in c.text.split("\n") if re.match(r"#{1,6} ", line) and "fence" not in line]
        assert headings in ([], [c.text.split("\n")[0]])
    # Every sentence of the document is in some chunk (nothing lost between windows).
    for i in range(30):
        assert any(f"Step {i} turns the valve number {i} clockwise." in c.text for c in chunks)
    assert "# not a heading inside a fence" in chunks[-1].text


def test_consecutive_chunks_of_a_section_overlap():
    chunks = [c for c in chunk_pages([Page(DOC)], max_tokens=50, overlap_tokens=12) if c.heading_path == "Manual > Setup"]
    assert len(chunks) >= 3
    for first, second in zip(chunks, chunks[1:]):
        last_sentence = re.findall(r"Step \d+ [^.]*\.", first.text)[-1]
        assert second.text.startswith(last_sentence)


def test_no_overlap_when_zero():
    chunks = [c for c in chunk_pages([Page(DOC)], max_tokens=50, overlap_tokens=0) if c.heading_path == "Manual > Setup"]
    seen = [s for c in chunks for s in re.findall(r"Step \d+ ", c.text)]
    assert len(seen) == len(set(seen)) == 30


def test_an_overlong_sentence_is_split_at_words():
    text = " ".join(f"word{i}" for i in range(400))
    chunks = chunk_pages([Page(text)], max_tokens=40, overlap_tokens=0)
    assert all(c.num_tokens <= 40 for c in chunks)
    assert words(" ".join(c.text for c in chunks)) == words(text)


def test_paragraphs_stay_whole_when_they_fit():
    paragraphs = [" ".join(["alpha"] * 15) + ".", " ".join(["beta"] * 15) + ".", " ".join(["gamma"] * 15) + "."]
    chunks = chunk_pages([Page("\n\n".join(paragraphs))], max_tokens=40, overlap_tokens=0)
    assert [c.text for c in chunks] == ["\n\n".join(paragraphs[:2]), paragraphs[2]]


@pytest.mark.parametrize("max_tokens,overlap", [(4, 0), (50, 26), (50, -1)])
def test_bad_parameters(max_tokens, overlap):
    with pytest.raises(ValueError):
        chunk_pages([Page("x")], max_tokens=max_tokens, overlap_tokens=overlap)


def test_a_heading_without_text_joins_the_next_chunk():
    chunks = chunk_pages([Page("# Title\n\n## Part\n\nBody text.\n\n## Other\n\nMore.")], max_tokens=50, overlap_tokens=0)
    assert [(c.heading_path, c.text) for c in chunks] == [
        ("Title > Part", "# Title\n\n## Part\n\nBody text."),
        ("Title > Other", "## Other\n\nMore."),
    ]
    only = chunk_pages([Page("# Lonely heading")], max_tokens=50, overlap_tokens=0)
    assert [(c.heading_path, c.text) for c in only] == [("Lonely heading", "# Lonely heading")]


def test_a_price_list_is_cut_at_its_line_ends_never_between_a_row_and_its_price():
    # dot leaders end no sentence ("Small (up to 5 cm) ........ $150" is one row), and a paragraph too long
    # for a chunk is cut at its lines before its words
    rows = [f"Design {i} (up to {i} cm) ........................ ${100 + i}" for i in range(40)]
    text = "FLASH DESIGNS\n" + "\n".join(rows)
    chunks = chunk_pages([Page(text, None)], approx_token_count, 60, 10)
    assert len(chunks) > 2
    for chunk in chunks:
        for line in chunk.text.split("\n"):
            assert line in rows or line == "FLASH DESIGNS", line
    assert {line for c in chunks for line in c.text.split("\n")} >= set(rows)
