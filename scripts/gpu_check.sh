#!/usr/bin/env bash
# `make gpu-check`: the GPU tests, then the benchmark on CUDA, within 10 minutes in all.
# Run on a machine with a CUDA device and Triton installed (pip install -e '.[test]').
# Output: the pytest summary, and the benchmark table plus gpu-bench.json when the benchmark
# takes --device.
set -uo pipefail
PY=${PY:-.venv/bin/python}
status=0

if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "gpu-check: no CUDA device visible to torch; nothing to check" >&2
  exit 1
fi
"$PY" -c 'import triton' || { echo "gpu-check: triton is not installed" >&2; exit 1; }

echo "== kernel sweep compiled on CUDA, then the gpu-marked tests =="
timeout 120 "$PY" -m pytest -q -m "not gpu" tests/engine/test_kernels.py || status=$?
timeout 240 "$PY" -m pytest -q -m gpu tests || status=$?

echo "== benchmark on CUDA =="
if "$PY" -m engine.bench --help 2>/dev/null | grep -q -- "--device"; then
  timeout 280 "$PY" -m engine.bench --device cuda single chat agent long-prompt \
    --baseline transformers --json gpu-bench.json || status=$?
else
  echo "gpu-check: engine.bench is missing or has no --device flag yet; benchmark skipped" >&2
fi
exit $status
