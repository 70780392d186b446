"""Turn one step's logits into next tokens.

Logits processing, in this order (vLLM v1's sampler does the same steps; its order for the
filters):
    logit_bias -> grammar mask (structured output) -> min_tokens mask
    -> repetition / presence / frequency penalties -> temperature -> top-k -> top-p -> min-p
    -> sample (greedy rows: argmax)
The grammar mask sets to -inf, in the constrained rows only, every token the row's grammar does
not allow next (engine.structured_output); other rows are not touched, so their results do not
depend on their neighbours.
Every step is one batched tensor operation over the rows that need it; the per-step inputs
(`SamplingMetadata`) are built once on the host from the requests' parameters and tokens.
Logprobs are taken from the raw logits, before any of this (vLLM's default "raw_logprobs").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from engine.sampling_params import SamplingParams
from engine.structured_output.bitmask import apply_bitmask

# Softmax of a row holding +inf is NaN; a tiny repetition_penalty can overflow float32, so
# penalised logits are clamped to the largest finite float.
_FLOAT32_MAX = torch.finfo(torch.float32).max


@dataclass
class SamplingMetadata:
    """One step's sampling inputs for n rows (one row per sampling sequence), built on the host.

    temperatures: float32 [n], 0 for greedy rows. top_ks: int64 [n] (vocab means off), top_ps:
    float32 [n] (1 means off), min_ps: float32 [n] (0 means off); each None when no row uses it.
    generators: per row, the request's own torch.Generator (seeded) or None (global generator).
    logit_bias: (rows, token_ids, biases), int64/int64/float32 [num_entries], or None.
    masked: (rows, token_ids) int64 [num_entries] set to -inf (min_tokens), or None.
    allowed: (rows, bitmask) for the k grammar-constrained rows: k row indices and their int32
    token bitmask [k, ceil(vocab / 32)] on the CPU (engine.structured_output.bitmask), or
    None; set by the engine after build.
    repetition_penalties, presence_penalties, frequency_penalties: float32 [n] or None when no
    row uses any penalty. prompt_token_ids: int64 [n, max_prompt_len] (only with a repetition
    penalty) and output_token_ids: int64 [n, max_output_len], padded with vocab_size.
    max_num_logprobs: the largest `logprobs` asked by any row, None when no row asks.
    """

    temperatures: torch.Tensor
    generators: list[torch.Generator | None]
    top_ks: torch.Tensor | None = None
    top_ps: torch.Tensor | None = None
    min_ps: torch.Tensor | None = None
    logit_bias: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None
    masked: tuple[torch.Tensor, torch.Tensor] | None = None
    allowed: tuple[list[int], torch.Tensor] | None = None
    repetition_penalties: torch.Tensor | None = None
    presence_penalties: torch.Tensor | None = None
    frequency_penalties: torch.Tensor | None = None
    prompt_token_ids: torch.Tensor | None = None
    output_token_ids: torch.Tensor | None = None
    max_num_logprobs: int | None = None

    @classmethod
    def build(cls, params: Sequence[SamplingParams], prompt_token_ids: Sequence[Sequence[int]],
              output_token_ids: Sequence[Sequence[int]], stop_token_ids: Sequence[frozenset[int]],
              generators: Sequence[torch.Generator | None], vocab_size: int,
              device: torch.device | str = "cpu") -> SamplingMetadata:
        """Gather the per-row tensors. stop_token_ids[i] is what min_tokens masks for row i
        while len(output_token_ids[i]) < params[i].min_tokens. Params must be validated."""
        def floats(values: list[float]) -> torch.Tensor:
            return torch.tensor(values, dtype=torch.float32, device=device)

        meta = cls(temperatures=floats([p.temperature for p in params]),
                   generators=list(generators))
        if any(p.top_k is not None for p in params):
            meta.top_ks = torch.tensor([p.top_k or vocab_size for p in params], dtype=torch.int64,
                                       device=device)
        if any(p.top_p < 1.0 for p in params):
            meta.top_ps = floats([p.top_p for p in params])
        if any(p.min_p > 0.0 for p in params):
            meta.min_ps = floats([p.min_p for p in params])
        meta.logit_bias = _sparse_rows([p.logit_bias for p in params], device)
        masked = [stop if len(out) < p.min_tokens else ()
                  for p, out, stop in zip(params, output_token_ids, stop_token_ids)]
        if any(masked):
            rows, ids, _ = _sparse_rows([dict.fromkeys(m, 0.0) for m in masked], device)
            meta.masked = (rows, ids)
        use_rep = any(p.repetition_penalty != 1.0 for p in params)
        if use_rep or any(p.presence_penalty or p.frequency_penalty for p in params):
            meta.repetition_penalties = floats([p.repetition_penalty for p in params])
            meta.presence_penalties = floats([p.presence_penalty for p in params])
            meta.frequency_penalties = floats([p.frequency_penalty for p in params])
            meta.output_token_ids = _padded(output_token_ids, vocab_size, device)
            if use_rep:
                meta.prompt_token_ids = _padded(prompt_token_ids, vocab_size, device)
        asked = [p.logprobs for p in params if p.logprobs is not None]
        meta.max_num_logprobs = max(asked) if asked else None
        return meta


@dataclass
class SamplerOutput:
    """sampled_token_ids: int64 [n]. With logprobs asked (k = max_num_logprobs):
    logprobs float32 [n, 1 + k] and logprob_token_ids int64 [n, 1 + k] (column 0 the sampled
    token, then the k most likely tokens, most likely first), ranks int64 [n] (1 = the most
    likely token of the raw distribution). Otherwise those three are None."""

    sampled_token_ids: torch.Tensor
    logprobs: torch.Tensor | None = None
    logprob_token_ids: torch.Tensor | None = None
    ranks: torch.Tensor | None = None


def sample(logits: torch.Tensor, meta: SamplingMetadata) -> SamplerOutput:
    """Pick one token per row of float32 logits [n, vocab] (not modified).

    Non-greedy rows draw with the exponential race (argmax of p / E, E ~ Exp(1), which draws
    from p), each seeded row from its own generator, so its draw does not depend on the other
    rows of the batch; unseeded rows share the global generator.
    """
    raw = logits.float()
    # Only bias, masks and penalties write into the logits: copy them only then.
    edits = (meta.logit_bias is not None or meta.masked is not None
             or meta.output_token_ids is not None or meta.allowed is not None)
    x = apply_logit_bias(_copy(raw), meta.logit_bias) if edits else raw
    if meta.allowed is not None:
        apply_bitmask(x, *meta.allowed)
    if meta.masked is not None:
        x[meta.masked] = float("-inf")
    if meta.output_token_ids is not None:
        x = apply_penalties(x, meta.prompt_token_ids, meta.output_token_ids,
                            meta.repetition_penalties, meta.presence_penalties,
                            meta.frequency_penalties)
        x.clamp_max_(_FLOAT32_MAX)
    token_ids = x.argmax(dim=-1)
    rows = (meta.temperatures > 0).nonzero().flatten()
    if rows.numel():
        token_ids[rows] = _sample_rows(x[rows], meta, rows)
    out = SamplerOutput(sampled_token_ids=token_ids)
    if meta.max_num_logprobs is not None:
        out.logprobs, out.logprob_token_ids, out.ranks = gather_logprobs(
            raw, token_ids, meta.max_num_logprobs)
    return out


def _sample_rows(x: torch.Tensor, meta: SamplingMetadata, rows: torch.Tensor) -> torch.Tensor:
    x = apply_temperature(x, meta.temperatures[rows])
    top_k = meta.top_ks[rows] if meta.top_ks is not None else None
    top_p = meta.top_ps[rows] if meta.top_ps is not None else None
    if top_k is not None or top_p is not None:
        x = apply_top_k_top_p(x, top_k, top_p)
    if meta.min_ps is not None:
        x = apply_min_p(x, meta.min_ps[rows])
    probs = x.softmax(dim=-1)
    noise = _exponential_noise(probs, [meta.generators[i] for i in rows.tolist()])
    return (probs / noise).argmax(dim=-1)


def apply_logit_bias(logits: torch.Tensor,
                     bias: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None) -> torch.Tensor:
    """Add (rows, token_ids, biases) to float32 logits [n, vocab] in place; returns them."""
    if bias is not None:
        rows, ids, values = bias
        logits.index_put_((rows, ids), values, accumulate=True)
    return logits


def _copy(logits: torch.Tensor) -> torch.Tensor:
    """A copy of float32 logits; on the CPU through numpy (single-threaded: torch's clone of a
    large tensor opens a parallel region, which waits for a free core on a busy machine)."""
    if logits.device.type == "cpu":
        return torch.from_numpy(logits.numpy().copy())
    return logits.clone()


def apply_penalties(logits: torch.Tensor, prompt_token_ids: torch.Tensor | None,
                    output_token_ids: torch.Tensor, repetition_penalties: torch.Tensor,
                    presence_penalties: torch.Tensor, frequency_penalties: torch.Tensor,
                    ) -> torch.Tensor:
    """Repetition, then frequency and presence penalties, on float32 logits [n, vocab].

    prompt_token_ids int64 [n, p] (None: no row has a repetition penalty) and output_token_ids
    int64 [n, o], padded with vocab. Penalties float32 [n]. With c the count of a token in the
    output: repetition (CTRL, Keskar et al. 2019, Hugging Face's sign handling) divides a
    positive logit / multiplies a negative one by the penalty for every token seen in the
    prompt or output; then logit -= frequency * c + presence * (c > 0) (OpenAI's formula).
    Returns a new tensor.
    """
    n, vocab = logits.shape
    counts = torch.zeros(n, vocab + 1, dtype=torch.float32, device=logits.device)
    counts.scatter_add_(1, output_token_ids, torch.ones_like(output_token_ids, dtype=torch.float32))
    counts = counts[:, :vocab]  # [n, vocab]; the padding column dropped
    seen_in_output = counts > 0
    if prompt_token_ids is not None:
        seen = torch.zeros(n, vocab + 1, dtype=torch.bool, device=logits.device)
        seen.scatter_(1, prompt_token_ids, True)
        seen = seen[:, :vocab] | seen_in_output
        rep = repetition_penalties[:, None].expand_as(logits)
        penalized = torch.where(logits > 0, logits / rep, logits * rep)
        logits = torch.where(seen, penalized, logits)
    return (logits - frequency_penalties[:, None] * counts
            - presence_penalties[:, None] * seen_in_output)


def apply_temperature(logits: torch.Tensor, temperatures: torch.Tensor) -> torch.Tensor:
    """(logits - row max) / temperature, for float32 logits [n, vocab] with a finite max and
    temperatures [n] (all > 0). Shifting by the max changes no probability, and keeps a tiny
    temperature from overflowing to +inf (NaN softmax) or tying the top tokens: the largest
    logit becomes 0 and the others at most 0. Returns a new tensor."""
    shifted = logits - logits.amax(dim=-1, keepdim=True)
    return shifted / temperatures.clamp_min(torch.finfo(torch.float32).tiny)[:, None]


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
    vocab = logits.shape[-1]
    max_k = int(top_k.max()) if top_k is not None else vocab
    if max_k <= vocab // 8:  # every row keeps few tokens: a partial sort is enough
        sorted_logits, order = logits.topk(max_k, dim=-1)  # [n, max_k], descending
    else:
        sorted_logits, order = logits.sort(dim=-1, descending=True)  # [n, vocab]
    if top_k is not None:
        ranks = torch.arange(sorted_logits.shape[-1], device=logits.device)
        sorted_logits = sorted_logits.masked_fill(ranks[None, :] >= top_k[:, None], float("-inf"))
    if top_p is not None:
        probs = sorted_logits.softmax(dim=-1)
        mass_before = probs.cumsum(dim=-1) - probs  # probability of the tokens ranked above
        drop = (mass_before >= top_p[:, None]) & (top_p[:, None] < 1.0)
        drop[:, 0] = False  # the most likely token always stays (rounding of the cumsum)
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
    return torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)


def apply_min_p(logits: torch.Tensor, min_p: torch.Tensor) -> torch.Tensor:
    """Mask tokens whose probability is below min_p [n] times their row's largest probability.

    float32 logits [n, vocab]; min_p 0 keeps every token, 1 keeps only the most likely (and its
    ties). Compared in log space: logit - max_logit < log(min_p) (Nguyen et al. 2024, "Turning
    Up the Heat: Min-p Sampling"; vLLM's MinPLogitsProcessor). Returns a new tensor.
    """
    threshold = logits.amax(dim=-1, keepdim=True) + min_p.log()[:, None]  # log(min_p) <= 0
    return logits.masked_fill(logits < threshold, float("-inf"))


def gather_logprobs(logits: torch.Tensor, token_ids: torch.Tensor, k: int,
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """log_softmax of float32 logits [n, vocab]: the logprobs of token_ids [n] and of the k most
    likely tokens. Returns (logprobs float32 [n, 1 + k], token ids int64 [n, 1 + k], ranks
    int64 [n]), column 0 being token_ids; rank = 1 + number of tokens strictly more likely."""
    logprobs = logits.log_softmax(dim=-1)
    chosen = logprobs.gather(1, token_ids[:, None])  # [n, 1]
    ranks = (logprobs > chosen).sum(dim=-1) + 1
    top_values, top_ids = logprobs.topk(k, dim=-1)
    return (torch.cat([chosen, top_values], dim=1), torch.cat([token_ids[:, None], top_ids], dim=1),
            ranks)


def _sparse_rows(maps: Sequence[dict[int, float]], device: torch.device | str,
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """Per-row {token id: value} -> (rows, token_ids, values) index tensors, None if all empty."""
    if not any(maps):
        return None
    rows = torch.repeat_interleave(torch.arange(len(maps)), torch.tensor([len(m) for m in maps]))
    ids = torch.tensor([t for m in maps for t in m], dtype=torch.int64)
    values = torch.tensor([v for m in maps for v in m.values()], dtype=torch.float32)
    return rows.to(device), ids.to(device), values.to(device)


def _padded(rows: Sequence[Sequence[int]], pad: int, device: torch.device | str) -> torch.Tensor:
    """int64 [len(rows), max(1, longest row)], right-padded with `pad`."""
    out = torch.full((len(rows), max(1, max(map(len, rows)))), pad, dtype=torch.int64)
    for i, row in enumerate(rows):
        if row:
            out[i, :len(row)] = torch.tensor(row, dtype=torch.int64)
    return out.to(device)


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
