"""What the engine hands back: one RequestOutput event per request per step."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RequestMetrics:
    """Timestamps of one request, in seconds from time.monotonic().

    arrival_time: add_request. first_scheduled_time: first step that computed any of its tokens.
    first_token_time: its first token was sampled. finished_time: it finished for any reason.
    token_times: when each output token was sampled (token_times[i] for output token i).
    prefill_chunks: (start, end, prompt tokens) of every step that computed prompt tokens of it
    (chunked prefill; again after a preemption by recompute), start before the forward pass,
    end after sampling.
    """

    arrival_time: float
    first_scheduled_time: float | None = None
    first_token_time: float | None = None
    finished_time: float | None = None
    num_output_tokens: int = 0
    token_times: list[float] = field(default_factory=list)
    prefill_chunks: list[tuple[float, float, int]] = field(default_factory=list)

    @property
    def queue_ms(self) -> float | None:
        """Time spent waiting before the first step that scheduled it, in milliseconds."""
        if self.first_scheduled_time is None:
            return None
        return (self.first_scheduled_time - self.arrival_time) * 1000.0

    @property
    def ttft_ms(self) -> float | None:
        """Time to first token (arrival to first sampled token), in milliseconds."""
        if self.first_token_time is None:
            return None
        return (self.first_token_time - self.arrival_time) * 1000.0

    @property
    def decode_tokens_per_s(self) -> float | None:
        """Tokens after the first one, divided by the time from first token to finish.

        None until finished, or when fewer than two tokens were generated.
        """
        if self.first_token_time is None or self.finished_time is None:
            return None
        elapsed = self.finished_time - self.first_token_time
        if self.num_output_tokens < 2 or elapsed <= 0:
            return None
        return (self.num_output_tokens - 1) / elapsed


@dataclass(frozen=True)
class Logprob:
    """One token's log-probability (natural log) in the model's raw distribution at one step.

    token: the token's own text (tokenizer.decode([token_id]); a piece of a multi-byte character
    decodes to U+FFFD). rank: 1 for the most likely token, 1 + the number of tokens strictly
    more likely otherwise.
    """

    token_id: int
    token: str
    logprob: float
    rank: int


@dataclass(frozen=True)
class TokenLogprobs:
    """Logprobs of one generated token: `sampled` (the token generated) and `top`, the
    SamplingParams.logprobs most likely tokens, most likely first (may include the sampled one)."""

    sampled: Logprob
    top: list[Logprob]


@dataclass
class RequestOutput:
    """One event for one request.

    delta: text new since the previous event ("" allowed: a held-back partial character or a
    possible stop-string prefix). text: every delta so far joined. finish_reason is
    "stop" | "length" | "abort" | "error" when finished, else None; error holds a reason
    when finish_reason is "error"; error_code a stable machine-readable code for it when the
    engine has one ("queue_timeout": the request waited past EngineConfig.queue_timeout_s).
    index: which of the request's SamplingParams.n samples this event belongs to (0 when n = 1);
    each sample has its own text, token counts, finish_reason and final (finished) event.
    logprobs: with SamplingParams.logprobs set, one TokenLogprobs per id in new_token_ids;
    otherwise None.
    """

    request_id: str
    delta: str
    new_token_ids: list[int]
    finished: bool
    finish_reason: str | None
    num_prompt_tokens: int
    num_output_tokens: int
    text: str
    metrics: RequestMetrics
    error: str | None = None
    index: int = 0
    logprobs: list[TokenLogprobs] | None = None
    error_code: str | None = None
