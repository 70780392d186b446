"""Chunked prefill: the same greedy tokens whatever the chunk size, and running decoders get a
token every step while a long prompt prefills."""

from __future__ import annotations

import pytest

from engine.block_manager import BlockManager
from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams
from engine.scheduler import Scheduler
from tests.engine.test_block_manager import make_seq

LONG_TEXT = ("The river wound through the valley, past the old mill and the stone bridge, "
             "where children fished on summer evenings and the baker's cart crossed at dawn. ") * 4


def make_engine(loaded_model, **kwargs) -> LLMEngine:
    return LLMEngine(loaded_model, EngineConfig(num_kv_blocks=64, max_model_len=1024,
                                                enable_prefix_caching=False, **kwargs))


def test_threshold_caps_one_sequences_chunk_and_the_budget_caps_the_step():
    sched = Scheduler(BlockManager(64, 4), max_num_seqs=8, max_num_batched_tokens=40,
                      long_prefill_token_threshold=16)
    a, b, c = make_seq(50, "a"), make_seq(50, "b"), make_seq(50, "c")
    for seq in (a, b, c):
        sched.add(seq)
    out = sched.schedule()
    assert [(i.seq.request_id, i.num_new_tokens) for i in out.scheduled] == [("a", 16), ("b", 16), ("c", 8)]


@pytest.mark.slow
def test_same_greedy_tokens_with_chunk_sizes_16_64_and_unlimited(engine_model):
    prompt = engine_model.tokenizer.encode(LONG_TEXT)
    assert len(prompt) > 128
    params = SamplingParams(max_tokens=8, temperature=0, ignore_eos=True)
    results = {}
    for chunk in (16, 64, None):
        engine = make_engine(engine_model, long_prefill_token_threshold=chunk)
        steps_to_first_token = 0
        engine.add_request("long", prompt, params)
        tokens = []
        while engine.has_unfinished_requests():
            outs = engine.step()
            if not tokens:
                steps_to_first_token += 1
            tokens += [t for o in outs for t in o.new_token_ids]
        results[chunk] = (tokens, steps_to_first_token)
    assert results[16][0] == results[64][0] == results[None][0]
    assert [results[c][1] for c in (16, 64, None)] == [-(-len(prompt) // 16), -(-len(prompt) // 64), 1]


@pytest.mark.slow
def test_decoders_get_a_token_every_step_during_a_long_prefill(loaded_model):
    engine = make_engine(loaded_model, max_num_batched_tokens=32, long_prefill_token_threshold=16)
    decoders = ["d1", "d2"]
    for rid in decoders:
        engine.add_request(rid, "Once upon a time", SamplingParams(max_tokens=60, temperature=0, ignore_eos=True))
    engine.step()  # both prefill (short prompts) and sample their first token
    prompt = loaded_model.tokenizer.encode(LONG_TEXT)
    engine.add_request("long", prompt, SamplingParams(max_tokens=1, temperature=0))
    prefill_steps = 0
    while True:
        outs = engine.step()
        got = {o.request_id for o in outs}
        assert set(decoders) <= got, f"a decoder missed a step: {got}"
        prefill_steps += 1
        if "long" in got:
            break
    # 30 tokens of budget left after two decodes, 16 at most per chunk.
    assert prefill_steps == -(-len(prompt) // 16)


@pytest.mark.slow
def test_prefill_cap_during_decode_keeps_decoders_stepping_and_tokens_identical(engine_model):
    """With max_prefill_tokens_during_decode the long prompt prefills 24 tokens per step while
    the decoders run, and every request's greedy tokens equal those of an uncapped engine."""
    prompt = engine_model.tokenizer.encode(LONG_TEXT)
    results = {}
    for cap in (24, None):
        engine = make_engine(engine_model, max_num_batched_tokens=512, max_prefill_tokens_during_decode=cap)
        for rid in ("d1", "d2"):
            engine.add_request(rid, "Once upon a time", SamplingParams(max_tokens=40, temperature=0, ignore_eos=True))
        engine.step()
        engine.add_request("long", prompt, SamplingParams(max_tokens=4, temperature=0, ignore_eos=True))
        tokens: dict[str, list[int]] = {}
        steps_to_long = 0
        while engine.has_unfinished_requests():
            outs = engine.step()
            if "long" not in tokens:
                steps_to_long += 1
            for o in outs:
                tokens.setdefault(o.request_id, []).extend(o.new_token_ids)
        results[cap] = (tokens, steps_to_long)
    assert results[24][0] == results[None][0]
    assert results[24][1] == -(-len(prompt) // 24) and results[None][1] == 1
