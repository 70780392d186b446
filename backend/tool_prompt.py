"""Tools, tool calls and tool results in the prompt.

Two ways, chosen per model by backend.engine_adapter:

- The model's chat template reads `tools` (engine ChatTemplate.takes_tools): :func:`template_inputs`
  gives it the tool definitions and the messages in the shapes transformers' apply_chat_template
  takes (OpenAI's `{"type": "function", "function": {...}}` definitions; assistant `tool_calls`
  with `arguments` as an object; `tool` messages with `tool_call_id` and `name`).
- Otherwise (the default SmolLM2 template) :func:`plain_messages` writes them as text in the
  format below, in the style of SmolLM2-Instruct's own tool-calling prompt:

  * a system message (before the client's own system text, if any) that lists the functions as
    a JSON array inside ``<tools></tools>`` and asks for calls as
    ``<tool_call>[{"name": ..., "arguments": {...}}]</tool_call>`` and nothing else;
  * an assistant message's calls as that block, after its text (compact JSON);
  * tool results (consecutive `tool` messages together) as one user turn: the question they
    answer (the last user message before them) restated, the ``<tool_response>`` blocks (each
    starting with a ``name: <function>`` line), then :data:`ANSWER_WITH_RESULT`. With the
    blocks alone SmolLM2-135M-Instruct repeated them as its answer; with the question restated
    and the instruction it answers from them (docs/BENCHMARKS.md, "Agent runs with the real
    model").

Text the client wrote is data: inside JSON, "<" is written ``\\u003c`` (same JSON value), so a
description or an argument cannot close a block; in a tool result every ``<`` that would open or
close a ``tool_response`` / ``tool_call`` / ``tools`` tag is written ``&lt;``. Special-token text
(``<|im_end|>``) in any content is tokenized literally by engine.encode_conversation.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from backend.generator import ChatMessage, ToolCall, ToolFunction
from backend.output_constraint import TOOL_CALL_BEGIN, TOOL_CALL_END

TOOLS_INSTRUCTIONS = (
    "You may call functions to answer the user. These functions are available, listed as JSON "
    "between <tools> and </tools>:\n<tools>{tools}</tools>\n\n"
    "To call functions, answer with nothing but one " + TOOL_CALL_BEGIN + TOOL_CALL_END + " block "
    "holding a JSON list of calls, each with the function's \"name\" and its \"arguments\" as a "
    "JSON object that follows the function's parameters, for example:\n"
    + TOOL_CALL_BEGIN + '[{{"name": "function_name", "arguments": {{"argument": "value"}}}}]'
    + TOOL_CALL_END + "\n"
    "The results come back in <tool_response></tool_response> blocks. When no function is "
    "needed, or the results answer the question, reply in plain text.")

QUESTION_HEAD = "Question: "
RESULT_HEAD = ("Result:", "Results:")  # one block, several
ANSWER_WITH_RESULT = ("Answer the question with this result, in one sentence.",
                      "Answer the question with these results, in one sentence.")

_TAG = re.compile(r"<(?=\s*/?\s*tool(?:s|_call|_response)\b)", re.IGNORECASE)


def json_text(value: Any) -> str:
    """Compact JSON in which "<" is escaped, so it can never spell a closing tag."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def call_block(calls: Sequence[ToolCall]) -> str:
    """An assistant's calls as the tagged block the model is asked to write."""
    return TOOL_CALL_BEGIN + json_text([{"name": c.name, "arguments": _arguments(c)} for c in calls]) + TOOL_CALL_END


def _arguments(call: ToolCall) -> Any:
    try:
        return json.loads(call.arguments)
    except ValueError:  # validated by the API; a program's own text stays a string
        return call.arguments


def _definition(tool: ToolFunction) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["parameters"] = json.loads(tool.parameters)
    return out


def tools_system_text(tools: Sequence[ToolFunction]) -> str:
    """The system-prompt section that declares `tools` (the fallback format)."""
    return TOOLS_INSTRUCTIONS.format(tools=json_text([_definition(t) for t in tools]))


def escape_tool_result(text: str) -> str:
    """A tool's result as block content: tags of the tool format have their "<" as "&lt;"."""
    return _TAG.sub("&lt;", text)


def _response_turn(results: Sequence[ChatMessage], question: str | None) -> ChatMessage:
    blocks = []
    for message in results:
        head = f"name: {message.name}\n" if message.name else ""
        blocks.append(f"<tool_response>\n{head}{escape_tool_result(message.content)}\n</tool_response>")
    asked = f"{QUESTION_HEAD}{question}\n\n" if question else ""
    several = int(len(blocks) > 1)
    return ChatMessage("user", f"{asked}{RESULT_HEAD[several]}\n" + "\n".join(blocks)
                       + f"\n\n{ANSWER_WITH_RESULT[several]}")


def plain_messages(messages: Sequence[ChatMessage], tools: Sequence[ToolFunction]) -> list[ChatMessage]:
    """`messages` and `tools` for a template that knows only system / user / assistant text."""
    out: list[ChatMessage] = []
    rest = list(messages)
    if tools:
        section = tools_system_text(tools)
        if rest and rest[0].role == "system":
            out.append(ChatMessage("system", f"{section}\n\n{rest.pop(0).content}"))
        else:
            out.append(ChatMessage("system", section))
    results: list[ChatMessage] = []
    question: str | None = None
    for message in rest:
        if message.role == "tool":
            results.append(message)
            continue
        if results:
            out.append(_response_turn(results, question))
            results = []
        if message.role == "user":
            question = message.content
        if message.tool_calls:
            text = f"{message.content}\n" if message.content else ""
            out.append(ChatMessage(message.role, text + call_block(message.tool_calls)))
        else:
            out.append(ChatMessage(message.role, message.content))
    if results:
        out.append(_response_turn(results, question))
    return out


def template_inputs(messages: Sequence[ChatMessage], tools: Sequence[ToolFunction]
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """(messages, tools) as a tools-aware chat template takes them (transformers' shapes).
    Tool results are escaped as in the fallback (escape_tool_result): such templates wrap them
    in tags of their own (Qwen's and Hermes' <tool_response>), which a result must not close."""
    chat: list[dict[str, Any]] = []
    for message in messages:
        content = escape_tool_result(message.content) if message.role == "tool" else message.content
        item: dict[str, Any] = {"role": message.role, "content": content}
        if message.tool_calls:
            item["tool_calls"] = [{"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": _arguments(c)}}
                                  for c in message.tool_calls]
        if message.role == "tool":
            item["tool_call_id"] = message.tool_call_id
            if message.name:
                item["name"] = message.name
        chat.append(item)
    definitions = [{"type": "function", "function": _definition(t)} for t in tools] or None
    return chat, definitions
