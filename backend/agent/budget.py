"""What one agent run may spend: steps, tool calls, tokens and wall time.

The admin sets defaults and maximums (backend.runtime_settings); a run gets one :class:`Budget`
and meters it with :class:`BudgetMeter`, whose clock is injectable (tests move time by hand).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

# Why a run ended on its budget: the ending shown to the person and stored with the run.
LIMIT_STEPS = "steps"
LIMIT_TOOL_CALLS = "tool_calls"
LIMIT_TOKENS = "tokens"
LIMIT_WALL_TIME = "wall_time"

ENDINGS = {
    LIMIT_STEPS: "The agent stopped: it used all the steps this run may take ({limit}).",
    LIMIT_TOOL_CALLS: "The agent stopped: it used all the tool calls this run may make ({limit}).",
    LIMIT_TOKENS: "The agent stopped: it used all the tokens this run may spend ({limit}).",
    LIMIT_WALL_TIME: "The agent stopped: the run took its whole time allowance ({limit} s).",
}


@dataclass(frozen=True)
class Budget:
    """Limits of one run. max_steps: model calls plus tool steps; max_tool_calls: tools run
    or refused; max_tokens: prompt + completion tokens over all model calls; max_wall_s:
    seconds from the run's start."""

    max_steps: int = 8
    max_tool_calls: int = 8
    max_tokens: int = 16_000
    max_wall_s: float = 120.0


class BudgetMeter:
    """Counts what a run spent. clock: monotonic seconds (time.monotonic by default)."""

    def __init__(self, budget: Budget, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget
        self.clock = clock
        self.started = clock()
        self.steps = 0
        self.tool_calls = 0
        self.tokens = 0

    @property
    def elapsed_s(self) -> float:
        return self.clock() - self.started

    def spent(self) -> str | None:
        """The limit reached (LIMIT_*), or None while the run may take another step."""
        b = self.budget
        if self.elapsed_s >= b.max_wall_s:
            return LIMIT_WALL_TIME
        if self.tokens >= b.max_tokens:
            return LIMIT_TOKENS
        if self.steps >= b.max_steps:
            return LIMIT_STEPS
        return None

    def calls_left(self) -> int:
        return max(0, self.budget.max_tool_calls - self.tool_calls)

    def tokens_left(self) -> int:
        return max(0, self.budget.max_tokens - self.tokens)

    def ending(self, limit: str) -> str:
        """The person-readable ending for `limit`."""
        value = {LIMIT_STEPS: self.budget.max_steps, LIMIT_TOOL_CALLS: self.budget.max_tool_calls,
                 LIMIT_TOKENS: self.budget.max_tokens, LIMIT_WALL_TIME: self.budget.max_wall_s}[limit]
        return ENDINGS[limit].format(limit=f"{value:g}" if isinstance(value, float) else value)

    def used(self) -> dict[str, float]:
        """What the run spent, as stored in agent_runs.budget_used."""
        return {"steps": self.steps, "tool_calls": self.tool_calls, "tokens": self.tokens,
                "wall_s": round(self.elapsed_s, 3)}
