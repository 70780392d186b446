#!/usr/bin/env bash
# `make gpu-check`, or on a bare CUDA machine `scripts/gpu_check.sh [options]`: the engine's GPU
# check (scripts/gpu_check.py: kernels, CUDA graphs, greedy agreement, the benchmark on CUDA)
# with the interpreter $PY as it is: nothing is installed. $PY defaults to the project's .venv
# when there is one, else python3. Figures: stdout and $OUT/gpu-check.json (else --json PATH,
# default ./gpu-check.json). Ends within 8 minutes (--budget-s). See docs/BENCHMARKS.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
if [ -z "${PY:-}" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
command -v "$PY" >/dev/null 2>&1 || { echo "gpu-check: no interpreter $PY" >&2; exit 2; }
exec "$PY" scripts/gpu_check.py --python "$PY" "$@"
