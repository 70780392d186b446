"""Client input checked for its shape before any query (docs/INTERFACES.md section 4).

- Ids: every id in a route's path is declared ``{name:id}``, a path convertor registered here
  that matches only what :func:`backend.models.new_id` makes (32 lowercase hex characters).
  A path with anything else (``%00``, ``..``, 33 characters, not hex) matches no route, so the
  router answers 404, as for an unknown or another user's id, and no query runs.
- Text: NUL and the other C0 controls but tab, line feed and carriage return are refused in every
  text field of a form, a JSON body or a query (PostgreSQL cannot store NUL; the others are
  invisible tricks) with ValidationFailed (400 ``invalid_input``) naming the field.

Route modules import this module before declaring their routes, so the convertor exists when
Starlette compiles their paths.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from starlette.convertors import Convertor, register_url_convertor

from backend.errors import ValidationFailed

ID_PATTERN = "[0-9a-f]{32}"
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


class IdConvertor(Convertor[str]):
    """A path segment that is one of our ids (uuid4 hex)."""

    regex = ID_PATTERN

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        if not re.fullmatch(ID_PATTERN, value):
            raise ValueError(f"not an id: {value!r}")
        return value


register_url_convertor("id", IdConvertor())


def check_text(field: str, value: str) -> str:
    """`value` if it holds no control character but tab, LF and CR.

    Raises:
        ValidationFailed: naming `field` and the character.
    """
    found = _CONTROL_CHARS.search(value)
    if found:
        raise ValidationFailed(f"{field} holds the control character U+{ord(found.group()):04X}")
    return value


def check_texts(fields: Iterable[tuple[str, Any]]) -> None:
    """:func:`check_text` on every string among (name, value) pairs (a form's items)."""
    for name, value in fields:
        if isinstance(value, str):
            check_text(name, value)


def check_json_texts(value: Any, where: str = "the body") -> None:
    """:func:`check_text` on every string in a parsed JSON value, keys included; the field is
    named by its path (``settings.system_prompt``, ``messages[2]``). Iterative: the parser
    (backend.safe_json) has already bounded the depth, but this must not depend on it."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            check_text(path, item)
        elif isinstance(item, dict):
            for key, child in item.items():
                name = f"{path}.{key}" if path != where else str(key)
                check_text(f"the name of {name!r}", str(key))
                stack.append((name, child))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", child) for i, child in enumerate(item))
