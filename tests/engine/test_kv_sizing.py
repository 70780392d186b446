"""KV pool sizing from a memory budget, and the start-up errors when it cannot hold one
max_model_len sequence."""

from __future__ import annotations

import logging

import pytest
import torch

from engine.config import EngineConfig
from engine.errors import EngineConfigError
from engine.llm_engine import LLMEngine
from engine.model_runner import (CUDA_GRAPH_HEADROOM_BYTES, determine_num_kv_blocks,
                                 kv_block_bytes, step_memory_reserve_bytes)
from engine.model_config import ModelConfig

SMALL = ModelConfig(architecture="llama", vocab_size=100, hidden_size=64, intermediate_size=128,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                    rope_theta=10000.0, rms_norm_eps=1e-5, max_position_embeddings=256,
                    tie_word_embeddings=True)


def test_block_bytes_and_blocks_from_a_gib_budget():
    # 2 layers * (K, V) * 16 tokens * 2 heads * 16 dims * 4 bytes
    assert kv_block_bytes(SMALL, 16, torch.float32) == 2 * 2 * 16 * 2 * 16 * 4 == 8192
    config = EngineConfig(kv_cache_memory_gib=0.001)
    assert determine_num_kv_blocks(config, SMALL, torch.float32, torch.device("cpu")) == int(0.001 * 2**30) // 8192
    assert determine_num_kv_blocks(EngineConfig(num_kv_blocks=7), SMALL, torch.float32, torch.device("cpu")) == 7


def test_a_fraction_of_free_cuda_memory_after_the_step_reserve(monkeypatch):
    config = EngineConfig(kv_cache_memory_fraction=0.5)
    reserve = step_memory_reserve_bytes(config, SMALL, torch.float32)
    free = reserve + 8192 * 1000
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (free, 4 * free))
    assert determine_num_kv_blocks(config, SMALL, torch.float32, torch.device("cuda")) == 500
    with pytest.raises(EngineConfigError, match="CUDA"):
        determine_num_kv_blocks(config, SMALL, torch.float32, torch.device("cpu"))


def test_the_whole_free_memory_still_leaves_room_for_graph_capture_and_steps(monkeypatch):
    """The pool is allocated before the decode CUDA graphs are captured (they read it), so
    sizing sets aside what capture and the largest step will take: a fraction of 1.0 no longer
    hands the pool every free byte."""
    free = 8 * 2**30
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (free, free))
    config = EngineConfig(kv_cache_memory_fraction=1.0)
    blocks = determine_num_kv_blocks(config, SMALL, torch.float32, torch.device("cuda"))
    pool = blocks * kv_block_bytes(SMALL, 16, torch.float32)
    assert free - pool >= step_memory_reserve_bytes(config, SMALL, torch.float32)
    assert free - pool < step_memory_reserve_bytes(config, SMALL, torch.float32) + 8192
    # Nothing left after the reserve: a start-up error, not an out-of-memory error at capture.
    small = step_memory_reserve_bytes(config, SMALL, torch.float32) + 100
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (small, small))
    with pytest.raises(EngineConfigError, match="no block"):
        determine_num_kv_blocks(config, SMALL, torch.float32, torch.device("cuda"))


def test_the_step_reserve_grows_with_the_step_and_counts_graph_headroom():
    base = step_memory_reserve_bytes(EngineConfig(), SMALL, torch.bfloat16)
    assert base > CUDA_GRAPH_HEADROOM_BYTES
    bigger = step_memory_reserve_bytes(EngineConfig(max_num_batched_tokens=8192), SMALL,
                                       torch.bfloat16)
    more_seqs = step_memory_reserve_bytes(EngineConfig(max_num_seqs=256), SMALL, torch.bfloat16)
    assert bigger > base and more_seqs > base
    # A GiB budget is explicit: no reserve is taken from it.
    assert determine_num_kv_blocks(EngineConfig(kv_cache_memory_gib=0.001), SMALL, torch.float32,
                                   torch.device("cuda")) == int(0.001 * 2**30) // 8192


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_a_pool_sized_from_all_free_memory_leaves_room_to_capture_and_run(tiny_model_dir,
                                                                          monkeypatch,
                                                                          record_figure):
    """On CUDA, with mem_get_info reporting only the reserve plus 64 MiB as free while sizing:
    the pool takes 64 MiB, capture and a batch of 32 decodes run."""
    pytest.importorskip("triton")
    from engine.loader import load_model
    from engine.sampling_params import SamplingParams

    loaded = load_model(tiny_model_dir, device="cuda", dtype=torch.bfloat16)
    config = EngineConfig(device="cuda", kv_cache_memory_fraction=1.0)
    reserve = step_memory_reserve_bytes(config, loaded.config, torch.bfloat16)
    real = torch.cuda.mem_get_info
    monkeypatch.setattr(torch.cuda, "mem_get_info",
                        lambda device=None: (reserve + 64 * 2**20, real(device)[1]))
    engine = LLMEngine(loaded, config)
    monkeypatch.setattr(torch.cuda, "mem_get_info", real)
    block_bytes = kv_block_bytes(loaded.config, 16, torch.bfloat16)
    assert engine.block_manager.num_blocks == 64 * 2**20 // block_bytes
    record_figure("step_reserve_bytes", reserve, model="tiny")
    outputs = engine.generate([[5 + i, 6, 7] for i in range(32)],
                              SamplingParams(max_tokens=4, temperature=0, ignore_eos=True))
    assert all(len(o.new_token_ids) == 4 for o in outputs)


def test_a_budget_below_one_block_is_an_error():
    with pytest.raises(EngineConfigError, match="no block"):
        determine_num_kv_blocks(EngineConfig(kv_cache_memory_gib=1e-9), SMALL, torch.float32,
                                torch.device("cpu"))


@pytest.mark.parametrize("field, value", [("kv_cache_memory_fraction", 0.0), ("kv_cache_memory_fraction", 1.5),
                                          ("queue_timeout_s", 0), ("queue_timeout_s", float("nan")),
                                          ("long_prefill_token_threshold", 0), ("enable_prefix_caching", 1)])
def test_new_settings_are_validated(field, value):
    with pytest.raises(EngineConfigError, match=field):
        EngineConfig(**{field: value})


@pytest.mark.slow
def test_the_default_budget_holds_a_full_window_and_start_up_reports_it(loaded_model, caplog):
    with caplog.at_level(logging.INFO, logger="engine"):
        engine = LLMEngine(loaded_model, EngineConfig(kv_cache_memory_gib=0.5))
    block_bytes = kv_block_bytes(loaded_model.config, 16, torch.float32)
    blocks = int(0.5 * 2**30) // block_bytes
    assert engine.block_manager.num_blocks == blocks
    assert engine.max_model_len == loaded_model.config.max_position_embeddings == 8192
    assert f"{blocks} blocks of 16 tokens = {blocks * 16} tokens, {blocks * block_bytes} bytes" in caplog.text


@pytest.mark.slow
def test_a_pool_too_small_for_one_window_is_a_start_up_error_unless_the_window_is_lowered(loaded_model):
    with pytest.raises(EngineConfigError, match=r"cannot hold one max_model_len=8192 sequence.*at least 512 blocks"):
        LLMEngine(loaded_model, EngineConfig(num_kv_blocks=100))
    gib = 100 * kv_block_bytes(loaded_model.config, 16, torch.float32) / 2**30
    with pytest.raises(EngineConfigError, match="max_model_len"):
        LLMEngine(loaded_model, EngineConfig(kv_cache_memory_gib=gib))
    engine = LLMEngine(loaded_model, EngineConfig(num_kv_blocks=100, max_model_len=1600))
    assert engine.max_model_len == 1600
    with pytest.raises(EngineConfigError, match="context length"):
        LLMEngine(loaded_model, EngineConfig(max_model_len=10_000))
