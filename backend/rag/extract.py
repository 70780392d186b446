"""From uploaded bytes to text: .txt and .md as UTF-8, .html through a tag-aware walk (no script
or style text), .pdf page by page through pypdf.

Every result is Markdown-shaped text: HTML headings become `#` lines and block elements become
paragraphs, so one chunker serves every kind. Untrusted bytes go into pypdf; whatever it raises
on them becomes UnreadableDocument, never a crash of the caller.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import PurePath

from backend.rag.errors import DocumentTooLarge, UnreadableDocument, UnsupportedDocument

KINDS = {".txt": "txt", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".pdf": "pdf"}
NAME_MAX = 255


@dataclass(frozen=True)
class Page:
    """A run of Markdown-shaped text; number: 1-based PDF page (None for other kinds)."""

    text: str
    number: int | None = None


def document_kind(filename: str) -> str:
    """"txt" | "md" | "html" | "pdf" from the file name's extension (case-insensitive).

    Raises:
        UnsupportedDocument: no name, a name over 255 characters or with a path in it, or
            another extension.
    """
    if not filename or len(filename) > NAME_MAX or PurePath(filename).name != filename or "\\" in filename:
        raise UnsupportedDocument("the document needs a plain file name (at most 255 characters)")
    kind = KINDS.get(PurePath(filename).suffix.lower())
    if kind is None:
        raise UnsupportedDocument("only .txt, .md, .html and .pdf documents can be uploaded")
    return kind


def readable_size(num_bytes: int) -> str:
    """A size as people read it, in binary multiples with at most one decimal:
    512 -> "512 bytes", 1536 -> "1.5 KB", 14859832 -> "14.2 MB", 10485760 -> "10 MB"."""
    if num_bytes < 1024:
        return f"{num_bytes} byte{'' if num_bytes == 1 else 's'}"
    size, unit = float(num_bytes), "bytes"
    for unit in ("KB", "MB", "GB", "TB"):
        size /= 1024
        if round(size, 1) < 1024:
            break
    return f"{size:.1f}".removesuffix(".0") + " " + unit


def check_upload(filename: str, data: bytes, max_bytes: int) -> str:
    """Cheap checks fit for the request path; returns the kind. The messages do not repeat the
    file's name: whoever shows them names the file once (static/documents.js).

    Raises:
        UnsupportedDocument: see `document_kind`.
        DocumentTooLarge: len(data) > max_bytes.
        UnreadableDocument: empty; text that is not UTF-8 or holds NUL bytes; a PDF whose header,
            cross-reference table or encryption pypdf cannot get past.
    """
    kind = document_kind(filename)
    if len(data) > max_bytes:
        size, limit = readable_size(len(data)), readable_size(max_bytes)
        raise DocumentTooLarge(f"the file is {size}; the limit is {limit}" if size != limit
                               else f"the file is over the limit of {limit}")
    if not data.strip():
        raise UnreadableDocument("the file is empty")
    if kind == "pdf":
        _open_pdf(data)
    else:
        _decode(data)
    return kind


def extract_pages(kind: str, data: bytes) -> list[Page]:
    """The document's text. PDFs give one Page per page (numbered from 1); others one Page.

    Raises:
        UnreadableDocument: the bytes cannot be decoded or parsed, or hold no text.
    """
    if kind == "pdf":
        pages = _pdf_pages(data)
    elif kind == "html":
        pages = [Page(html_to_text(_decode(data)))]
    else:
        pages = [Page(_decode(data).replace("\r\n", "\n").replace("\r", "\n"))]
    if not any(page.text.strip() for page in pages):
        raise UnreadableDocument("the document holds no text" + (" (a scanned PDF?)" if kind == "pdf" else ""))
    return pages


def _decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableDocument(f"not UTF-8 text (byte {exc.start})") from None
    if "\x00" in text:
        raise UnreadableDocument("binary data, not text")
    return text


def _open_pdf(data: bytes):  # type: ignore[no-untyped-def]
    from pypdf import PdfReader

    if b"%PDF-" not in data[:1024]:
        raise UnreadableDocument("not a PDF file (no %PDF- header)")
    # pypdf logs every repair it makes on a damaged file; the caller gets one typed error instead.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableDocument("the PDF is encrypted")
        len(reader.pages)
    except UnreadableDocument:
        raise
    except Exception as exc:  # pypdf raises many types on hostile input; all mean "unreadable".
        raise UnreadableDocument(f"a damaged PDF ({type(exc).__name__})") from None
    return reader


def _pdf_pages(data: bytes) -> list[Page]:
    reader = _open_pdf(data)
    pages = []
    for number, page in enumerate(reader.pages, start=1):
        try:
            text = page.extract_text() or ""
        except Exception as exc:  # same boundary as _open_pdf
            raise UnreadableDocument(f"page {number} of the PDF could not be read ({type(exc).__name__})") from None
        pages.append(Page(text.replace("\r\n", "\n"), number))
    return pages


_SKIP = frozenset({"script", "style", "noscript", "template", "head", "svg", "math", "iframe", "object"})
_BLOCK = frozenset({
    "p", "div", "section", "article", "main", "aside", "header", "footer", "nav", "blockquote",
    "pre", "ul", "ol", "li", "table", "tr", "dl", "dt", "dd", "figure", "figcaption", "hr",
    "form", "fieldset", "address", "details", "summary", "body", "html",
})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "track", "wbr"})


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.current: list[str] = []
        self.skip_depth = 0
        self.heading: int | None = None

    def flush(self) -> None:
        text = re.sub(r"\s+", " ", "".join(self.current)).strip()
        self.current = []
        if not text:
            return
        if self.heading is not None:
            text = "#" * self.heading + " " + text
        self.blocks.append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            if tag not in _VOID:
                self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if tag in _HEADINGS:
            self.flush()
            self.heading = _HEADINGS[tag]
        elif tag in _BLOCK:
            self.flush()
            if tag == "li":
                self.current.append("- ")
        elif tag == "br":
            self.current.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        if tag in _HEADINGS:
            self.flush()
            self.heading = None
        elif tag in _BLOCK:
            self.flush()

    def handle_data(self, data: str) -> None:
        if not self.skip_depth:
            self.current.append(data)


def html_to_text(html: str) -> str:
    """Visible text of an HTML page as Markdown-shaped paragraphs: h1..h6 become `#` lines,
    block elements end paragraphs, text inside script/style/head/template is dropped.
    Character references are decoded; tags are never passed through."""
    collector = _TextCollector()
    collector.feed(html)
    collector.close()
    collector.flush()
    return "\n\n".join(collector.blocks)
