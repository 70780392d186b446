"""Runs the chosen workloads on our engine and the baselines and gathers one result dict.

Result shape (also the --json file): {"workloads": {name: {system: metrics}}, "ratios": {...},
"host_overhead": [{...} per batch], "kv_bytes_per_token": int, "quantization": str,
"weight_bytes": int, "sizes": {...}} (our systems' metrics carry weight_bytes beside peak_rss_mb). Systems: "ours", "ours
(no prefix caching)" for agent, "ours (host KV tier)" for agent when kv_host_blocks > 0, "ours (no chunked prefill)" for long-prompt, and
"transformers sequential" / "transformers static" / "llama-cpp sequential" when asked for.
"""

from __future__ import annotations

import dataclasses
import random
import time

from engine.config import EngineConfig
from engine.loader import LoadedModel

from engine.bench.baselines import serve_agent
from engine.bench.metrics import (RssSampler, decode_tok_s, mean_ttft_by_turn, summarize)
from engine.bench.runner import EngineRunner, RunResult, measure_host_overhead
from engine.bench.workloads import BenchRequest, TokenSampler, WorkloadSizes, make_workload

OURS = "ours"
NO_PREFIX_CACHING = "ours (no prefix caching)"
NO_CHUNKING = "ours (no chunked prefill)"
HOST_TIER = "ours (host KV tier)"


@dataclasses.dataclass
class SuiteOptions:
    """workloads: names from WORKLOADS. baselines: {name: object with .modes and .serve}.
    long_prefill_token_threshold: our chunk size for chunked prefill in single, chat and agent
    (throughput-oriented). long_prompt_chunk: the chunk size of the long-prompt workload
    (latency-oriented: a decode step of a few streams costs about a pass over the weights and each
    prefill token riding along its share of matmul; on 2 cores with SmolLM2-135M, ~60 ms + 2 ms
    per token in float32, ~10 ms + ~1.3 ms per token on the CPU fast path, so c <= ~16 keeps a
    step within ~3x of a plain decode step on the fast path). host_overhead_batches: batch sizes
    to measure host overhead at (empty: skip). warm_up: one untimed request per system first.
    kv_host_blocks: > 0 also runs agent with a host KV tier of that many blocks (set
    config.num_kv_blocks small enough that the pool cannot keep every loop's history, so the
    comparison with "ours" shows the prompt tokens the tier saves from recomputation)."""

    workloads: list[str]
    sizes: WorkloadSizes = dataclasses.field(default_factory=WorkloadSizes)
    config: EngineConfig = dataclasses.field(default_factory=EngineConfig)
    enable_prefix_caching: bool = True
    long_prefill_token_threshold: int | None = 256
    long_prompt_chunk: int | None = 16
    host_overhead_batches: tuple[int, ...] = (1, 32)
    host_overhead_steps: int = 16
    warm_up: bool = True
    kv_host_blocks: int = 0
    baselines: dict = dataclasses.field(default_factory=dict)


def kv_bytes_per_token(loaded: LoadedModel) -> int:
    """KV-cache bytes one token takes: layers * 2 (K, V) * kv_heads * head_dim * element size."""
    c = loaded.config
    elem = next(loaded.model.parameters()).element_size()
    return c.num_hidden_layers * 2 * c.num_key_value_heads * c.head_dim * elem


def run_suite(loaded: LoadedModel, options: SuiteOptions, log=print) -> dict:
    config = dataclasses.replace(options.config, enable_prefix_caching=options.enable_prefix_caching,
                                 long_prefill_token_threshold=options.long_prefill_token_threshold)
    runner = EngineRunner(loaded, config)
    tokenizer = loaded.tokenizer
    def is_special(token: int) -> bool:
        return (token in tokenizer.stop_token_ids or token == tokenizer.bos_token_id
                or tokenizer.decode([token], skip_special_tokens=True) == "")

    results: dict = {"workloads": {}, "kv_bytes_per_token": kv_bytes_per_token(loaded),
                     "sizes": dataclasses.asdict(options.sizes), "model": loaded.model_name,
                     "quantization": loaded.quantization, "weight_bytes": loaded.weight_bytes}
    if options.warm_up:
        _warm_up(runner, options)
    for name in options.workloads:
        sampler = TokenSampler(tokenizer.vocab_size, is_special,
                               random.Random(f"{options.sizes.seed}-{name}"))
        workload = make_workload(name, sampler, options.sizes)
        log(f"running {name} ...")
        results["workloads"][name] = _run_workload(name, workload, runner, options, log)
    results["host_overhead"] = []
    for batch in options.host_overhead_batches:
        log(f"measuring host overhead at batch {batch} ...")
        results["host_overhead"].append(
            measure_host_overhead(loaded, config, batch, options.host_overhead_steps))
    for systems in results["workloads"].values():
        for system, metrics in systems.items():
            if system.startswith(OURS):
                metrics["weight_bytes"] = loaded.weight_bytes
    results["ratios"] = ratios(results["workloads"])
    return results


def _warm_up(runner: EngineRunner, options: SuiteOptions) -> None:
    """One short untimed request per system, so no workload pays for first-call costs (thread
    pools, allocator growth, lazy initialisation)."""
    request = BenchRequest("warm-up", list(range(100, 164)), 4)
    runner.run_open_loop([request])
    for baseline in options.baselines.values():
        for mode in baseline.modes:
            baseline.serve([request], time.monotonic(), mode, RssSampler())


def _run_workload(name: str, workload, runner: EngineRunner, options: SuiteOptions, log) -> dict:
    systems: dict = {}
    if name == "agent":
        systems[OURS if options.enable_prefix_caching else NO_PREFIX_CACHING] = \
            _metrics(name, runner.run_agent(workload))
        if options.enable_prefix_caching:
            systems[NO_PREFIX_CACHING] = _metrics(
                name, runner.run_agent(workload, enable_prefix_caching=False))
        if options.enable_prefix_caching and options.kv_host_blocks > 0:
            log(f"  with a host KV tier of {options.kv_host_blocks} blocks ...")
            systems[HOST_TIER] = _metrics(
                name, runner.run_agent(workload, num_kv_host_blocks=options.kv_host_blocks))
    elif name == "long-prompt":
        systems[OURS] = _metrics(name, runner.run_long_prompt(
            workload, long_prefill_token_threshold=options.long_prompt_chunk))
        systems[NO_CHUNKING] = _metrics(
            name, runner.run_long_prompt(workload, long_prefill_token_threshold=None))
    else:
        systems[OURS] = _metrics(name, runner.run_open_loop(workload))
    if name == "long-prompt":
        return systems  # a baseline cannot admit a prompt into a running batch: nothing to compare
    for baseline_name, baseline in options.baselines.items():
        for mode in baseline.modes:
            log(f"  {baseline_name} {mode} ...")
            rss = RssSampler()

            def serve(requests, start, mode=mode, rss=rss, baseline=baseline):
                return baseline.serve(requests, start, mode, rss)
            if name == "agent":
                records = serve_agent(serve, workload.tails, workload.output_len)
            else:
                records = serve(sorted(workload, key=lambda r: r.arrival_s), time.monotonic())
            systems[f"{baseline_name} {mode}"] = _metrics(
                name, RunResult(records, rss.peak_mb, None, 0))
    return systems


def _metrics(name: str, result: RunResult) -> dict:
    out = summarize(result.records)
    out["prefix_cache_hit_rate"] = result.prefix_cache_hit_rate
    out["peak_rss_mb"] = result.peak_rss_mb
    out["num_preemptions"] = result.num_preemptions
    if result.prompt_tokens_computed is not None:
        out["prompt_tokens_computed"] = result.prompt_tokens_computed
        out["prefix_cache_hit_tokens"] = result.prefix_cache_hit_tokens
        out["kv_host_blocks"] = {"offloaded": result.kv_host_blocks_offloaded,
                                 "restored": result.kv_host_blocks_restored,
                                 "dropped": result.kv_host_blocks_dropped}
    if name == "single":
        out["decode_tok_s"] = decode_tok_s(result.records[0])
    if name == "agent":
        by_turn = mean_ttft_by_turn(result.records)
        out["ttft_by_turn_ms"] = by_turn
        out["mean_ttft_later_turns_ms"] = (sum(by_turn[1:]) / len(by_turn[1:])
                                           if len(by_turn) > 1 else None)
    return out


def ratios(workloads: dict) -> dict:
    """Ours / each other system per workload: output_tok_s (higher is better for us), ttft p50
    and e2e p50 (lower is better for us); plus the agent's later-turn TTFT with / without prefix
    caching and long-prompt's ITL p99 / p50 with and without chunking."""
    out: dict = {}
    for name, systems in workloads.items():
        ours = systems.get(OURS)
        if ours is None:
            continue
        for system, m in systems.items():
            if system == OURS:
                continue
            entry = {"output_tok_s": _div(ours["output_tok_s"], m["output_tok_s"]),
                     "ttft_p50": _div(_p(ours, "ttft_ms", "p50"), _p(m, "ttft_ms", "p50")),
                     "e2e_p50": _div(_p(ours, "e2e_ms", "p50"), _p(m, "e2e_ms", "p50"))}
            if name == "single":
                entry["decode_tok_s"] = _div(ours.get("decode_tok_s"), m.get("decode_tok_s"))
            if name == "agent":
                entry["mean_ttft_later_turns"] = _div(ours.get("mean_ttft_later_turns_ms"),
                                                      m.get("mean_ttft_later_turns_ms"))
            out.setdefault(name, {})[f"ours / {system}"] = entry
        if name == "long-prompt":
            out.setdefault(name, {})["itl_p99 / itl_p50"] = {
                system: _div(_p(m, "itl_ms", "p99"), _p(m, "itl_ms", "p50"))
                for system, m in systems.items()}
            out[name]["itl_max / itl_p50"] = {
                system: _div(_p(m, "itl_ms", "max"), _p(m, "itl_ms", "p50"))
                for system, m in systems.items()}
    return out


def _p(metrics: dict, key: str, q: str) -> float | None:
    dist = metrics.get(key)
    return None if dist is None else dist[q]


def _div(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b
