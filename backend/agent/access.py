"""Which tools a user's run may call, and its budget, from the admin's runtime settings.

The deployment and role settings (RuntimeSettings.agent_tools, agent_side_effects: "off" |
"admins" | "everyone") become the `enabled` and `role_grants` maps of
backend.agent.tools.ToolRegistry.allowed. Read when a run starts; nothing a run sees (a tool's
result, the model's text) reaches them.
"""

from __future__ import annotations

from typing import Any, Iterable

from backend.agent.budget import Budget
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


def budget_of(settings: RuntimeSettings) -> Budget:
    """The run budget the admin set."""
    return Budget(max_steps=settings.agent_max_steps, max_tool_calls=settings.agent_max_tool_calls,
                  max_tokens=settings.agent_max_tokens, max_wall_s=float(settings.agent_max_wall_s))

