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
flushes the held incomplete bytes as U+FFFD, so the final text equals
``tokenizer.decode(ids, skip_special_tokens=True)`` when no stop string matched.

Two ways to turn tokens into text, chosen by the tokenizer's `byte_level`:
- byte-level BPE (GPT-2, Llama 3, SmolLM2): a token's text never depends on its neighbours, so
  each token's bytes go through an incremental UTF-8 decoder (Python's ``errors="replace"``,
  the same replacement as the `tokenizers` library's lossy decoding);
- any other decoder (SentencePiece-style: Metaspace, or Replace("▁", " ") + ByteFallback + Fuse +
  Strip(" ", 1, 0)) strips the space in front of the sequence's first token only, and decodes a
  run of byte-fallback tokens as one: the tokenizer's own decode() runs over a short window (the
  tokens last shown, as context, then the new ones) and the text beyond the context's is the
  delta, as vLLM and TGI do. Two decodes of a few tokens per token. One exception to the
  equality with decode(): a byte-fallback run that is not valid UTF-8 decodes to one U+FFFD per
  byte of the whole run, which may reach back over characters already shown; the stream keeps
  those and replaces the invalid bytes as the byte-level path does.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from typing import Protocol


class TokenBytesSource(Protocol):
    """What the detokenizer needs of a tokenizer (engine.tokenizer.Tokenizer). An object with
    no `byte_level` attribute counts as byte-level; `decode` is needed only when it is False."""

    def token_bytes(self, token_id: int) -> bytes: ...
    def is_special(self, token_id: int) -> bool: ...


class _ByteText:
    """Text of byte-level tokens: an incremental UTF-8 decoder over their bytes."""

    def __init__(self, tokenizer: TokenBytesSource) -> None:
        self._token_bytes = tokenizer.token_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def push(self, token_id: int) -> str:
        return self._decoder.decode(self._token_bytes(token_id))

    def flush(self) -> str:
        return self._decoder.decode(b"", final=True)


class _WindowText:
    """Text of tokens whose decoding depends on their neighbours, through the tokenizer's
    decode() over a window: `_ids[:_read]` were shown (the context; `_shown` is their text
    decoded alone), `_ids[_read:]` are held while they end inside a character. The window
    restarts after each delta, so it holds the tokens last shown and at most 3 byte-fallback
    tokens of an incomplete character.

    The held tokens' bytes also go through an incremental UTF-8 decoder: it tells whether they
    end inside a character (a text that ends in U+FFFD may be a real U+FFFD), and its text is
    the delta when an invalid byte run changed the context's decoding."""

    def __init__(self, tokenizer: TokenBytesSource) -> None:
        self._decode = tokenizer.decode  # type: ignore[attr-defined]
        self._token_bytes = tokenizer.token_bytes
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._ids: list[int] = []
        self._read = 0
        self._shown = ""
        self._held_text = ""  # the held tokens' bytes, decoded

    def push(self, token_id: int) -> str:
        self._ids.append(token_id)
        self._held_text += self._utf8.decode(self._token_bytes(token_id))
        if self._utf8.getstate()[0]:
            return ""  # inside a character split over byte-fallback tokens
        return self._show(self._decode(self._ids))

    def flush(self) -> str:
        self._held_text += self._utf8.decode(b"", final=True)
        if self._read == len(self._ids):
            return ""
        return self._show(self._decode(self._ids))

    def _show(self, text: str) -> str:
        """Hand out the window's text (`text`) beyond the context's; the held tokens become the
        next context."""
        delta = text[len(self._shown):] if text.startswith(self._shown) else self._held_text
        self._ids = self._ids[self._read:]
        self._read = len(self._ids)
        self._shown = self._decode(self._ids)
        self._held_text = ""
        return delta


class IncrementalDetokenizer:
    """Per-request detokenizer state. `add_token` and `finish` return the new delta (may be "")."""

    def __init__(self, tokenizer: TokenBytesSource, stop: Sequence[str] = (),
                 min_tokens: int = 0) -> None:
        self._tokenizer = tokenizer
        self._pieces = _ByteText(tokenizer) if getattr(tokenizer, "byte_level", True) else _WindowText(tokenizer)
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
        piece = "" if self._tokenizer.is_special(token_id) else self._pieces.push(token_id)
        return self._advance(piece, final=False)

    def finish(self) -> str:
        """Generation ended: release held text (incomplete bytes become U+FFFD)."""
        if self.finished:
            return ""
        return self._advance(self._pieces.flush(), final=True)

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
