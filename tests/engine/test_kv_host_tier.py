"""The prefix cache's host-memory tier (engine.kv_host_tier): evicted blocks' KV is copied out
and back byte for byte, the tier is bounded and LRU, salts never share, a prefix hit after
eviction restores instead of recomputing (same greedy output as without the tier), and a
disabled tier (0) leaves the engine as it was."""

from __future__ import annotations

import pytest
import torch

from engine.block_manager import BlockManager
from engine.config import EngineConfig
from engine.errors import EngineConfigError
from engine.kv_host_tier import KVHostTier
from engine.llm_engine import LLMEngine
from engine.sampling_params import SamplingParams
from tests.engine.test_prefix_cache import compute, make_tokens_seq

LAYERS, HEADS, HEAD_DIM, BS = 2, 2, 3, 4
BLOCK_SHAPE = (LAYERS, 2, BS, HEADS, HEAD_DIM)


def device_pool(num_blocks: int, seed: int = 0) -> torch.Tensor:
    """A device KV pool [layers, 2, num_blocks, block_size, heads, head_dim] of random values."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn((LAYERS, 2, num_blocks, BS, HEADS, HEAD_DIM), generator=g)


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(torch.int32)  # float32 -> its bytes, so NaN/-0.0 compare exactly


def test_offload_then_restore_gives_byte_identical_kv():
    pool = device_pool(4)
    tier = KVHostTier(8, BLOCK_SHAPE, torch.float32)
    bm = BlockManager(4, BS, host_tier=tier)
    tokens = list(range(13))                 # 3 full blocks + 1 token
    first = make_tokens_seq(tokens, "first")
    compute(bm, first)
    table = list(first.block_table)
    original = pool[:, :, table[:3]].clone()
    bm.free(first)
    other = make_tokens_seq(list(range(100, 116)), "other")
    compute(bm, other)                       # takes all 4 blocks: evicts the 3 cached ones
    assert tier.num_offloaded == 3 and tier.has_pending
    tier.flush(pool)
    slots = [tier.slot(bm.block_hash(first, i)) for i in range(3)]
    assert torch.equal(bits(tier.kv[slots]), bits(original.movedim(2, 0)))
    pool[:, :, other.block_table] = 7.0      # "other"'s forward pass overwrote them
    bm.free(other)
    bm.check_invariants([])

    again = make_tokens_seq(tokens, "again")
    hits = bm.get_computed_blocks(again)
    assert [type(h) for h in hits] == [bytes] * 3   # only the host tier holds them
    bm.allocate(again, 13, hits)
    again.num_computed_tokens = 12
    bm.check_invariants([again.block_table])
    assert tier.num_restored == 3
    tier.flush(pool)
    assert torch.equal(bits(pool[:, :, again.block_table[:3]]), bits(original))
    # A restored chain is a GPU-cached chain: the next lookup finds block ids.
    restored = again.block_table[:3]
    bm.free(again)
    assert bm.get_computed_blocks(make_tokens_seq(tokens, "x")) == restored
    bm.check_invariants([])


def test_tier_size_is_fixed_and_evicts_least_recently_used():
    tier = KVHostTier(2, BLOCK_SHAPE, torch.float32)
    assert tier.nbytes == 2 * LAYERS * 2 * BS * HEADS * HEAD_DIM * 4
    pool = device_pool(3)
    a, b, c = b"a" * 32, b"b" * 32, b"c" * 32
    tier.offload(0, a)
    tier.offload(1, b)
    tier.flush(pool)
    tier.restore(a, 2)                       # a becomes most recently used
    tier.flush(pool)
    tier.offload(2, c)                       # full: evicts b, the least recently used
    tier.flush(pool)
    assert tier.hashes() == [a, c]
    assert (tier.num_offloaded, tier.num_restored, tier.num_dropped) == (3, 1, 1)
    assert torch.equal(tier.kv[tier.slot(c)], pool[:, :, 2])
    tier.check_invariants()


def test_offload_is_dropped_when_every_host_block_is_pinned():
    tier = KVHostTier(1, BLOCK_SHAPE, torch.float32)
    a, b = b"a" * 32, b"b" * 32
    assert tier.offload(0, a)
    assert not tier.offload(1, b)            # a's copy is pending: it cannot be evicted
    assert tier.hashes() == [a] and tier.num_dropped == 1
    tier.check_invariants()


def test_the_cache_salt_keeps_users_apart_in_the_tier():
    tier = KVHostTier(8, BLOCK_SHAPE, torch.float32)
    bm = BlockManager(3, BS, host_tier=tier)
    tokens = list(range(9))
    alice = make_tokens_seq(tokens, "alice", salt="alice")
    compute(bm, alice)
    bm.free(alice)
    compute(bm, make_tokens_seq(list(range(50, 62)), "evict"))   # pushes alice's blocks out
    assert tier.num_offloaded == 2
    assert bm.get_computed_blocks(make_tokens_seq(tokens, "bob", salt="bob")) == []
    assert bm.get_computed_blocks(make_tokens_seq(tokens, "anon")) == []
    assert [type(h) for h in bm.get_computed_blocks(make_tokens_seq(tokens, "a2", salt="alice"))] \
        == [bytes, bytes]


def test_a_failed_restore_leaves_no_cached_block_without_kv(monkeypatch):
    pool = device_pool(2)
    tier = KVHostTier(4, BLOCK_SHAPE, torch.float32)
    bm = BlockManager(2, BS, host_tier=tier)
    tokens = list(range(5))
    compute(bm, (first := make_tokens_seq(tokens, "first")))
    bm.free(first)
    compute(bm, (other := make_tokens_seq(list(range(60, 68)), "other")))
    tier.flush(pool)
    bm.free(other)
    again = make_tokens_seq(tokens, "again")
    bm.allocate(again, 5, bm.get_computed_blocks(again))

    def broken(*args):
        raise RuntimeError("copy failed")
    monkeypatch.setattr(tier, "_copy", broken)
    with pytest.raises(RuntimeError, match="copy failed"):
        tier.flush(pool)
    assert bm.blocks[again.block_table[0]].block_hash is None   # no longer a cache hit
    bm.free(again)
    # The host copy is still good: the next hit restores again rather than trusting the block.
    assert [type(h) for h in bm.get_computed_blocks(make_tokens_seq(tokens, "x"))] == [bytes]
    bm.check_invariants([])


def test_config_rejects_bad_sizes():
    with pytest.raises(EngineConfigError):
        EngineConfig(kv_host_cache_gib=-1)
    with pytest.raises(EngineConfigError):
        EngineConfig(num_kv_host_blocks=-2)
    with pytest.raises(EngineConfigError):
        EngineConfig(kv_host_cache_gib=float("inf"))


# -- the engine, on the tiny model (float32) -------------------------------------------------

GREEDY = SamplingParams(max_tokens=4, temperature=0.0, ignore_eos=True)
LOOP_A = [5 + i for i in range(30)]
LOOP_B = [100 + i for i in range(30)]


def agent_turns(tiny_model, **config) -> tuple[list[list[int]], LLMEngine]:
    """Two loops taking turns on a pool (12 blocks of 4) too small for both histories."""
    engine = LLMEngine(tiny_model, EngineConfig(num_kv_blocks=12, block_size=4, max_model_len=48,
                                                **config))
    outputs = []
    for prompt in (LOOP_A, LOOP_B, LOOP_A + [7, 8], LOOP_B + [9], LOOP_A + [7, 8, 10]):
        outputs.append(engine.generate([prompt], GREEDY)[0].new_token_ids)
        engine.block_manager.check_invariants([])
    return outputs, engine


def test_a_prefix_hit_after_eviction_restores_instead_of_recomputing(tiny_model):
    without, plain = agent_turns(tiny_model)
    with_tier, tiered = agent_turns(tiny_model, num_kv_host_blocks=32)
    assert with_tier == without
    s, p = tiered.stats(), plain.stats()
    assert s.num_kv_host_blocks_offloaded > 0 and s.num_kv_host_blocks_restored > 0
    assert s.num_kv_host_blocks_total == 32 and s.num_kv_host_blocks_dropped == 0
    restored_tokens = s.num_kv_host_blocks_restored * 4
    assert s.num_prompt_tokens == p.num_prompt_tokens - restored_tokens
    assert s.prefix_cache_hits == p.prefix_cache_hits + restored_tokens


def test_preemption_chunked_prefill_and_abort_keep_working_with_the_tier(tiny_model):
    def run(host_blocks: int) -> dict[str, list[int]]:
        engine = LLMEngine(tiny_model, EngineConfig(
            num_kv_blocks=14, block_size=4, max_model_len=48, max_num_batched_tokens=24,
            long_prefill_token_threshold=8, num_kv_host_blocks=host_blocks))
        params = SamplingParams(max_tokens=10, temperature=0.0, ignore_eos=True)
        out: dict[str, list[int]] = {}
        for round_ in range(2):       # the second round hits what the first left (GPU or host)
            for i in range(4):
                engine.add_request(f"r{round_}-{i}", [3 + 20 * i + j for j in range(22)], params)
            engine.add_request(f"doomed{round_}", list(range(40, 60)), params)
            steps = 0
            while engine.has_unfinished_requests():
                for o in engine.step():
                    out.setdefault(o.request_id, []).extend(o.new_token_ids)
                steps += 1
                if steps == 2:
                    engine.abort_request(f"doomed{round_}")
                sched = engine.scheduler
                engine.block_manager.check_invariants(
                    [s.block_table for s in sched.running + list(sched.waiting)])
        stats = engine.stats()
        assert stats.num_preemptions > 0
        if host_blocks:
            assert stats.num_kv_host_blocks_restored > 0
        return {k: v for k, v in out.items() if not k.startswith("doomed")}

    assert run(64) == run(0)


def test_disabled_tier_behaves_as_before(tiny_model):
    outputs, engine = agent_turns(tiny_model, num_kv_host_blocks=0)
    assert engine.kv_host_tier is None and engine.block_manager.host_tier is None
    assert engine.model_runner.host_tier is None
    default_outputs, default = agent_turns(tiny_model)   # kv_host_cache_gib 0 by default
    assert default.kv_host_tier is None and outputs == default_outputs
    s = engine.stats()
    assert (s.num_kv_host_blocks_offloaded, s.num_kv_host_blocks_restored,
            s.num_kv_host_blocks_dropped, s.num_kv_host_blocks_total) == (0, 0, 0, 0)
    assert s.num_prompt_tokens == default.stats().num_prompt_tokens
    assert s.num_prompt_tokens == sum(len(p) for p in (LOOP_A, LOOP_B, LOOP_A + [7, 8], LOOP_B + [9],
                                                        LOOP_A + [7, 8, 10])) - s.prefix_cache_hits


def test_tier_size_from_gib(tiny_model):
    c = tiny_model.config
    block_bytes = c.num_hidden_layers * 2 * 4 * c.num_key_value_heads * c.head_dim * 4
    tier = KVHostTier.from_config(EngineConfig(block_size=4, kv_host_cache_gib=10 * block_bytes / 2**30),
                                  c, torch.float32, "cpu")
    assert tier.num_blocks == 10 and tier.nbytes == 10 * block_bytes
    assert KVHostTier.from_config(EngineConfig(), c, torch.float32, "cpu") is None
    no_cache = EngineConfig(num_kv_host_blocks=8, enable_prefix_caching=False)
    assert KVHostTier.from_config(no_cache, c, torch.float32, "cpu") is None


# -- the setting and the counters, end to end -------------------------------------------------

def test_env_var_reaches_the_engine_config_and_counters_reach_metrics(tiny_model):
    from backend.engine_adapter import to_generator_stats
    from backend.metrics import Metrics
    from backend.settings import Settings, SettingsError

    assert Settings.from_env({"CRESCENT_KV_HOST_CACHE_GIB": "2.5"}).kv_host_cache_gib == 2.5
    assert Settings.from_env({}).kv_host_cache_gib == 0.0
    with pytest.raises(SettingsError):
        Settings.from_env({"CRESCENT_KV_HOST_CACHE_GIB": "-1"})
    _, engine = agent_turns(tiny_model, num_kv_host_blocks=32)
    s = engine.stats()
    text = Metrics(stats=lambda: to_generator_stats(s)).render().decode()
    for name, v in (("offloaded", s.num_kv_host_blocks_offloaded),
                    ("restored", s.num_kv_host_blocks_restored),
                    ("dropped", s.num_kv_host_blocks_dropped)):
        assert f"crescent_kv_host_blocks_{name}_total {float(v)}" in text
    assert s.num_kv_host_blocks_restored > 0


def test_bench_agent_runs_with_and_without_the_host_tier(tiny_model):
    from engine.bench.report import format_report
    from engine.bench.suite import HOST_TIER, OURS, SuiteOptions, run_suite
    from engine.bench.workloads import WorkloadSizes

    sizes = WorkloadSizes(loops=3, turns=3, min_tail_len=8, max_tail_len=12, turn_output_len=3)
    config = EngineConfig(num_kv_blocks=6, max_model_len=96, max_num_batched_tokens=256)
    results = run_suite(tiny_model, SuiteOptions(
        workloads=["agent"], sizes=sizes, config=config, host_overhead_batches=(),
        warm_up=False, kv_host_blocks=64), log=lambda m: None)
    systems = results["workloads"]["agent"]
    ours, tiered = systems[OURS], systems[HOST_TIER]
    assert tiered["kv_host_blocks"]["restored"] > 0 and ours["kv_host_blocks"]["restored"] == 0
    assert tiered["prompt_tokens_computed"] < ours["prompt_tokens_computed"]
    assert (tiered["prompt_tokens_computed"] + tiered["prefix_cache_hit_tokens"]
            == ours["prompt_tokens_computed"] + ours["prefix_cache_hit_tokens"])
    assert "ours (host KV tier): prompt tokens computed" in format_report(results)


@pytest.mark.slow
def test_real_model_restores_and_answers_alike(fast_model):
    """SmolLM2 on the CPU fast path: two conversations alternate on a pool too small for both;
    with the tier, later turns restore their history and the greedy replies are unchanged."""
    vocab = fast_model.tokenizer.vocab_size
    a = [(17 * i + 1000) % vocab for i in range(60)]
    b = [(29 * i + 3000) % vocab for i in range(60)]

    def run(host_blocks: int):
        engine = LLMEngine(fast_model, EngineConfig(num_kv_blocks=6, block_size=16, max_model_len=96,
                                                    num_kv_host_blocks=host_blocks))
        replies = [engine.generate([p], GREEDY)[0].new_token_ids
                   for p in (a, b, a + [1500, 1501], b + [3500], a + [1500, 1501, 1502])]
        return replies, engine.stats()

    plain, plain_stats = run(0)
    tiered, stats = run(16)
    assert tiered == plain
    assert stats.num_kv_host_blocks_restored > 0
    assert stats.num_prompt_tokens == plain_stats.num_prompt_tokens - 16 * stats.num_kv_host_blocks_restored


def test_runs_group_consecutive_host_blocks():
    from engine.kv_host_tier import _runs
    assert _runs([4, 5, 6, 0, 2, 3]) == [(0, 4, 3), (3, 0, 1), (4, 2, 2)]
    assert _runs([]) == []


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_tier_is_pinned_and_byte_identical(tiny_model_dir):
    """On CUDA: pinned host blocks, copies on a side stream; KV out and back byte for byte, and
    the engine's greedy output unchanged by restores."""
    pool = device_pool(6).cuda()
    tier = KVHostTier(8, BLOCK_SHAPE, torch.float32, "cuda")
    assert tier.kv.is_pinned()
    for block, h in ((0, b"a" * 32), (2, b"b" * 32), (3, b"c" * 32)):
        tier.offload(block, h)
    original = pool[:, :, [0, 2, 3]].clone()
    tier.flush(pool)
    pool[:, :, [0, 2, 3]] = 0.0                      # overwritten after the flush, in order
    for h, block in ((b"a" * 32, 5), (b"b" * 32, 4), (b"c" * 32, 1)):
        tier.restore(h, block)
    tier.flush(pool)
    torch.cuda.synchronize()
    assert torch.equal(bits(pool[:, :, [5, 4, 1]].cpu()), bits(original.cpu()))

    from engine.loader import load_model
    loaded = load_model(tiny_model_dir, device="cuda", dtype=torch.float32)
    without, _ = agent_turns(loaded)
    with_tier, engine = agent_turns(loaded, num_kv_host_blocks=32)
    assert with_tier == without and engine.stats().num_kv_host_blocks_restored > 0
