"""Per-request timing records and their summary (percentiles of TTFT, ITL, TPOT, e2e, queue).

Definitions follow vLLM's benchmark_serving: TTFT = first token - arrival; ITL = gaps between
consecutive tokens of one request (pooled over requests); TPOT = (finish - first token) /
(output tokens - 1) per request; e2e = finish - arrival; queue = first scheduled - arrival.
All times are time.monotonic() seconds; summaries are in milliseconds.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

PERCENTILES = (50, 90, 99)


@dataclass
class RequestRecord:
    """What one system did with one request. arrival is the intended send time (not when the
    driver got round to submitting it), so a busy driver cannot hide queueing."""

    request_id: str
    arrival: float
    prompt_token_ids: list[int]
    max_tokens: int
    first_scheduled: float | None = None
    first_token: float | None = None
    finished: float | None = None
    token_times: list[float] = field(default_factory=list)
    output_token_ids: list[int] = field(default_factory=list)
    group: int = 0
    turn: int = 0

    @property
    def num_prompt_tokens(self) -> int:
        return len(self.prompt_token_ids)

    @property
    def num_output_tokens(self) -> int:
        return len(self.token_times)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between order statistics (numpy's
    default). Raises ValueError on an empty list."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def distribution(values_s: list[float]) -> dict[str, float] | None:
    """{"p50", "p90", "p99", "mean", "max"} in milliseconds of values given in seconds; None if
    empty. "max" shows a single stall that the percentiles of a long run can hide."""
    if not values_s:
        return None
    ms = [v * 1000.0 for v in values_s]
    out = {f"p{q}": percentile(ms, q) for q in PERCENTILES}
    out["mean"] = sum(ms) / len(ms)
    out["max"] = max(ms)
    return out


def summarize(records: list[RequestRecord]) -> dict:
    """Throughput and latency distributions of one system on one workload.

    output_tok_s: output tokens of all requests / (last finish - first arrival).
    Raises ValueError if a request never finished.
    """
    if any(r.finished is None or r.first_token is None for r in records):
        raise ValueError("every request must have finished with at least one token")
    start = min(r.arrival for r in records)
    end = max(r.finished for r in records)
    num_output = sum(r.num_output_tokens for r in records)
    itl = [b - a for r in records for a, b in zip(r.token_times, r.token_times[1:])]
    tpot = [(r.finished - r.first_token) / (r.num_output_tokens - 1)
            for r in records if r.num_output_tokens > 1]
    return {
        "num_requests": len(records),
        "num_prompt_tokens": sum(r.num_prompt_tokens for r in records),
        "num_output_tokens": num_output,
        "num_requested_tokens": sum(r.max_tokens for r in records),
        "duration_s": end - start,
        "output_tok_s": num_output / (end - start) if end > start else None,
        "ttft_ms": distribution([r.first_token - r.arrival for r in records]),
        "itl_ms": distribution(itl),
        "tpot_ms": distribution(tpot),
        "e2e_ms": distribution([r.finished - r.arrival for r in records]),
        "queue_ms": distribution([r.first_scheduled - r.arrival for r in records
                                  if r.first_scheduled is not None]),
    }


def decode_tok_s(record: RequestRecord) -> float | None:
    """Tokens after the first / (finish - first token): one stream's decode speed."""
    if record.num_output_tokens < 2 or record.finished is None or record.first_token is None:
        return None
    return (record.num_output_tokens - 1) / (record.finished - record.first_token)


def mean_ttft_by_turn(records: list[RequestRecord]) -> list[float]:
    """Mean TTFT in milliseconds of each agent turn (index = turn)."""
    by_turn: dict[int, list[float]] = {}
    for r in records:
        by_turn.setdefault(r.turn, []).append((r.first_token - r.arrival) * 1000.0)
    return [sum(v) / len(v) for _, v in sorted(by_turn.items())]


class RssSampler:
    """Peak resident set size of this process while one system runs, in MiB: the maximum of
    psutil samples taken by sample() (call it once per step), falling back to
    resource.getrusage's ru_maxrss (the process-wide peak, so far) without psutil."""

    def __init__(self) -> None:
        try:
            import psutil
            self._process = psutil.Process(os.getpid())
        except ImportError:
            self._process = None
        self.peak_mb = 0.0
        self.sample()

    def sample(self) -> None:
        if self._process is not None:
            rss = self._process.memory_info().rss / 2**20
        else:
            import resource
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
        self.peak_mb = max(self.peak_mb, rss)
