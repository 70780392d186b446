"""Structured output with the rest of the engine (tiny model): mixed batches, preemption by
recompute, abort, EOS placement, stop strings, logprobs, chunked prefill and prefix caching."""

from __future__ import annotations

import gc
import json

import jsonschema
import pytest

from engine import EngineConfig, LLMEngine, SamplingParams, StructuredOutputParams

SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer", "minimum": 0, "maximum": 999},
                   "tag": {"type": "string", "maxLength": 6},
                   "ok": {"type": "boolean"},
                   "kind": {"enum": ["a", "bb", "ccc"]}},
    "required": ["id", "tag", "ok", "kind"], "additionalProperties": False,
}
JSON = StructuredOutputParams(json=json.dumps(SCHEMA))
PROMPTS = ["The capital of France is", "My favourite fruit is", "Water boils at"]


def make_engine(model, num_kv_blocks: int = 256, block_size: int = 16, **kw) -> LLMEngine:
    return LLMEngine(model, EngineConfig(num_kv_blocks=num_kv_blocks, block_size=block_size,
                                         max_model_len=min(1024, num_kv_blocks * block_size), **kw))


def constrained(seed: int, max_tokens: int = 200, **kw) -> SamplingParams:
    return SamplingParams(max_tokens=max_tokens, temperature=1.0, seed=seed, structured_output=JSON, **kw)


def test_mixed_batch_leaves_unconstrained_greedy_outputs_unchanged(tiny_model):
    free = SamplingParams(max_tokens=40, temperature=0)
    alone = [o.new_token_ids for o in make_engine(tiny_model).generate(PROMPTS, free)]
    engine = make_engine(tiny_model)
    mixed = engine.generate(PROMPTS + PROMPTS, [free] * 3 + [constrained(s) for s in range(3)])
    assert [o.new_token_ids for o in mixed[:3]] == alone
    for out in mixed[3:]:
        jsonschema.validate(json.loads(out.text), SCHEMA)
    # The constraint changed the constrained rows (their greedy/sampled text is not the free one).
    assert all(not o.text.startswith(mixed[i].text[:5]) for i, o in enumerate(mixed[3:]))


@pytest.mark.parametrize("prefix_caching", [True, False])
def test_preemption_mid_generation_keeps_valid_identical_output(tiny_model, prefix_caching):
    params = [constrained(seed, max_tokens=90) for seed in range(3)]  # JSON: at most ~75 tokens
    alone = [make_engine(tiny_model).generate(p, q)[0] for p, q in zip(PROMPTS, params)]
    # 30 blocks of 4 = 120 slots for three ~25-token prompts and ~50-token replies: preempts.
    tight = make_engine(tiny_model, num_kv_blocks=30, block_size=4,
                        enable_prefix_caching=prefix_caching)
    outs = tight.generate(PROMPTS, params)
    assert tight.stats().num_preemptions > 0, "the pool was meant to run out"
    for out, ref in zip(outs, alone):
        jsonschema.validate(json.loads(out.text), SCHEMA)
        assert out.new_token_ids == ref.new_token_ids
    gc.collect()
    assert tight.grammar_compiler.num_live_matchers == 0


def test_chunked_prefill_long_prompt(tiny_model):
    engine = make_engine(tiny_model, max_num_batched_tokens=32, long_prefill_token_threshold=16)
    prompt = "x" * 300  # 300 tokens (byte-level): several prefill chunks before the first sample
    out = engine.generate(prompt, constrained(5))[0]
    jsonschema.validate(json.loads(out.text), SCHEMA)


def test_abort_frees_the_matcher(tiny_model):
    engine = make_engine(tiny_model)
    compiler = engine.grammar_compiler
    engine.add_request("a", "hello", constrained(1, n=3))
    engine.add_request("b", "hello", constrained(2))
    for _ in range(4):
        engine.step()
    gc.collect()
    assert compiler.num_live_matchers == 4  # one per sampled sequence (3 + 1)
    engine.abort_request("a")
    engine.abort_request("b")
    finals = [o for o in engine.step() if o.finished]
    assert sorted(o.finish_reason for o in finals) == ["abort"] * 4
    gc.collect()
    assert compiler.num_live_matchers == 0
    assert not engine.has_unfinished_requests()


def test_eos_only_where_the_grammar_may_end(tiny_model):
    """EOS pushed up by +100 is still masked until the regex can end, and taken right then."""
    eos = tiny_model.tokenizer.eos_token_id
    params = SamplingParams(max_tokens=50, temperature=1.0, seed=0, logit_bias={eos: 100.0},
                            structured_output=StructuredOutputParams(regex="[a-z]{3,6}"))
    outs = make_engine(tiny_model).generate(["a", "b", "c"], params)
    for out in outs:
        assert out.finish_reason == "stop"
        assert len(out.text) == 3 and out.text.isalpha()
        assert out.new_token_ids[-1] == eos
    # Without the constraint, the same bias ends the reply at once.
    free = make_engine(tiny_model).generate("a", SamplingParams(max_tokens=5, logit_bias={eos: 100.0}))
    assert free[0].new_token_ids == [eos]


def test_complete_output_finishes_stop_without_eos(tiny_model):
    """A choice that nothing can extend ends the request as soon as it is written."""
    eos = tiny_model.tokenizer.eos_token_id
    params = SamplingParams(max_tokens=50, temperature=1.0, seed=3, logit_bias={eos: -100.0},
                            structured_output=StructuredOutputParams(choice=("abcd",)))
    out = make_engine(tiny_model).generate("q", params)[0]
    assert out.text == "abcd" and out.finish_reason == "stop"
    assert eos not in out.new_token_ids and len(out.new_token_ids) == 4


def test_stop_string_still_cuts_a_constrained_reply(tiny_model):
    params = constrained(4, stop=['"ok"'])
    out = make_engine(tiny_model).generate("q", params)[0]
    assert out.finish_reason == "stop" and '"ok"' not in out.text
    assert out.text.startswith('{"id":') and '"tag":' in out.text


def test_logprobs_stay_raw(tiny_model):
    """The grammar masks what is sampled, not the reported distribution."""
    engine = make_engine(tiny_model)
    free, cons = engine.generate(["hello", "hello"], [
        SamplingParams(max_tokens=1, temperature=0, logprobs=3),
        SamplingParams(max_tokens=1, temperature=0, logprobs=3,
                       structured_output=StructuredOutputParams(choice=("zzz",)))])
    assert cons.new_token_ids == tiny_model.tokenizer.encode("z")
    assert [t.token_id for t in cons.logprobs[0].top] == [t.token_id for t in free.logprobs[0].top]
    assert [t.logprob for t in cons.logprobs[0].top] == pytest.approx(
        [t.logprob for t in free.logprobs[0].top], abs=1e-4)  # batch rounding only
    assert cons.logprobs[0].sampled.token_id != free.new_token_ids[0]


async def test_async_engine_streams_valid_json_and_refuses_bad_constraints(tiny_model):
    from engine import AsyncLLMEngine, InvalidStructuredOutputError
    engine = AsyncLLMEngine(make_engine(tiny_model))
    engine.start()
    try:
        with pytest.raises(InvalidStructuredOutputError, match="structured_output.regex"):
            engine.add_request("bad", "q", SamplingParams(
                structured_output=StructuredOutputParams(regex="(unclosed")))
        assert not engine.engine.has_unfinished_requests()
        events = [out async for out in engine.add_request("ok", "q", constrained(9))]
        assert events[-1].finish_reason == "stop"
        jsonschema.validate(json.loads("".join(e.delta for e in events)), SCHEMA)
    finally:
        engine.shutdown()
