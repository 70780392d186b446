"""The current_time tool with a fixed `now` (2026-03-29 00:30 UTC: Europe's summer time starts
at 01:00 UTC that day, so the offsets below are the winter ones)."""

from __future__ import annotations

import pytest

from backend.agent.tools import ToolError
from backend.agent.tools.current_time import SPEC
from tests.backend.agent.tool_fixtures import context, valid


def test_schema():
    assert valid(SPEC, {}) and valid(SPEC, {"timezone": "Asia/Tokyo"})
    for bad in ({"timezone": ""}, {"timezone": 5}, {"timezone": "x" * 65}, {"tz": "UTC"}):
        assert not valid(SPEC, bad), bad


@pytest.mark.parametrize("zone, iso, weekday", [
    (None, "2026-03-29T00:30:00+00:00", "Sunday"),
    ("UTC", "2026-03-29T00:30:00+00:00", "Sunday"),
    ("Europe/Paris", "2026-03-29T01:30:00+01:00", "Sunday"),
    ("America/Los_Angeles", "2026-03-28T17:30:00-07:00", "Saturday"),
    ("Asia/Kolkata", "2026-03-29T06:00:00+05:30", "Sunday"),
])
def test_the_fixed_now_in_a_zone(zone, iso, weekday):
    result = SPEC.run(context(), {} if zone is None else {"timezone": zone})
    assert result.data["iso"] == iso
    assert result.data["weekday"] == weekday
    assert iso in result.content
    assert result.data["utc"] == "2026-03-29T00:30:00+00:00"


@pytest.mark.parametrize("zone", ["Mars/Olympus", "../../etc/passwd", "/etc/localtime", "Europe", "Europe/", " UTC"])
def test_unknown_zones_are_tool_errors(zone):
    with pytest.raises(ToolError, match="unknown time zone"):
        SPEC.run(context(), {"timezone": zone})


def test_the_clock_is_said_plainly_and_a_place_is_left_to_the_model():
    from backend.agent.tools.current_time import SPEC, confirmation
    assert confirmation("The current time in Asia/Tokyo is 2026-12-05T12:20:00+09:00 (Saturday).") == (
        "It's 12:20 on Saturday, 5 December 2026 (Asia/Tokyo).")
    assert confirmation("error: unknown time zone") is None
    assert SPEC.planned_arguments("What time is it now?") == {}  # the person's own zone (ToolContext.timezone)
    assert SPEC.planned_arguments("What is the time in Tokyo?") is None  # the model writes the zone
