"""Triton kernels == their plain-PyTorch references (engine.attention), over a sweep of shapes.

Without CUDA the kernels run on CPU tensors under Triton's interpreter (TRITON_INTERPRET=1,
set here before the kernel modules are (re)imported, since `triton.jit` reads it when it
decorates); shapes stay tiny because the interpreter is slow. With CUDA the same sweep runs
compiled on the GPU, and the `gpu`-marked tests add SmolLM2's real shapes and the engine's
greedy output against the CPU float32 path.
"""

from __future__ import annotations

import dataclasses
import importlib
import os

import pytest
import torch

HAS_CUDA = torch.cuda.is_available()
if not HAS_CUDA:
    os.environ["TRITON_INTERPRET"] = "1"
pytest.importorskip("triton")

import engine.kernels.kv_cache_write as kv_cache_write_mod  # noqa: E402
import engine.kernels.paged_attention as decode_mod  # noqa: E402
import engine.kernels.prefill_attention as prefill_mod  # noqa: E402
import engine.kernels.dispatch as dispatch_mod  # noqa: E402
from engine.attention import (  # noqa: E402
    make_attention_metadata, paged_attention as ref_paged_attention,
    write_kv_cache as ref_write_kv_cache,
)

# Another module may have imported the kernels first, decorated for the GPU: re-decorate.
for _mod in (kv_cache_write_mod, decode_mod, prefill_mod, dispatch_mod):
    importlib.reload(_mod)

DEVICE = "cuda" if HAS_CUDA else "cpu"
# (num_heads, num_kv_heads): GQA ratios 1, 3 and 8.
HEADS = [(2, 2), (6, 2), (8, 1)]
TOL = {torch.float32: 1e-5, torch.bfloat16: 2e-2}


def _random_cache(num_blocks: int, block_size: int, num_kv_heads: int, head_dim: int,
                  dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    # Random everywhere (not zeros), so a read of a wrong block or slot changes the result.
    cache = torch.randn(2, num_blocks, block_size, num_kv_heads, head_dim, generator=gen)
    return cache.to(dtype).to(DEVICE)


def _blocks_needed(seq_lens: list[int], block_size: int) -> int:
    """Pool size _block_tables needs: every sequence's blocks, the first one's spare block, and
    the hole after each sequence."""
    return sum(-(-s // block_size) for s in seq_lens) + 1 + len(seq_lens)


def _block_tables(seq_lens: list[int], block_size: int, num_blocks: int,
                  gen: torch.Generator) -> list[list[int]]:
    """Shuffled block ids, with unused ids between sequences (holes) and, for the first
    sequence, one spare block past what it needs (a table longer than its sequence).
    Raises ValueError when the pool has fewer than _blocks_needed blocks."""
    if num_blocks < _blocks_needed(seq_lens, block_size):
        raise ValueError(f"{len(seq_lens)} sequences of {sum(seq_lens)} tokens need "
                         f"{_blocks_needed(seq_lens, block_size)} blocks, the pool has {num_blocks}")
    ids = torch.randperm(num_blocks, generator=gen).tolist()
    tables = []
    for i, seq_len in enumerate(seq_lens):
        need = -(-seq_len // block_size) + (1 if i == 0 else 0)
        tables.append(ids[:need])
        ids = ids[need + 1:]  # skip one id: a hole in the pool
    return tables


def _reference_attention(query, cache, seq_lens, query_lens, tables, block_size, scale):
    """The PyTorch reference, always on CPU in float32 (on CUDA, engine.attention's public
    functions dispatch to these very kernels)."""
    metadata = make_attention_metadata(seq_lens, query_lens, tables, block_size, "cpu")
    return ref_paged_attention(query.float().cpu(), cache.float().cpu(), metadata, scale)


def _reference_write(key, value, cache, slot_mapping):
    cpu = cache.cpu()
    ref_write_kv_cache(key.cpu(), value.cpu(), cpu, slot_mapping.cpu())
    return cpu


def _compare(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype) -> float:
    diff = (actual.float() - expected.float()).abs().max().item()
    assert diff <= TOL[dtype] * max(1.0, expected.float().abs().max().item()), diff
    return diff


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("num_kv_heads,head_dim", [(1, 16), (3, 64)])
@pytest.mark.parametrize("block_size", [4, 16])
def test_write_kv_cache_equals_reference(block_size, num_kv_heads, head_dim, dtype):
    gen = torch.Generator().manual_seed(block_size + head_dim)
    num_blocks = 12
    cache = _random_cache(num_blocks, block_size, num_kv_heads, head_dim, dtype, gen)
    expected = cache.clone()
    slots = torch.randperm(num_blocks * block_size, generator=gen)[:7].to(DEVICE)
    # K/V in the cache's dtype (as the engine writes them); value is a strided view, as the
    # model's qkv split is.
    key = torch.randn(7, num_kv_heads, head_dim, generator=gen).to(dtype).to(DEVICE)
    value = torch.randn(7, 2 * num_kv_heads, head_dim, generator=gen).to(dtype).to(DEVICE)[:, ::2]
    kv_cache_write_mod.write_kv_cache(key, value, cache, slots)
    assert torch.equal(cache.cpu(), _reference_write(key, value, expected, slots))


def test_write_kv_cache_casts_float32_into_bfloat16_cache():
    gen = torch.Generator().manual_seed(1)
    cache = _random_cache(4, 4, 2, 16, torch.bfloat16, gen)
    expected = cache.clone()
    slots = torch.tensor([3, 9, 14], device=DEVICE)
    key, value = (torch.randn(3, 2, 16, generator=gen).to(DEVICE) for _ in "kv")
    kv_cache_write_mod.write_kv_cache(key, value, cache, slots)
    expected = _reference_write(key, value, expected, slots)
    cache = cache.cpu()
    # Exact on CUDA (round to nearest even); within one bfloat16 ulp under the interpreter,
    # which truncates.
    ulp = 0.0 if HAS_CUDA else 2.0 ** -7
    diff = (cache.float() - expected.float()).abs()
    assert (diff <= ulp * expected.float().abs()).all()
    assert cache.float().flatten(1, 2)[:, [3, 9, 14]].abs().sum() > 0


def test_write_kv_cache_skips_negative_slots():
    cache = torch.zeros(2, 3, 4, 1, 16, device=DEVICE)
    key = torch.ones(2, 1, 16, device=DEVICE)
    kv_cache_write_mod.write_kv_cache(key, 2 * key, cache,
                                      torch.tensor([5, -1], device=DEVICE))
    assert cache.sum().item() == 3 * 16  # only slot 5 written: K ones, V twos


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("head_dim", [16, 64])
@pytest.mark.parametrize("num_heads,num_kv_heads", HEADS)
@pytest.mark.parametrize("block_size", [4, 16])
def test_paged_decode_equals_reference(block_size, num_heads, num_kv_heads, head_dim, dtype,
                                      record_figure):
    gen = torch.Generator().manual_seed(num_heads * 100 + head_dim + block_size)
    seq_lens = [1, 2 * block_size + 3, block_size, 5]  # ragged, one of length 1, one exactly full
    num_blocks = 20
    cache = _random_cache(num_blocks, block_size, num_kv_heads, head_dim, dtype, gen)
    tables = _block_tables(seq_lens, block_size, num_blocks, gen)
    metadata = make_attention_metadata(seq_lens, [1] * len(seq_lens), tables, block_size, DEVICE)
    query = torch.randn(len(seq_lens), num_heads, head_dim, generator=gen).to(dtype).to(DEVICE)
    scale = head_dim ** -0.5
    out = dispatch_mod.paged_attention(query, cache, metadata, scale)
    expected = _reference_attention(query, cache, seq_lens, [1] * len(seq_lens), tables,
                                    block_size, scale)
    assert out.dtype == dtype and out.shape == query.shape
    record_figure("max_abs_error", _compare(out.cpu(), expected, dtype), kernel="decode",
                  dtype=str(dtype).removeprefix("torch."), block_size=block_size,
                  num_heads=num_heads, num_kv_heads=num_kv_heads, head_dim=head_dim)


def test_paged_decode_zero_length_row_is_zero():
    # A padded CUDA-graph row (seq_len 0) must come out finite.
    cache = torch.randn(2, 4, 4, 1, 16, device=DEVICE)
    out = decode_mod.paged_decode_attention(
        torch.randn(2, 2, 16, device=DEVICE), cache,
        torch.tensor([[1], [0]], dtype=torch.int32, device=DEVICE),
        torch.tensor([3, 0], device=DEVICE), 4, 0.25)
    assert torch.isfinite(out).all() and out[1].abs().sum().item() == 0
    assert out[0].abs().sum().item() > 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("head_dim", [16, 64])
@pytest.mark.parametrize("num_heads,num_kv_heads", HEADS)
@pytest.mark.parametrize("block_size", [4, 16])
def test_paged_prefill_equals_reference(block_size, num_heads, num_kv_heads, head_dim, dtype,
                                       record_figure):
    gen = torch.Generator().manual_seed(num_heads * 100 + head_dim + block_size + 7)
    # (seq_len, query_len): a whole prompt longer than one query tile, a chunk after a cached
    # prefix (prefix cache / chunked prefill), a decode mixed in, and a one-token prompt.
    batch = [(21, 21), (2 * block_size + 11, 9), (6, 1), (1, 1)]
    seq_lens = [s for s, _ in batch]
    query_lens = [q for _, q in batch]
    num_blocks = 30
    cache = _random_cache(num_blocks, block_size, num_kv_heads, head_dim, dtype, gen)
    tables = _block_tables(seq_lens, block_size, num_blocks, gen)
    metadata = make_attention_metadata(seq_lens, query_lens, tables, block_size, DEVICE)
    query = torch.randn(sum(query_lens), num_heads, head_dim, generator=gen).to(dtype).to(DEVICE)
    scale = head_dim ** -0.5
    out = dispatch_mod.paged_attention(query, cache, metadata, scale)
    expected = _reference_attention(query, cache, seq_lens, query_lens, tables, block_size, scale)
    assert out.dtype == dtype and out.shape == query.shape
    record_figure("max_abs_error", _compare(out.cpu(), expected, dtype), kernel="prefill",
                  dtype=str(dtype).removeprefix("torch."), block_size=block_size,
                  num_heads=num_heads, num_kv_heads=num_kv_heads, head_dim=head_dim)


def test_write_then_attend_matches_reference_end_to_end():
    """One layer's step through the dispatch (write, then attend) == the reference step."""
    gen = torch.Generator().manual_seed(3)
    block_size, num_heads, num_kv_heads, head_dim = 4, 6, 2, 16
    seq_lens, query_lens = [9, 3], [4, 1]
    tables = _block_tables(seq_lens, block_size, 10, gen)
    metadata = make_attention_metadata(seq_lens, query_lens, tables, block_size, DEVICE)
    cache = _random_cache(10, block_size, num_kv_heads, head_dim, torch.float32, gen)
    expected_cache = cache.clone()
    key, value = (torch.randn(5, num_kv_heads, head_dim, generator=gen).to(DEVICE) for _ in "kv")
    query = torch.randn(5, num_heads, head_dim, generator=gen).to(DEVICE)
    dispatch_mod.write_kv_cache(key, value, cache, metadata.slot_mapping)
    expected_cache = _reference_write(key, value, expected_cache, metadata.slot_mapping)
    out = dispatch_mod.paged_attention(query, cache, metadata, 0.25)
    expected = _reference_attention(query, expected_cache, seq_lens, query_lens, tables,
                                    block_size, 0.25)
    _compare(out.cpu(), expected, torch.float32)


class TestLauncherChecks:
    def _args(self):
        cache = torch.zeros(2, 4, 4, 2, 16, device=DEVICE)
        tables = torch.zeros(2, 1, dtype=torch.int32, device=DEVICE)
        seq_lens = torch.ones(2, dtype=torch.int64, device=DEVICE)
        return torch.zeros(2, 4, 16, device=DEVICE), cache, tables, seq_lens

    def test_decode_rejects_heads_not_multiple_of_kv_heads(self):
        q, cache, tables, seq_lens = self._args()
        with pytest.raises(ValueError, match="multiple of num_kv_heads"):
            decode_mod.paged_decode_attention(q[:, :3], cache, tables, seq_lens, 4, 1.0)

    def test_decode_rejects_int64_block_tables(self):
        q, cache, tables, seq_lens = self._args()
        with pytest.raises(ValueError, match="block_tables"):
            decode_mod.paged_decode_attention(q, cache, tables.long(), seq_lens, 4, 1.0)

    def test_decode_rejects_wrong_block_size_and_strided_head_dim(self):
        q, cache, tables, seq_lens = self._args()
        with pytest.raises(ValueError, match="block_size"):
            decode_mod.paged_decode_attention(q, cache, tables, seq_lens, 8, 1.0)
        with pytest.raises(ValueError, match="unit stride"):
            decode_mod.paged_decode_attention(
                torch.zeros(2, 4, 32, device=DEVICE)[..., ::2], cache, tables, seq_lens, 4, 1.0)

    def test_rejects_non_contiguous_or_integer_cache(self):
        q, cache, tables, seq_lens = self._args()
        with pytest.raises(ValueError, match="contiguous"):
            decode_mod.paged_decode_attention(q, cache.transpose(2, 3), tables, seq_lens, 4, 1.0)
        with pytest.raises(ValueError, match="float32, bfloat16"):
            kv_cache_write_mod.write_kv_cache(q[:, :2], q[:, :2], cache.int(),
                                              torch.zeros(2, dtype=torch.int64, device=DEVICE))

    def test_write_rejects_mismatched_token_counts(self):
        q, cache, _, _ = self._args()
        with pytest.raises(ValueError, match="num_tokens"):
            kv_cache_write_mod.write_kv_cache(q[:, :2], q[:1, :2], cache,
                                              torch.zeros(2, dtype=torch.int64, device=DEVICE))

    def test_prefill_rejects_bad_query_start_loc(self):
        q, cache, tables, seq_lens = self._args()
        with pytest.raises(ValueError, match="query_start_loc"):
            prefill_mod.paged_prefill_attention(
                q, cache, tables, seq_lens, torch.zeros(2, dtype=torch.int64, device=DEVICE),
                1, 4, 1.0)

    def test_rejects_tensors_on_different_devices(self):
        q, cache, tables, seq_lens = self._args()
        with pytest.raises(ValueError, match="is on meta"):
            decode_mod.paged_decode_attention(q, cache, tables, seq_lens.to("meta"), 4, 1.0)


# -- real shapes on a GPU ---------------------------------------------------------------------

SMOLLM2 = dict(num_heads=9, num_kv_heads=3, head_dim=64, block_size=16)


def _smollm2_batches(gen: torch.Generator) -> list[tuple[list[int], list[int]]]:
    """(seq_lens, query_lens) of two steps at SmolLM2's shapes: 32 decodes of 1-1,499 tokens,
    then a mixed prefill batch (a whole prompt, a chunk after a cached prefix, a decode, a short
    chunk of a 2,000-token sequence)."""
    decode_lens = torch.randint(1, 1500, (32,), generator=gen).tolist()
    prefill = [(512, 512), (812, 300), (40, 1), (2000, 17)]
    return [(decode_lens, [1] * 32), ([s for s, _ in prefill], [q for _, q in prefill])]


def test_smollm2_shapes_setup_fits_its_pool():
    """The GPU test's setup, run on CPU: the pool holds every batch's block tables (each
    sequence has its own blocks, enough for its length) and the metadata builds."""
    gen = torch.Generator().manual_seed(0)
    batches = _smollm2_batches(gen)
    bs = SMOLLM2["block_size"]
    num_blocks = max(_blocks_needed(seq_lens, bs) for seq_lens, _ in batches)
    assert num_blocks > 1024  # the old fixed pool of 1,024 was too small for these draws
    for seq_lens, query_lens in batches:
        tables = _block_tables(seq_lens, bs, num_blocks, gen)
        ids = [i for table in tables for i in table]
        assert len(ids) == len(set(ids)) and all(0 <= i < num_blocks for i in ids)
        assert all(len(t) * bs >= s for t, s in zip(tables, seq_lens))
        metadata = make_attention_metadata(seq_lens, query_lens, tables, bs, "cpu")
        assert metadata.slot_mapping.numel() == sum(query_lens)
        assert int(metadata.slot_mapping.max()) < num_blocks * bs
    with pytest.raises(ValueError, match="need"):
        _block_tables(batches[0][0], bs, 1024, gen)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_kernels_at_smollm2_shapes(dtype, record_figure):
    gen = torch.Generator().manual_seed(0)
    bs, h, kvh, d = (SMOLLM2[k] for k in ("block_size", "num_heads", "num_kv_heads", "head_dim"))
    batches = _smollm2_batches(gen)
    num_blocks = max(_blocks_needed(seq_lens, bs) for seq_lens, _ in batches)
    cache = _random_cache(num_blocks, bs, kvh, d, dtype, gen)
    scale = d ** -0.5
    for step, (seq_lens, query_lens) in zip(("decode", "prefill"), batches):
        tables = _block_tables(seq_lens, bs, num_blocks, gen)
        metadata = make_attention_metadata(seq_lens, query_lens, tables, bs, DEVICE)
        query = torch.randn(sum(query_lens), h, d, generator=gen).to(dtype).to(DEVICE)
        key, value = (torch.randn(sum(query_lens), kvh, d, generator=gen).to(dtype).to(DEVICE)
                      for _ in "kv")
        expected_cache = cache.clone()
        dispatch_mod.write_kv_cache(key, value, cache, metadata.slot_mapping)
        expected_cache = _reference_write(key, value, expected_cache, metadata.slot_mapping)
        assert torch.equal(cache.cpu(), expected_cache)
        out = dispatch_mod.paged_attention(query, cache, metadata, scale)
        expected = _reference_attention(query, cache, seq_lens, query_lens, tables, bs, scale)
        record_figure("max_abs_error", _compare(out.cpu(), expected, dtype), kernel=step,
                      dtype=str(dtype).removeprefix("torch."), shape="smollm2",
                      num_seqs=len(seq_lens), max_seq_len=max(seq_lens),
                      num_tokens=sum(query_lens))


def _agreement(a: list[int], b: list[int]) -> float:
    """Fraction of tokens before the first divergence (greedy outputs diverge for good)."""
    same = 0
    for x, y in zip(a, b):
        if x != y:
            break
        same += 1
    return same / max(len(a), len(b), 1)


GREEDY_PROMPTS = ["The capital of France is", "def fibonacci(n):", "Once upon a time",
                  "List three colors:", "Water boils at", "The largest planet is"]


def _greedy_config(device: str):
    """256 blocks of 16 tokens hold 4,096 tokens, so the window is lowered from the model's
    8,192 to 1,024 (prompts here are short and generate 48 tokens): the engine refuses a pool
    that cannot hold one max_model_len sequence."""
    from engine.config import EngineConfig

    return EngineConfig(device=device, num_kv_blocks=256, max_model_len=1024)


def test_greedy_check_config_fits_a_model_with_an_8192_token_window(tiny_model):
    """The GPU greedy test's engine config, built on CPU: a model whose window is 8,192 tokens
    takes it (it refused EngineConfig(num_kv_blocks=256) alone)."""
    from engine.errors import EngineConfigError
    from engine.llm_engine import LLMEngine

    assert tiny_model.config.max_position_embeddings == 8192
    assert LLMEngine(tiny_model, _greedy_config("cpu")).max_model_len == 1024
    with pytest.raises(EngineConfigError, match="cannot hold one max_model_len=8192"):
        LLMEngine(tiny_model, dataclasses.replace(_greedy_config("cpu"), max_model_len=None))


def _greedy_agreement(path: str, dtype: torch.dtype) -> list[float]:
    from engine.llm_engine import LLMEngine
    from engine.loader import load_model
    from engine.sampling_params import SamplingParams

    params = SamplingParams(max_tokens=48, temperature=0, ignore_eos=True)
    cpu_model = load_model(path, quantization="none")  # the float32 reference, not the fast path
    cpu = LLMEngine(cpu_model, _greedy_config("cpu")).generate(GREEDY_PROMPTS, params)
    cuda_model = load_model(path, device="cuda", dtype=dtype)
    cuda = LLMEngine(cuda_model, _greedy_config("cuda")).generate(GREEDY_PROMPTS, params)
    return [_agreement(a.new_token_ids, b.new_token_ids) for a, b in zip(cpu, cuda)]


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs CUDA")
@pytest.mark.parametrize("dtype,min_agreement", [(torch.float32, 0.9), (torch.bfloat16, 0.3)])
def test_tiny_model_greedy_on_cuda_agrees_with_cpu_float32(tiny_model_dir, dtype, min_agreement,
                                                           record_figure):
    """The engine end to end on CUDA (Triton kernels, CUDA graphs, float32 logits) on a
    generated model: the bfloat16 bound is loose, random weights leave closer logits than a
    trained model's (0.6-0.8 for bfloat16 on CPU)."""
    scores = _greedy_agreement(tiny_model_dir, dtype)
    mean = sum(scores) / len(scores)
    record_figure("greedy_agreement", mean, model="tiny", dtype=str(dtype).removeprefix("torch."),
                  per_prompt=scores)
    assert mean >= min_agreement, scores


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(not HAS_CUDA, reason="needs CUDA")
@pytest.mark.parametrize("dtype,min_agreement", [(torch.float32, 0.9), (torch.bfloat16, 0.5)])
def test_engine_greedy_on_cuda_agrees_with_cpu_float32(gguf_path, dtype, min_agreement,
                                                       record_figure):
    scores = _greedy_agreement(gguf_path, dtype)
    mean = sum(scores) / len(scores)
    record_figure("greedy_agreement", mean, model="smollm2",
                  dtype=str(dtype).removeprefix("torch."), per_prompt=scores)
    assert mean >= min_agreement, scores
