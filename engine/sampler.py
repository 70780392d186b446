"""Turn one step's logits into next tokens: greedy, temperature, top-k, top-p, per-request seeds."""

from __future__ import annotations

from collections.abc import Sequence

import torch


def apply_top_k_top_p(logits: torch.Tensor, top_k: torch.Tensor | None,
                      top_p: torch.Tensor | None) -> torch.Tensor:
    """Mask (set to -inf) the logits that top-k, then top-p, filter out.

    logits: float32 [n, vocab]. top_k: int64 [n] (vocab for "off"). top_p: float32 [n]
    (1.0 for "off"). Returns a new float32 [n, vocab] tensor.
    Top-k keeps the k largest logits; top-p then keeps the smallest prefix of the remaining
    tokens, by descending probability, whose probability sums to >= top_p (Holtzman et al. 2019,
    "The Curious Case of Neural Text Degeneration"). Same order as Hugging Face's and vLLM's
    samplers; ties at the boundary are broken by sort order.
    """
    sorted_logits, order = logits.sort(dim=-1, descending=True)  # [n, vocab]
    vocab = logits.shape[-1]
    if top_k is not None:
        ranks = torch.arange(vocab, device=logits.device)
        sorted_logits = sorted_logits.masked_fill(ranks[None, :] >= top_k[:, None], float("-inf"))
    if top_p is not None:
        probs = sorted_logits.softmax(dim=-1)
        mass_before = probs.cumsum(dim=-1) - probs  # probability of the tokens ranked above
        drop = (mass_before >= top_p[:, None]) & (top_p[:, None] < 1.0)
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
    return torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)


def sample(logits: torch.Tensor, temperatures: Sequence[float], top_ks: Sequence[int | None],
           top_ps: Sequence[float], generators: Sequence[torch.Generator | None]) -> torch.Tensor:
    """Pick one token per row.

    logits: float32 [n, vocab], one row per sampling sequence. temperatures[i] == 0 means
    greedy (argmax). Other rows are scaled by 1/temperature, filtered by top-k/top-p and
    sampled with the exponential race (argmax of p / E, E ~ Exp(1), which draws from p),
    each seeded row using its own torch.Generator so its draw does not depend on the other
    rows of the batch; unseeded rows (generator None) share the global generator.
    Returns int64 [n] token ids.
    """
    n, vocab = logits.shape
    token_ids = logits.argmax(dim=-1)
    rows = [i for i in range(n) if temperatures[i] > 0]
    if not rows:
        return token_ids
    idx = torch.tensor(rows, dtype=torch.long, device=logits.device)
    temps = torch.tensor([temperatures[i] for i in rows], dtype=torch.float32, device=logits.device)
    scaled = logits[idx].float() / temps[:, None]  # [m, vocab]
    need_k = any(top_ks[i] is not None for i in rows)
    need_p = any(top_ps[i] < 1.0 for i in rows)
    if need_k or need_p:
        top_k = torch.tensor([top_ks[i] or vocab for i in rows], device=logits.device) if need_k else None
        top_p = torch.tensor([top_ps[i] for i in rows], dtype=torch.float32,
                             device=logits.device) if need_p else None
        scaled = apply_top_k_top_p(scaled, top_k, top_p)
    probs = scaled.softmax(dim=-1)
    noise = _exponential_noise(probs, [generators[i] for i in rows])
    token_ids[idx] = (probs / noise).argmax(dim=-1)
    return token_ids


def _exponential_noise(probs: torch.Tensor, generators: Sequence[torch.Generator | None]) -> torch.Tensor:
    noise = torch.empty_like(probs)
    shared = [j for j, g in enumerate(generators) if g is None]
    if shared:
        noise[shared] = noise[shared].exponential_()
    for j, g in enumerate(generators):
        if g is not None:
            noise[j].exponential_(generator=g)
    # Exp(1) can round to exactly 0; keep the division finite.
    return noise.clamp_min_(torch.finfo(noise.dtype).tiny)
