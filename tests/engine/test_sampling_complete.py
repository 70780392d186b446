"""The complete sampler on synthetic logits: each parameter's effect on a known distribution
(fixed seeds, chi-square bounds), support sets against brute force, penalties against their
formulas, logit bias, min_tokens, logprobs, extreme values; then the same extremes, min_tokens
and seeded batch invariance through the real engine."""

from __future__ import annotations

import dataclasses
import pytest
import torch

from engine.config import EngineConfig
from engine.detokenizer import IncrementalDetokenizer
from engine.llm_engine import LLMEngine
from engine.sampler import (SamplingMetadata, apply_min_p, apply_penalties, apply_top_k_top_p,
                            gather_logprobs, sample)
from engine.sampling_params import SamplingParams

EOS = 3
# Chi-square critical values at p = 0.001, by degrees of freedom (df = categories - 1).
CHI2_CRITICAL_001 = {3: 16.27, 4: 18.47, 5: 20.52, 7: 24.32}


def run(logits, params, outputs=None, prompts=None, stops=None, generators=None):
    n, vocab = logits.shape
    meta = SamplingMetadata.build(params, prompts or [[0]] * n, outputs or [[]] * n,
                                  stops or [frozenset({EOS})] * n, generators or [None] * n, vocab)
    return sample(logits, meta)


def draws(row: torch.Tensor, params: SamplingParams, n: int = 20000, seed: int = 0,
          outputs=None) -> torch.Tensor:
    """n independent draws from one row (the same logits repeated), global generator seeded."""
    torch.manual_seed(seed)
    return run(row.expand(n, -1).clone(), [params] * n,
               outputs=[outputs or []] * n).sampled_token_ids


def chi_square(samples: torch.Tensor, expected: torch.Tensor) -> float:
    counts = torch.bincount(samples, minlength=expected.numel()).double()
    exp = expected.double() * samples.numel()
    support = exp > 0
    assert counts[~support].sum() == 0, "a token outside the expected support was drawn"
    return float(((counts[support] - exp[support]) ** 2 / exp[support]).sum())


ROW = torch.tensor([2.0, 1.0, 0.0, -1.0, 0.5, 1.5])


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_samples_follow_the_tempered_softmax(temperature):
    expected = torch.softmax(ROW / temperature, dim=0)
    stat = chi_square(draws(ROW, SamplingParams(temperature=temperature)), expected)
    assert stat < CHI2_CRITICAL_001[5], stat


def test_temperature_raises_the_entropy_as_the_softmax_predicts():
    def entropy(p):
        p = p[p > 0]
        return float(-(p * p.log()).sum())

    measured = []
    for t in (0.3, 1.0, 3.0):
        freq = torch.bincount(draws(ROW, SamplingParams(temperature=t)), minlength=6).double() / 20000
        measured.append(entropy(freq))
        assert abs(measured[-1] - entropy(torch.softmax(ROW.double() / t, 0))) < 0.02
    assert measured[0] < measured[1] < measured[2]


def brute_force_support(row: torch.Tensor, temperature: float, k: int | None, p: float,
                        min_p: float) -> set[int]:
    """Top-k, then top-p, then min-p, one token at a time in float64."""
    order = sorted(range(row.numel()), key=lambda i: -row[i].item())[:k or row.numel()]
    probs = torch.softmax(torch.tensor([row[i].item() / temperature for i in order],
                                       dtype=torch.float64), 0).tolist()
    kept, mass = [], 0.0
    for token, prob in zip(order, probs):
        if p < 1.0 and mass >= p:
            break
        kept.append((token, prob))
        mass += prob
    best = max(prob for _, prob in kept)
    return {token for token, prob in kept if prob >= min_p * best}


@pytest.mark.parametrize("seed", range(5))
def test_top_k_top_p_min_p_support_matches_brute_force(seed):
    gen = torch.Generator().manual_seed(seed)
    n, vocab = 6, 300
    logits = torch.randn(n, vocab, generator=gen) * 2
    params = [SamplingParams(temperature=float(torch.rand(1, generator=gen)) + 0.3,
                             top_k=int(torch.randint(1, vocab + 1, (1,), generator=gen)) if i % 2 else None,
                             top_p=float(torch.rand(1, generator=gen).clamp_min(0.05)) if i % 3 else 1.0,
                             min_p=float(torch.rand(1, generator=gen)) * 0.3 if i != 4 else 0.0)
              for i in range(n)]
    meta = SamplingMetadata.build(params, [[0]] * n, [[]] * n, [frozenset()] * n, [None] * n, vocab)
    scaled = logits / meta.temperatures[:, None]
    masked = apply_min_p(apply_top_k_top_p(scaled, meta.top_ks, meta.top_ps), meta.min_ps)
    for i, p in enumerate(params):
        kept = set(torch.isfinite(masked[i]).nonzero().flatten().tolist())
        assert kept == brute_force_support(logits[i], p.temperature, p.top_k, p.top_p, p.min_p), i
        # and the sampler never leaves it
        torch.manual_seed(seed)
        out = run(logits[i].expand(400, -1).clone(), [p] * 400).sampled_token_ids
        assert set(out.tolist()) <= kept


def test_min_p_samples_follow_the_renormalised_kept_set():
    probs = torch.softmax(ROW, 0)
    keep = probs >= 0.2 * probs.max()
    expected = torch.where(keep, probs, 0) / probs[keep].sum()
    assert keep.sum() == 4
    stat = chi_square(draws(ROW, SamplingParams(min_p=0.2)), expected)
    assert stat < CHI2_CRITICAL_001[3], stat


def test_min_p_one_keeps_only_the_most_likely():
    logits = torch.randn(4, 1000, generator=torch.Generator().manual_seed(4))
    out = run(logits, [SamplingParams(min_p=1.0, temperature=5.0)] * 4).sampled_token_ids
    assert torch.equal(out, logits.argmax(-1))


def reference_penalties(logits, prompt, output, rep, presence, frequency):
    """The formulas one token at a time (CTRL / Hugging Face; OpenAI)."""
    out = logits.clone()
    for t in range(logits.numel()):
        x = out[t].item()
        if t in prompt or t in output:
            x = x / rep if x > 0 else x * rep
        c = output.count(t)
        x -= frequency * c + presence * (c > 0)
        out[t] = x
    return out


@pytest.mark.parametrize("rep, presence, frequency", [
    (1.3, 0.0, 0.0), (0.7, 0.0, 0.0), (1.0, 0.8, 0.0), (1.0, 0.0, 0.5), (1.5, -1.0, 2.0),
    (1.0, -2.0, -2.0)])
def test_penalties_change_logits_exactly_per_formula(rep, presence, frequency):
    gen = torch.Generator().manual_seed(5)
    vocab = 40
    logits = torch.randn(2, vocab, generator=gen) * 3
    prompts = [[1, 2, 3, 3, 17], [5]]
    outputs = [[3, 4, 4, 4, 20, 1], []]
    params = [SamplingParams(repetition_penalty=rep, presence_penalty=presence,
                             frequency_penalty=frequency)] * 2
    meta = SamplingMetadata.build(params, prompts, outputs, [frozenset()] * 2, [None] * 2, vocab)
    got = apply_penalties(logits, meta.prompt_token_ids, meta.output_token_ids,
                          meta.repetition_penalties, meta.presence_penalties,
                          meta.frequency_penalties)
    for i in range(2):
        expected = reference_penalties(logits[i], prompts[i], outputs[i], rep, presence, frequency)
        torch.testing.assert_close(got[i], expected, rtol=1e-6, atol=1e-6)


def test_penalties_apply_per_row_and_shift_the_distribution():
    # Row 0 is penalised for having produced token 0 three times; row 1 (same logits) is not.
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]] * 2)
    outputs = [[0, 0, 0], [0, 0, 0]]
    params = [SamplingParams(frequency_penalty=1.0), SamplingParams()]
    meta = SamplingMetadata.build(params, [[1]] * 2, outputs, [frozenset()] * 2, [None] * 2, 4)
    got = apply_penalties(logits, meta.prompt_token_ids, meta.output_token_ids,
                          meta.repetition_penalties, meta.presence_penalties,
                          meta.frequency_penalties)
    assert got[0].tolist() == [-1.0, 1.0, 0.0, -1.0] and torch.equal(got[1], logits[1])
    stat = chi_square(draws(logits[0], params[0], outputs=outputs[0]), torch.softmax(got[0], 0))
    assert stat < CHI2_CRITICAL_001[3], stat


def test_greedy_honours_bias_and_penalties():
    logits = torch.tensor([[3.0, 2.5, 0.0, -1.0]] * 3)
    params = [SamplingParams(temperature=0, logit_bias={2: 4.0}),
              SamplingParams(temperature=0, repetition_penalty=2.0),
              SamplingParams(temperature=0)]
    out = run(logits, params, prompts=[[0], [0], [0]]).sampled_token_ids
    assert out.tolist() == [2, 1, 0]  # 0 + 4 > 3; 3 / 2 < 2.5; untouched


def test_logit_bias_shifts_the_distribution():
    bias = {0: -2.0, 3: 3.0, 5: 0.5}
    expected = ROW.clone()
    for t, b in bias.items():
        expected[t] += b
    stat = chi_square(draws(ROW, SamplingParams(logit_bias=bias)), torch.softmax(expected, 0))
    assert stat < CHI2_CRITICAL_001[5], stat


def test_min_tokens_masks_stop_tokens_until_reached():
    logits = torch.tensor([[0.0, 0.0, 0.0, 30.0, 0.0]] * 4)  # EOS (3) holds ~all the mass
    params = [SamplingParams(min_tokens=2, temperature=0), SamplingParams(min_tokens=2),
              SamplingParams(min_tokens=2, temperature=0), SamplingParams(min_tokens=2)]
    outputs = [[7], [7], [7, 8], [7, 8]]  # rows 0, 1: one token so far; rows 2, 3: two
    torch.manual_seed(0)
    for _ in range(50):
        out = run(logits, params, outputs=outputs).sampled_token_ids.tolist()
        assert out[0] != EOS and out[1] != EOS and out[2] == EOS
    # stop_token_ids (not only EOS) are masked too
    stops = [frozenset({EOS, 1})] * 2
    out = run(torch.tensor([[0.0, 9.0, 0.0, 8.0, 1.0]] * 2), [params[0]] * 2,
              outputs=[[7], [7]], stops=stops).sampled_token_ids
    assert out.tolist() == [4, 4]


@pytest.mark.slow
def test_detokenizer_ignores_stop_strings_before_min_tokens(loaded_model):
    tok = loaded_model.tokenizer
    ids = tok.encode("one two one two one two")
    detok = IncrementalDetokenizer(tok, ["two"], min_tokens=3)
    text = "".join(detok.add_token(t) for t in ids[:3])
    assert text == tok.decode(ids[:3]) and "two" in text and not detok.stopped
    for t in ids[3:]:
        detok.add_token(t)
        if detok.stopped:
            break
    assert detok.stopped and detok.text == "one two one "


def test_logprobs_are_raw_log_softmax_with_ranks():
    gen = torch.Generator().manual_seed(6)
    logits = torch.randn(3, 500, generator=gen)
    params = [SamplingParams(logprobs=5, temperature=0.5, logit_bias={7: 50.0}),
              SamplingParams(logprobs=0, temperature=0), SamplingParams(temperature=0)]
    out = run(logits, params)
    ref = logits.log_softmax(-1)
    assert out.logprobs.shape == (3, 6) and out.logprob_token_ids.shape == (3, 6)
    assert out.sampled_token_ids[0] == 7  # the bias decides the token, not the raw logprob
    for i in range(3):
        tok = out.sampled_token_ids[i]
        assert out.logprob_token_ids[i, 0] == tok
        torch.testing.assert_close(out.logprobs[i, 0], ref[i, tok])
        assert out.ranks[i] == int((ref[i] > ref[i, tok]).sum()) + 1
        values, ids = ref[i].topk(5)
        assert torch.equal(out.logprob_token_ids[i, 1:], ids)
        torch.testing.assert_close(out.logprobs[i, 1:], values)
    assert out.ranks[1] == 1 and out.ranks[0] > 1
    assert run(logits, [SamplingParams()] * 3).logprobs is None


def test_gather_logprobs_top_is_sorted():
    values, ids, ranks = gather_logprobs(torch.randn(2, 100), torch.tensor([0, 1]), 20)
    assert (values[:, 1:].diff(dim=1) <= 0).all()


def test_seeded_rows_with_penalties_and_min_p_ignore_their_neighbours():
    logits = torch.randn(5, 2000, generator=torch.Generator().manual_seed(7))
    target = SamplingParams(temperature=1.1, min_p=0.02, repetition_penalty=1.3,
                            frequency_penalty=0.4, presence_penalty=0.3, top_k=400, seed=99)
    other = SamplingParams(temperature=0.8, top_p=0.5, logit_bias={1: 5.0})

    def run_steps(rows: list[int], params: list[SamplingParams], seeds: list[int | None]):
        gens = [torch.Generator().manual_seed(s) if s is not None else None for s in seeds]
        outputs = [[] for _ in rows]
        for _ in range(12):
            out = run(logits[rows], params, outputs=outputs, prompts=[[5, 6]] * len(rows),
                      generators=gens).sampled_token_ids.tolist()
            for o, t in zip(outputs, out):
                o.append(t)
        return outputs[rows.index(2)]

    alone = run_steps([2], [target], [99])
    mixed = run_steps([0, 2, 4, 1], [other, target, other, SamplingParams(temperature=0)],
                      [None, 99, 5, None])
    assert alone == mixed
    assert run_steps([2], [target], [100]) != alone


EXTREMES = [
    SamplingParams(temperature=1e-6),
    SamplingParams(temperature=100.0),
    SamplingParams(temperature=100.0, top_p=1e-9),
    SamplingParams(min_p=1.0, temperature=100.0),
    SamplingParams(repetition_penalty=100.0, presence_penalty=2.0, frequency_penalty=2.0),
    SamplingParams(repetition_penalty=1e-6, presence_penalty=-2.0, frequency_penalty=-2.0,
                   temperature=1e-6),
    SamplingParams(repetition_penalty=1e-30, temperature=1e-30, top_k=1),
    SamplingParams(temperature=0, repetition_penalty=1e-30, presence_penalty=-2.0),
    SamplingParams(logit_bias={t: 100.0 for t in range(0, 1000, 3)}, temperature=1e-6),
]


def test_extreme_values_give_valid_tokens_in_the_sampler():
    vocab = 1000
    logits = torch.randn(len(EXTREMES), vocab, generator=torch.Generator().manual_seed(8)) * 20
    outputs = [list(range(0, 600, 7))] * len(EXTREMES)
    out = run(logits, EXTREMES, outputs=outputs, prompts=[list(range(300))] * len(EXTREMES))
    assert ((out.sampled_token_ids >= 0) & (out.sampled_token_ids < vocab)).all()
    # a temperature of 1e-6 or less is greedy in effect: the argmax of the processed logits
    greedy = run(logits, [dataclasses.replace(p, temperature=0) for p in EXTREMES],
                 outputs=outputs, prompts=[list(range(300))] * len(EXTREMES)).sampled_token_ids
    near_greedy = [i for i, p in enumerate(EXTREMES) if 0 < p.temperature <= 1e-6]
    assert len(near_greedy) == 4
    assert out.sampled_token_ids[near_greedy].tolist() == greedy[near_greedy].tolist()
    # one bias of -100 everywhere but one token: that token, at any temperature
    only = {t: -100.0 for t in range(vocab) if t != 123}
    torch.manual_seed(0)
    out = run(logits, [SamplingParams(logit_bias=only, temperature=1.0)] * len(EXTREMES))
    assert set(out.sampled_token_ids.tolist()) == {123}


# -- through the real engine --------------------------------------------------------------


def make_engine(loaded_model) -> LLMEngine:
    return LLMEngine(loaded_model, EngineConfig(num_kv_blocks=64, max_model_len=1024))


def chat(loaded_model, question: str) -> str:
    return loaded_model.chat_template.render([{"role": "user", "content": question}])


@pytest.mark.slow
def test_extreme_values_through_the_engine(loaded_model):
    engine = make_engine(loaded_model)
    vocab = loaded_model.tokenizer.vocab_size
    only = {t: -100.0 for t in range(vocab) if t != 1000}
    params = [SamplingParams(max_tokens=4, seed=1, ignore_eos=True, **{
        k: getattr(p, k) for k in ("temperature", "top_p", "top_k", "min_p", "repetition_penalty",
                                   "presence_penalty", "frequency_penalty", "logit_bias")})
        for p in EXTREMES]
    params.append(SamplingParams(max_tokens=4, logit_bias=only, temperature=1.0))
    outs = engine.generate([chat(loaded_model, "Count to ten.")] * len(params), params)
    for out in outs:
        assert out.finish_reason == "length" and len(out.new_token_ids) == 4
        assert all(0 <= t < vocab for t in out.new_token_ids)
    assert outs[-1].new_token_ids == [1000] * 4
    assert engine.num_free_blocks() == 64


@pytest.mark.slow
def test_min_tokens_defers_eos_on_the_real_model(loaded_model):
    engine = make_engine(loaded_model)
    prompt = chat(loaded_model, "Reply with just the word yes.")
    short = engine.generate(prompt, SamplingParams(max_tokens=30, temperature=0))[0]
    n = len(short.new_token_ids)
    assert short.finish_reason == "stop" and short.new_token_ids[-1] in loaded_model.tokenizer.stop_token_ids
    held = engine.generate(prompt, SamplingParams(max_tokens=n + 6, temperature=0,
                                                  min_tokens=n + 3))[0]
    assert len(held.new_token_ids) >= n + 3
    assert held.new_token_ids[:n - 1] == short.new_token_ids[:n - 1]  # same until the EOS
    eos = loaded_model.tokenizer.stop_token_ids
    assert not any(t in eos for t in held.new_token_ids[:n + 2])


@pytest.mark.slow
def test_seeded_penalised_request_is_the_same_alone_and_batched(loaded_model):
    engine = make_engine(loaded_model)
    prompt = chat(loaded_model, "Invent a name for a dog.")
    params = SamplingParams(max_tokens=12, temperature=0.9, min_p=0.05, repetition_penalty=1.2,
                            frequency_penalty=0.5, presence_penalty=0.3, seed=4321, ignore_eos=True)
    alone = engine.generate(prompt, params)[0].new_token_ids
    mixed = engine.generate(
        [chat(loaded_model, "What is 2+2?"), prompt, chat(loaded_model, "Name a fruit.")],
        [SamplingParams(max_tokens=6, temperature=1.0), params,
         SamplingParams(max_tokens=15, temperature=0, frequency_penalty=1.0)])
    assert mixed[1].new_token_ids == alone
