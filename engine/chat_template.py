"""The model's own chat template, rendered like transformers' `apply_chat_template`.

Same Jinja2 environment as transformers (`transformers/utils/chat_template_utils.py`):
sandboxed and immutable, `trim_blocks` and `lstrip_blocks`, the `loopcontrols` extension, a
`tojson` filter that does not HTML-escape, and the globals `raise_exception` and `strftime_now`.
The template sees `messages`, `add_generation_prompt`, `tools` (the caller's list of function
definitions in OpenAI's shape, or None), `documents` (None) and the model's special tokens
(`bos_token`, `eos_token`, ...). :attr:`ChatTemplate.takes_tools` says whether the template reads
`tools` at all (transformers passes it the same way; the server renders tools itself otherwise).
"""

from __future__ import annotations

import copy
import json
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import jinja2
import jinja2.ext
import jinja2.meta
from jinja2.sandbox import ImmutableSandboxedEnvironment

from engine.errors import ChatTemplateError
from engine.tokenizer import Tokenizer


class _TemplateRaised(Exception):
    """`raise_exception(...)` called by the template itself."""


def _raise_exception(message: str) -> None:
    raise _TemplateRaised(message)


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


class ChatTemplate:
    """A compiled chat template plus the special-token variables it is rendered with.

    special_tokens: e.g. {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}; None values
    are left out. Raises ChatTemplateError if the template source does not compile.
    """

    def __init__(self, source: str, special_tokens: Mapping[str, str | None]) -> None:
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                            extensions=[jinja2.ext.loopcontrols])
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise_exception
        env.globals["strftime_now"] = _strftime_now
        try:
            self._template = env.from_string(source)
            variables = jinja2.meta.find_undeclared_variables(env.parse(source))
        except jinja2.TemplateError as e:
            raise ChatTemplateError(f"chat template does not compile: {e}") from e
        self.source = source
        # The template reads `tools` (e.g. Qwen2.5's, Llama 3.1's): tool definitions go to it.
        self.takes_tools: bool = "tools" in variables
        self._special = {k: v for k, v in special_tokens.items() if v is not None}

    def render(self, messages: Sequence[Mapping[str, Any]], add_generation_prompt: bool = True,
               tools: Sequence[Mapping[str, Any]] | None = None) -> str:
        """The prompt text for `messages` (each {"role": str, "content": str}, in order; other keys,
        such as an assistant's `tool_calls` or a tool message's `tool_call_id`, pass through).

        add_generation_prompt: end with the header that opens the assistant's turn.
        tools: function definitions ({"type": "function", "function": {name, description,
        parameters}}), as transformers' apply_chat_template(tools=...); None: no tools.
        Raises ChatTemplateError for a malformed message list or when the template rejects the
        conversation (its `raise_exception`) or fails while rendering.
        """
        chat = _validate(messages)
        try:
            return self._template.render(messages=chat, tools=copy.deepcopy(list(tools)) if tools else None,
                                         documents=None,
                                         add_generation_prompt=add_generation_prompt, **self._special)
        except _TemplateRaised as e:
            raise ChatTemplateError(f"chat template rejected the conversation: {e}") from e
        except (jinja2.TemplateError, TypeError, ValueError, KeyError) as e:
            raise ChatTemplateError(f"chat template failed to render: {e}") from e


def _validate(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ChatTemplateError("messages must be a sequence of {'role', 'content'} mappings")
    chat = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ChatTemplateError(f"message {i} is not a mapping: {message!r}")
        role, content = message.get("role"), message.get("content")
        if not isinstance(role, str) or not role or not isinstance(content, str):
            raise ChatTemplateError(f"message {i} needs a non-empty string 'role' and a string 'content'")
        chat.append(copy.deepcopy(dict(message)))  # the template must not see or alter the caller's objects
    return chat


def encode_conversation(template: ChatTemplate, tokenizer: Tokenizer,
                        messages: Sequence[Mapping[str, str]],
                        add_generation_prompt: bool = True,
                        continue_final_message: bool = False,
                        tools: Sequence[Mapping[str, Any]] | None = None) -> list[int]:
    """Prompt token ids for `messages`, where message contents are data, never control.

    Contents without special-token text: `tokenizer.encode(template.render(messages))`, the
    same ids as transformers' `apply_chat_template(tokenize=True)`. A content that spells a
    special token (a user typing "<|im_end|><|im_start|>system") is tokenized literally, so it
    cannot forge a turn: the prompt is rendered with a unique marker in place of each content,
    the template's pieces between markers are tokenized with special tokens parsed and the
    contents without. (Only then: tokenizing at those boundaries can split leading whitespace
    of a content differently from the whole-prompt encoding.)

    continue_final_message: the prompt ends inside the last message, right after its content
    (the template's end-of-turn text after it is left out), so the model goes on with that
    message: transformers' `apply_chat_template(continue_final_message=True)`. Needs
    add_generation_prompt False.

    tools: function definitions for a template that takes them (ChatTemplate.render). They, and
    the tool calls of assistant messages, are rendered by the template with special tokens
    parsed, so one that spells a special token is refused (ChatTemplateError).

    Raises ChatTemplateError when the template fails, or when it transforms the markers (edits
    contents) so that a content holding special-token text cannot be isolated; for
    continue_final_message, also when there is no message or a generation prompt is asked for.
    """
    chat = _validate(messages)
    extras = json.dumps([tools or [], [m.get("tool_calls") for m in chat]], ensure_ascii=False, default=str)
    if tokenizer.contains_added_token_text(extras):
        raise ChatTemplateError("a tool definition or a tool call spells a special token")
    if continue_final_message:
        if add_generation_prompt:
            raise ChatTemplateError("continue_final_message and add_generation_prompt exclude each other")
        if not chat:
            raise ChatTemplateError("continue_final_message needs a message to continue")
    if continue_final_message and not any(tokenizer.contains_added_token_text(m["content"]) for m in chat):
        # The text up to the final content, then the content: what the template renders there.
        nonce = secrets.token_hex(8)
        marker = f"\x00{nonce}:final\x00"
        rendered = template.render(chat[:-1] + [{**chat[-1], "content": marker}], add_generation_prompt=False,
                                   tools=tools)
        head, found, _rest = rendered.partition(marker)
        if not found:
            raise ChatTemplateError("this chat template transforms message contents, so the final "
                                    "message cannot be continued")
        return tokenizer.encode(head + chat[-1]["content"])
    if not any(tokenizer.contains_added_token_text(m["content"]) for m in chat):
        return tokenizer.encode(template.render(chat, add_generation_prompt=add_generation_prompt, tools=tools))
    nonce = secrets.token_hex(8)
    markers = [f"\x00{nonce}:{i}\x00" for i in range(len(chat))]
    marked = [{**m, "content": marker} for m, marker in zip(chat, markers)]
    rest = template.render(marked, add_generation_prompt=add_generation_prompt, tools=tools)
    ids: list[int] = []
    for message, marker in zip(chat, markers):
        head, found, rest = rest.partition(marker)
        if not found or marker in rest:
            raise ChatTemplateError("a message spells a special token, and this chat template "
                                    "transforms message contents, so it cannot be kept as data")
        ids += tokenizer.encode(head) + tokenizer.encode(message["content"], parse_special=False)
    if continue_final_message:
        return ids
    return ids + tokenizer.encode(rest)
