"""OpenAI's strict mode for a JSON Schema (`response_format.json_schema.strict: true`, a tool's
`function.strict: true`): an object schema that does not set additionalProperties gets
`additionalProperties: false`, so the reply carries only the declared keys.

Applied recursively through every subschema: properties, patternProperties,
additionalProperties (a schema), items, prefixItems, contains, anyOf, oneOf, not, if/then/else,
$defs, definitions, dependentSchemas. The branches of an allOf are merged into one object by
the compiler, so they are left open themselves (closing each would forbid the others' keys);
their own subschemas are still closed. A schema that sets additionalProperties (true, false or
a schema) keeps it.
"""

from __future__ import annotations

from typing import Any

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("prefixItems", "anyOf", "oneOf")
_SCHEMAS = ("additionalProperties", "contains", "not", "if", "then", "else")
_OBJECT_KEYWORDS = ("properties", "patternProperties", "required")


def _is_object_schema(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind == "object"
    if isinstance(kind, list):
        return "object" in kind
    return any(k in schema for k in _OBJECT_KEYWORDS)


def strict_schema(schema: Any, *, close: bool = True) -> Any:
    """A copy of `schema` (a JSON Schema: dict or bool) in strict mode (see the module
    docstring); `close=False` leaves this schema itself open (an allOf branch). Values that are
    not schemas are returned as they are."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in _SCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: strict_schema(sub) for name, sub in out[key].items()}
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [strict_schema(sub) for sub in out[key]]
    if isinstance(out.get("allOf"), list):
        out["allOf"] = [strict_schema(sub, close=False) for sub in out["allOf"]]
    for key in _SCHEMAS:
        if isinstance(out.get(key), dict):
            out[key] = strict_schema(out[key])
    items = out.get("items")
    if isinstance(items, dict):
        out["items"] = strict_schema(items)
    elif isinstance(items, list):  # draft-07 tuple form
        out["items"] = [strict_schema(sub) for sub in items]
    if close and "additionalProperties" not in out and _is_object_schema(out):
        out["additionalProperties"] = False
    return out
