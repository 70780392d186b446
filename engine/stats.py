"""Live engine statistics: one snapshot per step, safe to read from any thread."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineStats:
    """The engine's state at the last step boundary, and counters since start-up.

    num_running, num_waiting: requests holding KV blocks / queued (preempted ones included,
    requests added since the last step too).
    num_kv_blocks_used: blocks held by at least one request. num_kv_blocks_cached: cached
    blocks no request holds (evictable, reusable by a prefix-cache hit). num_kv_blocks_free:
    blocks neither held nor cached. used + cached + free == num_kv_blocks_total.
    prefix_cache_queries / prefix_cache_hits: tokens of admitted requests looked up in the
    prefix cache / found there (counted at each admission, re-admission after preemption too;
    blocks restored from the host tier count as found).
    num_preemptions: requests preempted by recompute. num_prompt_tokens: tokens computed by
    prefill chunks (prompt and recomputed tokens; cache hits excluded). num_generation_tokens:
    tokens sampled. num_steps: steps that ran a forward pass.
    num_kv_host_blocks_offloaded / _restored / _dropped: blocks copied into the prefix cache's
    host tier on eviction / copied back on a prefix hit / lost to its LRU or a full tier
    (engine.kv_host_tier; all 0 when it is disabled). num_kv_host_blocks_used /
    num_kv_host_blocks_total: entries held / its size, in blocks (0 / 0 when disabled).
    """

    num_running: int
    num_waiting: int
    num_kv_blocks_used: int
    num_kv_blocks_cached: int
    num_kv_blocks_free: int
    num_kv_blocks_total: int
    prefix_cache_queries: int
    prefix_cache_hits: int
    num_preemptions: int
    num_prompt_tokens: int
    num_generation_tokens: int
    num_steps: int
    num_kv_host_blocks_offloaded: int = 0
    num_kv_host_blocks_restored: int = 0
    num_kv_host_blocks_dropped: int = 0
    num_kv_host_blocks_used: int = 0
    num_kv_host_blocks_total: int = 0

    @property
    def kv_cache_usage(self) -> float:
        """Fraction of the pool held by requests, in [0, 1]."""
        return self.num_kv_blocks_used / self.num_kv_blocks_total

    @property
    def prefix_cache_hit_rate(self) -> float | None:
        """prefix_cache_hits / prefix_cache_queries; None before any query."""
        if not self.prefix_cache_queries:
            return None
        return self.prefix_cache_hits / self.prefix_cache_queries
