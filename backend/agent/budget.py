"""What one agent run may spend: steps, tool calls, tokens and wall time.

The admin sets defaults and maximums (backend.runtime_settings agent_default_* / agent_max_*), a
conversation may choose its own values within the maximums (backend.agent.access.budget_of
makes the run's :class:`Budget`); a run gets one :class:`Budget` and meters it with
:class:`BudgetMeter`, whose clock is injectable (tests move time by hand).
The meter also sums the prompt and completion tokens of the run's model steps separately: the
reply's usage (backend/chat/agent_turn.py records it like a plain reply's).

An ending (ENDINGS) is the reason shown under the reply ("Stopped: " + ending) and stored with
the run; it never becomes part of the reply's text.
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
    LIMIT_STEPS: "the step limit ({limit}) was reached",
    LIMIT_TOOL_CALLS: "the tool call limit ({limit}) was reached",
    LIMIT_TOKENS: "the token limit of the run ({limit}) was reached",
    LIMIT_WALL_TIME: "the time limit of the run ({limit} s) was reached",
}


@dataclass(frozen=True)
class BudgetLimit:
    """One budget dimension as a conversation may choose it: `default` (used when the
    conversation chose nothing, never above `maximum`), `minimum` and `maximum`, inclusive, in
    the dimension's unit (steps, calls, tokens, seconds)."""

    default: int
    minimum: int
    maximum: int


@dataclass(frozen=True)
class Budget:
    """Limits of one run. max_steps: model calls plus tool steps (a call and its answer take 3:
    the admin's setting is at least backend.runtime_setting_fields.MIN_AGENT_STEPS); max_tool_calls:
    tools run or refused; max_tokens: prompt + completion tokens of every model call, summed
    (each call's prompt counts again: the first prompt with the tools is 700 to 850 tokens for
    SmolLM2-135M, by the tools offered); max_wall_s: seconds from the run's start."""

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
        self.tokens = 0  # prompt + completion, the budget's measure (a retried step's stored total too)
        self.prompt_tokens = 0
        self.completion_tokens = 0

    @property
    def elapsed_s(self) -> float:
        return self.clock() - self.started

    def remaining_s(self) -> float:
        """Seconds of the clock left before the wall-time limit (0.0 once it is reached)."""
        return max(0.0, self.budget.max_wall_s - self.elapsed_s)

    def count_tokens(self, prompt_tokens: int | None, completion_tokens: int | None) -> None:
        """Add one model step's tokens (its final event's counts; None counts as 0)."""
        prompt, completion = max(0, int(prompt_tokens or 0)), max(0, int(completion_tokens or 0))
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.tokens += prompt + completion

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
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "wall_s": round(self.elapsed_s, 3)}
