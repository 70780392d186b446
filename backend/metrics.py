"""Prometheus metrics of one app, and the short history the admin page charts.

:class:`Metrics` owns its own ``prometheus_client.CollectorRegistry`` (no process-global state,
so several apps can live in one test process). It is fed from two sides:

- per request, by whoever finishes a generation: :meth:`Metrics.observe_done` (latency
  histograms, finished-request and token counters) and :meth:`Metrics.count_rejection`;
- per scrape, by the engine: gauges (running, waiting, KV cache usage) and the engine's own
  cumulative counters (prefix-cache queries and hits, preemptions, tokens) are read from
  ``generator.stats()`` when ``/metrics`` is rendered, never cached.

Names follow vLLM's (``vllm:time_to_first_token_seconds`` -> ``crescent_time_to_first_token_seconds``)
so dashboards written for it translate; times are in seconds, as Prometheus recommends.

:meth:`Metrics.sample` (every :data:`SAMPLE_INTERVAL_S`, driven by the app's lifespan) appends one
point to a ring buffer that :meth:`Metrics.timeseries` returns for the admin page's charts.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

if TYPE_CHECKING:
    from backend.generator import GenerationDone, GeneratorStats

log = logging.getLogger(__name__)

PREFIX = "crescent"
REJECTION_KINDS = ("rate_limited", "overloaded", "throttled", "unavailable")
SOURCES = ("chat", "api")
SAMPLE_INTERVAL_S = 5.0
HISTORY_S = 3600.0  # how much history timeseries() can return at most
TTFT_WINDOW_S = 60.0  # each point's TTFT percentiles cover the requests finished this long before it

# Buckets in seconds, wide enough for both ends: a GPU answers in milliseconds, two CPU cores
# with a long prompt take tens of seconds.
TTFT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0)
TOKEN_GAP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 2.5)
REQUEST_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 240.0, 480.0, 960.0)
QUEUE_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

StatsSource = Callable[[], "GeneratorStats | None"]


def nearest_rank(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile (0 < q <= 1) of ascending `sorted_values` by the nearest-rank method
    (the smallest value with at least q of the values at or below it; numpy's "inverted_cdf").

    Raises ValueError on an empty sequence.
    """
    if not sorted_values:
        raise ValueError("no values")
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[rank - 1]


@dataclass(frozen=True)
class EngineSample:
    """One point of the admin page's engine panel.

    t: wall-clock seconds (Unix time). running / waiting: requests in the engine; kv_usage: 0..1;
    tokens_per_s: tokens generated per second since the previous sample; ttft_p50_ms /
    ttft_p99_ms: over the requests finished in the :data:`TTFT_WINDOW_S` before t. Each is None
    when unknown (no engine stats, first sample, no request in the window).
    """

    t: float
    running: int | None
    waiting: int | None
    kv_usage: float | None
    tokens_per_s: float | None
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None


class _EngineCollector:
    """Reads ``stats()`` at every scrape: gauges, and the engine's cumulative counters."""

    def __init__(self, stats: StatsSource) -> None:
        self._stats = stats

    def describe(self) -> Iterable[Metric]:
        return self._families(None)

    def collect(self) -> Iterable[Metric]:
        try:
            stats = self._stats()
        except Exception:  # a failing engine must not take the whole scrape down
            log.exception("generator.stats() failed during a metrics scrape")
            return []
        return self._families(stats) if stats is not None else []

    @staticmethod
    def _families(stats: GeneratorStats | None) -> list[Metric]:
        def gauge(name: str, doc: str, value: float | None) -> GaugeMetricFamily:
            return GaugeMetricFamily(f"{PREFIX}_{name}", doc, value=value)

        def counter(name: str, doc: str, value: float | None) -> CounterMetricFamily:
            return CounterMetricFamily(f"{PREFIX}_{name}", doc, value=value)

        s = stats
        return [
            gauge("num_requests_running", "Requests in the engine's running batch.", s and s.running),
            gauge("num_requests_waiting", "Requests queued in the engine, not yet running.", s and s.waiting),
            gauge("kv_cache_usage_perc", "Fraction of KV cache blocks in use (0..1).", s and s.kv_usage),
            gauge("kv_cache_blocks_used", "KV cache blocks in use.", s and s.kv_blocks_used),
            gauge("kv_cache_blocks_total", "KV cache blocks in the pool.", s and s.kv_blocks_total),
            counter("prefix_cache_queries", "Prompt tokens looked up in the prefix cache.", s and s.prefix_cache_queries),
            counter("prefix_cache_hits", "Prompt tokens found in the prefix cache.", s and s.prefix_cache_hits),
            counter("num_preemptions", "Requests preempted (KV blocks reclaimed, recomputed later).", s and s.preemptions),
            counter("engine_prompt_tokens", "Prompt tokens prefilled by the engine.", s and s.prompt_tokens_total),
            counter("engine_generation_tokens", "Tokens generated by the engine.", s and s.generation_tokens_total),
            counter("kv_host_blocks_offloaded", "KV blocks copied to the host tier on eviction.", s and s.kv_host_blocks_offloaded),
            counter("kv_host_blocks_restored", "KV blocks copied back from the host tier on a prefix hit.", s and s.kv_host_blocks_restored),
            counter("kv_host_blocks_dropped", "KV blocks lost from the host tier (LRU eviction or full).", s and s.kv_host_blocks_dropped),
        ]


class Metrics:
    """The metrics of one app.

    Args:
        stats: returns the engine's :class:`GeneratorStats` now, or None when it has none
            (``generator.stats`` in the app). None: no engine gauges at all.
        clock: wall clock in seconds (``time.time``); tests pass a fake one.

    Thread-safe: ``observe_done`` runs on the event loop, ``render`` may run in a thread.
    """

    def __init__(self, stats: StatsSource | None = None, clock: Callable[[], float] = time.time) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._stats = stats
        self._clock = clock
        self._lock = threading.Lock()
        self._ttfts: deque[tuple[float, float]] = deque()  # (t, ttft_ms), pruned to TTFT_WINDOW_S
        self._samples: deque[EngineSample] = deque(maxlen=int(HISTORY_S / SAMPLE_INTERVAL_S) + 1)
        self._completion_tokens = 0  # tokens/s fallback when the engine has no stats
        self._last_tokens: tuple[float, int] | None = None
        if stats is not None:
            self.registry.register(_EngineCollector(stats))

        def histogram(name: str, doc: str, buckets: Sequence[float]) -> Histogram:
            return Histogram(f"{PREFIX}_{name}", doc, buckets=buckets, registry=self.registry)

        self.ttft = histogram("time_to_first_token_seconds", "Time from arrival to the first token.", TTFT_BUCKETS)
        self.itl = histogram("inter_token_latency_seconds", "Gap between consecutive tokens of a reply.", TOKEN_GAP_BUCKETS)
        self.tpot = histogram("request_time_per_output_token_seconds", "Mean time per output token after the first, per request.", TOKEN_GAP_BUCKETS)
        self.e2e = histogram("e2e_request_latency_seconds", "Time from arrival to the last event of a request.", REQUEST_BUCKETS)
        self.queue = histogram("request_queue_time_seconds", "Time a request waited before it was scheduled.", QUEUE_BUCKETS)
        self.finished = Counter(
            f"{PREFIX}_requests_finished", "Requests finished, by finish_reason and source (chat | api).",
            ["finish_reason", "source"], registry=self.registry,
        )
        self.prompt_tokens = Counter(
            f"{PREFIX}_request_prompt_tokens", "Prompt tokens of finished requests, by source.",
            ["source"], registry=self.registry,
        )
        self.completion_tokens = Counter(
            f"{PREFIX}_request_completion_tokens", "Completion tokens of finished requests, by source.",
            ["source"], registry=self.registry,
        )
        self.rejected = Counter(
            f"{PREFIX}_requests_rejected", "Requests refused before generation, by kind "
            "(rate_limited: a per-user limit; overloaded: the admission queue was full; "
            "throttled: log-in / sign-up attempts; unavailable: the shared limits in Redis could "
            "not be checked).",
            ["kind"], registry=self.registry,
        )
        for kind in REJECTION_KINDS:  # present at 0, so rate() works from the first rejection
            self.rejected.labels(kind=kind)
        for source in SOURCES:
            self.prompt_tokens.labels(source=source)
            self.completion_tokens.labels(source=source)

    # -- fed per request ---------------------------------------------------------------------

    def observe_done(self, done: GenerationDone, source: str) -> None:
        """Record one finished generation (any finish_reason). source: "chat" | "api".

        Times in `done` are milliseconds and become seconds here; None times are skipped.
        """
        for histogram, ms in (
            (self.ttft, done.ttft_ms), (self.tpot, done.tpot_ms),
            (self.e2e, done.e2e_ms), (self.queue, done.queue_ms),
        ):
            if ms is not None:
                histogram.observe(ms / 1000.0)
        for gap_ms in done.itl_ms:
            self.itl.observe(gap_ms / 1000.0)
        self.finished.labels(finish_reason=done.finish_reason, source=source).inc()
        self.prompt_tokens.labels(source=source).inc(done.prompt_tokens)
        self.completion_tokens.labels(source=source).inc(done.completion_tokens)
        with self._lock:
            self._completion_tokens += done.completion_tokens
            if done.ttft_ms is not None:
                self._ttfts.append((self._clock(), done.ttft_ms))

    def count_rejection(self, kind: str) -> None:
        """Count one refused request. kind: one of :data:`REJECTION_KINDS` (ValueError otherwise,
        so a typo cannot create a new series)."""
        if kind not in REJECTION_KINDS:
            raise ValueError(f"unknown rejection kind {kind!r}; expected one of {REJECTION_KINDS}")
        self.rejected.labels(kind=kind).inc()

    # -- read per scrape ---------------------------------------------------------------------

    def render(self) -> bytes:
        """The registry in the Prometheus text exposition format (served with
        ``prometheus_client.CONTENT_TYPE_LATEST``, the version that goes with it)."""
        return generate_latest(self.registry)

    # -- history for the admin page --------------------------------------------------------------

    def sample(self) -> EngineSample:
        """Take one point now and append it to the history (call every SAMPLE_INTERVAL_S)."""
        now = self._clock()
        stats = self._read_stats()
        with self._lock:
            tokens = stats.generation_tokens_total if stats is not None else self._completion_tokens
            tokens_per_s = None
            if self._last_tokens is not None and now > self._last_tokens[0]:
                # max(0, ...): a restarted engine's counter starts again from zero
                tokens_per_s = max(0, tokens - self._last_tokens[1]) / (now - self._last_tokens[0])
            self._last_tokens = (now, tokens)
            while self._ttfts and self._ttfts[0][0] < now - TTFT_WINDOW_S:
                self._ttfts.popleft()
            ttfts = sorted(ms for _, ms in self._ttfts)
            point = EngineSample(
                t=now,
                running=stats.running if stats is not None else None,
                waiting=stats.waiting if stats is not None else None,
                kv_usage=stats.kv_usage if stats is not None else None,
                tokens_per_s=tokens_per_s,
                ttft_p50_ms=nearest_rank(ttfts, 0.50) if ttfts else None,
                ttft_p99_ms=nearest_rank(ttfts, 0.99) if ttfts else None,
            )
            self._samples.append(point)
        return point

    def latest(self) -> EngineSample | None:
        """The newest point of the history (None before the first :meth:`sample`)."""
        with self._lock:
            return self._samples[-1] if self._samples else None

    def timeseries(self, window_s: float = 900.0) -> dict[str, Any]:
        """The points of the last `window_s` seconds, oldest first, as columns:

        ``{"interval_s": 5.0, "window_s": ..., "ttft_window_s": 60.0, "t": [unix s...],
        "running": [...], "waiting": [...], "kv_usage": [...], "tokens_per_s": [...],
        "ttft_p50_ms": [...], "ttft_p99_ms": [...]}``; a None entry is an unknown value.
        Raises ValueError when window_s is not positive.
        """
        if not window_s > 0:
            raise ValueError(f"window_s must be > 0, got {window_s}")
        since = self._clock() - window_s
        with self._lock:
            points = [p for p in self._samples if p.t >= since]
        columns = ("t", "running", "waiting", "kv_usage", "tokens_per_s", "ttft_p50_ms", "ttft_p99_ms")
        series: dict[str, Any] = {"interval_s": SAMPLE_INTERVAL_S, "window_s": window_s, "ttft_window_s": TTFT_WINDOW_S}
        for name in columns:
            series[name] = [getattr(p, name) for p in points]
        return series

    def _read_stats(self) -> GeneratorStats | None:
        if self._stats is None:
            return None
        try:
            return self._stats()
        except Exception:
            log.exception("generator.stats() failed while sampling")
            return None


def stats_source(generator: object) -> StatsSource | None:
    """``generator.stats`` when the generator has one (remote generators may not), else None."""
    stats = getattr(generator, "stats", None)
    return stats if callable(stats) else None

