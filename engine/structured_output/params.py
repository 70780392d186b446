"""What a request's output must look like: `StructuredOutputParams` and `ToolCallGrammar`.

Plain, frozen (hashable) dataclasses: the engine compiles each distinct value once and caches
it (engine.structured_output.compiler). `validate()` checks only shapes and types, cheaply;
what the grammar compiler finds (an unsatisfiable schema, a bad regex) is reported by
`LLMEngine.add_request`, with the same error type.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields

from engine.errors import InvalidStructuredOutputError

MAX_CHOICES = 1024
MAX_TOOL_FUNCTIONS = 128
MAX_CONSTRAINT_CHARS = 256 * 1024  # a schema / regex / grammar's text


@dataclass(frozen=True)
class ToolCallGrammar:
    """Tool calls in the model's own tagged format, e.g. SmolLM2-Instruct's
    `<tool_call>[{"name": ..., "arguments": ...}]</tool_call>`.

    begin, end: the tags around the block (non-empty strings, e.g. "<tool_call>", "</tool_call>").
    functions: (name, JSON Schema text of its arguments) pairs; names non-empty and distinct;
        each schema a JSON object (or `true`), compiled as StructuredOutputParams.json is.
    required: False ("auto"): the whole reply is either free text that does not start with
        `begin`, or one tagged block; True: one tagged block.
    parallel: True: the block holds 1 or more calls; False: exactly 1.
    A named tool_choice is one function with required=True.

    The text of a tagged block is exactly (compact JSON, no whitespace between tokens, keys in
    this order, `name` JSON-escaped):
        begin + '[{"name":"<name>","arguments":{...}}' + (',{"name":...}' ...) + ']' + end
    and nothing follows it: the request then finishes with finish_reason "stop". The arguments
    are compact JSON valid for that function's schema (properties in the schema's order).
    """

    begin: str
    end: str
    functions: tuple[tuple[str, str], ...]
    required: bool
    parallel: bool

    def validate(self) -> None:
        """Raises InvalidStructuredOutputError naming the field."""
        where = "structured_output.tool_calls"
        for name in ("begin", "end"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise InvalidStructuredOutputError(f"{where}.{name} must be a non-empty string, "
                                                   f"got {value!r}")
        for name in ("required", "parallel"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidStructuredOutputError(
                    f"{where}.{name} must be a bool, got {getattr(self, name)!r}")
        if not isinstance(self.functions, tuple) or not self.functions:
            raise InvalidStructuredOutputError(
                f"{where}.functions must be a non-empty tuple of (name, schema) pairs")
        if len(self.functions) > MAX_TOOL_FUNCTIONS:
            raise InvalidStructuredOutputError(
                f"{where}.functions holds {len(self.functions)} functions, at most "
                f"{MAX_TOOL_FUNCTIONS} are allowed")
        seen: set[str] = set()
        for i, item in enumerate(self.functions):
            if not (isinstance(item, tuple) and len(item) == 2
                    and all(isinstance(x, str) for x in item)):
                raise InvalidStructuredOutputError(
                    f"{where}.functions[{i}] must be a (name, JSON Schema text) pair of strings")
            name, schema = item
            if not name:
                raise InvalidStructuredOutputError(f"{where}.functions[{i}] has an empty name")
            if name in seen:
                raise InvalidStructuredOutputError(
                    f"{where}.functions[{i}]: the name {name!r} is declared twice")
            seen.add(name)
            _check_schema_text(f"{where}.functions[{i}] ({name}) arguments", schema)


@dataclass(frozen=True)
class StructuredOutputParams:
    """One request's output constraint; exactly one field is set.

    json: a JSON Schema, as JSON text. The output is compact JSON (no whitespace between
        tokens, object properties in the schema's order) valid for it. Supported keywords are
        llguidance's (docs: llguidance `docs/json_schema.md`): types, properties, required,
        additionalProperties, enum, const, anyOf/oneOf, allOf, $ref/$defs, items, minItems,
        maxItems, minimum/maximum (exclusive too), minLength/maxLength, pattern, format.
    json_object: True for any JSON object (compact, as above).
    regex: the whole output matches it (full match); Rust `regex` crate syntax (no look-around,
        no backreferences).
    choice: the output is exactly one of these strings (non-empty tuple of strings).
    grammar: a context-free grammar, in llguidance's Lark dialect (`start:` is the start rule;
        `"literal"`, `/regex/` lexemes, `%json {schema}` embeds a JSON Schema) or in
        llama.cpp's GBNF (`root ::= ...`), converted to Lark (llguidance.gbnf_to_lark).
    tool_calls: a ToolCallGrammar (see its docstring for the exact text).

    Whatever the constraint, the engine guarantees that every generated token keeps the output
    a prefix of a valid one, that EOS / end-of-turn tokens are sampled only where the grammar
    may end, and that a request whose output can take nothing more finishes with
    finish_reason "stop". max_tokens can still cut an output short ("length").
    """

    json: str | None = None
    json_object: bool = False
    regex: str | None = None
    choice: tuple[str, ...] | None = None
    grammar: str | None = None
    tool_calls: ToolCallGrammar | None = None

    @property
    def kind(self) -> str:
        """The name of the one field that is set ("json", "json_object", ...)."""
        set_fields = [f.name for f in fields(self) if _is_set(getattr(self, f.name))]
        return set_fields[0] if len(set_fields) == 1 else ""

    def validate(self) -> None:
        """Check that exactly one constraint is set and that it has the right type and shape
        (a schema is JSON text holding an object or a boolean).

        Raises InvalidStructuredOutputError (a ValueError) whose message names the field.
        """
        set_fields = [f.name for f in fields(self) if _is_set(getattr(self, f.name))]
        if len(set_fields) != 1:
            raise InvalidStructuredOutputError(
                "structured_output must set exactly one of json, json_object, regex, choice, "
                f"grammar, tool_calls; got {', '.join(set_fields) or 'none'}")
        if not isinstance(self.json_object, bool):
            raise InvalidStructuredOutputError(
                f"structured_output.json_object must be a bool, got {self.json_object!r}")
        if self.json is not None:
            _check_schema_text("structured_output.json", self.json)
        for name in ("regex", "grammar"):
            value = getattr(self, name)
            if value is not None:
                _check_text(f"structured_output.{name}", value)
        if self.choice is not None:
            if not isinstance(self.choice, tuple) or not self.choice:
                raise InvalidStructuredOutputError(
                    "structured_output.choice must be a non-empty tuple of strings")
            if len(self.choice) > MAX_CHOICES:
                raise InvalidStructuredOutputError(
                    f"structured_output.choice holds {len(self.choice)} strings, at most "
                    f"{MAX_CHOICES} are allowed")
            for i, c in enumerate(self.choice):
                if not isinstance(c, str) or not c:
                    raise InvalidStructuredOutputError(
                        f"structured_output.choice[{i}] must be a non-empty string, got {c!r}")
        if self.tool_calls is not None:
            if not isinstance(self.tool_calls, ToolCallGrammar):
                raise InvalidStructuredOutputError(
                    "structured_output.tool_calls must be a ToolCallGrammar, got "
                    f"{type(self.tool_calls).__name__}")
            self.tool_calls.validate()


def _is_set(value: object) -> bool:
    return value is not None and value is not False


def _check_text(where: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise InvalidStructuredOutputError(f"{where} must be a non-empty string, got {value!r}")
    if len(value) > MAX_CONSTRAINT_CHARS:
        raise InvalidStructuredOutputError(
            f"{where} is {len(value)} characters long, at most {MAX_CONSTRAINT_CHARS} are allowed")


def _check_schema_text(where: str, value: object) -> None:
    _check_text(where, value)
    try:
        schema = json.loads(value)
    except ValueError as exc:
        raise InvalidStructuredOutputError(f"{where} is not valid JSON: {exc}") from None
    if not isinstance(schema, (dict, bool)):
        raise InvalidStructuredOutputError(
            f"{where} must be a JSON Schema (a JSON object or boolean), got "
            f"{type(schema).__name__}")
