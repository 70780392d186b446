"""Decode CUDA graphs: bucketing and static-buffer padding on CPU; replay == eager on a GPU."""

from __future__ import annotations

import pytest
import torch

from engine.attention import make_attention_metadata
from engine.cuda_graph_runner import (BATCH_SIZE_BUCKETS, CUDAGraphRunner, DecodeBuffers,
                                      batch_size_buckets, bucket_for)


@pytest.mark.parametrize("num_seqs,bucket", [(1, 1), (2, 2), (3, 4), (5, 8), (8, 8), (9, 16),
                                             (17, 32), (32, 32), (33, None)])
def test_bucket_for_picks_the_smallest_bucket_that_fits(num_seqs, bucket):
    assert bucket_for(num_seqs) == bucket


@pytest.mark.parametrize("max_num_seqs,buckets", [
    (1, (1,)), (3, (1, 2, 3)), (8, (1, 2, 4, 8)), (20, (1, 2, 4, 8, 16, 20)),
    (32, (1, 2, 4, 8, 16, 32)), (48, (1, 2, 4, 8, 16, 32, 48)),
    (100, (1, 2, 4, 8, 16, 32, 48, 64, 80, 96, 100))])
def test_buckets_follow_max_num_seqs(max_num_seqs, buckets):
    assert batch_size_buckets(max_num_seqs) == buckets


@pytest.mark.parametrize("max_num_seqs", range(1, 300))
def test_every_batch_the_scheduler_forms_has_a_bucket(max_num_seqs):
    buckets = batch_size_buckets(max_num_seqs)
    assert buckets == tuple(sorted(set(buckets))) and buckets[-1] == max_num_seqs
    assert all(bucket_for(n, buckets) - n < 16 for n in range(1, max_num_seqs + 1))


def test_buckets_reject_a_bad_max_num_seqs():
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="max_num_seqs"):
            batch_size_buckets(bad)


def test_bucket_for_custom_buckets_and_bad_count():
    assert bucket_for(3, (8, 2)) == 8
    with pytest.raises(ValueError, match="num_seqs"):
        bucket_for(0)


def _decode_batch(seq_lens, tables, block_size=4):
    metadata = make_attention_metadata(seq_lens, [1] * len(seq_lens), tables, block_size)
    ids = torch.tensor([11 * (i + 1) for i in range(len(seq_lens))])
    positions = torch.tensor([s - 1 for s in seq_lens])
    return ids, positions, metadata


def test_fill_copies_the_batch_and_makes_padding_rows_inert():
    buffers = DecodeBuffers.allocate(8, 6, "cpu")
    # A larger batch first, so the smaller one must overwrite its leftovers.
    buffers.fill(8, *_decode_batch([9] * 7, [[1, 2, 3]] * 7))
    ids, positions, metadata = _decode_batch([5, 1, 10], [[7, 3], [4], [0, 9, 2]])
    buffers.fill(4, ids, positions, metadata)
    assert buffers.input_ids[:4].tolist() == [11, 22, 33, 0]
    assert buffers.positions[:4].tolist() == [4, 0, 9, 0]
    assert buffers.slot_mapping[:4].tolist() == metadata.slot_mapping.tolist() + [-1]
    assert buffers.seq_lens[:4].tolist() == [5, 1, 10, 0]
    assert buffers.block_tables[:4].tolist() == [[7, 3, 0, 0, 0, 0], [4, 0, 0, 0, 0, 0],
                                                 [0, 9, 2, 0, 0, 0], [0] * 6]


def test_metadata_views_the_buffers():
    buffers = DecodeBuffers.allocate(4, 3, "cpu")
    metadata = buffers.metadata(2, block_size=4)
    buffers.fill(2, *_decode_batch([6], [[5, 8]]))
    assert metadata.is_decode_only and metadata.num_seqs == 2
    assert metadata.seq_lens.tolist() == [6, 0] and metadata.slot_mapping.tolist() == [33, -1]
    assert metadata.query_start_loc.tolist() == [0, 1, 2]
    assert metadata.block_tables.tolist() == [[5, 8, 0], [0, 0, 0]]


def test_fill_rejects_what_no_graph_holds():
    buffers = DecodeBuffers.allocate(4, 2, "cpu")
    with pytest.raises(ValueError, match="at most 2"):
        buffers.fill(2, *_decode_batch([1, 1, 1], [[0], [1], [2]]))
    with pytest.raises(ValueError, match="exceed"):
        buffers.fill(4, *_decode_batch([9], [[0, 1, 2]]))
    metadata = make_attention_metadata([3], [2], [[0]], 4)
    with pytest.raises(ValueError, match="decode-only"):
        buffers.fill(4, torch.zeros(2, dtype=torch.int64), torch.zeros(2, dtype=torch.int64),
                     metadata)


def test_runner_refuses_a_cpu_device():
    with pytest.raises(ValueError, match="CUDA"):
        CUDAGraphRunner(torch.nn.Identity(), [], 16, 4, torch.device("cpu"))


def _replay_equals_eager(path: str, record_figure, model: str) -> None:
    pytest.importorskip("triton")
    from engine.loader import load_model

    loaded = load_model(path, device="cuda", dtype=torch.float32)
    config, block_size, num_blocks = loaded.config, 16, 512
    kv_cache = torch.zeros(config.num_hidden_layers, 2, num_blocks, block_size,
                           config.num_key_value_heads, config.head_dim, device="cuda")
    kv_caches = list(kv_cache.unbind(0))
    runner = CUDAGraphRunner(loaded.model, kv_caches, block_size, 64, torch.device("cuda"))
    runner.capture()
    gen = torch.Generator().manual_seed(0)
    for num_seqs in (1, 3, 8, 13, 32):
        assert bucket_for(num_seqs) in BATCH_SIZE_BUCKETS
        kv_cache.normal_()
        seq_lens = torch.randint(1, 150, (num_seqs,), generator=gen).tolist()
        ids = torch.randperm(num_blocks, generator=gen).tolist()
        tables, start = [], 0
        for s in seq_lens:  # disjoint blocks: at most 32 * 10 of the 512
            need = -(-s // block_size)
            tables.append(ids[start:start + need])
            start += need
        metadata = make_attention_metadata(seq_lens, [1] * num_seqs, tables, block_size, "cuda")
        input_ids = torch.randint(0, config.vocab_size, (num_seqs,), generator=gen).cuda()
        positions = torch.tensor([s - 1 for s in seq_lens], device="cuda")
        before = kv_cache.clone()
        eager = loaded.model(input_ids, positions, kv_caches, metadata).clone()
        kv_cache.copy_(before)
        replayed = runner.run(input_ids, positions, metadata)
        assert replayed.shape == eager.shape
        record_figure("replay_vs_eager_max_abs_error",
                      (replayed.float() - eager.float()).abs().max().item(), model=model,
                      num_seqs=num_seqs)
        torch.testing.assert_close(replayed, eager, atol=1e-4, rtol=1e-4)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_replay_equals_eager_on_a_generated_model(tiny_model_dir, record_figure):
    _replay_equals_eager(tiny_model_dir, record_figure, "tiny")


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_replay_equals_eager(gguf_path, record_figure):
    _replay_equals_eager(gguf_path, record_figure, "smollm2")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_engine_captures_a_graph_per_bucket_of_its_max_num_seqs(tiny_model_dir, record_figure):
    """max_num_seqs=40: graphs for 1...32 and 40; a decode batch of 37 replays the 40 graph and
    gives the tokens an eager run gives."""
    pytest.importorskip("triton")
    from engine.config import EngineConfig
    from engine.llm_engine import LLMEngine
    from engine.loader import load_model
    from engine.model_runner import CUDA_GRAPH_HEADROOM_BYTES
    from engine.sampling_params import SamplingParams

    loaded = load_model(tiny_model_dir, device="cuda", dtype=torch.float32)
    config = EngineConfig(device="cuda", max_num_seqs=40, num_kv_blocks=1024, max_model_len=2048)
    engine = LLMEngine(loaded, config)
    graphs = engine.model_runner.cuda_graphs
    assert graphs is not None and graphs.buckets == (1, 2, 4, 8, 16, 32, 40)
    record_figure("cuda_graph_capture_bytes", graphs.capture_bytes, model="tiny",
                  buckets=list(graphs.buckets))
    assert graphs.capture_bytes <= CUDA_GRAPH_HEADROOM_BYTES
    prompts = [[100 + i, 7, 8, 9] for i in range(37)]
    params = SamplingParams(max_tokens=6, temperature=0, ignore_eos=True)
    replayed = [o.new_token_ids for o in engine.generate(prompts, params)]
    engine.model_runner.cuda_graphs = None  # the same engine, eager
    eager = [o.new_token_ids for o in engine.generate(prompts, params)]
    assert replayed == eager
