"""A constraint on a reply's text, enforced while decoding (backend's view of the engine's
structured output).

The engine compiles an :class:`OutputConstraint` into a token mask (grammar-constrained decoding);
backend.engine_adapter maps it field for field to engine.structured_output.StructuredOutputParams.
A constraint that cannot be compiled (an unsatisfiable schema, a bad regular expression) is
refused before anything is queued with :class:`backend.generator.InvalidOutputConstraint`, whose
`param` is this constraint's `param`: the request field the client wrote it in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The tagged block a tool call is written in (the prompt asks for it; the grammar enforces it):
# TOOL_CALL_BEGIN + a JSON array of {"name": ..., "arguments": {...}} + TOOL_CALL_END.
TOOL_CALL_BEGIN = "<tool_call>"
TOOL_CALL_END = "</tool_call>"


@dataclass(frozen=True)
class ToolCallFormat:
    """Replies that call tools: the tagged block `begin` + JSON array + `end`, then the end.

    functions: (name, JSON Schema text of its arguments) of each callable function.
    required: False ("auto"): plain text or one tagged block; True: the block.
    parallel: True: 1..k calls in the array; False: exactly one.
    params: the request field of each function's arguments schema (e.g.
    "tools[2].function.parameters"), named when that schema cannot be compiled; may be empty.
    """

    functions: tuple[tuple[str, str], ...]
    required: bool
    parallel: bool
    begin: str = TOOL_CALL_BEGIN
    end: str = TOOL_CALL_END
    params: tuple[str, ...] = ()


@dataclass(frozen=True)
class OutputConstraint:
    """Exactly one of the fields below is set.

    json: a JSON Schema, as JSON text; json_object: any JSON object; regex: a regular expression
    the whole reply matches; choice: the reply is one of these strings; grammar: a context-free
    grammar (the engine's dialect, see engine/structured_output); tool_calls: text or tool calls.
    param: the request field it came from ("response_format", "tools", "structured_outputs",
    "guided_json", ...), named by errors.
    """

    json: str | None = None
    json_object: bool = False
    regex: str | None = None
    choice: tuple[str, ...] | None = None
    grammar: str | None = None
    tool_calls: ToolCallFormat | None = None
    param: str = "response_format"

    def __post_init__(self) -> None:
        given = [self.json is not None, self.json_object, self.regex is not None,
                 self.choice is not None, self.grammar is not None, self.tool_calls is not None]
        if sum(given) != 1:
            raise ValueError("an OutputConstraint sets exactly one of json, json_object, regex, "
                             "choice, grammar, tool_calls")


_FUNCTION = re.compile(r"structured_output\.tool_calls\.functions\[(\d+)\]")


def constraint_param(constraint: OutputConstraint, engine_message: str) -> str:
    """The request field to name for the engine's refusal `engine_message` of `constraint`:
    a tool function's own field (ToolCallFormat.params) when the engine names
    "structured_output.tool_calls.functions[i]", else constraint.param."""
    tools = constraint.tool_calls
    match = _FUNCTION.search(engine_message)
    if tools is not None and match and int(match.group(1)) < len(tools.params):
        return tools.params[int(match.group(1))]
    return constraint.param
