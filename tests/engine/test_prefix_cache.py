"""Prefix caching: chained block hashes, hits only on full written blocks (at most
num_tokens - 1), salts that never share, LRU eviction, reference counts; on the real model,
hit counts for shared prefixes and identical greedy output with and without hits."""

from __future__ import annotations

import pytest

from engine.block_manager import BlockManager, hash_block_tokens
from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams
from tests.engine.test_block_manager import make_seq


def make_tokens_seq(tokens: list[int], request_id: str = "r", salt: str | None = None):
    seq = make_seq(1, request_id)
    seq.prompt_token_ids = list(tokens)
    seq.cache_salt = salt
    return seq


def compute(bm: BlockManager, seq, num_tokens: int | None = None) -> None:
    """Admit `seq` with its cached prefix and 'run' it over its tokens (KV written)."""
    computed = bm.get_computed_blocks(seq)
    num_tokens = seq.num_tokens if num_tokens is None else num_tokens
    bm.allocate(seq, num_tokens, computed)
    seq.num_computed_tokens = num_tokens
    bm.cache_full_blocks(seq)


def test_block_hash_is_chained_and_keyed_by_tokens_and_salt():
    a = hash_block_tokens(None, [1, 2, 3, 4])
    assert a == hash_block_tokens(None, [1, 2, 3, 4]) and len(a) == 32
    assert a != hash_block_tokens(None, [1, 2, 3, 5])
    assert a != hash_block_tokens(None, [1, 2, 3, 4], ("alice",))
    assert hash_block_tokens(None, [1], ("alice",)) != hash_block_tokens(None, [1], ("bob",))
    assert hash_block_tokens(a, [5, 6]) != hash_block_tokens(None, [5, 6])
    # Length prefixes: moving bytes between fields never gives the same hash.
    assert hash_block_tokens(None, [], ("ab",)) != hash_block_tokens(None, [], ("a", "b"))


def test_shared_prefix_hits_whole_blocks_only_after_they_are_written():
    bm = BlockManager(num_blocks=16, block_size=4)
    first = make_tokens_seq(list(range(10)), "first")
    bm.allocate(first, 10, bm.get_computed_blocks(first))
    second = make_tokens_seq(list(range(8)) + [50, 51, 52], "second")
    assert bm.get_computed_blocks(second) == []  # allocated, but no KV written yet
    first.num_computed_tokens = 10
    bm.cache_full_blocks(first)
    hits = bm.get_computed_blocks(second)
    assert hits == first.block_table[:2]  # blocks 0-3, 4-7; the partial third is never cached
    before = (bm.prefix_cache_queries, bm.prefix_cache_hits)
    bm.allocate(second, 11, hits)
    assert (bm.prefix_cache_queries - before[0], bm.prefix_cache_hits - before[1]) == (11, 8)
    assert second.block_table[:2] == first.block_table[:2]
    assert bm.blocks[first.block_table[0]].ref_count == 2
    bm.check_invariants([first.block_table, second.block_table])


def test_a_hit_never_covers_the_last_token():
    bm = BlockManager(num_blocks=16, block_size=4)
    compute(bm, make_tokens_seq(list(range(8)), "a"))
    same = make_tokens_seq(list(range(8)), "b")
    assert len(bm.get_computed_blocks(same)) == 1  # 8 tokens: at most 7 from the cache
    longer = make_tokens_seq(list(range(9)), "c")
    assert len(bm.get_computed_blocks(longer)) == 2


def test_different_salts_never_share_blocks():
    bm = BlockManager(num_blocks=32, block_size=4)
    tokens = list(range(20))
    alice = make_tokens_seq(tokens, "alice", salt="alice")
    compute(bm, alice)
    assert bm.get_computed_blocks(make_tokens_seq(tokens, "bob", salt="bob")) == []
    assert bm.get_computed_blocks(make_tokens_seq(tokens, "anon", salt=None)) == []
    assert bm.get_computed_blocks(make_tokens_seq(tokens, "alice2", salt="alice")) == alice.block_table[:4]


def test_released_cached_blocks_are_evicted_least_recently_released_first():
    bm = BlockManager(num_blocks=6, block_size=2)
    a = make_tokens_seq([1, 2, 3, 4, 5], "a")      # 2 full blocks + 1 partial
    b = make_tokens_seq([9, 8, 7, 6, 5], "b")
    compute(bm, a)
    compute(bm, b)
    a_blocks, b_blocks = list(a.block_table), list(b.block_table)
    bm.free(a)
    bm.free(b)
    assert bm.num_cached_blocks == 4 and bm.num_uncached_free_blocks == 2
    grower = make_tokens_seq([100] * 12, "grower")
    bm.allocate(grower, 2 * 2, [])      # never-cached free blocks go first: a's and b's partials
    assert set(grower.block_table) == {a_blocks[2], b_blocks[2]}
    assert bm.num_cached_blocks == 4
    bm.allocate(grower, 3 * 2)          # then a's tail (released tail first), ...
    assert grower.block_table[-1] == a_blocks[1]
    bm.allocate(grower, 4 * 2)          # ... a's head, then b's
    assert grower.block_table[-1] == a_blocks[0]
    assert bm.get_computed_blocks(make_tokens_seq([1, 2, 3, 4, 5], "a2")) == []
    assert bm.get_computed_blocks(make_tokens_seq([9, 8, 7, 6, 5], "b2")) == b_blocks[:2]


def test_a_hit_refreshes_a_block_so_it_is_evicted_last():
    bm = BlockManager(num_blocks=4, block_size=2)
    a, b = make_tokens_seq([1, 2, 3], "a"), make_tokens_seq([4, 5, 6], "b")
    compute(bm, a)
    compute(bm, b)
    bm.free(a)   # a's block released first: the LRU victim ...
    bm.free(b)
    reuse = make_tokens_seq([1, 2, 9], "reuse")
    compute(bm, reuse)   # ... until a hit takes it back
    bm.free(reuse)
    other = make_tokens_seq([0] * 8, "other")
    bm.allocate(other, 2 * 3)
    assert bm.get_computed_blocks(make_tokens_seq([1, 2, 3], "x")) != []
    assert bm.get_computed_blocks(make_tokens_seq([4, 5, 6], "y")) == []


def test_a_block_is_never_handed_out_while_referenced():
    bm = BlockManager(num_blocks=5, block_size=2)
    owner = make_tokens_seq([1, 2, 3, 4, 5], "owner")
    compute(bm, owner)
    sharer = make_tokens_seq([1, 2, 3, 4, 7], "sharer")
    compute(bm, sharer)
    shared = owner.block_table[:2]
    assert sharer.block_table[:2] == shared
    bm.free(owner)
    assert all(bm.blocks[b].ref_count == 1 for b in shared)
    assert bm.num_free_blocks == 5 - 3
    hog = make_tokens_seq([0] * 10, "hog")
    assert not bm.can_allocate(hog, 3 * 2)
    bm.allocate(hog, 2 * 2)
    assert not set(hog.block_table) & set(sharer.block_table)
    bm.check_invariants([sharer.block_table, hog.block_table])
    with pytest.raises(RuntimeError, match="double free"):
        stale = make_tokens_seq([1], "stale")
        stale.block_table = [hog.block_table[0]]
        bm.free(hog)
        bm.free(stale)


def test_disabled_prefix_caching_never_hits():
    bm = BlockManager(num_blocks=16, block_size=4, enable_prefix_caching=False)
    compute(bm, make_tokens_seq(list(range(12)), "a"))
    assert bm.get_computed_blocks(make_tokens_seq(list(range(12)), "b")) == []
    assert bm.num_cached_blocks == 0


# -- the real model ----------------------------------------------------------------------------

SYSTEM = ("You are a careful assistant. Answer briefly and precisely, in plain English, and "
          "never invent facts you are not sure about. ")


def make_engine(engine_model, **kwargs) -> LLMEngine:
    kwargs.setdefault("num_kv_blocks", 64)
    kwargs.setdefault("max_model_len", kwargs["num_kv_blocks"] * 16)
    return LLMEngine(engine_model, EngineConfig(**kwargs))


def chat(engine_model, question: str) -> list[int]:
    text = engine_model.chat_template.render([{"role": "system", "content": SYSTEM},
                                              {"role": "user", "content": question}])
    return engine_model.tokenizer.encode(text)


GREEDY = SamplingParams(max_tokens=8, temperature=0, ignore_eos=True)


@pytest.mark.slow
def test_hit_counts_for_a_shared_prefix_and_identical_output(engine_model):
    a, b = chat(engine_model, "What is rain?"), chat(engine_model, "Why is grass green?")
    shared = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    assert shared >= 32
    cold = make_engine(engine_model, enable_prefix_caching=False)
    expected = [o.new_token_ids for o in (cold.generate(a, GREEDY)[0], cold.generate(b, GREEDY)[0])]
    assert cold.stats().prefix_cache_hits == 0

    engine = make_engine(engine_model)
    [out_a] = engine.generate(a, GREEDY)
    assert engine.stats().prefix_cache_hits == 0
    assert engine.stats().prefix_cache_queries == len(a)
    [out_b] = engine.generate(b, GREEDY)
    stats = engine.stats()
    assert stats.prefix_cache_hits == (shared // 16) * 16
    assert stats.prefix_cache_queries == len(a) + len(b)
    assert stats.num_prompt_tokens == len(a) + len(b) - stats.prefix_cache_hits
    assert [out_a.new_token_ids, out_b.new_token_ids] == expected
    # The same prompt again: everything but the last (partial) block comes from the cache.
    [again] = engine.generate(b, GREEDY)
    assert engine.stats().prefix_cache_hits - stats.prefix_cache_hits == ((len(b) - 1) // 16) * 16
    assert again.new_token_ids == expected[1]
    assert engine.num_free_blocks() == 64 and engine.stats().num_kv_blocks_cached > 0


@pytest.mark.slow
def test_salts_separate_users_on_the_real_engine(engine_model):
    engine = make_engine(engine_model)
    prompt = chat(engine_model, "Name a planet.")
    params = SamplingParams(max_tokens=4, temperature=0)
    engine.add_request("alice-1", prompt, params, cache_salt="alice")
    while engine.has_unfinished_requests():
        engine.step()
    engine.add_request("bob-1", prompt, params, cache_salt="bob")
    while engine.has_unfinished_requests():
        engine.step()
    assert engine.stats().prefix_cache_hits == 0
    engine.add_request("alice-2", prompt, params, cache_salt="alice")
    while engine.has_unfinished_requests():
        engine.step()
    assert engine.stats().prefix_cache_hits == ((len(prompt) - 1) // 16) * 16


@pytest.mark.slow
def test_agent_style_growing_history_hits_every_turn(engine_model):
    engine = make_engine(engine_model)
    messages = [{"role": "system", "content": SYSTEM}]
    hits = []
    for question in ["What is two plus two?", "And three plus three?", "And four plus four?"]:
        messages.append({"role": "user", "content": question})
        ids = engine_model.tokenizer.encode(engine_model.chat_template.render(messages))
        before = engine.stats().prefix_cache_hits
        [out] = engine.generate(ids, SamplingParams(max_tokens=12, temperature=0))
        hits.append(engine.stats().prefix_cache_hits - before)
        messages.append({"role": "assistant", "content": out.text})
    assert hits[0] == 0 and hits[1] > 0 and hits[2] > hits[1]


@pytest.mark.slow
def test_multi_turn_hits_including_block_boundaries_give_the_cold_tokens(engine_model):
    # A multi-turn chat prompt, and cuts of it whose last token sits just after a block
    # boundary (the hit covers all but the last token), on it (the hit stops one block short:
    # it may cover at most prompt length - 1 tokens) and inside a block.
    turns = [{"role": "system", "content": SYSTEM},
             {"role": "user", "content": "What is rain?"},
             {"role": "assistant", "content": "Water falling from clouds."},
             {"role": "user", "content": "And snow?"}]
    encode = engine_model.tokenizer.encode
    first_turn = encode(engine_model.chat_template.render(turns[:2]))
    full = encode(engine_model.chat_template.render(turns))
    assert full[:len(first_turn) - 2] == first_turn[:-2] and len(full) > 56
    prompts = [first_turn, full] + [full[:n] for n in (49, 48, 54, 17, 16)]
    cold = make_engine(engine_model, enable_prefix_caching=False)
    params = SamplingParams(max_tokens=5, temperature=0, ignore_eos=True)
    expected = [cold.generate(p, params)[0].new_token_ids for p in prompts]
    warm = make_engine(engine_model)
    got_hits = []
    for prompt, tokens in zip(prompts, expected):
        before = warm.stats().prefix_cache_hits
        [out] = warm.generate(prompt, params)
        got_hits.append(warm.stats().prefix_cache_hits - before)
        assert out.new_token_ids == tokens, len(prompt)
    # The second turn reuses the first turn's full blocks; every cut of it then finds all its
    # full blocks before its last token cached: 48 of 49, 32 of 48, 48 of 54, 16 of 17, 0 of 16.
    assert got_hits[0] == 0 and got_hits[1] >= 32
    assert got_hits[2:] == [48, 32, 48, 16, 0]
    assert warm.num_free_blocks() == 64
