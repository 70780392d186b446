"""`python -m engine.bench.kernels`: microseconds per matmul at SmolLM2's shapes, side by side.

Candidates for the CPU fast path's matmuls: float32 `F.linear` (MKL, the reference path),
PyTorch's dynamic int8 `Linear` (fbgemm, weights int8 per channel), and our C++ kernels on the
GGUF file's own blocks (Q4_1 layers, Q8_0 LM head). Prints one table; --json writes it.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import torch

SHAPES = {  # name -> (GGUF tensor of layer 0 or the embedding, out features, in features)
    "qkv 576->960": ("blk.0.attn_q.weight", 960, 576),
    "o 576->576": ("blk.0.attn_output.weight", 576, 576),
    "gate_up 576->3072": ("blk.0.ffn_gate.weight", 3072, 576),
    "down 1536->576": ("blk.0.ffn_down.weight", 576, 1536),
    "lm_head 576->49152": ("token_embd.weight", 49152, 576),
}


def _time_us(fn, reps: int) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - start) / reps * 1e6


def _packed(reader, name: str, n: int, k: int):
    from engine.quant.formats import from_gguf
    t = next(t for t in reader.tensors if t.name == name)
    rows = np.asarray(t.data)
    # Tiles the layer-0 tensor to the fused shape (the bytes per weight are what matter).
    reps = -(-n // rows.shape[0])
    return from_gguf(np.concatenate([rows] * reps)[:n], t.tensor_type.name, n, k).to_panels()


def run(batch_sizes: list[int], threads: int) -> list[dict]:
    from engine.gguf_loader import open_gguf
    from engine.loader import default_model_path
    from engine.quant import native

    torch.set_num_threads(threads)
    native.set_num_threads(threads)
    reader = open_gguf(default_model_path())
    rows = []
    for label, (name, n, k) in SHAPES.items():
        w_q = _packed(reader, name, n, k)
        w_f = w_q.dequantize()
        lin = torch.nn.Linear(k, n, bias=False)
        lin.weight.data = w_f
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dyn = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(lin), {torch.nn.Linear},
                                                         dtype=torch.qint8)
        for m in batch_sizes:
            x = torch.randn(m, k)
            reps = max(3, int(2e8 / (m * n * k + 1e6)))
            with torch.inference_mode():
                rows.append({"shape": label, "m": m, "format": w_q.format,
                             "float32_us": _time_us(lambda: torch.nn.functional.linear(x, w_f), reps),
                             "fbgemm_int8_us": _time_us(lambda: dyn(x), reps),
                             "ours_us": _time_us(lambda: native.linear(w_q, x), reps)})
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.bench.kernels", description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, nargs="+", default=[1, 16, 32, 256])
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args(argv)
    rows = run(args.batch, args.threads)
    print(f"{'shape':20} {'m':>4} {'fmt':>4} {'float32':>10} {'fbgemm int8':>12} {'ours':>10}  (us per call, "
          f"{args.threads} threads)")
    for r in rows:
        print(f"{r['shape']:20} {r['m']:>4} {r['format']:>4} {r['float32_us']:>10.0f} "
              f"{r['fbgemm_int8_us']:>12.0f} {r['ours_us']:>10.0f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
