"""The CPU fast-path model (engine.models.llama_quantized) on the real GGUF file: what it keeps
in memory, how it refuses bad input, and that it serves by default."""

from __future__ import annotations

import pytest
import torch

from engine.attention import make_attention_metadata, positions_for
from engine.config import EngineConfig
from engine.gguf_loader import open_gguf
from engine.quant.loading import gguf_tensor_bytes

pytestmark = pytest.mark.slow


def test_weights_stay_within_1_3x_of_the_file(fast_model, loaded_model, gguf_path) -> None:
    file_bytes = gguf_tensor_bytes(open_gguf(gguf_path))
    assert fast_model.weight_bytes == fast_model.model.weight_bytes
    assert file_bytes <= fast_model.weight_bytes <= 1.3 * file_bytes
    assert loaded_model.weight_bytes > 5 * file_bytes  # the float32 reference, dequantized


def test_every_matrix_keeps_its_gguf_format(fast_model) -> None:
    model = fast_model.model
    assert model.embed.format == "q8" and model.lm_head is model.embed  # Q8_0, tied
    for layer in model.layers:
        assert [w.format for w in layer.qkv] == ["q4"] and layer.o.format == "q4"  # Q4_1
        assert [w.format for w in layer.gate_up] == ["q4"] and layer.down.format == "q4"


def _kv(fast_model, num_blocks: int = 4) -> list[torch.Tensor]:
    c = fast_model.config
    return [torch.zeros(2, num_blocks, 16, c.num_key_value_heads, c.head_dim) for _ in range(c.num_hidden_layers)]


@pytest.mark.parametrize("case", ["token", "position", "slot", "block"])
def test_out_of_range_inputs_are_refused_before_any_write(fast_model, case) -> None:
    kv = _kv(fast_model)
    ids = torch.tensor([1, 2, 3])
    meta = make_attention_metadata([3], [3], [[0]], 16)
    pos = positions_for([3], [3])
    if case == "token":
        ids = torch.tensor([1, fast_model.config.vocab_size, 3])
    elif case == "position":
        pos = torch.tensor([0, 1, 5])
    elif case == "slot":
        meta.slot_mapping = torch.tensor([0, 1, 4 * 16])
    else:
        meta.block_tables = torch.tensor([[7]], dtype=torch.int32)
    with pytest.raises(ValueError, match="CPU kernel refused"):
        fast_model.model(ids, pos, kv, meta)
    assert all(bool((t == 0).all()) for t in kv)


def test_prefill_then_decode_equals_one_prefill(fast_model) -> None:
    # The KV written by a prefill chunk and read back by later steps gives the same hidden
    # state as processing everything at once (positions, slots and block tables line up).
    ids = fast_model.tokenizer.encode("Paged attention reads keys and values through block tables.")
    n = len(ids)
    kv = _kv(fast_model)
    table = [[2, 0, 3]]
    whole = fast_model.model(torch.tensor(ids), positions_for([n], [n]), kv,
                             make_attention_metadata([n], [n], table, 16))
    kv2 = _kv(fast_model)
    fast_model.model(torch.tensor(ids[:-3]), positions_for([n - 3], [n - 3]), kv2,
                     make_attention_metadata([n - 3], [n - 3], table, 16))
    for i in range(n - 3, n):
        last = fast_model.model(torch.tensor([ids[i]]), positions_for([i + 1], [1]), kv2,
                                make_attention_metadata([i + 1], [1], table, 16))
    assert torch.equal(last[0], whole[-1])


def test_a_long_prompt_in_chunks_equals_one_prefill(fast_model) -> None:
    # 150 tokens cross the attention's 16-token tiles and 64-key blocks (engine/csrc): chunks of
    # 37 tokens (reading KV written by earlier chunks) and a decode give every position the same
    # bits as one prefill.
    words = "paged attention reads keys and values through block tables in every layer".split()
    ids = fast_model.tokenizer.encode(" ".join(words[i % len(words)] for i in range(140)))[:150]
    n = len(ids)
    assert n == 150
    table = [[9, 2, 0, 7, 3, 5, 1, 8, 4, 6]]
    whole = fast_model.model(torch.tensor(ids), positions_for([n], [n]), _kv(fast_model, 10),
                             make_attention_metadata([n], [n], table, 16))
    kv = _kv(fast_model, 10)
    parts = []
    for start in range(0, n - 1, 37):
        end = min(start + 37, n - 1)
        parts.append(fast_model.model(torch.tensor(ids[start:end]), positions_for([end], [end - start]), kv,
                                      make_attention_metadata([end], [end - start], table, 16)))
    parts.append(fast_model.model(torch.tensor(ids[-1:]), positions_for([n], [1]), kv,
                                  make_attention_metadata([n], [1], table, 16)))
    assert torch.equal(torch.cat(parts), whole)


def test_more_threads_than_attention_tasks_give_the_same_bits(fast_model) -> None:
    # A lone decode has 3 (tile, KV head) tasks; with 8 threads each is split into one task per
    # query head (engine/csrc/llama_cpu.cpp). The rows are independent: the same hidden state.
    from engine.quant import native

    ids = fast_model.tokenizer.encode("Split attention tasks must not change a single bit of the result.")
    n = len(ids)

    def decode_last(threads: int) -> torch.Tensor:
        native.set_num_threads(threads)
        kv = _kv(fast_model)
        table = [[1, 3, 0]]
        fast_model.model(torch.tensor(ids[:-1]), positions_for([n - 1], [n - 1]), kv,
                         make_attention_metadata([n - 1], [n - 1], table, 16))
        return fast_model.model(torch.tensor(ids[-1:]), positions_for([n], [1]), kv,
                                make_attention_metadata([n], [1], table, 16))

    try:
        assert torch.equal(decode_last(8), decode_last(1))
    finally:
        native.set_num_threads(torch.get_num_threads())


def test_the_engine_serves_the_fast_path_by_default() -> None:
    assert EngineConfig().quantization == "auto"
