"""Generations under a constraint on the tiny model (random weights: without the constraint its
output is noise, so a valid output is the constraint's doing), sampled at temperature 1 with
seeds."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from engine import EngineConfig, LLMEngine, SamplingParams, StructuredOutputParams

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "score": {"type": "number", "minimum": -1, "maximum": 1},
        "kind": {"enum": ["cat", "dog", "bird"]},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}, "maxItems": 3},
        "owner": {"type": "object", "properties": {"id": {"type": "integer"},
                                                    "vip": {"type": "boolean"}},
                  "required": ["id", "vip"], "additionalProperties": False},
    },
    "required": ["name", "age", "kind", "owner"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def engine(tiny_model) -> LLMEngine:
    return LLMEngine(tiny_model, EngineConfig(num_kv_blocks=256, block_size=16, max_model_len=1024))


def sampled(so: StructuredOutputParams, max_tokens: int = 400, **kw) -> SamplingParams:
    return SamplingParams(max_tokens=max_tokens, temperature=1.0, structured_output=so, **kw)


def test_unconstrained_tiny_model_output_is_not_json(engine):
    """The oracle's premise: without the constraint the same sampling gives no valid JSON."""
    outs = engine.generate(["Give me JSON:"] * 4,
                           [SamplingParams(max_tokens=60, temperature=1.0, seed=s) for s in range(4)])
    for out in outs:
        with pytest.raises(ValueError):
            json.loads(out.text)


def test_json_schema_outputs_validate(engine):
    so = StructuredOutputParams(json=json.dumps(SCHEMA))
    outs = engine.generate(["Give me JSON:"] * 8, [sampled(so, seed=s) for s in range(8)])
    for out in outs:
        assert out.finish_reason == "stop", out.text
        jsonschema.validate(json.loads(out.text), SCHEMA)
        assert out.text == json.dumps(json.loads(out.text), separators=(",", ":"),
                                      ensure_ascii=False)  # compact, one spelling
    assert len({o.text for o in outs}) > 1  # the seeds matter: sampled, not forced


def test_json_object(engine):
    outs = engine.generate(["x"] * 4, [sampled(StructuredOutputParams(json_object=True),
                                               max_tokens=60, seed=s) for s in range(4)])
    for out in outs:
        if out.finish_reason == "stop":
            assert isinstance(json.loads(out.text), dict)
        else:  # a random model may write a long object; the prefix is still an object's
            assert out.finish_reason == "length" and out.text.startswith("{")


def test_choice(engine):
    choices = ("yes", "no", "maybe so", "n")
    outs = engine.generate(["?"] * 12, [sampled(StructuredOutputParams(choice=choices), seed=s)
                                        for s in range(12)])
    assert all(o.text in choices and o.finish_reason == "stop" for o in outs)


def test_regex_full_match(engine):
    pattern = r"[A-Z][a-z]{2,5}-[0-9]{3}(\.[0-9])?"
    outs = engine.generate(["id:"] * 8, [sampled(StructuredOutputParams(regex=pattern), seed=s)
                                         for s in range(8)])
    for out in outs:
        assert re.fullmatch(pattern, out.text), out.text
        assert out.finish_reason == "stop"


def test_the_agent_answer_pattern_never_begins_with_a_tag(engine):
    # backend.agent.answer.ANSWER_PATTERN: the answer after tool results may not open with "<"
    # (SmolLM2-135M repeated its <tool_response> block): with every token that starts with "<"
    # favoured by +100, free replies start with a tag and constrained ones never do.
    from backend.agent.answer import ANSWER_PATTERN

    vocab = engine.tokenizer
    tags = {i: 100.0 for i in range(vocab.vocab_size) if i not in vocab.stop_token_ids
            and vocab.decode([i], skip_special_tokens=True).lstrip().startswith("<")}
    prompt = "<tool_response>"
    free = engine.generate([prompt] * 8, [SamplingParams(max_tokens=8, temperature=1.0, seed=s, logit_bias=tags)
                                          for s in range(8)])
    assert all(out.text.lstrip().startswith("<") for out in free), [out.text for out in free]
    outs = engine.generate([prompt] * 8, [sampled(StructuredOutputParams(regex=ANSWER_PATTERN), max_tokens=8, seed=s,
                                                  logit_bias=tags) for s in range(8)])
    for out in outs:
        assert out.text.strip() and not out.text.lstrip().startswith("<"), repr(out.text)
    # nor holds one later ("The result: <tool_response> name: search_documents ...", new-user pass); "<12" is kept
    import re
    for kept in ("Children <12 go free; a < b.", "Use cout << x;", "Email <team@acme.com>", "See the </div> tag",
                 "for (i=0; i<total; i++)", "x <", "a and <to", "a <tooth>"):
        assert re.fullmatch(ANSWER_PATTERN, kept), kept
    for leaked in ("The result: <tool_response> name: search_documents", "Done.</tool_response>", "x <tool_call>",
                   "a <<tool_call>"):
        assert re.fullmatch(ANSWER_PATTERN, leaked) is None, leaked
    outs = engine.generate([prompt] * 8, [sampled(StructuredOutputParams(regex=ANSWER_PATTERN), max_tokens=12, seed=s,
                                                  logit_bias=tags) for s in range(8)])
    for out in outs:
        assert "<t" not in out.text and "</" not in out.text, repr(out.text)
    # nor opens as the prompt's restated question or its result (blind sets 85-92: "Question: How can I pay ...
    # Result: ... name: search_documents" was the answer); other words of those letters are kept
    for echoed in ("Question: How can I pay you?", " Result: 4 passages", "Result:"):
        assert re.fullmatch(ANSWER_PATTERN, echoed) is None, echoed
    for kept in ("Questions are welcome.", "Results are posted weekly.", "Q", "Quite so.", "Re-booking is free."):
        assert re.fullmatch(ANSWER_PATTERN, kept), kept
    echo = {i: 100.0 for i in range(vocab.vocab_size) if i not in vocab.stop_token_ids
            and vocab.decode([i], skip_special_tokens=True).lstrip().startswith(("Question", "Result"))}
    outs = engine.generate([prompt] * 4, [sampled(StructuredOutputParams(regex=ANSWER_PATTERN), max_tokens=8, seed=s,
                                                  logit_bias=echo) for s in range(4)])
    for out in outs:
        assert not out.text.lstrip().startswith(("Question:", "Result:")), repr(out.text)


def test_lark_and_gbnf_grammars(engine):
    lark = 'start: "(" expr ")"\nexpr: NUM | NUM "+" NUM | NUM "+" NUM "+" NUM\nNUM: /[1-9][0-9]?/\n'
    gbnf = 'root ::= "(" expr ")"\nexpr ::= num | num "+" num | num "+" num "+" num\nnum ::= [1-9] [0-9]?\n'
    for grammar in (lark, gbnf):
        outs = engine.generate(["sum:"] * 4, [sampled(StructuredOutputParams(grammar=grammar),
                                                      max_tokens=200, seed=s) for s in range(4)])
        for out in outs:
            assert re.fullmatch(r"\([1-9][0-9]?(\+[1-9][0-9]?){0,2}\)", out.text), out.text
            assert out.finish_reason == "stop"


def test_n_samples_each_valid_and_different(engine):
    so = StructuredOutputParams(json=json.dumps(SCHEMA))
    outs = engine.generate("Give me JSON:", sampled(so, n=4, seed=7))
    assert [o.index for o in outs] == [0, 1, 2, 3]
    for out in outs:
        jsonschema.validate(json.loads(out.text), SCHEMA)
    assert len({o.text for o in outs}) > 1
