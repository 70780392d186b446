"""`python -m engine.bench [WORKLOAD ...] [options]`: benchmark our engine against baselines.

Prints a table; --json PATH also writes the full result. Exit status 0, 2 for bad arguments,
1 when the model cannot be loaded.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from engine.config import QUANTIZATIONS, EngineConfig
from engine.errors import ModelLoadError
from engine.loader import default_model_path, load_model

from engine.bench.baselines import BaselineUnavailable, LlamaCppBaseline, TransformersBaseline
from engine.bench.report import format_report
from engine.bench.suite import SuiteOptions, run_suite
from engine.bench.workloads import WORKLOADS, WorkloadSizes

BASELINES = ("transformers", "llama-cpp")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    d = WorkloadSizes()
    p = argparse.ArgumentParser(prog="python -m engine.bench", description=__doc__.splitlines()[0])
    p.add_argument("workloads", nargs="*", choices=[[], *WORKLOADS], metavar="WORKLOAD",
                   help=f"any of {', '.join(WORKLOADS)} (default: all)")
    p.add_argument("--model", default=None, help="a .gguf file (default: the packaged SmolLM2 GGUF)")
    p.add_argument("--device", default="cpu",
                   help="where our engine runs: cpu, cuda or cuda:N (bfloat16 and CUDA graphs on "
                        "CUDA); baselines stay on the CPU")
    p.add_argument("--baseline", action="append", choices=BASELINES, default=[])
    p.add_argument("--json", metavar="PATH", help="write the result as JSON")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--rate", type=float, default=d.rate,
                   help="chat arrivals per second (Poisson); inf: all at once (default)")
    p.add_argument("--num-requests", type=int, default=d.num_requests)
    p.add_argument("--max-prompt-len", type=int, default=d.max_prompt_len)
    p.add_argument("--max-output-len", type=int, default=d.max_output_len,
                   help="caps chat outputs and the long-prompt streams' outputs")
    p.add_argument("--single-prompt-len", type=int, default=d.single_prompt_len)
    p.add_argument("--single-output-len", type=int, default=d.single_output_len)
    p.add_argument("--loops", type=int, default=d.loops)
    p.add_argument("--turns", type=int, default=d.turns)
    p.add_argument("--turn-output-len", type=int, default=d.turn_output_len)
    p.add_argument("--num-streams", type=int, default=d.num_streams)
    p.add_argument("--long-prompt-len", type=int, default=d.long_prompt_len)
    p.add_argument("--no-prefix-caching", action="store_true")
    p.add_argument("--long-prefill-threshold", type=int, default=256,
                   help="our chunk size for chunked prefill in single, chat and agent (tokens)")
    p.add_argument("--long-prompt-chunk", type=int, default=16,
                   help="our chunk size for chunked prefill in long-prompt (tokens)")
    p.add_argument("--max-num-batched-tokens", type=int, default=2048,
                   help="our per-step token budget (decode + prefill tokens)")
    p.add_argument("--max-num-seqs", type=int, default=32)
    p.add_argument("--kv-cache-gib", type=float, default=1.0)
    p.add_argument("--num-kv-blocks", type=int, default=None,
                   help="our KV pool in blocks of 16 tokens (overrides --kv-cache-gib); small, "
                        "so the agent loops' histories do not all fit")
    p.add_argument("--kv-host-blocks", type=int, default=0,
                   help="also run agent with a host KV tier of this many blocks (0: skip)")
    p.add_argument("--static-batch-size", type=int, default=16)
    p.add_argument("--host-overhead-batch", type=int, nargs="*", default=[1, 32],
                   help="batch sizes for the host-overhead measurement (none: skip it)")
    p.add_argument("--quantization", choices=QUANTIZATIONS, default="auto",
                   help="our weights: auto (the CPU fast path for GGUF), none (float32 reference), int8")
    p.add_argument("--accuracy", action="store_true",
                   help="also score the fast path (and llama.cpp, with --baseline llama-cpp) "
                        "against our float32 path: top-1 agreement, KL, perplexity")
    return p.parse_args(argv)


def sizes_from_args(args: argparse.Namespace) -> WorkloadSizes:
    return WorkloadSizes(
        seed=args.seed, rate=args.rate, num_requests=args.num_requests,
        max_prompt_len=args.max_prompt_len, max_output_len=args.max_output_len,
        single_prompt_len=args.single_prompt_len, single_output_len=args.single_output_len,
        loops=args.loops, turns=args.turns, turn_output_len=args.turn_output_len,
        num_streams=args.num_streams, stream_output_len=min(args.max_output_len, 256),
        long_prompt_len=args.long_prompt_len)


def load_baselines(names: list[str], model_path: str, batch_size: int) -> dict:
    baselines = {}
    for name in dict.fromkeys(names):
        try:
            if name == "transformers":
                baselines[name] = TransformersBaseline.load(model_path, batch_size)
            else:
                baselines[name] = LlamaCppBaseline.load(model_path)
        except BaselineUnavailable as exc:
            print(f"baseline {name}: {exc}", file=sys.stderr)
    return baselines


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    model_path = args.model or default_model_path()
    try:
        loaded = load_model(model_path, device=args.device, quantization=args.quantization)
    except ModelLoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    options = SuiteOptions(
        workloads=args.workloads or list(WORKLOADS), sizes=sizes_from_args(args),
        config=EngineConfig(device=args.device, max_num_seqs=args.max_num_seqs,
                            kv_cache_memory_gib=args.kv_cache_gib, num_kv_blocks=args.num_kv_blocks,
                            # a small pool must still hold one whole sequence
                            max_model_len=args.num_kv_blocks and min(
                                args.num_kv_blocks * 16, loaded.config.max_position_embeddings),
                            max_num_batched_tokens=args.max_num_batched_tokens),
        enable_prefix_caching=not args.no_prefix_caching,
        long_prefill_token_threshold=args.long_prefill_threshold,
        long_prompt_chunk=args.long_prompt_chunk,
        host_overhead_batches=tuple(b for b in args.host_overhead_batch if b > 0),
        kv_host_blocks=args.kv_host_blocks,
        baselines=load_baselines(args.baseline, model_path, args.static_batch_size))
    results = run_suite(loaded, options, log=lambda m: print(m, file=sys.stderr, flush=True))
    results["device"] = args.device
    if args.accuracy:
        results["accuracy"] = _accuracy(loaded, model_path, "llama-cpp" in args.baseline)
    print(format_report(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


def _accuracy(loaded, model_path: str, with_llama_cpp: bool) -> dict:
    from engine.bench.accuracy import accuracy_report, llama_cpp_scorer
    reference = load_model(model_path, quantization="none")
    extra = {}
    if with_llama_cpp:
        try:
            extra["llama.cpp"] = llama_cpp_scorer(model_path)
        except ImportError:
            print("accuracy: llama_cpp is not importable; skipping its figures", file=sys.stderr)
    return accuracy_report(reference, loaded, extra=extra)


if __name__ == "__main__":
    sys.exit(main())
