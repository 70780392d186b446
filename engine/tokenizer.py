"""Tokenizer over the `tokenizers` library, built from GGUF metadata or a `tokenizer.json`.

For a GGUF file the byte-level BPE is rebuilt from `tokenizer.ggml.tokens`, `.merges`,
`.token_type` and `.pre`, the way transformers' GGUF loader builds its reference tokenizer
(`transformers/integrations/gguf/gguf_tokenizer_mapping.py`), so ids match it exactly.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from tokenizers import AddedToken, Regex, decoders, models, pre_tokenizers
from tokenizers import Tokenizer as BackendTokenizer

from engine.errors import ModelLoadError

# llama.cpp token types (GGUF `tokenizer.ggml.token_type`).
_TOKEN_TYPE_CONTROL = 3
_TOKEN_TYPE_USER_DEFINED = 4

# Tokens that end a turn or a document in common chat models; each one present in the vocabulary
# stops generation, besides the declared EOS.
_END_OF_TURN_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>",
                       "<end_of_turn>", "<|end|>", "</s>")

# Split regexes for `tokenizer.ggml.pre` values whose pre-tokenizer is not GPT-2's, as transformers
# applies them (Split, then ByteLevel without its own regex). Any other value gets GPT-2's
# ByteLevel regex, as in transformers. Note: for `smollm`, llama.cpp (and the model's original
# tokenizer.json) also splits digits one by one first; transformers does not, and we follow
# transformers, the reference. The two differ only on a whitespace run directly before a digit.
_LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_PRE_TOKENIZER_SPLITS = {
    "llama3": _LLAMA3_SPLIT, "llama-v3": _LLAMA3_SPLIT, "llama-bpe": _LLAMA3_SPLIT,
    "smaug-bpe": _LLAMA3_SPLIT, "dbrx": _LLAMA3_SPLIT,
}


@lru_cache(maxsize=1)
def byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from each byte to a printable character (Radford et al. 2019,
    `encoder.py`): printable Latin-1 bytes map to themselves, the rest to U+0100 onwards."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


class Tokenizer:
    """Text <-> token ids for one model.

    Attributes: bos_token_id / bos_token (None if the model has none), eos_token_id / eos_token,
    stop_token_ids (EOS plus end-of-turn tokens), vocab_size (including added tokens),
    add_bos_token (a raw prompt starts with BOS: `encode(text, add_special_tokens=True)`),
    byte_level (decode() is the UTF-8 decoding of the joined `token_bytes`, with no context:
    true for byte-level BPE, false for SentencePiece-style decoders, whose text depends on the
    position in the sequence).
    """

    def __init__(self, backend: BackendTokenizer, *, bos_token: str | None, eos_token: str,
                 extra_stop_tokens: Sequence[str] = (), add_bos_token: bool = False) -> None:
        self._backend = backend
        # A twin that reads special-token text ("<|im_start|>") as plain text: for text a user
        # typed, which is data, never control. A separate object, because the flag is state
        # and encode() is called from several threads.
        self._literal_backend = BackendTokenizer.from_str(backend.to_str())
        self._literal_backend.encode_special_tokens = True
        self.vocab_size: int = backend.get_vocab_size(with_added_tokens=True)
        self.bos_token = bos_token
        self.eos_token = eos_token
        self.bos_token_id = None if bos_token is None else self._require_id(bos_token)
        self.add_bos_token = add_bos_token and self.bos_token_id is not None
        self.eos_token_id: int = self._require_id(eos_token)
        added = backend.get_added_tokens_decoder()  # id -> AddedToken
        self._special_ids = frozenset(i for i, t in added.items() if t.special)
        self._added_texts = tuple(t.content for t in added.values() if t.content)
        stops = {self.eos_token_id}
        for token in (*_END_OF_TURN_TOKENS, *extra_stop_tokens):
            token_id = backend.token_to_id(token)
            if token_id is not None:
                stops.add(token_id)
        self.stop_token_ids: frozenset[int] = frozenset(stops)
        decoder = json.loads(backend.to_str()).get("decoder") or {}
        self.byte_level: bool = decoder.get("type") == "ByteLevel"
        self._token_bytes = self._build_token_bytes(added)

    def _require_id(self, token: str) -> int:
        token_id = self._backend.token_to_id(token)
        if token_id is None:
            raise ModelLoadError(f"tokenizer: special token {token!r} is not in the vocabulary")
        return token_id

    def _build_token_bytes(self, added: dict[int, Any]) -> list[bytes]:
        unbyte = {c: b for b, c in byte_to_unicode().items()}
        out: list[bytes] = []
        for token_id in range(self.vocab_size):
            piece = self._backend.id_to_token(token_id)
            if piece is None:
                out.append(b"")
            elif token_id in added:
                out.append(added[token_id].content.encode("utf-8"))
            elif self.byte_level:
                out.append(bytes(unbyte[c] for c in piece) if all(c in unbyte for c in piece)
                           else piece.encode("utf-8"))
            elif len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
                out.append(bytes([int(piece[3:5], 16)]))  # SentencePiece byte fallback
            else:
                out.append(piece.replace("\u2581", " ").encode("utf-8"))
        return out

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_gguf_metadata(cls, meta: dict[str, Any]) -> Tokenizer:
        """Build from GGUF tokenizer metadata: a dict of the `tokenizer.ggml.*` keys
        (tokens, token_type, merges, model, pre, bos_token_id, eos_token_id, add_bos_token,
        eot_token_id, eom_token_id). Only byte-level BPE (`model == "gpt2"`) is supported.
        Raises ModelLoadError otherwise or when keys are missing."""
        kind = meta.get("model")
        if kind != "gpt2":
            raise ModelLoadError(f"GGUF tokenizer model {kind!r} is not supported (only byte-level BPE 'gpt2')")
        tokens, merges = meta.get("tokens"), meta.get("merges")
        if not tokens or merges is None or meta.get("eos_token_id") is None:
            raise ModelLoadError("GGUF tokenizer metadata lacks tokens, merges or eos_token_id")
        token_types = meta.get("token_type") or [1] * len(tokens)
        alphabet = set(byte_to_unicode().values())
        spelled = [t if set(t) <= alphabet else "".join(byte_to_unicode()[b] for b in t.encode("utf-8"))
                   for t in tokens]
        vocab = {t: i for i, t in enumerate(spelled)}
        pairs = [tuple(m.split(" ")) for m in merges]
        if any(len(p) != 2 for p in pairs):
            raise ModelLoadError("GGUF tokenizer: a merge is not of the form 'left right'")
        backend = BackendTokenizer(models.BPE(vocab, pairs, fuse_unk=False, byte_fallback=False))
        split = _PRE_TOKENIZER_SPLITS.get(meta.get("pre") or "")
        if split is None:
            backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        else:
            backend.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Split(Regex(split), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        backend.decoder = decoders.ByteLevel()
        # Control tokens become specials (matched whole, skippable on decode); a control token
        # spelled outside the byte alphabet is a llama.cpp mislabel and is left alone, as in transformers.
        backend.add_special_tokens([AddedToken(t, special=True, normalized=False)
                                    for t, kind_ in zip(tokens, token_types)
                                    if kind_ == _TOKEN_TYPE_CONTROL and set(t) <= alphabet])
        backend.add_tokens([AddedToken(t, special=False, normalized=False)
                            for t, kind_ in zip(tokens, token_types)
                            if kind_ == _TOKEN_TYPE_USER_DEFINED and t in vocab])
        bos_id = meta.get("bos_token_id")
        bos = tokens[bos_id] if bos_id is not None and bos_id < len(tokens) else None
        extra = [tokens[i] for key in ("eot_token_id", "eom_token_id")
                 if (i := meta.get(key)) is not None and i < len(tokens)]
        # `tokenizer.ggml.add_bos_token` as llama.cpp reads it; absent counts as false (llama.cpp
        # defaults a few BPE pre-tokenizers to true, but its converter always writes the key).
        return cls(backend, bos_token=bos, eos_token=tokens[meta["eos_token_id"]], extra_stop_tokens=extra,
                   add_bos_token=bool(meta.get("add_bos_token")))

    @classmethod
    def from_hf_dir(cls, path: str, tokenizer_config: dict[str, Any],
                    extra_stop_ids: Sequence[int] = ()) -> Tokenizer:
        """Build from `<path>/tokenizer.json`; special tokens named in `tokenizer_config`
        (the parsed tokenizer_config.json). Whether a raw prompt gets BOS as llama.cpp's
        converter (gguf-py `SpecialVocab`) and transformers 4's Llama tokenizer decide:
        tokenizer_config's `add_bos_token` when it is given, else whether tokenizer.json's
        post-processor adds BOS (transformers 5 reads the post-processor only; the two differ
        only where the files disagree). Raises ModelLoadError if the file is missing/invalid."""
        file = os.path.join(path, "tokenizer.json")
        try:
            backend = BackendTokenizer.from_file(file)
        except Exception as e:
            raise ModelLoadError(f"cannot load tokenizer {file}: {e}") from e
        bos, eos = _token_text(tokenizer_config.get("bos_token")), _token_text(tokenizer_config.get("eos_token"))
        if eos is None:
            raise ModelLoadError(f"{path}/tokenizer_config.json names no eos_token")
        extra = [t for i in extra_stop_ids if (t := backend.id_to_token(i)) is not None]
        add_bos = tokenizer_config.get("add_bos_token")
        if not isinstance(add_bos, bool):
            add_bos = _post_processor_adds(backend, bos)
        return cls(backend, bos_token=bos, eos_token=eos, extra_stop_tokens=extra, add_bos_token=add_bos)

    # -- use --------------------------------------------------------------------------------

    def encode(self, text: str, add_special_tokens: bool = False,
               parse_special: bool = True) -> list[int]:
        """Token ids of `text`.

        add_special_tokens: for a raw prompt; starts the ids with BOS when the model asks for it
        (`add_bos_token`, as llama.cpp and vLLM do), unless they already start with it (text that
        begins with the BOS text, parsed): never two BOS. Off for a rendered chat template, which
        writes its own BOS where the model wants one (transformers' apply_chat_template).
        No other special token (EOS) is added.

        parse_special True: special tokens written in the text (e.g. "<|im_start|>") become
        their special ids, as transformers' tokenizer(text) does for a rendered chat template.
        False: they are tokenized as ordinary text (for untrusted content inside a prompt).
        """
        backend = self._backend if parse_special else self._literal_backend
        ids = backend.encode(text, add_special_tokens=False).ids
        if add_special_tokens and self.add_bos_token and ids[:1] != [self.bos_token_id]:
            ids.insert(0, self.bos_token_id)
        return ids

    def contains_added_token_text(self, text: str) -> bool:
        """Whether `text` spells an added/special token (e.g. "<|im_end|>"), which encode()
        with parse_special=True would turn into that token."""
        return any(token in text for token in self._added_texts)

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        """Text of `ids`; byte sequences that are not valid UTF-8 decode to U+FFFD."""
        return self._backend.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def token_bytes(self, token_id: int) -> bytes:
        """Raw bytes of one token (for byte-level BPE, possibly part of a UTF-8 character);
        for special/added tokens their UTF-8 text. Raises IndexError for an id out of range."""
        if not 0 <= token_id < self.vocab_size:
            raise IndexError(f"token id {token_id} out of range [0, {self.vocab_size})")
        return self._token_bytes[token_id]

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_ids

    def token_to_id(self, token: str) -> int | None:
        return self._backend.token_to_id(token)


def _post_processor_adds(backend: BackendTokenizer, token: str | None) -> bool:
    """Whether the tokenizer's post-processor puts `token` in front of an encoding."""
    token_id = None if token is None else backend.token_to_id(token)
    if token_id is None:
        return False
    probe = "a"
    return (backend.encode(probe, add_special_tokens=True).ids[:1] == [token_id]
            and backend.encode(probe, add_special_tokens=False).ids[:1] != [token_id])


def _token_text(value: Any) -> str | None:
    """tokenizer_config.json writes a special token as a string or as {"content": ...}."""
    if isinstance(value, dict):
        return value.get("content")
    return value
