"""BlockManager: block tables grow by whole blocks, grants never overlap, free returns all."""

from __future__ import annotations

import random

import pytest

from engine.block_manager import BlockManager
from engine.detokenizer import IncrementalDetokenizer
from engine.outputs import RequestMetrics
from engine.sampling_params import SamplingParams
from engine.sequence import Sequence


class _NoText:
    def token_bytes(self, token_id: int) -> bytes:
        return b"x"

    def is_special(self, token_id: int) -> bool:
        return False


def make_seq(num_prompt: int, request_id: str = "r") -> Sequence:
    return Sequence(request_id=request_id, prompt_token_ids=list(range(num_prompt)),
                    params=SamplingParams(), stop_token_ids=frozenset(),
                    detokenizer=IncrementalDetokenizer(_NoText()),
                    metrics=RequestMetrics(arrival_time=0.0))


def test_allocate_rounds_up_to_whole_blocks():
    bm = BlockManager(num_blocks=10, block_size=4)
    seq = make_seq(9)
    assert bm.num_blocks_needed(seq, 9) == 3
    bm.allocate(seq, 9)
    assert len(seq.block_table) == 3 and bm.num_free_blocks == 7
    bm.allocate(seq, 12)  # fits the last block: nothing new
    assert len(seq.block_table) == 3
    bm.allocate(seq, 13)
    assert len(seq.block_table) == 4 and bm.num_free_blocks == 6


def test_append_slot_takes_a_block_only_at_a_boundary():
    bm = BlockManager(num_blocks=4, block_size=4)
    seq = make_seq(4)
    bm.allocate(seq, 4)
    seq.num_computed_tokens = 4
    assert bm.can_append(seq)
    bm.append_slot(seq)
    assert len(seq.block_table) == 2
    seq.num_computed_tokens = 5
    bm.append_slot(seq)
    assert len(seq.block_table) == 2


def test_short_pool_refuses():
    bm = BlockManager(num_blocks=2, block_size=4)
    seq = make_seq(9)
    assert not bm.can_allocate(seq, 9)
    with pytest.raises(RuntimeError):
        bm.allocate(seq, 9)
    assert bm.num_free_blocks == 2 and seq.block_table == []


def test_random_grants_never_overlap_and_free_restores_the_pool():
    rng = random.Random(0)
    bm = BlockManager(num_blocks=64, block_size=8)
    seqs = [make_seq(1, f"s{i}") for i in range(6)]
    sizes = {s.request_id: 0 for s in seqs}
    for _ in range(500):
        seq = rng.choice(seqs)
        if rng.random() < 0.1:
            bm.free(seq)
            sizes[seq.request_id] = 0
            continue
        target = sizes[seq.request_id] + rng.randint(1, 20)
        if bm.can_allocate(seq, target):
            bm.allocate(seq, target)
            sizes[seq.request_id] = target
        held = [b for s in seqs for b in s.block_table]
        assert len(held) == len(set(held))
        assert len(held) + bm.num_free_blocks == 64
        for s in seqs:
            assert len(s.block_table) == -(-sizes[s.request_id] // 8)
    for s in seqs:
        bm.free(s)
    assert bm.num_free_blocks == 64
