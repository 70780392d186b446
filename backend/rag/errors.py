"""Typed errors of the document library, with stable codes (web/ maps them to HTTP)."""

from __future__ import annotations

from backend.errors import DomainError


class UnsupportedDocument(DomainError):
    """The file's extension is not one of .txt .md .html .pdf (or it has no name)."""

    code = "unsupported_document"
    default_message = "only .txt, .md, .html and .pdf documents can be uploaded"


class DocumentTooLarge(DomainError):
    """The file is larger than the upload limit."""

    code = "document_too_large"
    default_message = "the document is too large"


class UnreadableDocument(DomainError):
    """The bytes are not what the extension says (not UTF-8 text, a broken or encrypted PDF) or
    hold no text at all."""

    code = "unreadable_document"
    default_message = "the document could not be read"


class NotAllowed(DomainError):
    """The action needs a role the user does not have (sharing needs an admin)."""

    code = "forbidden"
    default_message = "not allowed"


class TooManyPending(DomainError):
    """The user already has the most documents waiting to be indexed that one user may have."""

    code = "too_many_documents_processing"
    default_message = "too many documents are being processed; wait for them to finish"
