"""Incremental detokenization: token ids in, safe text deltas out.

Guarantees, for every sequence of token ids:
- a delta never holds a broken UTF-8 character: bytes of a character split across byte-level
  tokens are held until the character is complete;
- a delta never holds any part of a stop string: a suffix of the text that could still grow
  into a stop string is held back; when a stop string appears, the text is cut just before it
  and `stopped` becomes true;
- the joined deltas equal `text` exactly.

Special tokens (EOS, <|im_start|>, ...) add no text, like ``decode(..., skip_special_tokens=True)``.
Invalid byte sequences become U+FFFD as soon as they are known to be invalid.

When generation ends mid-character (the length limit, an abort, a stop token), `finish()`
flushes the held incomplete bytes as U+FFFD (Python's ``errors="replace"``), so the final text
equals ``tokenizer.decode(ids, skip_special_tokens=True)`` when no stop string matched.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from typing import Protocol


class TokenBytesSource(Protocol):
    def token_bytes(self, token_id: int) -> bytes: ...
    def is_special(self, token_id: int) -> bool: ...


class IncrementalDetokenizer:
    """Per-request detokenizer state. `add_token` and `finish` return the new delta (may be "")."""

    def __init__(self, tokenizer: TokenBytesSource, stop: Sequence[str] = (),
                 min_tokens: int = 0) -> None:
        self._tokenizer = tokenizer
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        # Stop strings count only from the min_tokens-th token on (SamplingParams.min_tokens):
        # until then text is emitted without hold-back, so a match can start only after it.
        self._stop_strings = tuple(stop)
        self._stop: tuple[str, ...] = () if min_tokens > 0 else tuple(stop)
        self._min_tokens = min_tokens
        self._num_tokens = 0
        self._decoded = ""    # every complete character decoded so far (cut at a stop match)
        self._num_emitted = 0  # characters of _decoded already handed out as deltas
        self.stopped = False   # a stop string matched
        self.finished = False

    @property
    def text(self) -> str:
        """All text emitted so far (the joined deltas)."""
        return self._decoded[:self._num_emitted]

    def add_token(self, token_id: int) -> str:
        """Feed one generated token; returns the text that is now safe to show."""
        if self.finished:
            return ""
        self._num_tokens += 1
        if self._num_tokens == self._min_tokens:
            self._stop = self._stop_strings
        piece = "" if self._tokenizer.is_special(token_id) else \
            self._decoder.decode(self._tokenizer.token_bytes(token_id))
        return self._advance(piece, final=False)

    def finish(self) -> str:
        """Generation ended: release held text (incomplete bytes become U+FFFD)."""
        if self.finished:
            return ""
        return self._advance(self._decoder.decode(b"", final=True), final=True)

    def _advance(self, piece: str, final: bool) -> str:
        self._decoded += piece
        if self._stop:
            cut = self._find_stop()
            if cut is not None:
                self._decoded = self._decoded[:cut]
                self.stopped = True
                final = True
        end = len(self._decoded) if final else len(self._decoded) - self._held_suffix_len()
        delta = self._decoded[self._num_emitted:end]
        self._num_emitted = max(self._num_emitted, end)
        self.finished = final
        return delta

    def _find_stop(self) -> int | None:
        # Emitted text can hold no part of a stop string, so a match starts at or after it.
        hits = [i for s in self._stop if (i := self._decoded.find(s, self._num_emitted)) >= 0]
        return min(hits) if hits else None

    def _held_suffix_len(self) -> int:
        """Length of the longest unemitted suffix that is a proper prefix of a stop string."""
        pending = len(self._decoded) - self._num_emitted
        best = 0
        for s in self._stop:
            for k in range(min(len(s) - 1, pending), best, -1):
                if self._decoded.endswith(s[:k]):
                    best = k
                    break
        return best
