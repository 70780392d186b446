"""Requests of the OpenAI-compatible API: validation into an :class:`ApiRequest`, and the
error shape (:class:`ApiError`). The parameters and their ranges are listed in web/openai_api.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import ClientDisconnect, Request

from backend import safe_json
from backend.generator import ChatMessage, GenerationParams, ToolCall
from backend.safe_json import JSONTooDeep
from backend.schema_prompt import with_json_instructions
from web.openai_errors import ApiError, bad_request, server_error  # noqa: F401 (re-exported)
from web.openai_format_request import output_format
from web.openai_tools_request import answered_call, assistant_calls, tool_use

MAX_BODY_BYTES = 1 << 20
MAX_N = 8
MAX_STOP = 4
MAX_TOP_LOGPROBS = 20
MAX_SEED = 2**63 - 1
UNAVAILABLE_RETRY_AFTER_S = 5
_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant",
          "tool": "tool"}


# -- parsing --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApiRequest:
    """One validated completion request. Exactly one of messages / prompt is set; params are
    for all n choices (the engine seeds choice i with params.seed + i). max_tokens_given: the client named a
    limit (else the default may be cut to fit the context window). tool_names: the functions a
    reply may call (its text is then read for tool calls); empty: the reply is text."""

    messages: list[ChatMessage] | None
    prompt: str | None
    params: GenerationParams
    n: int
    stream: bool
    include_usage: bool
    max_tokens_given: bool
    tool_names: tuple[str, ...] = ()


async def read_json(request: Request) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise ApiError(413, f"The request body is larger than {MAX_BODY_BYTES} bytes.",
                       code="request_too_large")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise ApiError(413, f"The request body is larger than {MAX_BODY_BYTES} bytes.",
                               code="request_too_large")
    except ClientDisconnect:
        raise ApiError(400, "The request body was cut short.") from None
    try:
        data = safe_json.loads(body)
    except JSONTooDeep as exc:
        raise bad_request(f"We could not parse the JSON body of your request: {exc}.") from None
    except ValueError:  # UnicodeDecodeError included
        raise bad_request("We could not parse the JSON body of your request.") from None
    if not isinstance(data, dict):
        raise bad_request("The request body must be a JSON object.")
    return data


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _float(body: dict[str, Any], name: str, low: float, high: float, default: float,
           low_open: bool = False) -> float:
    value = body.get(name)
    if value is None:
        return default
    if not _is_number(value) or value != value:
        raise bad_request(f"{name} must be a number, got {value!r}.", name)
    if value > high or value < low or (low_open and value == low):
        bracket = "(" if low_open else "["
        raise bad_request(f"{name} must be in {bracket}{low:g}, {high:g}], got {value}.", name)
    return float(value)


def _int(body: dict[str, Any], name: str, low: int, high: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_request(f"{name} must be an integer, got {value!r}.", name)
    if not low <= value <= high:
        raise bad_request(f"{name} must be in [{low}, {high}], got {value}.", name)
    return value


def _bool(body: dict[str, Any], name: str) -> bool:
    value = body.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise bad_request(f"{name} must be a boolean, got {value!r}.", name)
    return value


def _text_content(content: object, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text" \
                    or not isinstance(part.get("text"), str):
                raise bad_request(f"{where}.content parts must be {{'type': 'text', 'text': str}}; "
                           "this model reads text only.", f"{where}.content")
            texts.append(part["text"])
        return "".join(texts)
    raise bad_request(f"{where}.content must be a string or a list of text parts.", f"{where}.content")


def _messages(body: dict[str, Any]) -> list[ChatMessage]:
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise bad_request("messages must be a non-empty list of messages.", "messages")
    messages = []
    calls: dict[str, ToolCall] = {}
    for i, message in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise bad_request(f"{where} must be an object with role and content.", where)
        role = message.get("role")
        if role not in _ROLES:
            raise bad_request(f"{where}.role must be one of system, developer, user, assistant, "
                              f"tool; got {role!r}.", f"{where}.role")
        content = message.get("content")
        tool_calls = assistant_calls(message, where) if role == "assistant" else ()
        if content is None and role == "assistant":
            content = ""
        if role == "tool":
            call = answered_call(message, where, calls)
            messages.append(ChatMessage("tool", _text_content(content, where), tool_call_id=call.id,
                                        name=call.name))
            continue
        for c in tool_calls:
            if c.id in calls:
                raise bad_request(f"{where}.tool_calls: the id {c.id!r} is used by another tool call "
                                  "of the history; each call needs its own id.", f"{where}.tool_calls")
            calls[c.id] = c
        messages.append(ChatMessage(_ROLES[role], _text_content(content, where), tool_calls=tool_calls))
    return messages


def _prompt(body: dict[str, Any]) -> str:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise bad_request("prompt must be a string or a list of one string (batches and token ids "
                   "are not supported).", "prompt")
    if not prompt:
        raise bad_request("prompt must not be empty.", "prompt")
    return prompt


def _stop(body: dict[str, Any]) -> tuple[str, ...]:
    stop = body.get("stop")
    if stop is None:
        return ()
    stops = [stop] if isinstance(stop, str) else stop
    if not isinstance(stops, list) or len(stops) > MAX_STOP \
            or not all(isinstance(s, str) and s for s in stops):
        raise bad_request(f"stop must be a non-empty string or a list of at most {MAX_STOP} of them.",
                   "stop")
    return tuple(stops)


def _refuse_unsupported(body: dict[str, Any], chat: bool) -> None:
    if body.get("logit_bias"):
        raise bad_request("logit_bias is not supported by this server.", "logit_bias")
    if not chat:
        for name in ("tools", "tool_choice"):
            if body.get(name) is not None:
                raise bad_request(f"{name} is for /v1/chat/completions.", name)
        if body.get("echo"):
            raise bad_request("echo is not supported by this server.", "echo")
        if body.get("suffix"):
            raise bad_request("suffix is not supported by this server.", "suffix")
        best_of = body.get("best_of")
        if best_of is not None and best_of != body.get("n", 1):
            raise bad_request("best_of is not supported by this server (it must equal n).", "best_of")


def _logprobs(body: dict[str, Any], chat: bool) -> int | None:
    if not chat:
        return _int(body, "logprobs", 0, MAX_TOP_LOGPROBS)
    top = _int(body, "top_logprobs", 0, MAX_TOP_LOGPROBS)
    if not _bool(body, "logprobs"):
        if top is not None:
            raise bad_request("top_logprobs needs logprobs set to true.", "top_logprobs")
        return None
    return top or 0


def parse_request(body: dict[str, Any], *, chat: bool, model_name: str, defaults: Any,
                  cache_salt: str) -> ApiRequest:
    """Validate a request body into an :class:`ApiRequest`; raises :class:`ApiError`.

    defaults: the admin's RuntimeSettings (default_max_tokens, max_max_tokens,
    default_temperature, default_top_p).
    """
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad_request("model must be the name of a model (see GET /v1/models).", "model")
    if model != model_name:
        raise ApiError(404, f"The model `{model}` does not exist or you do not have access "
                       f"to it. This server serves `{model_name}`.", param="model",
                       code="model_not_found")
    _refuse_unsupported(body, chat)
    messages = _messages(body) if chat else None
    prompt = None if chat else _prompt(body)
    limit_name = "max_completion_tokens" if body.get("max_completion_tokens") is not None \
        else "max_tokens"
    max_tokens = _int(body, limit_name, 1, 2**31)
    if max_tokens is not None and max_tokens > defaults.max_max_tokens:
        raise bad_request(f"{limit_name} is {max_tokens}; this server allows at most "
                   f"{defaults.max_max_tokens}.", limit_name)
    n = _int(body, "n", 1, MAX_N) or 1
    seed = _int(body, "seed", 0, MAX_SEED - (n - 1))
    stream = _bool(body, "stream")
    options = body.get("stream_options")
    if options is not None and (not stream or not isinstance(options, dict)):
        raise bad_request("stream_options is only allowed with stream: true, as an object.",
                   "stream_options")
    include_usage = bool(options and options.get("include_usage"))
    tools = tool_use(body) if chat else None
    output = output_format(body)
    if tools is not None and tools.constraint is not None and output.constraint is not None:
        raise bad_request(f"{output.constraint.param} cannot be combined with tools unless "
                          "tool_choice is 'none': a reply follows one constraint.", output.constraint.param)
    if messages is not None and output.json_instructions is not None and output.constraint is not None \
            and output.constraint.param == "response_format":
        messages = with_json_instructions(messages, output.json_instructions or None)
    params = GenerationParams(
        max_tokens=max_tokens or defaults.default_max_tokens,
        temperature=_float(body, "temperature", 0.0, 2.0, defaults.default_temperature),
        top_p=_float(body, "top_p", 0.0, 1.0, defaults.default_top_p, low_open=True),
        seed=seed, stop=_stop(body), cache_salt=cache_salt,
        presence_penalty=_float(body, "presence_penalty", -2.0, 2.0, 0.0),
        frequency_penalty=_float(body, "frequency_penalty", -2.0, 2.0, 0.0),
        logprobs=_logprobs(body, chat),
        tools=tools.tools if tools is not None else (),
        structured_output=tools.constraint if tools is not None and tools.constraint is not None
        else output.constraint)
    return ApiRequest(messages, prompt, params, n, stream, include_usage, max_tokens is not None,
                      tools.names if tools is not None else ())


