"""The `structured` workload: what grammar-constrained decoding costs per decode step.

    python -m engine.bench.structured [--device cpu|cuda] [--steps 32] [--json PATH]

For each (batch, constrained) case - by default (1, 0), (1, 1), (32, 0), (32, 32), (32, 8) -
`batch` requests decode together, greedy, `constrained` of them under a JSON Schema whose
output never completes within the run (an array of at least 500 objects of three fields), the
others free. Reported per case, averaged over `steps` decode steps in which all `batch`
sequences decode: step_ms (the whole engine.step()), grammar_ms (building the allowed-token
mask: the matchers' bitmasks and their unpacking onto the device; the mask's application and
the matchers' advance are inside step_ms only), and overhead (step_ms over the same batch's
unconstrained step_ms, minus 1). The issue's target: overhead < 10% with 8 constrained in a
batch of 32. Wall-clock: rerun on an idle machine before comparing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time

from engine.config import EngineConfig
import engine.llm_engine as llm_engine_module
from engine.llm_engine import LLMEngine
from engine.loader import LoadedModel, default_model_path, load_model
from engine.sampling_params import SamplingParams
from engine.structured_output import StructuredOutputParams

SCHEMA = {
    "type": "object",
    "properties": {"items": {"type": "array", "minItems": 500, "items": {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 24},
                       "qty": {"type": "integer", "minimum": 0, "maximum": 999},
                       "kind": {"enum": ["fruit", "vegetable", "grain", "other"]}},
        "required": ["name", "qty", "kind"], "additionalProperties": False}}},
    "required": ["items"], "additionalProperties": False,
}
CASES = ((1, 0), (1, 1), (32, 0), (32, 32), (32, 8))


def measure_case(loaded: LoadedModel, config: EngineConfig, batch: int, constrained: int,
                 steps: int = 32, prompt_len: int = 32) -> dict:
    """Mean decode-step time (ms) with `constrained` of `batch` sequences under SCHEMA."""
    engine = LLMEngine(loaded, dataclasses.replace(config, max_num_seqs=max(batch, config.max_num_seqs)))
    grammar_s = 0.0
    inner = llm_engine_module.allowed_tokens  # the masks of a step (engine.structured_output.decoding)

    def timed_allowed(*args, **kwargs):
        nonlocal grammar_s
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            grammar_s += time.perf_counter() - start
    llm_engine_module.allowed_tokens = timed_allowed
    try:
        return _measure(engine, batch, constrained, steps, prompt_len, loaded, lambda: grammar_s)
    finally:
        llm_engine_module.allowed_tokens = inner


def _measure(engine: LLMEngine, batch: int, constrained: int, steps: int, prompt_len: int,
             loaded: LoadedModel, grammar_total) -> dict:
    so = StructuredOutputParams(json=json.dumps(SCHEMA))
    span = min(1000, loaded.config.vocab_size - 100)
    for i in range(batch):
        params = SamplingParams(max_tokens=steps + 4, temperature=0.0, ignore_eos=True,
                                structured_output=so if i < constrained else None)
        engine.add_request(f"structured-{i}", [(i * 7919 + j * 104729) % span + 100
                                               for j in range(prompt_len)], params)
    step_times, grammar_times = [], []
    while engine.has_unfinished_requests():
        before = grammar_total()
        start = time.perf_counter()
        outputs = engine.step()
        elapsed = time.perf_counter() - start
        grammar_s = grammar_total() - before
        decoding = len(outputs) == batch and all(o.num_output_tokens > 1 for o in outputs)
        if decoding and engine.stats().num_running == batch:
            step_times.append(elapsed)
            grammar_times.append(grammar_s)
    step_times, grammar_times = step_times[:steps], grammar_times[:steps]
    if not step_times:
        raise RuntimeError(f"no decode step ran with all {batch} sequences")
    return {"batch": batch, "constrained": constrained, "num_steps": len(step_times),
            "step_ms": 1000 * statistics.mean(step_times),
            "step_median_ms": 1000 * statistics.median(step_times),
            "grammar_ms": 1000 * statistics.mean(grammar_times)}


def run(loaded: LoadedModel, config: EngineConfig, cases=CASES, steps: int = 32) -> list[dict]:
    """measure_case for each case (after one untimed warm-up), with `overhead` against the
    unconstrained case of the same batch when there is one."""
    measure_case(loaded, config, 2, 1, steps=2)  # warm-up: compile, first-call costs
    rows = [measure_case(loaded, config, b, c, steps) for b, c in cases]
    plain = {r["batch"]: r["step_ms"] for r in rows if r["constrained"] == 0}
    for r in rows:
        if r["constrained"] and r["batch"] in plain:
            r["overhead"] = r["step_ms"] / plain[r["batch"]] - 1
    return rows


def format_rows(rows: list[dict]) -> str:
    lines = ["| batch | constrained | step ms (mean) | step ms (median) | grammar mask ms | overhead |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        overhead = f"{100 * r['overhead']:+.1f}%" if "overhead" in r else ""
        lines.append(f"| {r['batch']} | {r['constrained']} | {r['step_ms']:.2f} | "
                     f"{r['step_median_ms']:.2f} | {r['grammar_ms']:.3f} | {overhead} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.bench.structured",
                                description=__doc__.splitlines()[0])
    p.add_argument("--model", default=None)
    p.add_argument("--device", default="cpu")
    p.add_argument("--quantization", default="auto")
    p.add_argument("--steps", type=int, default=32)
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args(argv)
    loaded = load_model(args.model or default_model_path(), device=args.device,
                        quantization=args.quantization)
    config = EngineConfig(device=args.device, num_kv_blocks=512, max_model_len=2048)
    rows = run(loaded, config, steps=args.steps)
    print(format_rows(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
