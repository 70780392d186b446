"""The `current_time` tool: the run's clock (ToolContext.now) in an IANA time zone (zoneinfo)."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from backend.agent.routing import asks_for_time
from backend.agent.tools import ToolContext, ToolError, ToolResult, ToolSpec

MAX_ZONE_CHARS = 64


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
    name = arguments.get("timezone") or "UTC"
    local = context.now.astimezone(zone(name))
    stamp = local.isoformat(timespec="seconds")
    weekday = local.strftime("%A")
    return ToolResult(
        content=f"The current time in {name} is {stamp} ({weekday}).",
        summary=f"Checked the time in {name}",
        data={"timezone": name, "iso": stamp, "weekday": weekday, "utc": context.now.isoformat(timespec="seconds")},
    )


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
)
