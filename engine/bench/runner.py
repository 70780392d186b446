"""Drives our LLMEngine through the benchmark's workloads and records per-request timings.

One thread: a loop that adds every request whose arrival time has come (time.monotonic), then
calls step(); when nothing is running it sleeps until the next arrival. Greedy sampling with
ignore_eos, so every request generates exactly max_tokens tokens.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import torch

from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.loader import LoadedModel
from engine.sampling_params import SamplingParams

from engine.bench.metrics import RequestRecord, RssSampler
from engine.bench.workloads import AgentWorkload, BenchRequest, LongPromptWorkload


@dataclass
class RunResult:
    """Records of one run plus what the engine itself counted. prompt_tokens_computed: tokens
    prefilled (recomputed ones included); prefix_cache_hit_tokens: prompt tokens taken from the
    prefix cache instead; kv_host_blocks_*: the host KV tier's counters (0 without one)."""

    records: list[RequestRecord]
    peak_rss_mb: float
    prefix_cache_hit_rate: float | None
    num_preemptions: int
    prompt_tokens_computed: int | None = None
    prefix_cache_hit_tokens: int | None = None
    kv_host_blocks_offloaded: int = 0
    kv_host_blocks_restored: int = 0
    kv_host_blocks_dropped: int = 0


class EngineRunner:
    """Runs workloads on a fresh LLMEngine(loaded, config) each time (so no prefix cache or
    statistics carry over between runs)."""

    def __init__(self, loaded: LoadedModel, config: EngineConfig) -> None:
        self.loaded = loaded
        self.config = config

    def _engine(self, **overrides) -> LLMEngine:
        return LLMEngine(self.loaded, dataclasses.replace(self.config, **overrides))

    def run_open_loop(self, requests: list[BenchRequest], **overrides) -> RunResult:
        """Send each request at its arrival_s and run until all finish."""
        engine = self._engine(**overrides)
        driver = _Driver(engine)
        pending = sorted(requests, key=lambda r: r.arrival_s)
        start = time.monotonic()
        while pending or driver.records_open:
            now = time.monotonic()
            while pending and start + pending[0].arrival_s <= now:
                request = pending.pop(0)
                driver.submit(request, start + request.arrival_s)
            if not driver.records_open:
                time.sleep(max(0.0, start + pending[0].arrival_s - time.monotonic()))
                continue
            driver.step()
        return driver.result()

    def run_agent(self, workload: AgentWorkload, **overrides) -> RunResult:
        """All loops start at once; a loop's next turn is sent the moment its last one ends."""
        engine = self._engine(**overrides)
        driver = _Driver(engine)
        for loop in range(workload.loops):
            driver.submit(_agent_turn(workload, loop, 0, []), time.monotonic())
        while driver.records_open:
            for record in driver.step():
                loop, turn = record.group, record.turn + 1
                if turn < len(workload.tails[loop]):
                    history = record.prompt_token_ids + record.output_token_ids
                    driver.submit(_agent_turn(workload, loop, turn, history), time.monotonic())
        return driver.result()

    def run_long_prompt(self, workload: LongPromptWorkload, **overrides) -> RunResult:
        """Streams start at once; the long prompt arrives once every stream has emitted
        workload.arrive_after_tokens tokens. Only the streams' records come back."""
        engine = self._engine(**overrides)
        driver = _Driver(engine)
        for request in workload.streams:
            driver.submit(request, time.monotonic())
        sent = False
        while driver.records_open:
            driver.step()
            if not sent and all(len(r.output_token_ids) >= workload.arrive_after_tokens
                                for r in driver.records):
                driver.submit(workload.long_prompt, time.monotonic())
                sent = True
        result = driver.result()
        result.records = [r for r in result.records if r.request_id != workload.long_prompt.request_id]
        return result


def _agent_turn(workload: AgentWorkload, loop: int, turn: int, history: list[int]) -> BenchRequest:
    return BenchRequest(f"agent-{loop}-{turn}", history + workload.tails[loop][turn],
                        workload.output_len, group=loop, turn=turn)


class _Driver:
    """Submits requests to one engine, steps it and fills one RequestRecord per request."""

    def __init__(self, engine: LLMEngine) -> None:
        self.engine = engine
        self.records: list[RequestRecord] = []
        self._open: dict[str, RequestRecord] = {}
        self.rss = RssSampler()

    @property
    def records_open(self) -> bool:
        return bool(self._open)

    def submit(self, request: BenchRequest, arrival: float) -> None:
        params = SamplingParams(max_tokens=request.max_tokens, temperature=0.0, ignore_eos=True)
        record = RequestRecord(request.request_id, arrival, request.prompt_token_ids,
                               request.max_tokens, group=request.group, turn=request.turn)
        self.engine.add_request(request.request_id, request.prompt_token_ids, params)
        self.records.append(record)
        self._open[request.request_id] = record

    def step(self) -> list[RequestRecord]:
        """One engine step; returns the records of requests that finished in it."""
        finished = []
        for out in self.engine.step():
            record = self._open[out.request_id]
            record.output_token_ids.extend(out.new_token_ids)
            if out.finished:
                if out.finish_reason not in ("length", "stop"):
                    raise RuntimeError(f"{out.request_id} ended with {out.finish_reason}: {out.error}")
                m = out.metrics
                record.first_scheduled, record.first_token = m.first_scheduled_time, m.first_token_time
                record.finished, record.token_times = m.finished_time, list(m.token_times)
                del self._open[out.request_id]
                finished.append(record)
        self.rss.sample()
        return finished

    def result(self) -> RunResult:
        stats = self.engine.stats()
        # No lookups (prefix caching off) means no hits: 0, so runs compare without a None.
        return RunResult(self.records, self.rss.peak_mb, stats.prefix_cache_hit_rate or 0.0,
                         stats.num_preemptions, stats.num_prompt_tokens, stats.prefix_cache_hits,
                         stats.num_kv_host_blocks_offloaded, stats.num_kv_host_blocks_restored,
                         stats.num_kv_host_blocks_dropped)


def measure_host_overhead(loaded: LoadedModel, config: EngineConfig, batch: int = 32,
                          num_steps: int = 16, prompt_len: int = 32) -> dict:
    """Host overhead per decode step at `batch` sequences: the share of step() time spent
    outside the model's forward pass and logits (so scheduling, input preparation, sampling,
    detokenization and bookkeeping), averaged over num_steps steps in which every one of the
    `batch` sequences decodes one token.

    Timed by wrapping, on this engine instance only, the model the ModelRunner calls, its CUDA
    graph replays (on CUDA, where decode steps bypass the model object), and the runner's
    execute (execute = input preparation + forward). On CUDA each timed span ends with a
    synchronize, so the device's work counts as forward. Returns milliseconds per step and
    fractions of the step time.
    """
    engine = LLMEngine(loaded, dataclasses.replace(config, max_num_seqs=max(batch, config.max_num_seqs)))
    runner = engine.model_runner
    timer = _ForwardTimer(runner.model, runner.device)
    runner.model = timer
    if runner.cuda_graphs is not None:
        runner.cuda_graphs.run = timer.timed(runner.cuda_graphs.run)
    inner_execute = runner.execute

    def timed_execute(scheduled):
        start = time.perf_counter()
        try:
            return inner_execute(scheduled)
        finally:
            timer.execute_s += time.perf_counter() - start
    runner.execute = timed_execute
    params = SamplingParams(max_tokens=num_steps + 2, temperature=0.0, ignore_eos=True)
    span = min(1000, loaded.config.vocab_size - 100)  # ids 100..1099, or fewer in a small vocabulary
    for i in range(batch):
        engine.add_request(f"overhead-{i}", [(i * 7919 + j * 104729) % span + 100
                                             for j in range(prompt_len)], params)
    samples = []
    while engine.has_unfinished_requests():
        timer.reset()
        start = time.perf_counter()
        engine.step()
        step_s = time.perf_counter() - start
        if timer.num_tokens == batch and engine.stats().num_running == batch:
            samples.append((step_s, timer.forward_s, timer.execute_s))
    samples = samples[:num_steps]
    if not samples:
        raise RuntimeError(f"no decode step ran with all {batch} sequences")
    step = sum(s for s, _, _ in samples) / len(samples)
    forward = sum(f for _, f, _ in samples) / len(samples)
    execute = sum(e for _, _, e in samples) / len(samples)
    return {"batch": batch, "num_steps": len(samples), "step_ms": step * 1000,
            "forward_ms": forward * 1000, "host_ms": (step - forward) * 1000,
            "host_fraction": (step - forward) / step,
            "outside_execute_fraction": (step - execute) / step}


class _ForwardTimer:
    """Stands in for the model inside a ModelRunner: delegates and times the forward pass and
    compute_logits, and notes how many tokens the last forward pass saw."""

    def __init__(self, model, device: torch.device | None = None) -> None:
        self._model = model
        is_cuda = device is not None and torch.device(device).type == "cuda"
        self._sync = torch.cuda.synchronize if is_cuda else (lambda: None)
        self.reset()

    def reset(self) -> None:
        self.forward_s = 0.0
        self.execute_s = 0.0
        self.num_tokens = 0

    def __call__(self, input_ids, *args, **kwargs):
        return self.timed(self._model)(input_ids, *args, **kwargs)

    def timed(self, forward):
        """`forward(input_ids, ...)` (the model, or a CUDA graph runner's run) timed as forward."""
        def run(input_ids, *args, **kwargs):
            self.num_tokens = int(input_ids.shape[0])
            self._sync()
            start = time.perf_counter()
            try:
                return forward(input_ids, *args, **kwargs)
            finally:
                self._sync()
                self.forward_s += time.perf_counter() - start
        return run

    def compute_logits(self, hidden):
        self._sync()
        start = time.perf_counter()
        try:
            return self._model.compute_logits(hidden)
        finally:
            self._sync()
            self.forward_s += time.perf_counter() - start

    def __getattr__(self, name):
        return getattr(self._model, name)
