"""Checking a JSON Schema a client sent (response_format, tool parameters, vLLM's guided_json)
against its meta-schema with `jsonschema`, before the engine compiles it."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import jsonschema.exceptions
import jsonschema.validators

from web.openai_errors import bad_request
from web.openai_strict_schema import strict_schema

MAX_SCHEMA_BYTES = 64 * 1024


def checked_schema(value: Any, param: str, field: str | None = None,
                   strict: bool = False) -> str:
    """`value` (a schema object, or its JSON text) as compact JSON text, once it is a valid JSON
    Schema (the draft its "$schema" names, else 2020-12) of at most MAX_SCHEMA_BYTES (UTF-8,
    compact), measured before the check. strict: OpenAI's strict mode, every object schema
    without additionalProperties gets `false` (web.openai_strict_schema). field: the field's
    name in messages (default `param`). Raises ApiError 400 naming `param`."""
    field = field or param
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise bad_request(f"{field} must be a JSON Schema: a JSON object (or its JSON text); "
                              "got a string that is not JSON.", param) from None
    if not isinstance(value, (dict, bool)):
        raise bad_request(f"{field} must be a JSON Schema: a JSON object; got "
                          f"{type(value).__name__}.", param)
    if strict:
        value = strict_schema(value)
    # Measured before the meta-schema check: that check costs about 0.2 s per 10 kB of nested
    # schema, with the GIL held, so an oversized schema is refused before it is paid for.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if len(text.encode()) > MAX_SCHEMA_BYTES:
        raise bad_request(f"{field} is larger than {MAX_SCHEMA_BYTES} bytes.", param)
    try:
        jsonschema.validators.validator_for(value, default=jsonschema.Draft202012Validator).check_schema(value)
    except jsonschema.exceptions.SchemaError as exc:
        where = "/".join(str(p) for p in exc.path)
        raise bad_request(f"{field} is not a valid JSON Schema: {exc.message}"
                          + (f" (at {where})" if where else "") + ".", param) from None
    except (jsonschema.exceptions.UnknownType, TypeError, ValueError) as exc:
        raise bad_request(f"{field} is not a valid JSON Schema: {exc}.", param) from None
    return text
