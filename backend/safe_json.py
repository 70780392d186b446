"""JSON from clients, parsed with a bound on nesting.

``json.loads`` recurses once per level of nesting: ``'[' * 100000`` raises ``RecursionError``
(not a ``ValueError``, so handlers written for bad JSON miss it), and a document just under the
interpreter's limit parses but breaks whatever walks it next (validation, ``json.dumps``).
Every parse of client input goes through :func:`loads`, which turns both into
:class:`JSONTooDeep`, a ``ValueError``.
"""

from __future__ import annotations

import json
from typing import Any

# Deeper than any body this server reads (a tool's JSON schema nests a few levels; the deepest
# of our own formats, three); far below the interpreter's recursion limit.
MAX_JSON_DEPTH = 64


class JSONTooDeep(ValueError):
    """The document nests arrays and objects deeper than allowed."""


def loads(data: str | bytes | bytearray, *, max_depth: int = MAX_JSON_DEPTH, **kwargs: Any) -> Any:
    """``json.loads(data, **kwargs)``, refusing nesting deeper than `max_depth` levels.

    Raises:
        JSONTooDeep: nested deeper than `max_depth` (or than the interpreter can parse).
        ValueError: not JSON (``json.JSONDecodeError``); UnicodeDecodeError for bytes that are
            not UTF-8 (also a ValueError).
    """
    try:
        value = json.loads(data, **kwargs)
    except RecursionError:
        raise JSONTooDeep(f"JSON nested deeper than {max_depth} levels") from None
    if _deeper_than(value, max_depth):
        raise JSONTooDeep(f"JSON nested deeper than {max_depth} levels")
    return value


def _deeper_than(value: Any, max_depth: int) -> bool:
    """Whether `value` nests lists and dicts deeper than `max_depth` (a scalar is depth 0).
    Iterative, so it cannot itself run out of stack; visits each container once."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
