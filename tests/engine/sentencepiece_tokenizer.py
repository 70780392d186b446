"""A small SentencePiece-style tokenizer written as a Hugging Face directory, for tests.

`write_sentencepiece_tokenizer(path, add_bos_token=...)` writes tokenizer.json and
tokenizer_config.json the way Llama 2 / Mistral ship them: a BPE with byte fallback (`<0x00>`
.. `<0xFF>` at ids 3..258 after `<unk>`, `<s>`, `</s>`), "▁" for a space and one "▁" put in
front of the text, and the decoder Sequence[Replace("▁", " "), ByteFallback, Fuse,
Strip(" ", 1, 0)], whose Strip removes that space in front of the whole sequence only.
`style`: "metaspace" (a Metaspace pre-tokenizer, prepend_scheme "first": Mistral, and
transformers' Llama conversion; it prepends no "▁" to text that starts with a space) or
"normalizer" (Llama 2's tokenizer.json: normalizers Prepend("▁") + Replace(" ", "▁"), always).
The merges are trained on a few ASCII sentences, so accented letters, CJK and emoji go through
byte fallback. tokenizer.json's post-processor adds `<s>` (as Llama's does) only when
`post_processor_bos` is true; `add_bos_token` None leaves the key out of tokenizer_config.json.
"""

from __future__ import annotations

import json
import os

from tokenizers import (AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors,
                        trainers)

SPECIALS = ("<unk>", "<s>", "</s>")
CORPUS = [
    "Please list three colours that go well together.",
    "Sure! Here are three colours: red, green and blue.",
    "  indented code\n    return value\n\tif x == 1:\n        pass",
    "The quick brown fox jumps over the lazy dog, and then it sleeps.",
    "def main():\n    print('hello world')\n    return 0\n",
    "Numbers 0123456789 and punctuation .,;:!?()[]{}<>'\"-_+=*/\\|@#$%^&~`",
]


def write_sentencepiece_tokenizer(path: str | os.PathLike, *, style: str = "metaspace",
                                  add_bos_token: bool | None = True, post_processor_bos: bool = True) -> str:
    """Write the tokenizer into directory `path` (created if needed); returns `path` as str."""
    path = os.fspath(path)
    os.makedirs(path, exist_ok=True)
    trained = Tokenizer(models.BPE(unk_token="<unk>"))
    trained.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    trained.train_from_iterator(CORPUS * 4, trainers.BpeTrainer(vocab_size=300, show_progress=False))
    learned = json.loads(trained.to_str())["model"]
    vocab = {t: i for i, t in enumerate(SPECIALS)}
    vocab.update({f"<0x{b:02X}>": len(SPECIALS) + b for b in range(256)})
    for token in sorted(learned["vocab"], key=learned["vocab"].get):
        vocab.setdefault(token, len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in learned["merges"]]

    tok = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    if style == "metaspace":
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    elif style == "normalizer":
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    else:
        raise ValueError(f"unknown style {style!r}")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIALS])
    if post_processor_bos:
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    tok.save(os.path.join(path, "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
              "unk_token": "<unk>"}
    if add_bos_token is not None:
        config["add_bos_token"] = add_bos_token
    with open(os.path.join(path, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=1)
    return path
