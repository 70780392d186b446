"""The benchmark (engine.bench) runs every workload at a tiny size and reports sane fields.

Never timed: the checks are on shapes, counts and orderings, not on speed.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time

import pytest

from engine.bench.__main__ import parse_args, sizes_from_args
from engine.bench.baselines import TransformersBaseline
from engine.bench.metrics import RequestRecord, percentile, summarize
from engine.bench import suite
from engine.bench.runner import RunResult
from engine.bench.suite import NO_CHUNKING, NO_PREFIX_CACHING, OURS, SuiteOptions, run_suite
from engine.bench.workloads import TokenSampler, WorkloadSizes, make_workload
from engine.config import EngineConfig

TINY = WorkloadSizes(single_prompt_len=16, single_output_len=4, num_requests=3, max_prompt_len=48,
                     max_output_len=4, loops=2, turns=2, turn_output_len=3, num_streams=2,
                     stream_prompt_len=16, stream_output_len=6, long_prompt_len=160)
CONFIG = EngineConfig(num_kv_blocks=256, max_model_len=1024, max_num_batched_tokens=512)
DISTRIBUTIONS = ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "queue_ms")


def _sampler(seed: str) -> TokenSampler:
    return TokenSampler(1000, lambda t: t < 17, random.Random(seed))


def test_workloads_are_seeded_and_sized():
    sizes = WorkloadSizes(num_requests=10, rate=2.0)
    chat = make_workload("chat", _sampler("0-chat"), sizes)
    assert chat == make_workload("chat", _sampler("0-chat"), sizes)
    assert chat != make_workload("chat", _sampler("1-chat"), sizes)
    assert len(chat) == 10 and chat[0].arrival_s == 0.0
    assert all(a.arrival_s < b.arrival_s for a, b in zip(chat, chat[1:]))  # Poisson gaps > 0
    assert all(32 <= len(r.prompt_token_ids) <= 512 and 16 <= r.max_tokens <= 256 for r in chat)
    assert all(t >= 17 for r in chat for t in r.prompt_token_ids)  # specials excluded
    at_once = make_workload("chat", _sampler("0-chat"), WorkloadSizes(num_requests=4))
    assert {r.arrival_s for r in at_once} == {0.0}
    agent = make_workload("agent", _sampler("a"), WorkloadSizes(loops=3, turns=4))
    assert agent.loops == 3 and all(len(t) == 4 for t in agent.tails)
    assert all(32 <= len(tail) <= 64 for loop in agent.tails for tail in loop)
    with pytest.raises(ValueError, match="unknown workload"):
        make_workload("nope", _sampler("x"), sizes)


def test_percentile_interpolates_and_summary_counts():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([5.0], 99) == 5.0
    records = [RequestRecord("a", 0.0, [1, 2], 3, first_scheduled=0.5, first_token=1.0,
                             finished=3.0, token_times=[1.0, 2.0, 3.0]),
               RequestRecord("b", 1.0, [1], 1, first_scheduled=1.0, first_token=2.0,
                             finished=2.0, token_times=[2.0])]
    s = summarize(records)
    assert s["num_output_tokens"] == 4 and s["output_tok_s"] == pytest.approx(4 / 3.0)
    assert s["ttft_ms"]["p50"] == pytest.approx(1000.0) and s["itl_ms"]["p99"] == pytest.approx(1000.0)
    assert s["queue_ms"]["p50"] == pytest.approx(250.0)
    with pytest.raises(ValueError):
        summarize([RequestRecord("c", 0.0, [1], 1)])


def test_cli_scale_flags_reach_the_sizes():
    args = parse_args(["chat", "agent", "--num-requests", "5", "--turns", "3", "--rate", "inf"])
    sizes = sizes_from_args(args)
    assert args.workloads == ["chat", "agent"]
    assert (sizes.num_requests, sizes.turns, sizes.loops) == (5, 3, 8)


def test_long_prompt_runs_with_its_own_chunk_and_the_rest_with_the_throughput_chunk():
    args = parse_args(["long-prompt", "--long-prompt-chunk", "48", "--max-num-batched-tokens", "640"])
    assert (args.long_prompt_chunk, args.max_num_batched_tokens, args.long_prefill_threshold) == (48, 640, 256)
    calls = []

    class Runner:  # records the overrides each run gets; returns one finished request
        def _result(self, **overrides):
            calls.append(overrides)
            record = RequestRecord("s", 0.0, [1, 2], 2, first_scheduled=0.0, first_token=0.1,
                                   finished=0.2, token_times=[0.1, 0.2])
            return RunResult([record], 1.0, 0.0, 0)

        def run_long_prompt(self, workload, **overrides):
            return self._result(**overrides)

    options = SuiteOptions(workloads=["long-prompt"], long_prompt_chunk=48)
    systems = suite._run_workload("long-prompt", None, Runner(), options, log=lambda m: None)
    assert set(systems) == {OURS, NO_CHUNKING}
    assert calls == [{"long_prefill_token_threshold": 48}, {"long_prefill_token_threshold": None}]


def _check_system(metrics: dict) -> None:
    assert metrics["output_tok_s"] > 0
    assert metrics["num_output_tokens"] == metrics["num_requested_tokens"]
    assert metrics["peak_rss_mb"] > 0
    for key in DISTRIBUTIONS:
        d = metrics[key]
        assert 0 <= d["p50"] <= d["p90"] <= d["p99"] <= d["max"], key


@pytest.mark.slow
def test_every_workload_runs_on_our_engine(loaded_model):
    options = SuiteOptions(workloads=["single", "chat", "agent", "long-prompt"], sizes=TINY,
                           config=CONFIG, long_prefill_token_threshold=32, warm_up=False,
                           host_overhead_batches=(1, 4), host_overhead_steps=2)
    results = json.loads(json.dumps(run_suite(loaded_model, options, log=lambda m: None)))
    w = results["workloads"]
    assert w["single"][OURS]["num_output_tokens"] == 4 and w["single"][OURS]["decode_tok_s"] > 0
    assert w["chat"][OURS]["num_requests"] == 3
    assert w["agent"][OURS]["num_requests"] == 4 and len(w["agent"][OURS]["ttft_by_turn_ms"]) == 2
    assert w["agent"][OURS]["prefix_cache_hit_rate"] > 0
    assert w["agent"][NO_PREFIX_CACHING]["prefix_cache_hit_rate"] == 0
    assert w["long-prompt"][OURS]["num_requests"] == 2  # the streams only
    assert set(w["long-prompt"]) == {OURS, NO_CHUNKING}
    for systems in w.values():
        for metrics in systems.values():
            _check_system(metrics)
    assert results["kv_bytes_per_token"] == 30 * 2 * 3 * 64 * 4  # SmolLM2-135M, float32
    assert [o["batch"] for o in results["host_overhead"]] == [1, 4]
    for overhead in results["host_overhead"]:
        assert overhead["num_steps"] == 2 and 0 < overhead["host_fraction"] < 1
    assert results["weight_bytes"] == w["chat"][OURS]["weight_bytes"] > 0
    assert "ours / ours (no prefix caching)" in results["ratios"]["agent"]


@pytest.mark.slow
def test_transformers_baseline_serves_the_same_requests(loaded_model, hf_reference):
    baseline = TransformersBaseline(hf_reference.model, pad_token_id=2, batch_size=2)
    sizes = dataclasses.replace(TINY, num_requests=2)
    options = SuiteOptions(workloads=["chat"], sizes=sizes, config=CONFIG, host_overhead_batches=(),
                           warm_up=False, baselines={"transformers": baseline})
    results = run_suite(loaded_model, options, log=lambda m: None)
    chat = results["workloads"]["chat"]
    assert set(chat) == {OURS, "transformers sequential", "transformers static"}
    for metrics in chat.values():
        _check_system(metrics)
    ratio = results["ratios"]["chat"]["ours / transformers static"]
    assert ratio["output_tok_s"] > 0


def test_device_flag_reaches_the_loader_and_the_engine(monkeypatch, tmp_path):
    import engine.bench.__main__ as cli

    seen = {}

    def load_model(path, device="cpu", **kwargs):
        seen["load"] = (path, device)
        return "loaded"

    def run_suite(loaded, options, log):
        seen["config"] = options.config
        return {"workloads": {}, "ratios": {}}
    monkeypatch.setattr(cli, "load_model", load_model)
    monkeypatch.setattr(cli, "run_suite", run_suite)
    monkeypatch.setattr(cli, "format_report", lambda results: "")
    out = tmp_path / "bench.json"
    assert cli.main(["single", "--model", "m.gguf", "--device", "cuda", "--json", str(out)]) == 0
    assert seen["load"] == ("m.gguf", "cuda") and seen["config"].device == "cuda"
    assert json.loads(out.read_text())["device"] == "cuda"
    assert parse_args([]).device == "cpu"


def _bench_a_generated_model(model_dir: str, device: str, out) -> dict:
    from engine.bench.__main__ import main

    assert main(["single", "chat", "--model", model_dir, "--device", device,
                 "--single-prompt-len", "16", "--single-output-len", "8", "--num-requests", "4",
                 "--max-prompt-len", "48", "--max-output-len", "8", "--host-overhead-batch", "4",
                 "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_the_bench_runs_a_generated_model_directory(tiny_model_dir, tmp_path):
    results = _bench_a_generated_model(tiny_model_dir, "cpu", tmp_path / "bench.json")
    assert results["device"] == "cpu"
    assert results["workloads"]["single"][OURS]["num_output_tokens"] == 8


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs CUDA")
def test_the_bench_runs_on_cuda(tiny_model_dir, tmp_path):
    results = _bench_a_generated_model(tiny_model_dir, "cuda", tmp_path / "bench.json")
    assert results["device"] == "cuda"
    assert results["workloads"]["chat"][OURS]["num_requests"] == 4
    assert results["kv_bytes_per_token"] == 2 * 2 * 3 * 64 * 2  # 2 layers, bfloat16


def test_host_overhead_counts_cuda_graph_replays_as_forward(tiny_model, monkeypatch):
    """On CUDA decode steps replay graphs and never call the model object: the replay must be
    timed as forward, or no step would count as a full decode step. Simulated on CPU with a
    stand-in graph runner that runs the model eagerly."""
    from engine.bench import runner as runner_mod
    from engine.model_runner import ModelRunner

    replays = []

    class FakeGraphs:
        def __init__(self, model):
            self.model = model

        def can_run(self, metadata):
            return metadata.is_decode_only

        def run(self, input_ids, positions, metadata):
            replays.append(int(input_ids.shape[0]))
            time.sleep(0.002)
            return self.model(input_ids, positions, self.kv_caches, metadata)

    real_init = ModelRunner.__init__

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        self.cuda_graphs = FakeGraphs(self.model)
        self.cuda_graphs.kv_caches = self.kv_caches
    monkeypatch.setattr(ModelRunner, "__init__", init)
    result = runner_mod.measure_host_overhead(tiny_model, CONFIG, batch=4, num_steps=3)
    assert result["num_steps"] == 3 and replays.count(4) >= 3
    assert result["forward_ms"] >= 2.0 and 0 < result["host_fraction"] < 1
