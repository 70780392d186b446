"""scripts/gpu_check.py on a machine without CUDA: what can be checked before a GPU is needed
(the interpreter probe, the model's reassembly from parts, which tests it collects and that they
import nothing of the web stack, a stage run end to end, the summary)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "gpu_check.py")
# What a bare CUDA machine lacks: the web stack, the GGUF reader, this machine's test plugins.
ABSENT = ("starlette", "sqlalchemy", "alembic", "uvicorn", "gguf", "backend", "web",
          "hypothesis", "pytest_asyncio", "httpx", "playwright", "accelerate", "openai")


@pytest.fixture(scope="module")
def gpu_check():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def bare_python_path(tmp_path) -> str:
    """A PYTHONPATH entry whose sitecustomize hides ABSENT from every import finder, as if not
    installed (importlib.util.find_spec gives None, import raises ModuleNotFoundError)."""
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent(f"""
        import sys
        ABSENT = {ABSENT!r}
        class _Hide:
            def __init__(self, finder):
                self.finder = finder
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ABSENT:
                    return None
                return self.finder.find_spec(name, path, target)
            def __getattr__(self, attr):
                return getattr(self.finder, attr)
        sys.meta_path[:] = [_Hide(f) if hasattr(f, "find_spec") else f for f in sys.meta_path]
    """))
    return str(tmp_path)


def _run(args, env=None, timeout=120):
    return subprocess.run([sys.executable, SCRIPT, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="checks the CPU-only exit")
def test_without_cuda_it_says_so_and_writes_the_json(tmp_path):
    done = _run([], env={"OUT": str(tmp_path)})
    assert done.returncode == 3, done.stdout + done.stderr
    assert "no CUDA device visible to torch" in done.stdout
    report = json.loads((tmp_path / "gpu-check.json").read_text())
    assert report["exit_status"] == 3 and report["environment"]["missing"] == []
    assert report["environment"]["versions"]["torch"]


def test_a_missing_package_is_named_and_nothing_is_installed(tmp_path, bare_python_path):
    shadow = tmp_path / "shadow" / "triton"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('triton is absent here')\n")
    out = tmp_path / "report.json"
    done = _run(["--json", str(out)], env={
        "PYTHONPATH": os.pathsep.join([str(tmp_path / "shadow"), bare_python_path])})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "triton (ImportError: triton is absent here)" in done.stdout
    assert "installs nothing" in done.stdout and "pip" not in done.stdout
    assert json.loads(out.read_text())["exit_status"] == 2


@pytest.mark.parametrize("stage", ["kernels", "engine", "real-model"])
def test_its_test_selection_collects_on_a_bare_machine(gpu_check, stage, bare_python_path):
    """The files and markers each stage hands pytest collect without starlette, sqlalchemy,
    gguf or any pytest plugin (the conftests included)."""
    files = (["tests/engine/test_kernels.py"] if stage == "kernels"
             else list(gpu_check.ENGINE_GPU_TESTS)
             + (["tests/engine/test_kernels.py"] if stage == "real-model" else []))
    marker = {"kernels": "not slow", "engine": "gpu and not slow", "real-model": "gpu and slow"}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([bare_python_path, ROOT]),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    probe = ("import sys, pytest; code = pytest.main(sys.argv[1:]); "
             f"leaked = sorted(m for m in sys.modules if m.split('.')[0] in {ABSENT!r}); "
             "print('LEAKED', leaked); sys.exit(code or bool(leaked))")
    done = subprocess.run([sys.executable, "-c", probe, "--collect-only", "-q",
                           "-p", "no:cacheprovider", "-m", marker[stage], *files],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "LEAKED []" in done.stdout
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert collected and all("tests/engine/" in line for line in collected)
    if stage != "kernels":
        assert all(line.split("::")[0] in files for line in collected)


def test_the_model_is_reassembled_from_its_parts_only_when_all_are_there(gpu_check, tmp_path,
                                                                        monkeypatch):
    data = os.urandom(1000)
    monkeypatch.setattr(gpu_check, "MODEL_BYTES", len(data))
    monkeypatch.setattr(gpu_check, "MODEL_SHA256", hashlib.sha256(data).hexdigest())
    monkeypatch.setattr(gpu_check, "CARRY_DIR", str(tmp_path))
    monkeypatch.delenv("CRESCENT_GGUF", raising=False)
    whole = tmp_path / gpu_check.MODEL_FILE
    (tmp_path / f"{gpu_check.MODEL_FILE}.part00").write_bytes(data[:600])
    path, reason = gpu_check.find_model(None)
    assert path is None and "other part has not been carried" in reason
    (tmp_path / f"{gpu_check.MODEL_FILE}.part01").write_bytes(data[600:])
    path, reason = gpu_check.find_model(None)
    assert (path, reason) == (str(whole), "") and whole.read_bytes() == data
    whole.unlink()
    (tmp_path / f"{gpu_check.MODEL_FILE}.part01").write_bytes(bytes(400))
    path, reason = gpu_check.find_model(None)
    assert path is None and "SHA-256" in reason and not whole.exists()
    monkeypatch.setenv("CRESCENT_GGUF", str(tmp_path / "elsewhere.gguf"))
    assert gpu_check.find_model(None)[0] is None


def test_prepare_carry_splits_the_model_into_parts_under_the_carry_limit(gpu_check, tmp_path,
                                                                         monkeypatch, gguf_path):
    monkeypatch.setattr(gpu_check, "CARRY_DIR", str(tmp_path))
    monkeypatch.setenv("CRESCENT_GGUF", gguf_path)
    assert gpu_check.prepare_carry() == 0
    parts = sorted(tmp_path.glob("*.part*"))
    assert len(parts) == 2 and all(p.stat().st_size <= 48 * 2**20 for p in parts)
    assert sum(p.stat().st_size for p in parts) == os.path.getsize(gguf_path)
    assert (tmp_path / "site" / "gguf" / "__init__.py").is_file()
    monkeypatch.delenv("CRESCENT_GGUF")
    path, reason = gpu_check.find_model(None)
    assert reason == "" and path == str(tmp_path / gpu_check.MODEL_FILE)


@pytest.mark.slow
def test_the_kernel_stage_runs_and_its_figures_come_back(gpu_check, tmp_path, capsys):
    """The kernels stage end to end (on CPU its kernels run under Triton's interpreter):
    pytest's counts from its junit file, one max-error figure per kernel, shape and dtype."""
    figures = tmp_path / "figures.jsonl"
    args = gpu_check.parse_args(["--stages", "kernels"])
    stage = gpu_check.run_stage("kernels", args, gpu_check.stage_env(str(figures)),
                                str(tmp_path), None, "no model", 300)
    assert stage["status"] == "passed", stage
    assert stage["tests"]["tests"] > 50 and stage["tests"]["failures"] == 0
    rows = gpu_check.read_figures(str(figures))
    errors = [r for r in rows if r["figure"] == "max_abs_error"]
    assert {(r["kernel"], r["dtype"]) for r in errors} == {
        (k, d) for k in ("decode", "prefill") for d in ("float32", "bfloat16")}
    report = {"stages": [stage], "figures": rows, "bench": None}
    gpu_check.print_summary(report)
    assert "prefill  bfloat16" in capsys.readouterr().out


def test_the_summary_prints_every_figure(gpu_check, capsys):
    report = {
        "stages": [{"name": "kernels", "status": "failed", "seconds": 1.0,
                    "tests": {"tests": 3, "failures": 1, "errors": 0, "skipped": 0,
                              "failed": ["tests.engine.test_kernels::test_x"]}},
                   {"name": "real-model", "status": "skipped", "reason": "no model"}],
        "figures": [
            {"test": "t", "figure": "max_abs_error", "value": 1.5e-3, "kernel": "decode",
             "dtype": "bfloat16", "shape": "smollm2", "num_seqs": 32, "max_seq_len": 1490,
             "num_tokens": 32},
            {"test": "t", "figure": "greedy_agreement", "value": 0.75, "model": "smollm2",
             "dtype": "bfloat16", "per_prompt": [1.0, 0.5]},
            {"test": "t", "figure": "cuda_graph_capture_bytes", "value": 123, "model": "tiny"}],
        "bench": {"device": "cuda", "model": "SmolLM2-135M-Instruct", "workloads": {
            "single": {"ours": {"output_tok_s": 300.0, "decode_tok_s": 310.0,
                                "ttft_ms": {"p50": 5.0}, "itl_ms": {"p50": 3.0, "p99": 4.0}}}},
                  "host_overhead": {"host_fraction": 0.4}},
    }
    gpu_check.print_summary(report)
    out = capsys.readouterr().out
    for text in ("FAILED tests.engine.test_kernels::test_x", "real-model  skipped (no model)",
                 "1.50e-03", "SmolLM2 9/3 heads x 64, 32 seqs <= 1490",
                 "smollm2 bfloat16 on CUDA vs CPU float32: 0.750", "cuda_graph_capture_bytes: 123",
                 "decode 310.0 tok/s", "host_fraction"):
        assert text in out, text
