"""One request's state as it moves through the engine: tokens, KV blocks, progress."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import torch

from engine.detokenizer import IncrementalDetokenizer
from engine.outputs import RequestMetrics
from engine.sampling_params import SamplingParams
from engine.structured_output.matcher import GrammarMatcher


class SequenceStatus(enum.Enum):
    WAITING = "waiting"     # queued, or preempted and waiting to be recomputed
    RUNNING = "running"     # holds KV blocks; prefilling or decoding
    FINISHED = "finished"


@dataclass(eq=False)
class Sequence:
    """Prompt and generated tokens of one request, and how far the KV cache has them.

    num_computed_tokens: tokens whose K/V are in the cache. A step computes
    all_token_ids[num_computed_tokens : num_computed_tokens + chunk]; when that reaches
    num_tokens the step samples one new token. Preemption frees the blocks and resets
    num_computed_tokens to 0 (recompute), keeping the generated tokens.
    block_table: KV block ids in order; token at position p lives in
    block_table[p // block_size] at offset p % block_size.
    """

    request_id: str
    prompt_token_ids: list[int] = field(repr=False)
    params: SamplingParams = field(repr=False)
    stop_token_ids: frozenset[int]
    detokenizer: IncrementalDetokenizer = field(repr=False)
    metrics: RequestMetrics = field(repr=False)
    generator: torch.Generator | None = field(default=None, repr=False)  # seeded sampling only
    output_token_ids: list[int] = field(default_factory=list, repr=False)
    block_table: list[int] = field(default_factory=list)
    num_computed_tokens: int = 0
    status: SequenceStatus = SequenceStatus.WAITING
    finish_reason: str | None = None
    # Prefix caching (BlockManager): an extra hash key (per user), the chained hashes of the
    # full blocks so far (kept across preemption), and how many leading blocks of block_table
    # are already registered in the cache.
    cache_salt: str | None = None
    block_hashes: list[bytes] = field(default_factory=list, repr=False)
    num_cached_blocks: int = 0
    # Sample i of a request with SamplingParams.n > 1 runs as its own Sequence "{id}#{i}";
    # its events are reported under parent_request_id with RequestOutput.index = sample_index.
    parent_request_id: str | None = None
    sample_index: int = 0
    # SamplingParams.structured_output's matcher (one per sampled sequence), advanced with each
    # output token; None when unconstrained, and once the sequence has finished (freed).
    grammar: GrammarMatcher | None = field(default=None, repr=False)

    @property
    def max_tokens(self) -> int:
        return self.params.max_tokens

    @property
    def num_prompt_tokens(self) -> int:
        return len(self.prompt_token_ids)

    @property
    def num_output_tokens(self) -> int:
        return len(self.output_token_ids)

    @property
    def num_tokens(self) -> int:
        return len(self.prompt_token_ids) + len(self.output_token_ids)

    @property
    def num_uncomputed_tokens(self) -> int:
        return self.num_tokens - self.num_computed_tokens

    def token_ids_slice(self, start: int, end: int) -> list[int]:
        """all_token_ids[start:end] without building the whole list."""
        n_prompt = len(self.prompt_token_ids)
        if end <= n_prompt:
            return self.prompt_token_ids[start:end]
        if start >= n_prompt:
            return self.output_token_ids[start - n_prompt:end - n_prompt]
        return self.prompt_token_ids[start:] + self.output_token_ids[:end - n_prompt]

    @property
    def is_finished(self) -> bool:
        return self.status is SequenceStatus.FINISHED
