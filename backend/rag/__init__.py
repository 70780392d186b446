"""Retrieval-augmented answers over a user's documents (issue 6), torch-free at import time.

Integration (see docs/INTERFACES.md section 7):
    embedder = SentenceTransformerEmbedder()                  # loads the model on first use
    documents = DocumentService(session_factory, embedder, settings)
    documents.recover_interrupted()                           # at start-up (the worker repeats it)
    worker = IngestionWorker(documents)                       # upload off the request path, leased jobs
    retriever = Retriever(session_factory, embedder, settings)
    sources = retriever.search(user_id, question)             # permission-filtered in SQL
    messages, used = build_prompt_with_sources(system, history, sources, count, ctx, max_tokens)
    citations = [citation(n, s) for n, s in enumerate(used, start=1)]
"""

from __future__ import annotations

from backend.rag.chunking import Chunk, approx_token_count, chunk_pages
from backend.rag.documents import DocumentService, DocumentView
from backend.rag.ingestion import IngestionWorker
from backend.rag.jobs import LeaseLost
from backend.rag.embedder import Embedder, HashingEmbedder, SentenceTransformerEmbedder, default_model_path
from backend.rag.errors import DocumentTooLarge, NotAllowed, TooManyPending, UnreadableDocument, UnsupportedDocument
from backend.rag.extract import Page, check_upload, extract_pages, html_to_text
from backend.rag.retrieval import Retriever
from backend.rag.settings import RagSettings
from backend.rag.sources import Source, build_prompt_with_sources, build_sources_block, citation, with_sources
from backend.rag.vector_index import VectorIndex

__all__ = [
    "Chunk", "DocumentService", "DocumentTooLarge", "DocumentView", "Embedder", "HashingEmbedder",
    "IngestionWorker", "LeaseLost", "NotAllowed", "Page", "RagSettings", "Retriever", "SentenceTransformerEmbedder",
    "Source", "TooManyPending", "UnreadableDocument", "UnsupportedDocument", "VectorIndex", "approx_token_count",
    "build_prompt_with_sources", "build_sources_block", "check_upload", "chunk_pages", "citation",
    "default_model_path", "extract_pages", "html_to_text", "with_sources",
]
