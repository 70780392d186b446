"""The benchmark's workloads: seeded request lists, so every run and every system sees the same
requests.

Prompts are random token ids drawn uniformly from the vocabulary, special tokens excluded (ids
whose text is empty once special tokens are skipped), so no tokenizer round trip is involved and
every system gets exactly the same ids. Lengths are drawn uniformly from the issue's ranges,
capped by the scale options (WorkloadSizes) so the whole benchmark can run small.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

WORKLOADS = ("single", "chat", "agent", "long-prompt")


@dataclass(frozen=True)
class WorkloadSizes:
    """Scale of each workload; the defaults are issue 4's sizes. Lengths are in tokens.

    rate: chat arrivals per second of a Poisson process; float("inf") sends them all at once.
    """

    seed: int = 0
    single_prompt_len: int = 128
    single_output_len: int = 256
    num_requests: int = 64
    rate: float = float("inf")
    min_prompt_len: int = 32
    max_prompt_len: int = 512
    min_output_len: int = 16
    max_output_len: int = 256
    loops: int = 8
    turns: int = 10
    min_tail_len: int = 32
    max_tail_len: int = 64
    turn_output_len: int = 32
    num_streams: int = 4
    stream_prompt_len: int = 128
    stream_output_len: int = 256
    long_prompt_len: int = 2048


@dataclass
class BenchRequest:
    """One request of an open-loop workload: sent at arrival_s (seconds after the run starts)
    whatever happened before. group/turn name the agent loop and turn (0-based) it belongs to."""

    request_id: str
    prompt_token_ids: list[int]
    max_tokens: int
    arrival_s: float = 0.0
    group: int = 0
    turn: int = 0


@dataclass
class AgentWorkload:
    """A closed-loop workload: `loops` conversations of `len(tails[l])` turns each. Turn t of
    loop l sends the previous turn's prompt + its output + tails[l][t] (turn 0: tails[l][0]) and
    generates output_len tokens; a loop sends its next turn when its previous one finishes."""

    tails: list[list[list[int]]]
    output_len: int

    @property
    def loops(self) -> int:
        return len(self.tails)


@dataclass
class LongPromptWorkload:
    """`streams` decode; once each has emitted `arrive_after_tokens` tokens, `long_prompt` arrives
    (generating one token). The ITL of the streams shows how long a prefill stalls them."""

    streams: list[BenchRequest]
    long_prompt: BenchRequest
    arrive_after_tokens: int = 4


@dataclass
class TokenSampler:
    """Draws random non-special token ids from [0, vocab_size) with its own seeded RNG.

    is_special(token_id) -> bool tells which ids to skip (e.g. control tokens)."""

    vocab_size: int
    is_special: Callable[[int], bool]
    rng: random.Random = field(default_factory=random.Random)

    def tokens(self, n: int) -> list[int]:
        out: list[int] = []
        while len(out) < n:
            token = self.rng.randrange(self.vocab_size)
            if not self.is_special(token):
                out.append(token)
        return out

    def length(self, lo: int, hi: int) -> int:
        """A length uniform in [lo, hi]; hi wins when the caps make lo > hi."""
        return self.rng.randint(min(lo, hi), hi)


def make_single(sampler: TokenSampler, sizes: WorkloadSizes) -> list[BenchRequest]:
    return [BenchRequest("single-0", sampler.tokens(sizes.single_prompt_len), sizes.single_output_len)]


def make_chat(sampler: TokenSampler, sizes: WorkloadSizes) -> list[BenchRequest]:
    """num_requests requests with Poisson arrivals (exponential gaps of mean 1/rate)."""
    requests, t = [], 0.0
    for i in range(sizes.num_requests):
        prompt = sampler.tokens(sampler.length(sizes.min_prompt_len, sizes.max_prompt_len))
        max_tokens = sampler.length(sizes.min_output_len, sizes.max_output_len)
        requests.append(BenchRequest(f"chat-{i}", prompt, max_tokens, arrival_s=t))
        if sizes.rate != float("inf"):
            t += sampler.rng.expovariate(sizes.rate)
    return requests


def make_agent(sampler: TokenSampler, sizes: WorkloadSizes) -> AgentWorkload:
    tails = [[sampler.tokens(sampler.length(sizes.min_tail_len, sizes.max_tail_len))
              for _ in range(sizes.turns)] for _ in range(sizes.loops)]
    return AgentWorkload(tails, sizes.turn_output_len)


def make_long_prompt(sampler: TokenSampler, sizes: WorkloadSizes) -> LongPromptWorkload:
    streams = [BenchRequest(f"stream-{i}", sampler.tokens(sizes.stream_prompt_len),
                            sizes.stream_output_len, group=i) for i in range(sizes.num_streams)]
    long_prompt = BenchRequest("long-0", sampler.tokens(sizes.long_prompt_len), 1,
                               group=sizes.num_streams)
    return LongPromptWorkload(streams, long_prompt,
                              arrive_after_tokens=min(4, max(1, sizes.stream_output_len // 4)))


def make_workload(name: str, sampler: TokenSampler, sizes: WorkloadSizes):
    """The workload called `name` (one of WORKLOADS); ValueError for an unknown name."""
    makers = {"single": make_single, "chat": make_chat, "agent": make_agent,
              "long-prompt": make_long_prompt}
    if name not in makers:
        raise ValueError(f"unknown workload {name!r}; choose from {', '.join(WORKLOADS)}")
    return makers[name](sampler, sizes)
