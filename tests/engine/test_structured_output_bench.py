"""The `structured` benchmark workload runs at a tiny size and reports sane fields (never timed)."""

from __future__ import annotations

from engine.bench.structured import format_rows, run
from engine.config import EngineConfig


def test_structured_workload_reports_every_case(tiny_model):
    cases = ((1, 0), (1, 1), (4, 0), (4, 2))
    rows = run(tiny_model, EngineConfig(num_kv_blocks=128, max_model_len=1024), cases, steps=3)
    assert [(r["batch"], r["constrained"]) for r in rows] == list(cases)
    for r in rows:
        assert r["num_steps"] == 3 and r["step_ms"] > 0
        assert (r["grammar_ms"] > 0) == (r["constrained"] > 0)  # the mask is built only then
        assert ("overhead" in r) == (r["constrained"] > 0)
    assert "| 4 | 2 |" in format_rows(rows)
