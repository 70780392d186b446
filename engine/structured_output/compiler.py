"""Compile StructuredOutputParams once per distinct value, with llguidance, on our tokenizer.

llguidance (Microsoft, MIT; https://github.com/guidance-ai/llguidance) turns a JSON Schema,
regex, choice or Lark/GBNF grammar into an Earley parser over a lexer, and computes, per step,
the set of vocabulary tokens whose bytes keep the output a prefix of the language (chosen over
xgrammar and outlines-core by measurement: docs/BENCHMARKS.md, "Structured output").

`GrammarCompiler.matcher(params)` returns a fresh `GrammarMatcher`; compiled grammars are kept
in a bounded LRU cache keyed by the (frozen, hashable) params, and each request gets a cheap
copy. Thread-safe: `LLMEngine.add_request` compiles on the caller's thread.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict

import llguidance

from engine.errors import InvalidStructuredOutputError
from engine.structured_output.matcher import GrammarMatcher, fill_bitmask, short_error
from engine.structured_output.bitmask import unpack_bitmask_numpy
from engine.structured_output.params import StructuredOutputParams
from engine.structured_output.tool_calls import COMPACT_JSON, compact_schema, tool_call_lark
from engine.tokenizer import Tokenizer

DEFAULT_CACHE_SIZE = 256


def grammar_text(params: StructuredOutputParams) -> str:
    """The llguidance grammar (its JSON "grammars" document) for validated `params`.

    Raises InvalidStructuredOutputError when llguidance rejects the input outright (a GBNF
    grammar it cannot convert). Grammar errors found while compiling are raised by
    GrammarCompiler.matcher.
    """
    kind = params.kind
    if kind == "json":
        return llguidance.LLMatcher.grammar_from_json_schema(
            json.dumps(compact_schema(params.json)), overrides=COMPACT_JSON)
    if kind == "json_object":
        return llguidance.LLMatcher.grammar_from_json_schema(
            {"type": "object"}, overrides=COMPACT_JSON)
    if kind == "regex":
        return llguidance.LLMatcher.grammar_from_regex(params.regex)
    if kind == "choice":
        return llguidance.grammar_from("choice", json.dumps(list(params.choice)))
    if kind == "grammar":
        try:
            return llguidance.grammar_from("grammar", params.grammar)
        except ValueError as exc:
            raise InvalidStructuredOutputError(f"structured_output.grammar: {exc}") from None
    return llguidance.LLMatcher.grammar_from_lark(tool_call_lark(params.tool_calls))


class _TokenizerView:
    """Our Tokenizer in the shape llguidance.TokenizerWrapper reads: token bytes, EOS, BOS,
    special ids, and text -> ids."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.eos_token_id = tokenizer.eos_token_id
        self.bos_token_id = tokenizer.bos_token_id
        self.tokens = [tokenizer.token_bytes(i) for i in range(tokenizer.vocab_size)]
        self.special_token_ids = [i for i in range(tokenizer.vocab_size) if tokenizer.is_special(i)]
        self._tokenizer = tokenizer

    def __call__(self, text: bytes) -> list[int]:
        return self._tokenizer.encode(text.decode("utf-8", errors="replace"))


class GrammarCompiler:
    """Compiles constraints for one tokenizer and logits width.

    tokenizer: the engine's Tokenizer (token_bytes, stop_token_ids). vocab_size: the logits'
    width (may exceed the tokenizer's; the extra ids are never allowed). Every token of
    tokenizer.stop_token_ids (EOS and end-of-turn) is allowed exactly where the grammar may end.
    The llguidance tokenizer is built on first use (about 0.5 s for a 49k vocabulary).
    """

    def __init__(self, tokenizer: Tokenizer, vocab_size: int,
                 cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        self._tokenizer = tokenizer
        self.vocab_size = vocab_size
        self._cache_size = cache_size
        self._cache: OrderedDict[StructuredOutputParams, llguidance.LLMatcher | str] = OrderedDict()
        self._lock = threading.Lock()
        self._ll_tokenizer: llguidance.LLTokenizer | None = None
        self.num_compiles = 0  # cache misses, for tests and stats
        self._matchers: weakref.WeakSet[GrammarMatcher] = weakref.WeakSet()

    @property
    def num_live_matchers(self) -> int:
        """Matchers handed out and still referenced (the engine drops a request's matcher when
        the request finishes or aborts)."""
        return len(self._matchers)

    @property
    def ll_tokenizer(self) -> llguidance.LLTokenizer:
        with self._lock:
            if self._ll_tokenizer is None:
                self._ll_tokenizer = llguidance.LLTokenizer(
                    llguidance.TokenizerWrapper(_TokenizerView(self._tokenizer)),
                    n_vocab=self.vocab_size, eos_token=sorted(self._tokenizer.stop_token_ids))
            return self._ll_tokenizer

    def is_cached(self, params: StructuredOutputParams) -> bool:
        """Whether `params` were compiled (or refused) and are still in the cache."""
        with self._lock:
            return params in self._cache

    def matcher(self, params: StructuredOutputParams) -> GrammarMatcher:
        """A fresh matcher (nothing consumed) for `params` (validated here).

        Raises InvalidStructuredOutputError naming the field and the compiler's reason when
        the constraint cannot be compiled (the failure is cached too).
        """
        params.validate()
        with self._lock:
            compiled = self._cache.get(params)
            if compiled is not None:
                self._cache.move_to_end(params)
        if compiled is None:
            compiled = self._compile(params)
            with self._lock:
                self._cache[params] = compiled
                self._cache.move_to_end(params)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        if isinstance(compiled, str):
            raise InvalidStructuredOutputError(compiled)
        matcher = GrammarMatcher(compiled.deep_copy())
        self._matchers.add(matcher)
        return matcher

    def _compile(self, params: StructuredOutputParams) -> llguidance.LLMatcher | str:
        """The template matcher, or the error message for a constraint that cannot compile
        (one line, library text cut short). For tool calls, each function's arguments schema
        is first compiled and probed on its own (the probe of the whole grammar does not reach
        into the calls), and the first that fails is named:
        "structured_output.tool_calls.functions[i] (name) arguments ..."."""
        self.num_compiles += 1
        if params.tool_calls is not None:
            for i, (name, schema) in enumerate(params.tool_calls.functions):
                alone = self._build(StructuredOutputParams(json=schema))
                if isinstance(alone, str):
                    reason = alone.removeprefix("structured_output.json")
                    return f"structured_output.tool_calls.functions[{i}] ({name}) arguments{reason}"
        return self._build(params)

    def _build(self, params: StructuredOutputParams) -> llguidance.LLMatcher | str:
        where = f"structured_output.{params.kind}"
        try:
            text = grammar_text(params)
        except InvalidStructuredOutputError as exc:
            return short_error(str(exc))
        except ValueError as exc:
            return f"{where}: {short_error(str(exc))}"
        matcher = llguidance.LLMatcher(self.ll_tokenizer, text, log_level=0)
        if matcher.is_error():
            return f"{where} cannot be compiled: {short_error(matcher.get_error())}"
        problem = self._probe(matcher)
        return f"{where} {problem}" if problem else matcher

    def _probe(self, template: llguidance.LLMatcher) -> str | None:
        """Force llguidance's lazy build on this thread, on a copy of `template`: the first
        mask, then one allowed token consumed and the mask after it. Returns why the constraint
        is unusable, or None: it allows no output at all (an empty language: a `$ref` cycle,
        a regex that matches nothing, a grammar rule that never ends), or a build limit is hit
        (too many lexer expressions, parser rows or items)."""
        probe = GrammarMatcher(template.deep_copy())
        stop_ids = self._tokenizer.stop_token_ids
        for step in range(2):
            allowed = unpack_bitmask_numpy(fill_bitmask([probe], self.vocab_size).numpy(),
                                           self.vocab_size)[0]
            empty = "NoExtension" in probe.error or (probe.is_terminated() and not probe.is_accepting())
            if step == 0 and empty:
                return ("allows no output (its language is empty: e.g. a $ref cycle, a regex "
                        "that matches nothing or a rule that never ends)")
            if probe.raw.is_error():
                return f"is too complex: {short_error(probe.error)}"
            tokens = [int(t) for t in allowed.nonzero()[0] if int(t) not in stop_ids]
            if not tokens or step == 1:
                return None  # only the empty output: valid
            if not probe.consume(tokens[0]):
                return f"is too complex: {short_error(probe.error)}"
        return None
