"""Telling the model the JSON it must write (response_format json_schema / json_object).

The grammar already forces the shape; a small model still writes better values when it knows the
schema, so (as vLLM users do by hand) the prompt says it too. What is added: a system message
(before the client's own system text, if any) that reads

    Answer with a single JSON value and nothing else. It must follow this JSON Schema:
    {schema as compact JSON}

or, for json_object, "Answer with a single JSON object and nothing else." "<" in the schema is
written \\u003c (the same JSON), so a schema's text cannot spell a tag.
"""

from __future__ import annotations

import json
from typing import Sequence

from backend.generator import ChatMessage
from backend.tool_prompt import json_text

SCHEMA_INSTRUCTIONS = "Answer with a single JSON value and nothing else. It must follow this JSON Schema:\n{schema}"
OBJECT_INSTRUCTIONS = "Answer with a single JSON object and nothing else."


def with_json_instructions(messages: Sequence[ChatMessage], schema: str | None) -> list[ChatMessage]:
    """`messages` with the instruction first. schema: JSON Schema text, or None for any object."""
    text = OBJECT_INSTRUCTIONS if schema is None else SCHEMA_INSTRUCTIONS.format(
        schema=json_text(json.loads(schema)))
    out = list(messages)
    if out and out[0].role == "system":
        return [ChatMessage("system", f"{text}\n\n{out[0].content}")] + out[1:]
    return [ChatMessage("system", text)] + out
