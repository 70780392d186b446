"""Scheduler: decodes first, token budget with chunked prefill, batch size, blocks, preemption."""

from __future__ import annotations

from engine.block_manager import BlockManager
from engine.scheduler import Scheduler
from engine.sequence import SequenceStatus
from tests.engine.test_block_manager import make_seq


def advance(sched: Scheduler):
    """What the engine does after a forward pass: mark the chunk computed, add a token."""
    out = sched.schedule()
    for item in out.scheduled:
        sampling = item.is_sampling
        item.seq.num_computed_tokens += item.num_new_tokens
        if sampling:
            item.seq.output_token_ids.append(7)
    return out


def test_decodes_come_before_new_prefills():
    sched = Scheduler(BlockManager(64, 4), max_num_seqs=8, max_num_batched_tokens=64)
    a = make_seq(5, "a")
    sched.add(a)
    advance(sched)
    b = make_seq(6, "b")
    sched.add(b)
    out = sched.schedule()
    assert [(i.seq.request_id, i.num_new_tokens) for i in out.scheduled] == [("a", 1), ("b", 6)]
    assert all(i.is_sampling for i in out.scheduled)


def test_long_prompt_is_prefilled_in_chunks_within_the_budget():
    sched = Scheduler(BlockManager(64, 4), max_num_seqs=8, max_num_batched_tokens=32)
    seq = make_seq(100)
    sched.add(seq)
    chunks, sampled = [], []
    while not seq.output_token_ids:
        out = sched.schedule()
        assert out.num_batched_tokens <= 32
        item = out.scheduled[0]
        chunks.append(item.num_new_tokens)
        sampled.append(item.is_sampling)
        seq.num_computed_tokens += item.num_new_tokens
        if sampled[-1]:
            seq.output_token_ids.append(1)
    assert chunks == [32, 32, 32, 4] and sampled == [False, False, False, True]
    assert len(seq.block_table) == 25  # 100 tokens / 4, the sampled token gets its slot next step


def test_budget_is_shared_by_decodes_and_prefill_chunks():
    sched = Scheduler(BlockManager(64, 4), max_num_seqs=8, max_num_batched_tokens=10)
    a, b = make_seq(3, "a"), make_seq(3, "b")
    sched.add(a)
    sched.add(b)
    advance(sched)  # both prefilled (6 tokens)
    c = make_seq(20, "c")
    sched.add(c)
    out = sched.schedule()
    assert [(i.seq.request_id, i.num_new_tokens) for i in out.scheduled] == [("a", 1), ("b", 1), ("c", 8)]
    assert not out.scheduled[2].is_sampling


def test_prefill_cap_applies_only_while_decoders_share_the_step():
    sched = Scheduler(BlockManager(128, 4), max_num_seqs=8, max_num_batched_tokens=64,
                      max_prefill_tokens_during_decode=8)
    alone = make_seq(100, "alone")
    sched.add(alone)
    out = advance(sched)
    # No decoder yet: the prompt takes the whole budget.
    assert [(i.seq.request_id, i.num_new_tokens) for i in out.scheduled] == [("alone", 64)]
    advance(sched)  # the last 36 prompt tokens; it samples its first token
    assert alone.output_token_ids
    b, c = make_seq(30, "b"), make_seq(30, "c")
    sched.add(b)
    sched.add(c)
    chunks = []
    while not b.output_token_ids:
        out = advance(sched)
        prefill = [(i.seq.request_id, i.num_new_tokens) for i in out.scheduled if i.seq is not alone]
        assert sum(n for _, n in prefill) <= 8, prefill   # both prompts together, not each
        assert any(i.seq is alone for i in out.scheduled)  # the decoder runs every step
        chunks.append(prefill)
    assert chunks[0] == [("b", 8)] and chunks[3] == [("b", 6), ("c", 2)]


def test_max_num_seqs_bounds_the_running_batch():
    sched = Scheduler(BlockManager(64, 4), max_num_seqs=2, max_num_batched_tokens=100)
    for i in range(3):
        sched.add(make_seq(2, f"s{i}"))
    out = advance(sched)
    assert [i.seq.request_id for i in out.scheduled] == ["s0", "s1"]
    assert [s.request_id for s in sched.waiting] == ["s2"]
    sched.finish(sched.running[0], "stop")
    out = advance(sched)
    assert [i.seq.request_id for i in out.scheduled] == ["s1", "s2"]


def test_waiting_request_waits_for_free_blocks_in_arrival_order():
    bm = BlockManager(4, 4)
    sched = Scheduler(bm, max_num_seqs=8, max_num_batched_tokens=100)
    big, small = make_seq(12, "big"), make_seq(5, "small")
    sched.add(make_seq(8, "first"))
    sched.add(big)
    sched.add(small)
    out = advance(sched)
    # "big" needs 3 blocks, 2 are free; "small" may not jump ahead of it.
    assert [i.seq.request_id for i in out.scheduled] == ["first"]
    assert bm.num_free_blocks == 2
    sched.finish(sched.running[0], "stop")
    assert bm.num_free_blocks == 4
    out = advance(sched)
    assert [i.seq.request_id for i in out.scheduled] == ["big"]
    assert [s.request_id for s in sched.waiting] == ["small"]


def test_pool_exhaustion_preempts_the_most_recent_by_recompute():
    bm = BlockManager(4, 4)
    sched = Scheduler(bm, max_num_seqs=8, max_num_batched_tokens=100)
    old, new = make_seq(4, "old"), make_seq(4, "new")
    sched.add(old)
    sched.add(new)
    advance(sched)  # 2 blocks each... after the first token each needs a fifth slot
    assert bm.num_free_blocks == 2
    advance(sched)  # both take their second block
    assert bm.num_free_blocks == 0
    for _ in range(3):
        advance(sched)  # fill the second blocks
    out = sched.schedule()  # both need a third block; only preemption can make room
    assert [s.request_id for s in out.preempted] == ["new"]
    assert [i.seq.request_id for i in out.scheduled] == ["old"]
    assert new.status is SequenceStatus.WAITING and new.block_table == [] and new.num_computed_tokens == 0
    # 4 prompt tokens + 5 sampled: 8 computed, the 9th needs a third block.
    assert sched.waiting[0] is new and new.num_output_tokens == 5  # kept for recompute
    assert len(old.block_table) == 3


def test_finish_and_clear_return_every_block():
    bm = BlockManager(16, 4)
    sched = Scheduler(bm, max_num_seqs=8, max_num_batched_tokens=100)
    seqs = [make_seq(5, f"s{i}") for i in range(3)]
    for s in seqs:
        sched.add(s)
    advance(sched)
    sched.finish(seqs[1], "abort")
    assert seqs[1].status is SequenceStatus.FINISHED and seqs[1].finish_reason == "abort"
    assert bm.num_free_blocks == 16 - 4
    sched.clear()
    assert bm.num_free_blocks == 16 and not sched.has_unfinished()


def _run_with_cache(sched: Scheduler, steps: int) -> None:
    """advance(), plus registering the blocks each step wrote, as the engine does."""
    for _ in range(steps):
        out = sched.schedule()
        for item in out.scheduled:
            sampling = item.is_sampling
            item.seq.num_computed_tokens += item.num_new_tokens
            sched.block_manager.cache_full_blocks(item.seq)
            if sampling:
                item.seq.output_token_ids.append(7)


def test_parallel_samples_share_the_prompts_blocks():
    # n > 1: samples after the first wait at the head of the queue until the first sample's
    # full prompt blocks are cached, then take them by reference instead of recomputing them.
    bm = BlockManager(64, 4)
    sched = Scheduler(bm, max_num_seqs=8, max_num_batched_tokens=64, long_prefill_token_threshold=4)
    samples = [make_seq(10, f"r#{i}") for i in range(3)]
    for i, seq in enumerate(samples):
        seq.parent_request_id, seq.sample_index = "r", i
        sched.add(seq)
    _run_with_cache(sched, 4)   # r#0 prefills 4 + 4 + 2 tokens; its 2 full blocks are cached
    assert all(s in sched.running for s in samples)
    shared = samples[0].block_table[:2]
    assert all(s.block_table[:2] == shared for s in samples)
    assert all(bm.blocks[b].ref_count == 3 for b in shared)
    assert bm.num_used_blocks == 2 + 3   # the shared prefix, plus one block of its own each
    assert bm.prefix_cache_hits == 2 * 8
    bm.check_invariants([s.block_table for s in samples])


def test_samples_of_different_requests_do_not_wait_for_each_other():
    bm = BlockManager(64, 4)
    sched = Scheduler(bm, max_num_seqs=8, max_num_batched_tokens=64)
    a, b = make_seq(10, "a#0"), make_seq(10, "b#0")
    a.parent_request_id, b.parent_request_id = "a", "b"
    sched.add(a)
    sched.add(b)
    out = sched.schedule()
    assert [i.seq.request_id for i in out.scheduled] == ["a#0", "b#0"]
