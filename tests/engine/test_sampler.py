"""Sampler: top-k/top-p masks against a brute-force reference; greedy; distribution; seeds."""

from __future__ import annotations

import pytest
import torch

from engine.sampler import SamplerOutput, SamplingMetadata, apply_top_k_top_p, sample
from engine.sampling_params import SamplingParams


def run_sampler(logits: torch.Tensor, params: list[SamplingParams], generators=None,
                prompts=None, outputs=None, stops=None) -> SamplerOutput:
    """sample() over `logits` with the metadata the engine would build for these rows."""
    n, vocab = logits.shape
    meta = SamplingMetadata.build(params, prompts or [[0]] * n, outputs or [[]] * n,
                                  stops or [frozenset()] * n, generators or [None] * n, vocab)
    return sample(logits, meta)


def draw(logits, temperatures, top_ks, top_ps, generators) -> torch.Tensor:
    params = [SamplingParams(temperature=t, top_k=k, top_p=p)
              for t, k, p in zip(temperatures, top_ks, top_ps)]
    return run_sampler(logits, params, generators).sampled_token_ids


def reference_keep(row: torch.Tensor, k: int, p: float) -> set[int]:
    """Brute force, one token at a time: the k best, then the shortest prefix reaching mass p."""
    order = sorted(range(row.numel()), key=lambda i: -row[i].item())[:k]
    kept_logits = torch.tensor([row[i].item() for i in order], dtype=torch.float64)
    probs = torch.softmax(kept_logits, dim=0).tolist()
    keep, mass = set(), 0.0
    for token, prob in zip(order, probs):
        if p < 1.0 and mass >= p:
            break
        keep.add(token)
        mass += prob
    return keep


@pytest.mark.parametrize("seed", range(6))
def test_top_k_top_p_mask_matches_brute_force(seed):
    gen = torch.Generator().manual_seed(seed)
    n, vocab = 5, 200
    logits = torch.randn(n, vocab, generator=gen) * 3
    top_k = torch.randint(1, vocab + 1, (n,), generator=gen)
    top_p = torch.rand(n, generator=gen).clamp_min(0.05)
    top_p[0] = 1.0
    top_k[1] = vocab
    masked = apply_top_k_top_p(logits, top_k, top_p)
    for i in range(n):
        kept = set(torch.isfinite(masked[i]).nonzero().flatten().tolist())
        assert kept == reference_keep(logits[i], int(top_k[i]), float(top_p[i])), i
        assert torch.equal(masked[i][list(kept)], logits[i][list(kept)])


def test_top_k_only_and_top_p_only():
    logits = torch.tensor([[1.0, 4.0, 3.0, 2.0]])
    assert torch.isfinite(apply_top_k_top_p(logits, torch.tensor([2]), None)).tolist() == \
        [[False, True, True, False]]
    # softmax([4, 3, 2, 1]) = [0.644, 0.237, 0.087, 0.032]: 0.7 needs the two best
    assert torch.isfinite(apply_top_k_top_p(logits, None, torch.tensor([0.7]))).tolist() == \
        [[False, True, True, False]]


def test_greedy_rows_are_argmax_and_untouched_by_other_rows():
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(4, 1000, generator=gen)
    out = draw(logits, [0.0, 1.0, 0.0, 0.7], [None, 5, None, None], [1.0, 0.9, 1.0, 0.5],
                 [None, None, None, None])
    assert out.dtype == torch.int64 and out.shape == (4,)
    assert out[0] == logits[0].argmax() and out[2] == logits[2].argmax()


def test_top_k_one_is_greedy_at_any_temperature():
    logits = torch.randn(8, 500, generator=torch.Generator().manual_seed(2))
    out = draw(logits, [5.0] * 8, [1] * 8, [1.0] * 8, [None] * 8)
    assert torch.equal(out, logits.argmax(dim=-1))


def test_samples_follow_softmax_of_scaled_logits():
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0, 0.5])
    temperature = 0.8
    n = 40000
    out = draw(logits.expand(n, -1).clone(), [temperature] * n, [None] * n, [1.0] * n, [None] * n)
    freq = torch.bincount(out, minlength=5).double() / n
    expected = torch.softmax(logits.double() / temperature, dim=0)
    # 5 sigma of a binomial proportion at n = 40000 is below 0.0125
    assert torch.allclose(freq, expected, atol=0.0125), (freq, expected)


def test_samples_never_leave_the_top_p_set():
    logits = torch.tensor([3.0, 2.9, 0.0, -1.0, -2.0])
    n = 5000
    out = draw(logits.expand(n, -1).clone(), [1.0] * n, [None] * n, [0.8] * n, [None] * n)
    assert set(out.tolist()) == {0, 1}


def test_seeded_row_is_independent_of_its_neighbours():
    logits = torch.randn(6, 3000, generator=torch.Generator().manual_seed(3))

    def draw_steps(rows, seeds):
        gens = [torch.Generator().manual_seed(s) if s is not None else None for s in seeds]
        results = []
        for _ in range(10):  # ten decode steps with the same generators
            results.append(draw(logits[rows], [1.0] * len(rows), [None] * len(rows),
                                  [0.95] * len(rows), gens)[rows.index(2)].item())
        return results

    alone = draw_steps([2], [123])
    batched = draw_steps([0, 1, 2, 4], [None, 7, 123, None])
    assert alone == batched
    assert draw_steps([2], [124]) != alone
