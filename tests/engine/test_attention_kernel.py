"""The CPU fast path's attention (engine/csrc: Kernels::attend through crescent_attention) against
softmax(q K^T) V computed in float64 from the same paged pool, for both instruction sets.

A task of crescent_forward is a tile: the query heads of one KV head group for up to 16 tokens
of one sequence (up to 64 rows), each row with its own causal length. The AVX2 kernel reads keys
in blocks of 64 and computes 4 rows x 2 keys at a time, so the shapes here cross those edges
(rows not a multiple of 4, more than 64 rows, lengths around 64 and 16) and a head size that is
not a multiple of 8 (the row-by-row path)."""

from __future__ import annotations

import pytest
import torch

from engine.quant import native

from tests.engine.test_quant_kernels import cpu_flags

ISAS = ["scalar"] + (["avx2"] if {"avx2", "fma", "f16c"} <= cpu_flags() else [])


@pytest.fixture(autouse=True)
def _restore_isa():
    yield
    native.set_isa("avx2" if "avx2" in ISAS else "scalar")


def _pool(num_blocks: int, block_size: int, num_kv_heads: int, head_dim: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(2, num_blocks, block_size, num_kv_heads, head_dim, generator=g)


def _reference(q: torch.Tensor, pool: torch.Tensor, kv_head: int, table: torch.Tensor, ctx: list[int],
               scale: float) -> torch.Tensor:
    block_size = pool.shape[2]
    out = []
    for r, n in enumerate(ctx):
        slots = [(int(table[j // block_size]), j % block_size) for j in range(n)]
        k = torch.stack([pool[0, b, o, kv_head] for b, o in slots]).double()  # [n, head_dim]
        v = torch.stack([pool[1, b, o, kv_head] for b, o in slots]).double()
        p = torch.softmax(scale * (k @ q[r].double()), dim=0)
        out.append(p @ v)
    return torch.stack(out).float()


CASES = [  # (rows, head_dim, the rows' lengths)
    (1, 64, [1]),
    (3, 64, [130, 130, 130]),  # one token's 3 query heads (a decode of SmolLM2's layout)
    (48, 64, [l for l in range(49, 65) for _ in range(3)]),  # 16 prefill tokens ending at 64
    (7, 128, [5, 63, 64, 65, 128, 129, 200]),
    (70, 64, [(37 * i) % 190 + 1 for i in range(70)]),  # more rows than one tile holds
    (5, 36, [3, 17, 64, 65, 90]),  # head size not a multiple of 8
    (12, 64, [130] * 12),  # 4 rows x 2 keys over three key blocks
    (6, 96, [1, 2, 70, 71, 140, 141]),  # 64 outputs in registers, then an 8-wide tail
]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("rows,head_dim,ctx", CASES)
def test_attention_equals_float64_softmax_over_the_paged_keys(isa, rows, head_dim, ctx) -> None:
    native.set_isa(isa)
    block_size, num_kv_heads, kv_head = 16, 3, 1
    pool = _pool(24, block_size, num_kv_heads, head_dim, seed=rows)
    table = torch.randperm(24, generator=torch.Generator().manual_seed(head_dim))[:-(-max(ctx) // block_size)]
    q = torch.randn(rows, head_dim, generator=torch.Generator().manual_seed(7))
    scale = head_dim ** -0.5
    out = native.attention(q, pool, kv_head, table, torch.tensor(ctx), scale)
    torch.testing.assert_close(out, _reference(q, pool, kv_head, table, ctx, scale), rtol=0, atol=2e-5)


@pytest.mark.parametrize("isa", ISAS)
def test_a_rows_result_does_not_depend_on_its_tile(isa) -> None:
    # Batch invariance: the same query over the same keys gives the same bits alone, as one of
    # 3 heads of a decode and as one of 48 rows of a prefill tile (and so a prefill in chunks
    # equals one prefill, tests/engine/test_fast_path.py).
    native.set_isa(isa)
    pool = _pool(16, 16, 3, 64, seed=1)
    table = torch.arange(15, -1, -1, dtype=torch.int32)
    q = torch.randn(48, 64, generator=torch.Generator().manual_seed(2))
    ctx = torch.tensor([150 + i // 3 for i in range(48)])
    together = native.attention(q, pool, 2, table, ctx, 0.125)
    for r in (0, 5, 46, 47):
        assert torch.equal(native.attention(q[r:r + 1], pool, 2, table, ctx[r:r + 1], 0.125), together[r:r + 1])
    assert torch.equal(native.attention(q[3:6], pool, 2, table, ctx[3:6], 0.125), together[3:6])


def test_bad_lengths_and_blocks_are_refused() -> None:
    pool = _pool(4, 16, 3, 64, seed=0)
    q = torch.randn(2, 64)
    with pytest.raises(ValueError, match="refused"):  # longer than the block table covers
        native.attention(q, pool, 0, torch.tensor([0, 1]), torch.tensor([10, 33]), 0.125)
    with pytest.raises(ValueError, match="refused"):  # a block outside the pool
        native.attention(q, pool, 0, torch.tensor([0, 4]), torch.tensor([10, 20]), 0.125)
    with pytest.raises(ValueError, match="refused"):  # an empty row
        native.attention(q, pool, 0, torch.tensor([0]), torch.tensor([0, 5]), 0.125)
    with pytest.raises(ValueError, match="kv_head"):
        native.attention(q, pool, 3, torch.tensor([0]), torch.tensor([1, 5]), 0.125)
