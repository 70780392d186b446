"""`python -m engine [options] PROMPT`: print the model's reply to PROMPT, and nothing else.

PROMPT is sent as one user message through the model's chat template. The reply streams to
stdout as it is generated, followed by a newline; loading progress and logs go to stderr.
Exit status: 0 on success, 2 for bad arguments or parameters, 1 if the model cannot be loaded.
"""

from __future__ import annotations

import argparse
import logging
import sys

from engine.chat_template import encode_conversation
from engine.config import QUANTIZATIONS, EngineConfig
from engine.errors import EngineError, ModelLoadError
from engine.llm_engine import LLMEngine
from engine.loader import load_model
from engine.sampling_params import SamplingParams


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m engine", description=__doc__.splitlines()[0])
    parser.add_argument("prompt", metavar="PROMPT", help="the user message")
    parser.add_argument("--model", default=None, help="a .gguf file or Hugging Face directory "
                        "(default: the packaged SmolLM2-135M-Instruct GGUF)")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--temperature", type=float, default=0.7, help="0 means greedy")
    parser.add_argument("--top-p", type=float, default=1.0)
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--system", default=None,
                        help="system message (default: the chat template's own)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quantization", choices=QUANTIZATIONS, default="auto",
                        help="auto: the CPU fast path for GGUF files (default); none: the float "
                             "reference; int8: quantize float weights to int8 at load")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    params = SamplingParams(max_tokens=args.max_tokens, temperature=args.temperature,
                            top_p=args.top_p, top_k=args.top_k, seed=args.seed)
    try:
        params.validate(vocab_size=2**31 - 1)  # fail fast; checked again against the real vocabulary
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        loaded = load_model(args.model, device=args.device, progress=_progress,
                            quantization=args.quantization)
    except ModelLoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    # One request at a time: size the KV pool for one full window, not the server's default.
    blocks = -(-loaded.config.max_position_embeddings // EngineConfig.block_size)
    engine = LLMEngine(loaded, EngineConfig(device=args.device, num_kv_blocks=blocks))
    messages = ([{"role": "system", "content": args.system}] if args.system else []) + \
        [{"role": "user", "content": args.prompt}]
    try:
        prompt = encode_conversation(engine.chat_template, engine.tokenizer, messages)
        engine.add_request("cli", prompt, params)
    except (EngineError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    final = None
    while final is None:
        for out in engine.step():
            sys.stdout.write(out.delta)
            sys.stdout.flush()
            if out.finished:
                final = out
    sys.stdout.write("\n")
    sys.stdout.flush()
    if final.finish_reason == "error":
        print(f"error: {final.error}", file=sys.stderr)
        return 1
    return 0


def _progress(message: str, fraction: float) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
