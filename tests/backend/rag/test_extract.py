from __future__ import annotations

import pytest

from backend.rag import (
    DocumentTooLarge,
    Page,
    UnreadableDocument,
    UnsupportedDocument,
    check_upload,
    chunk_pages,
    extract_pages,
    html_to_text,
)
from backend.rag.extract import readable_size
from tests.backend.rag.conftest import make_pdf


@pytest.mark.parametrize("name,kind", [("a.txt", "txt"), ("B.MD", "md"), ("c.html", "html"), ("d.htm", "html"), ("e.pdf", "pdf")])
def test_supported_kinds(name, kind):
    data = make_pdf(["x"]) if kind == "pdf" else b"some text"
    assert check_upload(name, data, 10_000) == kind


@pytest.mark.parametrize("name", ["a.exe", "noext", "", "../etc/passwd.txt", "dir/a.txt", "a.txt.zip", "x" * 300 + ".txt"])
def test_unsupported_names(name):
    with pytest.raises(UnsupportedDocument):
        check_upload(name, b"text", 10_000)


@pytest.mark.parametrize("num_bytes,text", [
    (0, "0 bytes"), (1, "1 byte"), (1023, "1023 bytes"), (1024, "1 KB"), (1536, "1.5 KB"),
    (14859832, "14.2 MB"), (10 * 1024 * 1024, "10 MB"), (1024 * 1024 - 1, "1 MB"), (3 * 1024**3, "3 GB"),
])
def test_readable_size(num_bytes, text):
    assert readable_size(num_bytes) == text


def test_a_refusal_says_sizes_as_people_read_them_and_not_the_name():
    with pytest.raises(DocumentTooLarge) as info:
        check_upload("report.txt", b"x" * 14859832, 10 * 1024 * 1024)
    assert info.value.message == "the file is 14.2 MB; the limit is 10 MB"
    for name, data in (("report.exe", b"text"), ("report.txt", b"  ")):
        with pytest.raises((UnsupportedDocument, UnreadableDocument)) as refused:
            check_upload(name, data, 100)
        assert "report" not in refused.value.message


def test_size_limit_is_inclusive():
    assert check_upload("a.txt", b"x" * 100, 100) == "txt"
    with pytest.raises(DocumentTooLarge) as info:
        check_upload("a.txt", b"x" * 101, 100)
    assert info.value.code == "document_too_large" and "100" in info.value.message


@pytest.mark.parametrize(
    "name,data",
    [
        ("a.txt", b""),
        ("a.txt", b"  \n\t "),
        ("a.txt", b"caf\xe9 latin-1"),
        ("a.md", b"text\x00with nul"),
        ("a.pdf", b"not a pdf at all"),
        ("a.pdf", b"%PDF-1.4\n1 0 obj garbage"),
        ("a.pdf", make_pdf(["cut short"])[:120]),
    ],
)
def test_malformed_uploads_raise_unreadable(name, data):
    with pytest.raises(UnreadableDocument) as info:
        check_upload(name, data, 10_000)
    assert info.value.code == "unreadable_document"


def test_pdf_text_is_extracted_page_by_page():
    pdf = make_pdf(["The walrus sleeps on the ice floe", "Penguins live in the south"])
    pages = extract_pages("pdf", pdf)
    assert [p.number for p in pages] == [1, 2]
    assert "walrus sleeps" in pages[0].text and "Penguins" in pages[1].text
    chunks = chunk_pages(pages, max_tokens=8, overlap_tokens=0)
    assert {c.page for c in chunks} == {1, 2}
    assert all(("Penguins" in c.text) == (c.page == 2) for c in chunks)


def test_pdf_without_text_is_unreadable():
    with pytest.raises(UnreadableDocument, match="no text"):
        extract_pages("pdf", make_pdf([""]))


def test_html_drops_script_style_and_head_and_keeps_headings():
    html = """<!doctype html><html><head><title>T</title><style>p{color:red}</style>
    <script>var secret = "do evil";</script></head><body>
    <h2>Refund &amp; returns</h2><p>Send it back within <b>30</b> days.</p>
    <noscript>enable js</noscript><ul><li>one</li><li>two</li></ul>
    <script type="text/javascript">alert("x")</script></body></html>"""
    text = html_to_text(html)
    assert text.split("\n\n") == ["## Refund & returns", "Send it back within 30 days.", "- one", "- two"]
    for hidden in ("secret", "color", "alert", "enable js", "T\n"):
        assert hidden not in text


def test_html_tags_in_text_are_not_passed_through():
    text = html_to_text("<p>&lt;script&gt;alert(1)&lt;/script&gt; is text here</p>")
    assert text == "<script>alert(1)</script> is text here"  # decoded text, shown as text later


def test_text_keeps_utf8_and_strips_bom():
    pages = extract_pages("txt", "\ufeffcafé ☕\r\nline".encode())
    assert pages == [Page("café ☕\nline")]
