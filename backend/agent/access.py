"""Which tools a user's run may call, and its budget, from the admin's runtime settings.

The deployment and role settings (RuntimeSettings.agent_tools, agent_side_effects: "off" |
"admins" | "everyone") become the `enabled` and `role_grants` maps of
backend.agent.tools.ToolRegistry.allowed. Read when a run starts; nothing a run sees (a tool's
result, the model's text) reaches them.

A run's budget (budget_of): per dimension, the conversation's own value (its ⚙ "Tool run
limits", columns BUDGET_FIELDS; NULL: the admin's default), capped by the admin's current maximum,
so that an admin lowering a maximum caps the conversations that chose more.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from backend.agent.budget import Budget, BudgetLimit
from backend.runtime_setting_fields import AGENT_BUDGET_RANGES
from backend.runtime_settings import RuntimeSettings

ROLES = ("admin", "user")


def _roles(access: str) -> set[str]:
    return {"off": set(), "admins": {"admin"}, "everyone": set(ROLES)}.get(access, set())


def tools_enabled(settings: RuntimeSettings, role: str) -> bool:
    """Whether a user with `role` may have tools in his conversations at all."""
    return role in _roles(settings.agent_tools)


def grants(specs: Iterable[Any], settings: RuntimeSettings) -> tuple[dict[str, bool], dict[str, set[str]]]:
    """(enabled, role_grants) for ToolRegistry.allowed: every tool is enabled when the deployment
    has tools; a role is granted each read-only tool's permission when it may use tools, and a
    side-effecting tool's only when it may also write."""
    specs = list(specs)
    enabled = {s.name: settings.agent_tools != "off" for s in specs}
    reading, writing = _roles(settings.agent_tools), _roles(settings.agent_side_effects) & _roles(settings.agent_tools)
    role_grants: dict[str, set[str]] = {role: set() for role in ROLES}
    for spec in specs:
        for role in writing if spec.side_effect else reading:
            role_grants[role].add(spec.permission)
    return enabled, role_grants


def allowed_names(specs: Iterable[Any], settings: RuntimeSettings, role: str) -> set[str]:
    """The names of the tools a user with `role` may call (same rule as grants(), for a list of
    specs without a registry)."""
    specs = list(specs)
    enabled, role_grants = grants(specs, settings)
    have = role_grants.get(role, set())
    return {s.name for s in specs if enabled.get(s.name) and s.permission in have}


# A conversation's budget columns (backend.models.Conversation, migration 0012; the names of the
# conversation settings API) -> the dimension's runtime settings (default, maximum), its least
# value and the largest maximum an admin may set (backend.runtime_settings' field ranges).
BUDGET_FIELDS: dict[str, tuple[str, str, int, int]] = {
    f"agent_{name}": (f"agent_default_{name}", f"agent_max_{name}", low, high) for name, low, high in AGENT_BUDGET_RANGES
}


def budget_limits(settings: RuntimeSettings) -> dict[str, BudgetLimit]:
    """What a conversation may choose for each budget column (BUDGET_FIELDS): the admin's current
    default (capped by his maximum), the dimension's minimum and the admin's current maximum."""
    limits = {}
    for name, (default, maximum, minimum, _) in BUDGET_FIELDS.items():
        most = getattr(settings, maximum)
        limits[name] = BudgetLimit(default=min(getattr(settings, default), most), minimum=minimum, maximum=most)
    return limits


def budget_ceilings() -> dict[str, BudgetLimit]:
    """The widest limits any admin setting allows (default = maximum = the field's ceiling): what
    a conversation's value is checked against when the caller has no settings at hand."""
    return {name: BudgetLimit(ceiling, minimum, ceiling) for name, (_, _, minimum, ceiling) in BUDGET_FIELDS.items()}


def budget_of(settings: RuntimeSettings, chosen: Mapping[str, int | None] | None = None) -> Budget:
    """The budget of a run: per dimension the conversation's `chosen` value (keys of
    BUDGET_FIELDS; a missing key or None: the admin's default), capped by the admin's current
    maximum. chosen=None: the admin's defaults. Units: steps, calls, tokens, seconds."""
    chosen = chosen or {}
    value: dict[str, int] = {}
    for name, limit in budget_limits(settings).items():
        own = chosen.get(name)
        value[name] = limit.default if own is None else max(limit.minimum, min(int(own), limit.maximum))
    return Budget(max_steps=value["agent_steps"], max_tool_calls=value["agent_tool_calls"],
                  max_tokens=value["agent_tokens"], max_wall_s=float(value["agent_wall_s"]))

