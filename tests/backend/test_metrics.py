"""backend.metrics: the values must move, read back through prometheus_client's own text parser
(the oracle for the exposition format), and the admin history must match independent sums and
numpy's percentiles."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from backend.generator import GenerationDone, GeneratorStats
from backend.metrics import REJECTION_KINDS, TTFT_WINDOW_S, Metrics, nearest_rank


def parse(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of a rendered registry."""
    text = metrics.render().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def stats(**changes) -> GeneratorStats:
    base = GeneratorStats(
        running=0, waiting=0, kv_blocks_used=0, kv_blocks_total=100, kv_usage=0.0,
        prefix_cache_queries=0, prefix_cache_hits=0, preemptions=0,
        prompt_tokens_total=0, generation_tokens_total=0,
    )
    return replace(base, **changes)


class Clock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def done(**changes) -> GenerationDone:
    base = GenerationDone(
        finish_reason="length", prompt_tokens=12, completion_tokens=4,
        queue_ms=3.0, ttft_ms=250.0, decode_tokens_per_s=50.0,
        e2e_ms=400.0, tpot_ms=50.0, itl_ms=(40.0, 50.0, 60.0),
    )
    return replace(base, **changes)


def test_observe_done_moves_histograms_and_counters():
    metrics = Metrics()
    before = parse(metrics)
    assert value(before, "crescent_time_to_first_token_seconds_count") == 0
    assert value(before, "crescent_requests_finished_total", finish_reason="length", source="chat") is None

    metrics.observe_done(done(), source="chat")
    metrics.observe_done(done(finish_reason="stop", ttft_ms=2000.0, itl_ms=(), tpot_ms=None), source="api")
    after = parse(metrics)

    ttft = "crescent_time_to_first_token_seconds"
    assert value(after, ttft + "_count") == 2
    assert value(after, ttft + "_sum") == pytest.approx(0.25 + 2.0)
    # Cumulative buckets: 0.25 s falls in le=0.25 (upper bounds are inclusive), 2.0 s in le=2.5.
    assert value(after, ttft + "_bucket", le="0.1") == 0
    assert value(after, ttft + "_bucket", le="0.25") == 1
    assert value(after, ttft + "_bucket", le="2.5") == 2
    assert value(after, ttft + "_bucket", le="+Inf") == 2
    itl = "crescent_inter_token_latency_seconds"
    assert value(after, itl + "_count") == 3  # one observation per gap, only the first reply had any
    assert value(after, itl + "_sum") == pytest.approx(0.15)
    assert value(after, "crescent_request_time_per_output_token_seconds_count") == 1  # None skipped
    assert value(after, "crescent_e2e_request_latency_seconds_sum") == pytest.approx(0.8)
    assert value(after, "crescent_request_queue_time_seconds_sum") == pytest.approx(0.006)
    assert value(after, "crescent_requests_finished_total", finish_reason="length", source="chat") == 1
    assert value(after, "crescent_requests_finished_total", finish_reason="stop", source="api") == 1
    assert value(after, "crescent_request_prompt_tokens_total", source="chat") == 12
    assert value(after, "crescent_request_completion_tokens_total", source="api") == 4


def test_rejections_are_present_at_zero_and_count_by_kind():
    metrics = Metrics()
    for kind in REJECTION_KINDS:
        assert value(parse(metrics), "crescent_requests_rejected_total", kind=kind) == 0
    metrics.count_rejection("overloaded")
    metrics.count_rejection("overloaded")
    metrics.count_rejection("rate_limited")
    samples = parse(metrics)
    assert value(samples, "crescent_requests_rejected_total", kind="overloaded") == 2
    assert value(samples, "crescent_requests_rejected_total", kind="rate_limited") == 1
    assert value(samples, "crescent_requests_rejected_total", kind="throttled") == 0
    with pytest.raises(ValueError, match="overload"):
        metrics.count_rejection("overload")


def test_engine_gauges_and_counters_are_read_at_scrape_time():
    current = {"stats": stats(running=2, waiting=5, kv_blocks_used=30, kv_usage=0.3,
                              prefix_cache_queries=64, prefix_cache_hits=16, preemptions=1,
                              generation_tokens_total=900)}
    metrics = Metrics(lambda: current["stats"])
    first = parse(metrics)
    assert value(first, "crescent_num_requests_running") == 2
    assert value(first, "crescent_num_requests_waiting") == 5
    assert value(first, "crescent_kv_cache_usage_perc") == pytest.approx(0.3)
    assert value(first, "crescent_kv_cache_blocks_total") == 100
    assert value(first, "crescent_prefix_cache_queries_total") == 64
    assert value(first, "crescent_prefix_cache_hits_total") == 16
    assert value(first, "crescent_num_preemptions_total") == 1
    assert value(first, "crescent_engine_generation_tokens_total") == 900

    current["stats"] = stats(running=0, waiting=1, kv_usage=0.75, preemptions=4)
    second = parse(metrics)
    assert value(second, "crescent_num_requests_running") == 0
    assert value(second, "crescent_num_requests_waiting") == 1
    assert value(second, "crescent_kv_cache_usage_perc") == pytest.approx(0.75)
    assert value(second, "crescent_num_preemptions_total") == 4


def test_no_or_failing_engine_stats_leave_the_rest_of_the_scrape_intact():
    def broken() -> GeneratorStats:
        raise RuntimeError("engine gone")

    for metrics in (Metrics(), Metrics(lambda: None), Metrics(broken)):
        metrics.observe_done(done(), source="chat")
        samples = parse(metrics)
        assert value(samples, "crescent_num_requests_running") is None
        assert value(samples, "crescent_time_to_first_token_seconds_count") == 1


def test_each_metrics_has_its_own_registry():
    a, b = Metrics(), Metrics()
    a.observe_done(done(), source="chat")
    assert value(parse(a), "crescent_time_to_first_token_seconds_count") == 1
    assert value(parse(b), "crescent_time_to_first_token_seconds_count") == 0


def test_samples_give_tokens_per_second_from_the_engine_counter():
    clock = Clock()
    current = {"stats": stats(running=1, waiting=2, kv_usage=0.5, generation_tokens_total=1000)}
    metrics = Metrics(lambda: current["stats"], clock=clock)
    first = metrics.sample()
    assert (first.running, first.waiting, first.kv_usage) == (1, 2, 0.5)
    assert first.tokens_per_s is None  # no previous point to difference against
    clock.t += 5.0
    current["stats"] = stats(generation_tokens_total=1000 + 137)
    assert metrics.sample().tokens_per_s == pytest.approx(137 / 5.0)
    clock.t += 5.0
    current["stats"] = stats(generation_tokens_total=10)  # engine restarted: never negative
    assert metrics.sample().tokens_per_s == 0


def test_without_engine_stats_tokens_per_second_comes_from_finished_requests():
    clock = Clock()
    metrics = Metrics(clock=clock)
    metrics.sample()
    metrics.observe_done(done(completion_tokens=30), source="chat")
    metrics.observe_done(done(completion_tokens=20), source="api")
    clock.t += 10.0
    point = metrics.sample()
    assert point.tokens_per_s == pytest.approx(5.0)
    assert point.running is None and point.kv_usage is None


def test_ttft_percentiles_over_the_recent_window_match_numpy():
    clock = Clock()
    metrics = Metrics(clock=clock)
    rng = random.Random(7)
    ttfts = [rng.uniform(5.0, 3000.0) for _ in range(137)]
    for ms in ttfts:
        metrics.observe_done(done(ttft_ms=ms), source="chat")
    point = metrics.sample()
    assert point.ttft_p50_ms == np.percentile(ttfts, 50, method="inverted_cdf")
    assert point.ttft_p99_ms == np.percentile(ttfts, 99, method="inverted_cdf")

    # Older observations leave the window; new ones alone count.
    clock.t += TTFT_WINDOW_S + 1
    metrics.observe_done(done(ttft_ms=42.0), source="chat")
    point = metrics.sample()
    assert point.ttft_p50_ms == point.ttft_p99_ms == 42.0
    clock.t += TTFT_WINDOW_S + 1
    assert metrics.sample().ttft_p50_ms is None


def test_timeseries_returns_the_window_as_columns_oldest_first():
    clock = Clock()
    current = {"stats": stats()}
    metrics = Metrics(lambda: current["stats"], clock=clock)
    for i in range(10):
        current["stats"] = stats(running=i)
        metrics.sample()
        clock.t += 5.0
    series = metrics.timeseries(window_s=22.0)  # now = start + 50: points at 30, 35, 40, 45
    assert series["running"] == [6, 7, 8, 9]
    assert series["t"] == sorted(series["t"]) and len(series["t"]) == 4
    assert set(series) >= {"kv_usage", "waiting", "tokens_per_s", "ttft_p50_ms", "ttft_p99_ms", "interval_s"}
    assert len(metrics.timeseries()["running"]) == 10
    with pytest.raises(ValueError):
        metrics.timeseries(window_s=0)


@given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=1, max_size=200),
       st.sampled_from([0.01, 0.5, 0.9, 0.99, 1.0]))
def test_nearest_rank_matches_numpy_inverted_cdf(values, q):
    assert nearest_rank(sorted(values), q) == np.percentile(values, 100 * q, method="inverted_cdf")
