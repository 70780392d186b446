"""ToolCallGrammar -> an llguidance Lark grammar.

The grammar, for begin "<tool_call>", end "</tool_call>", functions f and g, parallel:

    start: block                          (required; "auto" adds:  | TEXT)
    block: "<tool_call>" "[" call ("," call)* "]" "</tool_call>"     (not parallel: "[" call "]")
    call: call_0 | call_1
    call_0: "{\"name\":\"f\",\"arguments\":" %json {f's schema, compact} "}"
    TEXT: /(?s:.+)/ & ~/(?s:[ \t\r\n]*<tool_call>.*)/
                                    (any non-empty text not starting with begin, even after
                                     whitespace: a reader that skips leading whitespace
                                     (backend/tool_call_parser.py) must never see a block
                                     the grammar did not check)

Each function's arguments are their own `%json` root, so a schema's `$ref`s resolve inside it.
"""

from __future__ import annotations

import json

from engine.structured_output.params import ToolCallGrammar

# llguidance JSON compile options: compact JSON, one spelling for every value.
COMPACT_JSON = {"whitespace_flexible": False, "item_separator": ",", "key_separator": ":"}


def compact_schema(schema_text: str) -> dict:
    """The schema (JSON text of an object or a boolean) as a dict carrying llguidance's
    compact-JSON options ("x-guidance"); `true` is {} and `false` stays unsatisfiable."""
    schema = json.loads(schema_text)
    if schema is True:
        schema = {}
    elif schema is False:
        schema = {"not": {}}
    return {**schema, "x-guidance": COMPACT_JSON}


def lark_literal(text: str) -> str:
    """A Lark string literal matching `text` exactly (JSON string escapes)."""
    return json.dumps(text, ensure_ascii=False)


def regex_literal(text: str) -> str:
    """A regex (Rust syntax, inside a Lark /.../ lexeme) matching `text` exactly: ASCII letters
    and digits as they are, every other character as \\x{HEX} (so no character is special)."""
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):X}}}" for c in text)


def tool_call_lark(tools: ToolCallGrammar) -> str:
    """The Lark grammar text of `tools` (validated). See the module docstring for its shape."""
    lines = ["start: block | TEXT" if not tools.required else "start: block"]
    calls = 'call ("," call)*' if tools.parallel else "call"
    lines.append(f'block: {lark_literal(tools.begin)} "[" {calls} "]" {lark_literal(tools.end)}')
    lines.append("call: " + " | ".join(f"call_{i}" for i in range(len(tools.functions))))
    for i, (name, schema_text) in enumerate(tools.functions):
        head = lark_literal('{"name":' + json.dumps(name, ensure_ascii=False) + ',"arguments":')
        schema = json.dumps(compact_schema(schema_text), ensure_ascii=False)
        lines.append(f'call_{i}: {head} %json {schema} "}}"')
    if not tools.required:
        lines.append(f"TEXT: /(?s:.+)/ & ~/(?s:[ \\t\\r\\n]*{regex_literal(tools.begin)}.*)/")
    return "\n".join(lines) + "\n"
