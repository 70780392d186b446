"""Formats a run_suite result as a plain-text table (milliseconds, tokens per second)."""

from __future__ import annotations

COLUMNS = ("system", "tok/s", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "TPOT p50",
           "e2e p50", "queue p50", "hit rate", "RSS MB")


def _fmt(value, digits: int = 1) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _row(system: str, m: dict) -> list[str]:
    def p(key: str, q: str) -> str:
        return _fmt(None if m.get(key) is None else m[key][q])
    return [system, _fmt(m["output_tok_s"]), p("ttft_ms", "p50"), p("ttft_ms", "p99"),
            p("itl_ms", "p50"), p("itl_ms", "p99"), p("tpot_ms", "p50"), p("e2e_ms", "p50"),
            p("queue_ms", "p50"), _fmt(m.get("prefix_cache_hit_rate"), 2), _fmt(m["peak_rss_mb"], 0)]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
            for r in rows]


def format_report(results: dict) -> str:
    lines = [f"model {results.get('model')}, quantization {results.get('quantization')}, weights "
             f"{results.get('weight_bytes', 0) / 2**20:.1f} MiB, KV cache {results['kv_bytes_per_token']} "
             "bytes/token; times in ms"]
    for name, systems in results["workloads"].items():
        lines += ["", f"== {name}"]
        lines += _table([list(COLUMNS)] + [_row(s, m) for s, m in systems.items()])
        for system, m in systems.items():
            if m.get("decode_tok_s") is not None:
                lines.append(f"  {system}: decode {m['decode_tok_s']:.1f} tok/s")
            if name == "agent" and m.get("prompt_tokens_computed") is not None:
                host = m.get("kv_host_blocks") or {}
                lines.append(f"  {system}: prompt tokens computed {m['prompt_tokens_computed']}, "
                             f"from the prefix cache {m['prefix_cache_hit_tokens']}; host tier "
                             f"blocks offloaded {host.get('offloaded', 0)}, restored "
                             f"{host.get('restored', 0)}, dropped {host.get('dropped', 0)}")
            if m.get("ttft_by_turn_ms"):
                turns = ", ".join(f"{t:.0f}" for t in m["ttft_by_turn_ms"])
                lines.append(f"  {system}: mean TTFT by turn [{turns}]; turns 2+ "
                             f"{_fmt(m['mean_ttft_later_turns_ms'])}")
        for label, entry in results.get("ratios", {}).get(name, {}).items():
            pairs = ", ".join(f"{k} {_fmt(v, 2)}" for k, v in entry.items())
            lines.append(f"  {label}: {pairs}")
    for overhead in results.get("host_overhead") or []:
        lines += ["", f"host overhead at batch {overhead['batch']}: {overhead['host_ms']:.2f} of "
                  f"{overhead['step_ms']:.2f} ms per step = {overhead['host_fraction']:.1%} "
                  f"(outside execute: {overhead['outside_execute_fraction']:.1%})"]
    accuracy = results.get("accuracy")
    if accuracy:
        lines += ["", f"accuracy against our float32 path ({accuracy['prompts']} prompts x "
                  f"{accuracy['continuation_len']} tokens teacher-forced; perplexity over "
                  f"{accuracy['perplexity_tokens']} tokens, float32 {accuracy['float32_perplexity']:.3f}):"]
        for name, a in accuracy.items():
            if isinstance(a, dict):
                lines.append(f"  {name}: top-1 agreement {a['top1_agreement']:.2%}, mean KL "
                             f"{a['mean_kl']:.5f} (max {a['max_kl']:.4f}), perplexity "
                             f"{a['perplexity']:.3f} ({a['perplexity_ratio'] - 1:+.2%})")
    return "\n".join(lines)
