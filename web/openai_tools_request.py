"""Tool calling in a chat request: `tools`, `tool_choice`, `parallel_tool_calls`, and the
assistant `tool_calls` / `tool` messages of the history (validation into backend types).

- tools: up to MAX_TOOLS of {"type": "function", "function": {"name", "description",
  "parameters", "strict"}}; a name is 1-64 of [A-Za-z0-9_-], unique; parameters a valid JSON
  Schema of an object (omitted: no arguments); all parameters together at most
  MAX_TOOLS_SCHEMA_BYTES.
- tool_choice: "none" (the tools are left out of the prompt and nothing is parsed), "auto" (the
  default with tools: text or calls), "required" (one or more calls), or
  {"type": "function", "function": {"name"}} (one call to that declared function). The choice is
  enforced by the grammar (backend.output_constraint.ToolCallFormat).
- parallel_tool_calls: default true; false allows one call per reply.
- History: an assistant message may carry tool_calls [{id, type "function", function {name,
  arguments: a JSON object as text}}] (its content may then be null); a `tool` message
  (tool_call_id, content) must answer a call of an earlier assistant message.
Every refusal is ApiError 400 naming the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from backend.generator import ToolCall, ToolFunction
from backend.output_constraint import OutputConstraint, ToolCallFormat
from web.openai_errors import bad_request
from web.openai_schema import checked_schema

MAX_TOOLS = 128
# All tools' parameters together (UTF-8, compact JSON), measured before any is checked: each
# schema costs a meta-schema check (about 0.2 s per 10 kB, with the GIL held), and every tool is
# written into the prompt anyway, where this much already fills a 32k-token window.
MAX_TOOLS_SCHEMA_BYTES = 128 * 1024
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NO_ARGUMENTS = '{"type":"object","properties":{}}'


@dataclass(frozen=True)
class ToolUse:
    """What a request lets the reply do with tools.

    tools: put in the prompt; constraint: the grammar of the reply (None with tool_choice
    "none"); names: the functions a reply may call (for parsing it), empty when none may.
    """

    tools: tuple[ToolFunction, ...] = ()
    constraint: OutputConstraint | None = None
    names: tuple[str, ...] = ()


def _function(tool: Any, where: str) -> ToolFunction:
    if not isinstance(tool, dict) or tool.get("type") != "function":
        raise bad_request(f"{where} must be {{'type': 'function', 'function': {{...}}}}.", f"{where}.type")
    function = tool.get("function")
    if not isinstance(function, dict):
        raise bad_request(f"{where}.function must be an object with a name.", f"{where}.function")
    name = function.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise bad_request(f"{where}.function.name must be 1 to 64 letters, digits, '_' or '-'; "
                          f"got {name!r}.", f"{where}.function.name")
    description = function.get("description")
    if description is not None and not isinstance(description, str):
        raise bad_request(f"{where}.function.description must be a string.", f"{where}.function.description")
    strict = function.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise bad_request(f"{where}.function.strict must be a boolean.", f"{where}.function.strict")
    parameters = function.get("parameters")
    if parameters is None:
        return ToolFunction(name, description, _NO_ARGUMENTS)
    param = f"{where}.function.parameters"
    if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
        raise bad_request(f"{param} must be the JSON Schema of an object.", param)
    return ToolFunction(name, description, checked_schema(parameters, param, strict=strict is True))


def _parameters_bytes(raw: list[Any]) -> int:
    """Size of the tools' parameters as compact UTF-8 JSON (what is not a tool counts 0)."""
    total = 0
    for tool in raw:
        function = tool.get("function") if isinstance(tool, dict) else None
        parameters = function.get("parameters") if isinstance(function, dict) else None
        if parameters is not None:
            total += len(json.dumps(parameters, ensure_ascii=False, separators=(",", ":")).encode())
    return total


def _tools(body: dict[str, Any]) -> tuple[ToolFunction, ...]:
    raw = body.get("tools")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_TOOLS:
        raise bad_request(f"tools must be a list of 1 to {MAX_TOOLS} tools.", "tools")
    if _parameters_bytes(raw) > MAX_TOOLS_SCHEMA_BYTES:
        raise bad_request(f"tools' parameters are larger than {MAX_TOOLS_SCHEMA_BYTES} bytes together.",
                          "tools")
    tools = tuple(_function(tool, f"tools[{i}]") for i, tool in enumerate(raw))
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        if tool.name in seen:
            raise bad_request(f"tools[{i}].function.name {tool.name!r} is declared twice.",
                              f"tools[{i}].function.name")
        seen.add(tool.name)
    return tools


def tool_use(body: dict[str, Any]) -> ToolUse:
    """The request's tools, tool_choice and parallel_tool_calls; raises ApiError."""
    if body.get("functions") is not None or body.get("function_call") is not None:
        name = "functions" if body.get("functions") is not None else "function_call"
        raise bad_request(f"{name} is deprecated and not supported; use tools and tool_choice.", name)
    tools = _tools(body)
    parallel = body.get("parallel_tool_calls", True)
    if parallel is None:
        parallel = True
    if not isinstance(parallel, bool):
        raise bad_request("parallel_tool_calls must be a boolean.", "parallel_tool_calls")
    choice = body.get("tool_choice")
    if choice is None:
        choice = "auto" if tools else "none"
    if choice == "none":
        return ToolUse()
    if not tools:
        raise bad_request("tool_choice needs tools.", "tool_choice")
    if choice in ("auto", "required"):
        chosen, required = tools, choice == "required"
    elif isinstance(choice, dict) and choice.get("type") == "function" \
            and isinstance(choice.get("function"), dict):
        name = choice["function"].get("name")
        chosen = tuple(t for t in tools if t.name == name)
        if not chosen:
            raise bad_request(f"tool_choice names {name!r}, which is not among the tools.", "tool_choice")
        required, parallel = True, False
    else:
        raise bad_request("tool_choice must be 'none', 'auto', 'required' or "
                          "{'type': 'function', 'function': {'name': ...}}.", "tool_choice")
    index = {t.name: i for i, t in enumerate(tools)}
    grammar = ToolCallFormat(functions=tuple((t.name, t.parameters) for t in chosen),
                             required=required, parallel=parallel,
                             params=tuple(f"tools[{index[t.name]}].function.parameters" for t in chosen))
    return ToolUse(tools, OutputConstraint(tool_calls=grammar, param="tools"),
                   tuple(t.name for t in chosen))


def assistant_calls(message: dict[str, Any], where: str) -> tuple[ToolCall, ...]:
    """The tool_calls of an assistant message of the history (may be absent)."""
    raw = message.get("tool_calls")
    if raw is None:
        return ()
    param = f"{where}.tool_calls"
    if not isinstance(raw, list):
        raise bad_request(f"{param} must be a list of tool calls.", param)
    calls = []
    for i, call in enumerate(raw):
        at = f"{param}[{i}]"
        if not isinstance(call, dict) or call.get("type", "function") != "function" \
                or not isinstance(call.get("id"), str) or not call["id"] \
                or not isinstance(call.get("function"), dict):
            raise bad_request(f"{at} must be {{'id': str, 'type': 'function', 'function': "
                              "{'name': str, 'arguments': str}}.", at)
        function = call["function"]
        name, arguments = function.get("name"), function.get("arguments")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise bad_request(f"{at}.function.name must be a function name.", f"{at}.function.name")
        if not isinstance(arguments, str):
            raise bad_request(f"{at}.function.arguments must be a JSON object as a string.",
                              f"{at}.function.arguments")
        try:
            parsed = json.loads(arguments)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            raise bad_request(f"{at}.function.arguments must be a JSON object as a string.",
                              f"{at}.function.arguments")
        calls.append(ToolCall(call["id"], name, arguments))
    return tuple(calls)


def answered_call(message: dict[str, Any], where: str, calls: dict[str, ToolCall]) -> ToolCall:
    """The earlier call a `tool` message answers (`calls`: every call so far, by id)."""
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str) or call_id not in calls:
        raise bad_request(f"{where}.tool_call_id must name a tool call of an earlier assistant "
                          f"message; got {call_id!r}.", f"{where}.tool_call_id")
    return calls[call_id]
