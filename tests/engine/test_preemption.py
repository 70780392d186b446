"""Preemption by recompute: the most recent running sequence goes back to the front of the
queue, outputs equal run-alone outputs, the pool comes back whole, and nothing livelocks."""

from __future__ import annotations

import pytest

from engine.block_manager import BlockManager
from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams
from engine.scheduler import Scheduler
from engine.sequence import SequenceStatus
from tests.engine.test_block_manager import make_seq
from tests.engine.test_scheduler import advance


def test_victim_is_the_most_recently_admitted_even_if_already_scheduled_this_step():
    bm = BlockManager(4, 4)
    sched = Scheduler(bm, max_num_seqs=8, max_num_batched_tokens=100, long_prefill_token_threshold=4)
    old, new = make_seq(12, "old"), make_seq(4, "new")
    sched.add(old)
    sched.add(new)
    advance(sched)          # old: 4 of 12 prefilled; new: prefilled and sampled. 1 block each
    advance(sched)          # new decodes (2nd block), old prefills 4 more (2nd block): pool empty
    assert bm.num_free_blocks == 0
    out = sched.schedule()  # new's decode fits its block and is scheduled first; old needs a 3rd
    assert [s.request_id for s in out.preempted] == ["new"]
    assert [(i.seq.request_id, i.num_new_tokens) for i in out.scheduled] == [("old", 4)]
    assert sched.waiting[0] is new and new.status is SequenceStatus.WAITING and not new.block_table
    assert new.num_computed_tokens == 0 and new.num_output_tokens == 2  # kept for recompute
    assert sched.num_preemptions == 1
    bm.check_invariants([old.block_table])


def make_engine(engine_model, num_kv_blocks: int, **kwargs) -> LLMEngine:
    return LLMEngine(engine_model, EngineConfig(num_kv_blocks=num_kv_blocks, block_size=4,
                                                max_model_len=num_kv_blocks * 4, **kwargs))


PROMPTS = ["The capital of France is", "My favourite fruit is", "Water boils at"]
PARAMS = SamplingParams(max_tokens=12, temperature=0, ignore_eos=True)


@pytest.fixture(scope="module")
def run_alone(engine_model) -> list[list[int]]:
    roomy = make_engine(engine_model, 64, enable_prefix_caching=False)
    return [roomy.generate(p, PARAMS)[0].new_token_ids for p in PROMPTS]


@pytest.mark.slow
@pytest.mark.parametrize("prefix_caching", [True, False])
def test_preempted_requests_match_their_run_alone_output(engine_model, run_alone, prefix_caching):
    tight = make_engine(engine_model, 10, enable_prefix_caching=prefix_caching)  # 40 slots, ~50 tokens
    start = tight.num_free_blocks()
    outs = tight.generate(PROMPTS, PARAMS)
    stats = tight.stats()
    assert stats.num_preemptions > 0, "the pool was meant to run out"
    assert [o.new_token_ids for o in outs] == run_alone
    assert tight.num_free_blocks() == start == 10 and stats.num_kv_blocks_used == 0
    if prefix_caching:  # distinct prompts: every hit is a preempted request re-using its own blocks
        assert stats.prefix_cache_hits > 0


@pytest.mark.slow
def test_one_request_needing_the_whole_pool_still_finishes_among_others(engine_model, run_alone):
    engine = make_engine(engine_model, 7)  # 28 slots = max_model_len
    hog = engine_model.tokenizer.encode("Once upon a time")
    hog_params = SamplingParams(max_tokens=28 - len(hog), temperature=0, ignore_eos=True)
    outs = engine.generate([hog] + PROMPTS, [hog_params] + [PARAMS] * len(PROMPTS))
    assert outs[0].num_prompt_tokens + outs[0].num_output_tokens == 28
    assert all(o.finish_reason == "length" for o in outs)
    assert [o.new_token_ids for o in outs[1:]] == run_alone
    alone = make_engine(engine_model, 7).generate(hog, hog_params)[0]
    assert outs[0].new_token_ids == alone.new_token_ids
    assert engine.stats().num_preemptions > 0 and engine.num_free_blocks() == 7
