"""Compare grammar libraries for structured output on our tokenizer (SmolLM2's GGUF, 49,152 ids).

    .venv/bin/pip install xgrammar==0.2.9 outlines-core==0.2.14   # only for this comparison
    .venv/bin/python scripts/compare_grammar_libraries.py [--libs llguidance,xgrammar,outlines]

For each library: vocabulary setup time; compile time of four JSON Schemas (nested objects,
enums, arrays, bounded numbers, required fields); mask time per token along the canonical
tokenization of a valid instance of each (median and max); correctness against an oracle
independent of every library: along a valid instance of a small schema, at every step, the
set of allowed tokens vs a brute-force check over the whole vocabulary (a token is valid iff
prefix + its bytes is a prefix of a match of the schema's regex, `regex` partial match; EOS iff
the prefix is a full match). "unsafe" counts allowed tokens the oracle refuses (would let an
invalid output through); "missing" counts valid tokens left out. All in compact JSON (no free
whitespace). The engine uses llguidance (docs/BENCHMARKS.md, "Structured output").
Results are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import regex
import torch

from engine import gguf_loader
from engine.loader import _gguf_tokenizer, default_model_path

SCHEMAS = {
    "nested": {"type": "object", "properties": {
        "user": {"type": "object", "properties": {
            "name": {"type": "string"}, "address": {"type": "object", "properties": {
                "city": {"type": "string"}, "zip": {"type": "string"}},
                "required": ["city", "zip"]}}, "required": ["name", "address"]},
        "active": {"type": "boolean"}}, "required": ["user", "active"]},
    "enums": {"type": "object", "properties": {
        "color": {"enum": ["red", "green", "blue"]},
        "size": {"enum": ["S", "M", "L", "XL"]}}, "required": ["color", "size"]},
    "arrays": {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5},
        "points": {"type": "array", "items": {"type": "integer"}}}, "required": ["tags", "points"]},
    "bounded": {"type": "object", "properties": {
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "id": {"type": "string", "maxLength": 8}}, "required": ["age", "score", "id"]},
}
INSTANCES = {
    "nested": {"user": {"name": "Ada Lovelace", "address": {"city": "London", "zip": "NW1"}},
               "active": True},
    "enums": {"color": "green", "size": "XL"},
    "arrays": {"tags": ["a", "bc", "hello world"], "points": [1, 22, 333, -4]},
    "bounded": {"age": 36, "score": 0.75, "id": "x1y2"},
}
ORACLE_SCHEMA = {"type": "object", "properties": {
    "a": {"enum": ["x", "yz"]}, "n": {"type": "integer", "minimum": 0, "maximum": 20},
    "b": {"type": "boolean"}}, "required": ["a", "n", "b"], "additionalProperties": False}
ORACLE_REGEX = r'\{"a":("x"|"yz"),"n":([0-9]|1[0-9]|20),"b":(true|false)\}'
ORACLE_INSTANCES = ['{"a":"yz","n":17,"b":true}', '{"a":"x","n":0,"b":false}']


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"))


class Library:
    """setup(tokenizer) -> None; compile(schema dict) -> grammar; matcher(grammar) -> m;
    mask(m) -> set of allowed ids; timed_mask(m) (fill only); accept(m, token)."""


class LLGuidance(Library):
    name = "llguidance 1.9.1"

    def setup(self, tok):
        from engine.structured_output.compiler import GrammarCompiler
        from engine.structured_output.matcher import fill_bitmask, unpack_bitmask
        self.compiler = GrammarCompiler(tok, tok.vocab_size, cache_size=0)
        self.compiler.ll_tokenizer  # built now, timed as setup
        self.fill, self.unpack, self.vocab = fill_bitmask, unpack_bitmask, tok.vocab_size

    def compile(self, schema):
        from engine.structured_output import StructuredOutputParams
        return StructuredOutputParams(json=json.dumps(schema)), self.compiler.matcher(
            StructuredOutputParams(json=json.dumps(schema)))

    def matcher(self, grammar):
        return self.compiler.matcher(grammar[0])

    def timed_mask(self, m):
        return self.fill([m], self.vocab)

    def mask(self, m):
        return set(self.unpack(self.fill([m], self.vocab), self.vocab)[0].nonzero().flatten().tolist())

    def accept(self, m, t):
        return m.consume(t)


class XGrammar(Library):
    name = "xgrammar 0.2.9"

    def setup(self, tok):
        import xgrammar as xgr
        self.xgr = xgr
        vocab = [b"" if tok.is_special(i) and i not in tok.stop_token_ids else tok.token_bytes(i)
                 for i in range(tok.vocab_size)]
        self.info = xgr.TokenizerInfo(vocab, xgr.VocabType.RAW, vocab_size=tok.vocab_size,
                                      stop_token_ids=sorted(tok.stop_token_ids))
        self.compiler = xgr.GrammarCompiler(self.info, max_threads=1, cache_enabled=False)
        self.bitmask = xgr.allocate_token_bitmask(1, tok.vocab_size)
        self.vocab = tok.vocab_size

    def compile(self, schema):
        return self.compiler.compile_json_schema(json.dumps(schema), any_whitespace=False,
                                                 separators=(",", ":"))

    def matcher(self, grammar):
        return self.xgr.GrammarMatcher(grammar)

    def timed_mask(self, m):
        m.fill_next_token_bitmask(self.bitmask)

    def mask(self, m):
        m.fill_next_token_bitmask(self.bitmask)
        bits = (self.bitmask[0][:, None] >> torch.arange(32, dtype=torch.int32)) & 1
        return set(bits.flatten()[:self.vocab].nonzero().flatten().tolist())

    def accept(self, m, t):
        return m.accept_token(t)


class OutlinesCore(Library):
    name = "outlines-core 0.2.14"

    def setup(self, tok):
        import outlines_core as oc
        from outlines_core.json_schema import build_regex_from_schema
        self.oc, self.build = oc, build_regex_from_schema
        table: dict[bytes, list[int]] = {}
        for i in range(tok.vocab_size):
            if not tok.is_special(i) and tok.token_bytes(i):
                table.setdefault(tok.token_bytes(i), []).append(i)
        self.eos = tok.eos_token_id
        self.vocabulary = oc.Vocabulary(self.eos, table)
        self.vocab = tok.vocab_size

    def compile(self, schema):
        return self.oc.Index(self.build(json.dumps(schema), whitespace_pattern=""), self.vocabulary)

    def matcher(self, grammar):
        return self.oc.Guide(grammar)

    def timed_mask(self, m):
        return m.get_tokens()

    def mask(self, m):
        return set(m.get_tokens())

    def accept(self, m, t):
        m.advance(t)
        return True


def oracle(tok, prefix: bytes) -> set[int]:
    text = prefix.decode("latin-1")
    out = set()
    for t in range(tok.vocab_size):
        if t in tok.stop_token_ids:
            if regex.fullmatch(ORACLE_REGEX, text):
                out.add(t)
        elif not tok.is_special(t) and tok.token_bytes(t) and regex.fullmatch(
                ORACLE_REGEX, text + tok.token_bytes(t).decode("latin-1"), partial=True):
            out.add(t)
    return out


def measure(lib: Library, tok) -> dict:
    t0 = time.perf_counter()
    lib.setup(tok)
    row = {"library": lib.name, "setup_s": time.perf_counter() - t0}
    fills = []
    for name, schema in SCHEMAS.items():
        t0 = time.perf_counter()
        grammar = lib.compile(schema)
        row[f"compile_{name}_ms"] = 1000 * (time.perf_counter() - t0)
        m = lib.matcher(grammar)
        for t in tok.encode(compact(INSTANCES[name])):
            t0 = time.perf_counter()
            lib.timed_mask(m)
            fills.append(time.perf_counter() - t0)
            if not lib.accept(m, t):
                row["error"] = f"{name}: refused token {t}"
                break
    row["mask_median_ms"] = 1000 * statistics.median(fills)
    row["mask_max_ms"] = 1000 * max(fills)
    unsafe = missing = steps = 0
    grammar = lib.compile(ORACLE_SCHEMA)
    for instance in ORACLE_INSTANCES:
        m = lib.matcher(grammar)
        prefix = b""
        for t in tok.encode(instance) + [tok.eos_token_id]:
            got, want = lib.mask(m), oracle(tok, prefix)
            unsafe += len(got - want)
            missing += len(want - got)
            steps += 1
            if t == tok.eos_token_id:
                break
            lib.accept(m, t)
            prefix += tok.token_bytes(t)
    row.update(unsafe=unsafe, missing=missing, oracle_steps=steps)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--libs", default="llguidance,xgrammar,outlines")
    args = parser.parse_args()
    tok = _gguf_tokenizer(gguf_loader.open_gguf(default_model_path()))
    libs = {"llguidance": LLGuidance, "xgrammar": XGrammar, "outlines": OutlinesCore}
    rows = []
    for key in args.libs.split(","):
        try:
            rows.append(measure(libs[key](), tok))
        except Exception as exc:  # noqa: BLE001 - a missing library is a row, not a crash
            rows.append({"library": key, "error": repr(exc)[:200]})
        print(json.dumps(rows[-1]), file=sys.stderr)
    cols = ["library", "setup_s", *[f"compile_{n}_ms" for n in SCHEMAS], "mask_median_ms",
            "mask_max_ms", "unsafe", "missing", "oracle_steps", "error"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        print("| " + " | ".join(f"{row[c]:.3g}" if isinstance(row.get(c), float)
                                else str(row.get(c, "")) for c in cols) + " |")


if __name__ == "__main__":
    main()
