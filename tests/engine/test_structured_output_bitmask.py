"""The token bitmask against a brute-force check over the whole vocabulary.

Oracle (independent of llguidance): each grammar here is also written as a Python `regex`
pattern over ASCII text. After a prefix, a non-special token is allowed iff prefix + its bytes
is a prefix of a full match (`regex.fullmatch(..., partial=True)`); an EOS / end-of-turn token
iff the prefix is a full match; any other special token never. The mask must be a subset of
that; the one allowed difference is llguidance's canonical tokenization of forced text (after
`{` of a schema whose object must start `{"a":`, the mask holds `{"` but not `{`): a missing
token must be a shorter piece of the forced bytes than an allowed token. Walks pick random allowed
tokens (seeded) and compare the mask at every step; the tiny model's byte-level tokenizer
(259 tokens) at every step to the end, the real SmolLM2 tokenizer (49,152) at the first steps.
"""

from __future__ import annotations

import json
import random

import pytest
import regex
import torch

from engine.structured_output import StructuredOutputParams
from engine.structured_output.bitmask import apply_bitmask, unpack_bitmask
from engine.structured_output.compiler import GrammarCompiler
from engine.structured_output.matcher import fill_bitmask

CASES = {
    "regex": (StructuredOutputParams(regex=r"[a-c]{1,3}-(x|yz)[0-9]?"),
              r"[a-c]{1,3}-(x|yz)[0-9]?"),
    "choice": (StructuredOutputParams(choice=("no", "nope", "yes", "y e s")),
               r"no|nope|yes|y e s"),
    "json_schema": (StructuredOutputParams(json=json.dumps({
        "type": "object",
        "properties": {"a": {"enum": ["x", "yz"]},
                       "n": {"type": "integer", "minimum": 0, "maximum": 20},
                       "b": {"type": "boolean"}},
        "required": ["a", "n", "b"], "additionalProperties": False})),
        r'\{"a":("x"|"yz"),"n":([0-9]|1[0-9]|20),"b":(true|false)\}'),
    "lark": (StructuredOutputParams(grammar='start: "(" item ("," item)* ")"\n'
                                            'item: atom | "[" atom (" " atom)* "]"\n'
                                            'atom: "a" | "bb" | NUM\nNUM: /[1-9][0-9]*/\n'),
             r"\((a|bb|[1-9][0-9]*|\[(a|bb|[1-9][0-9]*)( (a|bb|[1-9][0-9]*))*\])"
             r"(,(a|bb|[1-9][0-9]*|\[(a|bb|[1-9][0-9]*)( (a|bb|[1-9][0-9]*))*\]))*\)"),
}


def oracle_mask(tokenizer, vocab_size: int, pattern: str, prefix: bytes) -> set[int]:
    text = prefix.decode("latin-1")
    allowed = set()
    for t in range(vocab_size):
        if t in tokenizer.stop_token_ids:
            if regex.fullmatch(pattern, text):
                allowed.add(t)
        elif not tokenizer.is_special(t):
            piece = tokenizer.token_bytes(t)
            if piece and regex.fullmatch(pattern, text + piece.decode("latin-1"), partial=True):
                allowed.add(t)
    return allowed


def engine_mask(matcher, vocab_size: int) -> set[int]:
    """The tokens left finite when the sampler applies the matcher's bitmask to row 1 of a
    batch of 3 (rows 0 and 2 must stay untouched); the torch unpacking (the CUDA path) must
    agree with it."""
    bitmask = fill_bitmask([matcher], vocab_size)
    logits = torch.zeros(3, vocab_size)
    apply_bitmask(logits, [1], bitmask)
    assert not logits[0].any() and not logits[2].any()
    allowed = set(torch.isfinite(logits[1]).nonzero().flatten().tolist())
    assert set(unpack_bitmask(bitmask, vocab_size)[0].nonzero().flatten().tolist()) == allowed
    return allowed


def walk_and_compare(compiler, tokenizer, params, pattern, steps: int | None, seed: int) -> int:
    """Compare masks along one random valid walk; returns the number of steps compared."""
    rng = random.Random(seed)
    matcher = compiler.matcher(params)
    prefix = b""
    compared = 0
    while steps is None or compared < steps:
        expected = oracle_mask(tokenizer, compiler.vocab_size, pattern, prefix)
        got = engine_mask(matcher, compiler.vocab_size)
        assert got <= expected, f"after {prefix!r}: engine-only {sorted(got - expected)[:10]}"
        # llguidance leaves out a shorter token for text the grammar forces when a longer
        # token of that text is allowed (it keeps forced text to its canonical tokens). Only
        # those may be missing.
        forced = matcher.raw.compute_ff_bytes()
        for t in expected - got:
            piece = tokenizer.token_bytes(t)
            assert forced.startswith(piece) and any(
                len(tokenizer.token_bytes(u)) > len(piece) and forced.startswith(
                    tokenizer.token_bytes(u)) for u in got), (
                f"after {prefix!r}: token {t} ({piece!r}) missing from the mask")
        compared += 1
        stops = expected & tokenizer.stop_token_ids
        if stops and (rng.random() < 0.3 or expected == stops):
            assert matcher.consume(min(stops)) and matcher.is_terminated()
            break
        token = rng.choice(sorted(expected - tokenizer.stop_token_ids))
        assert matcher.consume(token)
        prefix += tokenizer.token_bytes(token)
    return compared


@pytest.mark.parametrize("case", sorted(CASES))
def test_tiny_tokenizer_every_step(tiny_model, case):
    tokenizer = tiny_model.tokenizer
    compiler = GrammarCompiler(tokenizer, tiny_model.config.vocab_size)
    params, pattern = CASES[case]
    for seed in range(6):
        assert walk_and_compare(compiler, tokenizer, params, pattern, steps=None, seed=seed) > 1


@pytest.fixture(scope="module")
def real_tokenizer(gguf_path):
    from engine import gguf_loader
    from engine.loader import _gguf_tokenizer
    return _gguf_tokenizer(gguf_loader.open_gguf(gguf_path))


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_real_tokenizer_first_steps(real_tokenizer, case):
    compiler = GrammarCompiler(real_tokenizer, real_tokenizer.vocab_size)
    params, pattern = CASES[case]
    for seed in range(2):
        walk_and_compare(compiler, real_tokenizer, params, pattern, steps=4, seed=seed)


def test_rollback_restores_the_mask(tiny_model):
    """The matcher's rollback (used if a sequence ever drops output tokens) gives back the
    earlier state's mask exactly, and the same tokens are accepted again."""
    tokenizer = tiny_model.tokenizer
    vocab = tiny_model.config.vocab_size
    compiler = GrammarCompiler(tokenizer, vocab)
    params, pattern = CASES["json_schema"]
    matcher = compiler.matcher(params)
    ids = tokenizer.encode('{"a":"yz","n":1')
    masks = []
    for t in ids:
        masks.append(engine_mask(matcher, vocab))
        assert matcher.consume(t)
    matcher.rollback(4)
    assert matcher.num_consumed == len(ids) - 4
    assert engine_mask(matcher, vocab) == masks[len(ids) - 4]
    for t in ids[len(ids) - 4:]:  # the same tokens again, then a valid ending
        assert matcher.consume(t)
    for t in tokenizer.encode(',"b":false}'):
        assert matcher.consume(t)
    assert matcher.is_accepting()

