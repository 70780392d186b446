"""Fixtures for the document library: users in a migrated database, a deterministic embedder,
and a PDF writer (a handwritten minimal PDF: one Helvetica text line per page)."""

from __future__ import annotations

import pytest

from backend.models import User
from backend.rag import DocumentService, HashingEmbedder, RagSettings, Retriever


def make_pdf(pages: list[str]) -> bytes:
    """A valid PDF 1.4 with one page per string (ASCII, no parentheses or backslashes)."""
    objects: list[bytes] = []
    n = len(pages)
    font_id = 3 + 2 * n
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    for i, text in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@pytest.fixture
def users(session_factory):
    """Three users: alice and bob (role user), root (admin). Returns their ids by name."""
    with session_factory.begin() as session:
        for name, role in (("alice", "user"), ("bob", "user"), ("root", "admin")):
            session.add(User(id=name, username=name, username_key=name, password_hash="x", role=role))
    return {"alice": "alice", "bob": "bob", "root": "root"}


@pytest.fixture
def embedder():
    return HashingEmbedder()


@pytest.fixture
def rag_settings():
    return RagSettings(max_upload_bytes=20_000, chunk_tokens=60, chunk_overlap=10, min_similarity=-1.0, embed_batch=4)


@pytest.fixture
def documents(session_factory, embedder, rag_settings):
    return DocumentService(session_factory, embedder, rag_settings)


@pytest.fixture
def retriever(session_factory, embedder, rag_settings):
    return Retriever(session_factory, embedder, rag_settings)


@pytest.fixture
def add(documents, users):
    """add(user, name, text) -> the ready DocumentView (upload + synchronous ingest)."""

    def _add(user: str, name: str, text: str | bytes, shared: bool | None = None):
        data = text.encode() if isinstance(text, str) else text
        view = documents.upload(user, name, data, shared=shared)
        return documents.ingest(view.id, data)

    return _add
