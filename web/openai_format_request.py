"""Output constraints of a request: OpenAI's `response_format` and vLLM's extension fields.

- response_format: {"type": "text"} (none), {"type": "json_object"} (any JSON object), or
  {"type": "json_schema", "json_schema": {"name", "schema", "strict", "description"}} (JSON
  that follows the schema; without a schema, any object). strict: true is OpenAI's strict mode:
  every object schema that does not set additionalProperties gets `false` (no extra keys;
  web.openai_strict_schema). Chat and completions.
- structured_outputs (vLLM): an object with exactly one of json (a schema, object or text),
  regex, choice (a list of strings), grammar (the engine's CFG dialect), json_object (true).
- guided_json / guided_regex / guided_choice / guided_grammar (vLLM's older names), and
  guided_decoding_backend / structured_outputs.backend / disable_* options (ignored).
At most one of these may constrain a request. Refusals are ApiError 400 naming the field; a
constraint the engine cannot compile is refused with the same param (web/openai_api.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from backend.output_constraint import OutputConstraint
from web.openai_errors import bad_request
from web.openai_schema import checked_schema

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_CHOICES = 256
_GUIDED = ("guided_json", "guided_regex", "guided_choice", "guided_grammar")
_STRUCTURED_KEYS = ("json", "regex", "choice", "grammar", "json_object")


@dataclass(frozen=True)
class OutputFormat:
    """constraint: the reply's grammar (None: free text). json_instructions: tell the model in
    the prompt (chat): None no; "" any JSON object; else the JSON Schema text."""

    constraint: OutputConstraint | None = None
    json_instructions: str | None = None


def _response_format(value: Any) -> OutputFormat:
    param = "response_format"
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise bad_request("response_format must be an object with a type.", param)
    kind = value["type"]
    if kind == "text":
        return OutputFormat()
    if kind == "json_object":
        return OutputFormat(OutputConstraint(json_object=True, param=param), "")
    if kind != "json_schema":
        raise bad_request(f"response_format.type must be text, json_object or json_schema; got {kind!r}.",
                          param)
    spec = value.get("json_schema")
    if not isinstance(spec, dict):
        raise bad_request("response_format.json_schema must be an object with name and schema.", param)
    name = spec.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise bad_request("response_format.json_schema.name must be 1 to 64 letters, digits, '_' or '-'.",
                          param)
    for key, kind_ in (("strict", bool), ("description", str)):
        if spec.get(key) is not None and not isinstance(spec[key], kind_):
            raise bad_request(f"response_format.json_schema.{key} must be a {kind_.__name__}.", param)
    if spec.get("schema") is None:
        return OutputFormat(OutputConstraint(json_object=True, param=param), "")
    schema = checked_schema(spec["schema"], param, "response_format.json_schema.schema",
                            strict=spec.get("strict") is True)
    return OutputFormat(OutputConstraint(json=schema, param=param), schema)


def _string(value: Any, param: str) -> str:
    if not isinstance(value, str) or not value:
        raise bad_request(f"{param} must be a non-empty string.", param)
    return value


def _choices(value: Any, param: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_CHOICES \
            or not all(isinstance(c, str) and c for c in value):
        raise bad_request(f"{param} must be a list of 1 to {MAX_CHOICES} non-empty strings.", param)
    return tuple(value)


def _constraint(key: str, value: Any, param: str) -> OutputConstraint:
    if key == "json":
        return OutputConstraint(json=checked_schema(value, param), param=param)
    if key == "regex":
        return OutputConstraint(regex=_string(value, param), param=param)
    if key == "choice":
        return OutputConstraint(choice=_choices(value, param), param=param)
    if key == "grammar":
        return OutputConstraint(grammar=_string(value, param), param=param)
    if value is not True:
        raise bad_request(f"{param} must be true.", param)
    return OutputConstraint(json_object=True, param=param)


def _structured_outputs(value: Any) -> OutputConstraint:
    param = "structured_outputs"
    if not isinstance(value, dict):
        raise bad_request("structured_outputs must be an object.", param)
    given = [k for k in _STRUCTURED_KEYS if value.get(k) not in (None, False)]
    if len(given) != 1:
        raise bad_request(f"structured_outputs must set exactly one of {', '.join(_STRUCTURED_KEYS)}.",
                          param)
    return _constraint(given[0], value[given[0]], param)


def output_format(body: dict[str, Any]) -> OutputFormat:
    """The request's one output constraint, if any; raises ApiError."""
    sources = []
    response_format = body.get("response_format")
    if response_format is not None:
        sources.append(("response_format", _response_format(response_format)))
    if body.get("structured_outputs") is not None:
        sources.append(("structured_outputs", OutputFormat(_structured_outputs(body["structured_outputs"]))))
    for name in _GUIDED:
        if body.get(name) is not None:
            sources.append((name, OutputFormat(_constraint(name.removeprefix("guided_"), body[name], name))))
    active = [(name, f) for name, f in sources if f.constraint is not None]
    if len(active) > 1:
        raise bad_request(f"{active[1][0]} cannot be combined with {active[0][0]}: a reply follows "
                          "one constraint.", active[1][0])
    return active[0][1] if active else OutputFormat()
