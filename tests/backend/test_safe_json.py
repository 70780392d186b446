"""backend/safe_json.py: client JSON parsed with a bound on nesting."""

from __future__ import annotations

import json

import pytest

from backend.safe_json import MAX_JSON_DEPTH, JSONTooDeep, loads


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_ordinary_json_parses_as_json_loads_does() -> None:
    text = '{"a": [1, 2.5, "x[[[{{{", {"b": null}], "c": true}'
    assert loads(text) == json.loads(text)
    assert loads(text.encode()) == json.loads(text)
    assert loads("3") == 3


def test_the_depth_limit_is_exact() -> None:
    assert loads(nested(MAX_JSON_DEPTH)) == json.loads(nested(MAX_JSON_DEPTH))
    with pytest.raises(JSONTooDeep, match="nested deeper than 64 levels"):
        loads(nested(MAX_JSON_DEPTH + 1))
    with pytest.raises(JSONTooDeep):
        loads('{"a": ' * 65 + "1" + "}" * 65)
    assert loads(nested(3), max_depth=3) == [[[]]]
    with pytest.raises(JSONTooDeep):
        loads(nested(3), max_depth=2)


def test_brackets_inside_strings_do_not_count() -> None:
    assert loads(json.dumps(["[" * 1000])) == ["[" * 1000]


@pytest.mark.parametrize("depth", [500, 100_000])
def test_deeper_than_the_interpreter_can_parse_is_a_value_error_not_a_recursion_error(depth: int) -> None:
    with pytest.raises(ValueError) as refused:
        loads(nested(depth))
    assert isinstance(refused.value, JSONTooDeep)
    with pytest.raises(JSONTooDeep):
        loads(nested(depth).encode())


def test_bad_json_is_still_a_value_error() -> None:
    with pytest.raises(ValueError) as refused:
        loads("{nope")
    assert not isinstance(refused.value, JSONTooDeep)
    with pytest.raises(ValueError):
        loads(b"\xff")


def test_keyword_arguments_reach_json_loads() -> None:
    def no_constants(name: str) -> None:
        raise ValueError(name)

    with pytest.raises(ValueError, match="NaN"):
        loads("[NaN]", parse_constant=no_constants)
