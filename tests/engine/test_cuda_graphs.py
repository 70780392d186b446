"""Decode CUDA graphs: bucketing and static-buffer padding on CPU; replay == eager on a GPU."""

from __future__ import annotations

import pytest
import torch

from engine.attention import make_attention_metadata
from engine.cuda_graph_runner import BATCH_SIZE_BUCKETS, CUDAGraphRunner, DecodeBuffers, bucket_for


@pytest.mark.parametrize("num_seqs,bucket", [(1, 1), (2, 2), (3, 4), (5, 8), (8, 8), (9, 16),
                                             (17, 32), (32, 32), (33, None)])
def test_bucket_for_picks_the_smallest_bucket_that_fits(num_seqs, bucket):
    assert bucket_for(num_seqs) == bucket


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


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_replay_equals_eager(gguf_path):
    pytest.importorskip("triton")
    from engine.loader import load_model

    loaded = load_model(gguf_path, device="cuda", dtype=torch.float32)
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
        torch.testing.assert_close(replayed, eager, atol=1e-4, rtol=1e-4)
