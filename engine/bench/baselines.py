"""Baselines run in the benchmark's process on the same prompts (token ids) and weights.

TransformersBaseline: Hugging Face `generate` (greedy, float32, EOS suppressed with
min_new_tokens) on AutoModelForCausalLM.from_pretrained(folder, gguf_file=name), in two modes:
"sequential" (one request at a time, in arrival order) and "static" (batches of up to
batch_size requests, padded on the left, each batch generating its longest max_tokens; a batch
starts when its last request has arrived and the previous batch is done).
LlamaCppBaseline: llama_cpp.Llama on the same GGUF, one request at a time.

Both serve a list of requests through `serve(requests, start)`, a blocking call that fills one
RequestRecord per request: arrival = start + arrival_s, first_scheduled = when its generate call
began, token_times from a streamer (each generated step's wall time).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import torch

from engine.bench.metrics import RequestRecord, RssSampler
from engine.bench.workloads import BenchRequest


class BaselineUnavailable(RuntimeError):
    """The baseline's package is not installed."""


def _records_for(requests: list[BenchRequest], start: float) -> list[RequestRecord]:
    return [RequestRecord(r.request_id, start + r.arrival_s, r.prompt_token_ids, r.max_tokens,
                          group=r.group, turn=r.turn) for r in requests]


def _wait_until(t: float) -> None:
    delay = t - time.monotonic()
    if delay > 0:
        time.sleep(delay)


class _StepStreamer:
    """A transformers streamer that timestamps each generated step for every row of a batch
    (generate's first put() is the prompt, which is skipped)."""

    def __init__(self, records: list[RequestRecord], rss: RssSampler) -> None:
        self.records = records
        self.rss = rss
        self._seen_prompt = False

    def put(self, value: torch.Tensor) -> None:
        if not self._seen_prompt:
            self._seen_prompt = True
            return
        now = time.monotonic()
        ids = value.reshape(len(self.records), -1)[:, -1].tolist()  # [batch]
        for record, token in zip(self.records, ids):
            if len(record.token_times) < record.max_tokens:
                record.token_times.append(now)
                record.output_token_ids.append(int(token))
        self.rss.sample()

    def end(self) -> None:
        pass


class TransformersBaseline:
    """Hugging Face transformers `generate` as a server. model: a transformers causal LM in
    eval mode; pad_token_id: the id used for left padding (masked out)."""

    modes = ("sequential", "static")

    def __init__(self, model, pad_token_id: int, batch_size: int = 16) -> None:
        self.model = model
        self.pad_token_id = pad_token_id
        self.batch_size = batch_size

    @classmethod
    def load(cls, gguf_path: str, batch_size: int = 16) -> TransformersBaseline:
        """Load AutoModelForCausalLM from the GGUF, float32 (BaselineUnavailable without
        transformers)."""
        try:
            import transformers
        except ImportError as exc:
            raise BaselineUnavailable("transformers is not installed") from exc
        folder, name = os.path.split(os.path.abspath(gguf_path))
        model = transformers.AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=name, dtype=torch.float32)
        pad = model.config.pad_token_id
        if pad is None:
            pad = model.config.eos_token_id
        return cls(model.eval(), int(pad if isinstance(pad, int) else pad[0]), batch_size)

    def serve(self, requests: list[BenchRequest], start: float, mode: str,
              rss: RssSampler) -> list[RequestRecord]:
        """Serve `requests` (sorted by arrival) in `mode` ("sequential" | "static")."""
        if mode not in self.modes:
            raise ValueError(f"mode must be one of {self.modes}, got {mode!r}")
        records = _records_for(requests, start)
        size = 1 if mode == "sequential" else self.batch_size
        for i in range(0, len(records), size):
            batch = records[i:i + size]
            _wait_until(max(r.arrival for r in batch))
            self._generate(batch, rss)
        return records

    @torch.inference_mode()
    def _generate(self, batch: list[RequestRecord], rss: RssSampler) -> None:
        width = max(r.num_prompt_tokens for r in batch)
        ids = torch.full((len(batch), width), self.pad_token_id, dtype=torch.int64)
        mask = torch.zeros((len(batch), width), dtype=torch.int64)
        for row, r in enumerate(batch):
            ids[row, width - r.num_prompt_tokens:] = torch.tensor(r.prompt_token_ids)
            mask[row, width - r.num_prompt_tokens:] = 1
        new_tokens = max(r.max_tokens for r in batch)
        now = time.monotonic()
        for r in batch:
            r.first_scheduled = now
        self.model.generate(
            input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens,
            min_new_tokens=new_tokens, do_sample=False, pad_token_id=self.pad_token_id,
            streamer=_StepStreamer(batch, rss))
        for r in batch:
            r.first_token, r.finished = r.token_times[0], r.token_times[-1]


class LlamaCppBaseline:
    """llama.cpp (llama-cpp-python) on the GGUF, greedy, one request at a time; generation runs
    to max_tokens whatever the tokens (Llama.generate does not stop at EOS on its own)."""

    modes = ("sequential",)

    def __init__(self, llm) -> None:
        self.llm = llm

    @classmethod
    def load(cls, gguf_path: str, n_ctx: int = 8192, n_threads: int | None = None) -> LlamaCppBaseline:
        """Raises BaselineUnavailable when the llama_cpp package is not importable."""
        try:
            import llama_cpp
        except ImportError as exc:
            raise BaselineUnavailable(
                "llama_cpp is not importable (pip install llama-cpp-python); skipping") from exc
        llm = llama_cpp.Llama(model_path=gguf_path, n_ctx=n_ctx, n_threads=n_threads or os.cpu_count(),
                              verbose=False, logits_all=False)
        return cls(llm)

    def serve(self, requests: list[BenchRequest], start: float, mode: str,
              rss: RssSampler) -> list[RequestRecord]:
        records = _records_for(requests, start)
        for r in records:
            _wait_until(r.arrival)
            r.first_scheduled = time.monotonic()
            for token in self.llm.generate(r.prompt_token_ids, top_k=1, top_p=1.0, temp=0.0,
                                           repeat_penalty=1.0, reset=True):
                r.token_times.append(time.monotonic())
                r.output_token_ids.append(int(token))
                if len(r.token_times) >= r.max_tokens:
                    break
            r.first_token, r.finished = r.token_times[0], r.token_times[-1]
            rss.sample()
        return records


def serve_agent(serve: Callable[[list[BenchRequest], float], list[RequestRecord]],
                tails: list[list[list[int]]], output_len: int) -> list[RequestRecord]:
    """The agent workload for a baseline: turn by turn, each turn's requests (one per loop)
    arrive together once the previous turn is done; history = prompt + output + next tail."""
    records: list[RequestRecord] = []
    histories = [[] for _ in tails]
    for turn in range(len(tails[0])):
        requests = [BenchRequest(f"agent-{loop}-{turn}", histories[loop] + tails[loop][turn],
                                 output_len, group=loop, turn=turn) for loop in range(len(tails))]
        done = serve(requests, time.monotonic())
        for loop, record in enumerate(done):
            histories[loop] = record.prompt_token_ids + record.output_token_ids
        records += done
    return records
