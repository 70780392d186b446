"""A conversation's own settings (its instructions, sampling, reply length and agent budget) and
their validation: one home for the rules a settings change (backend.conversations) and an
imported file (backend.conversation_import) both follow."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from backend.agent.access import BUDGET_FIELDS, budget_ceilings
from backend.agent.budget import BudgetLimit
from backend.errors import ValidationFailed
from backend.runtime_setting_fields import MAX_SYSTEM_PROMPT_CHARS


@dataclass(frozen=True)
class ConversationSettings:
    """A conversation's own settings; None follows the admin's defaults.

    system_prompt: the conversation's instructions, added after the admin's system prompt (in
    place of the chat template's default when the admin set none); temperature in [0, 2];
    max_tokens: reply length in tokens, at most the admin's maximum.
    agent_steps, agent_tool_calls, agent_tokens, agent_wall_s (seconds): the budget of its agent
    runs, each at most the admin's maximum (backend.agent.access.budget_of caps it again when a
    run starts: the admin may have lowered it since).
    """

    system_prompt: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    use_tools: bool = False  # a turn is an agent run with the tools the admin allows (issue 15)
    agent_steps: int | None = None
    agent_tool_calls: int | None = None
    agent_tokens: int | None = None
    agent_wall_s: int | None = None


_SETTINGS = ("system_prompt", "temperature", "max_tokens", "use_tools", *BUDGET_FIELDS)
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _json_text(value: Any, limit: int = 40) -> str:
    """A request's value as the client wrote it (JSON: true, "5", 2.5), cut to `limit` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def validate_settings(changes: object, max_max_tokens: int,
                      budget_limits: dict[str, BudgetLimit] | None = None) -> dict[str, Any]:
    """The checked values of a settings change (see ConversationService.update_settings).
    budget_limits: backend.agent.access.budget_limits of the admin's current settings (None: the
    widest ranges any admin may set). Raises ValidationFailed naming the first bad field."""
    if not isinstance(changes, dict):
        raise ValidationFailed("settings must be an object")
    unknown = sorted(set(changes) - set(_SETTINGS))
    if unknown:
        raise ValidationFailed(f"unknown setting {unknown[0]!r}; known: {', '.join(_SETTINGS)}")
    values: dict[str, Any] = {}
    if "system_prompt" in changes:
        prompt = changes["system_prompt"]
        if prompt is not None:
            if not isinstance(prompt, str):
                raise ValidationFailed("system_prompt must be a string or null")
            if len(prompt) > MAX_SYSTEM_PROMPT_CHARS:
                raise ValidationFailed(f"system_prompt must be at most {MAX_SYSTEM_PROMPT_CHARS} characters")
            if _CONTROL_CHARS.search(prompt):
                raise ValidationFailed("system_prompt holds a control character")
            prompt = prompt.strip() or None  # blank: no instructions of its own
        values["system_prompt"] = prompt
    if "temperature" in changes:
        t = changes["temperature"]
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 2):
            raise ValidationFailed("temperature must be a number in [0, 2] or null")
        values["temperature"] = None if t is None else float(t)
    if "max_tokens" in changes:
        n = changes["max_tokens"]
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= max_max_tokens):
            raise ValidationFailed(f"max_tokens must be a whole number in [1, {max_max_tokens}] or null")
        values["max_tokens"] = n
    if "use_tools" in changes:
        if not isinstance(changes["use_tools"], bool):
            raise ValidationFailed("use_tools must be true or false")
        values["use_tools"] = changes["use_tools"]
    limits = budget_limits or budget_ceilings()
    for name in BUDGET_FIELDS:
        if name in changes:
            n, limit = changes[name], limits[name]
            if n is not None and (isinstance(n, bool) or not isinstance(n, int)
                                  or not limit.minimum <= n <= limit.maximum):
                admin = (f" (the administrator's maximum) or null (the default, {limit.default})"
                         if budget_limits is not None else " or null")
                raise ValidationFailed(f"{name} must be a whole number in [{limit.minimum}, {limit.maximum}]{admin}, "
                                       f"got {_json_text(n)}")
            values[name] = n
    return values
