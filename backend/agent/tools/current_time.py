"""The `current_time` tool: the run's clock (ToolContext.now) in an IANA time zone (zoneinfo)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from backend.agent.routing import asks_for_time
from backend.agent.tools import ToolContext, ToolError, ToolResult, ToolSpec

MAX_ZONE_CHARS = 64
# A place the time is asked in ("the time in Tokyo", "in New York", "UTC", "GMT"): the model writes
# the zone; any other question is asked of the person's own zone (ToolContext.timezone), no model step.
_NAMES_A_PLACE = re.compile(r"\bin\s+(?:the\s+)?[A-Z][\w'-]+|\b(?:UTC|GMT|[A-Z]{2,4}T)\b")


def zone(name: str) -> ZoneInfo:
    """The IANA zone `name` ("Europe/Paris", "UTC").

    Raises:
        ToolError: not a zone the system's tz database knows.
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        # ValueError: a malformed key ("../etc", absolute paths); OSError: a directory's name.
        raise ToolError(f"unknown time zone {name[:MAX_ZONE_CHARS]!r}; use an IANA name such as Europe/Paris") from None


def run(context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
    name = arguments.get("timezone") or context.timezone or "UTC"  # the person's own zone by default
    local = context.now.astimezone(zone(name))
    stamp = local.isoformat(timespec="seconds")
    weekday = local.strftime("%A")
    return ToolResult(
        content=f"The current time in {name} is {stamp} ({weekday}).",
        summary=f"Checked the time in {name}",
        data={"timezone": name, "iso": stamp, "weekday": weekday, "utc": context.now.isoformat(timespec="seconds")},
    )


# What run() says, read back by confirmation().
_SAID = re.compile(r"^The current time in (?P<zone>\S+) is (?P<iso>\S+) \((?P<weekday>\w+)\)\.$")


def confirmation(content: str) -> str | None:
    """The answer after the clock is read: "It's 14:05 on Saturday, 5 December 2026 (Europe/London)."
    (the program's; SmolLM2-135M restated the ISO stamp or misread it); None for another result."""
    m = _SAID.match(content)
    if m is None:
        return None
    try:
        local = datetime.fromisoformat(m.group("iso"))
    except ValueError:
        return None
    return f"It's {local:%H:%M} on {m.group('weekday')}, {local.day} {local:%B %Y} ({m.group('zone')})."


SPEC = ToolSpec(
    name="current_time",
    description="The current date and time (ISO 8601) in a time zone, UTC by default.",
    parameters={
        "type": "object",
        "properties": {
            "timezone": {"type": "string", "minLength": 1, "maxLength": MAX_ZONE_CHARS,
                         "description": "an IANA time zone name, for example Europe/Paris"},
        },
        "additionalProperties": False,
    },
    permission="tools.current_time",
    side_effect=False,
    run=run,
    relevant=lambda user_id, text: asks_for_time(text),
    planned_arguments=lambda text: {} if _NAMES_A_PLACE.search(text) is None else None,
    confirmation=confirmation,
)
