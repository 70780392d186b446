"""The OpenAI-compatible HTTP API under ``/v1``: models, chat completions, completions.

``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /v1/chat/completions``,
``POST /v1/completions``: the shapes of OpenAI's API reference, streaming as server-sent events
(``data: {chunk}\\n\\n`` ... ``data: [DONE]\\n\\n``) or one JSON body. Authentication is
``Authorization: Bearer <API key>`` only (no cookie, hence no CSRF surface).

Parameters: model (must be the served model's name, else 404 model_not_found), messages
(roles system / developer (read as system) / user / assistant; content a string or a list of
text parts) or prompt (a string or a list of one string), temperature [0, 2], top_p (0, 1],
max_tokens / max_completion_tokens (<= the admin's max, else 400; omitted: the admin's default,
cut to what the context window leaves), stop (a string or up to 4), seed, n [1, 8] (n samples
that the engine runs as one request sharing the prompt; the i-th seeded seed + i), presence_penalty / frequency_penalty [-2, 2], logprobs / top_logprobs
(chat: bool + [0, 20]; completions: [0, 20]), stream, stream_options.include_usage, user
(ignored). Omitted temperature and top_p take the admin's defaults (as vLLM takes the model's).
Unknown fields are ignored as OpenAI does; known ones we cannot honour (tools, logit_bias,
echo, suffix, best_of > n, a non-text response_format) are refused with 400.

Errors: ``{"error": {"message", "type", "param", "code"}}`` with 401 (invalid_api_key), 400
(invalid_request_error, param named), 404 (model_not_found), 413 (body over 1 MiB), 429
(rate_limit_exceeded, Retry-After), 503 (overloaded / unavailable, Retry-After), 500
(server_error). After a stream has started, an engine failure arrives as one
``data: {"error": {...}}`` event before ``[DONE]``.

Limits: one request is one :class:`backend.generation.Generation` (source "api"): one
UsageLimiter lease (whatever n), one admission ticket for n x its prompt tokens, one live entry,
one usage record, one metrics observation per choice, all settled once. A client that leaves (a
closed stream, or a dropped connection while waiting for a non-streamed reply) aborts every
choice in the engine: a program cannot resume. Its completion tokens are then counted from the
text it was sent. Parsing and the response shapes are this module's; the lifecycle is backend's.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import logging
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from backend.auth import UserInfo
from backend.errors import DomainError
from backend.generation import Generation
from backend.generator import (ERROR_QUEUE_TIMEOUT, FINISH_ABORT, FINISH_ERROR, ChatMessage, GenerationDone,
                               GenerationError, GenerationEvent, GenerationParams,
                               GeneratorUnavailable, InvalidGenerationParams, PromptTooLong,
                               TextDelta, TokenLogprob)
from backend.limits import Overloaded, RateLimited
from web import session
from web.state import AppState, app_state

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20
MAX_N = 8
MAX_STOP = 4
MAX_TOP_LOGPROBS = 20
MAX_SEED = 2**63 - 1
UNAVAILABLE_RETRY_AFTER_S = 5
USAGE_SOURCE = "api"
_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
_STARTED = int(time.time())


# -- errors ---------------------------------------------------------------------------------


class ApiError(Exception):
    """An error answered in OpenAI's shape. param: the request field at fault, if any."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None,
                 retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.type = status, message, type
        self.param, self.code, self.retry_after_s = param, code, retry_after_s

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}

    def response(self) -> JSONResponse:
        headers = {"Cache-Control": "no-store"}
        if self.retry_after_s is not None:
            headers["Retry-After"] = str(self.retry_after_s)
        if self.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        if self.status == 405:
            headers["Allow"] = "POST"
        return JSONResponse(self.body(), status_code=self.status, headers=headers)


def _bad(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, param=param, code=code)


def _server_error(message: str = "The server had an error while processing your request.",
                  code: str = "server_error") -> ApiError:
    return ApiError(500, message, type="server_error", code=code)


def _from_domain(exc: Exception) -> ApiError:
    """Limiter, admission and generator refusals -> their OpenAI-shaped errors."""
    if isinstance(exc, RateLimited):
        return ApiError(429, exc.message, type="rate_limit_error", code="rate_limit_exceeded",
                        retry_after_s=exc.retry_after_s)
    if isinstance(exc, Overloaded):
        return ApiError(503, exc.message, type="server_error", code="overloaded",
                        retry_after_s=exc.retry_after_s)
    if isinstance(exc, GeneratorUnavailable):
        return ApiError(503, str(exc) or "The model is not ready.", type="server_error",
                        code="unavailable", retry_after_s=UNAVAILABLE_RETRY_AFTER_S)
    if isinstance(exc, InvalidGenerationParams):
        message = str(exc)
        return _bad(message, param=message.split(" ", 1)[0] if message else None)
    if isinstance(exc, DomainError):
        return _bad(exc.message, code=exc.code)
    return _server_error()


def _endpoint(handler: Callable[[Request, AppState], Awaitable[Response]]
              ) -> Callable[[Request], Awaitable[Response]]:
    """Wrap a handler: every failure becomes an OpenAI-shaped error response."""

    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request, app_state(request))
        except ApiError as exc:
            return exc.response()
        except ClientDisconnect:  # nobody reads this; 499 as nginx logs a client that left
            return Response(status_code=499)
        except (DomainError, GenerationError) as exc:
            return _from_domain(exc).response()
        except Exception:
            log.exception("unhandled error on %s %s", request.method, request.url.path)
            return _server_error().response()

    return endpoint


async def _authenticate(request: Request) -> UserInfo:
    if session.bearer_token(request) is None:
        raise ApiError(401, "You didn't provide an API key. Send it as 'Authorization: Bearer "
                       "<key>'; create one on your account page.", code="invalid_api_key")
    user = await session.user_for_bearer(request)
    if user is None:
        raise ApiError(401, "Incorrect API key provided.", code="invalid_api_key")
    return user


# -- parsing --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApiRequest:
    """One validated completion request. Exactly one of messages / prompt is set; params are
    for all n choices (the engine seeds choice i with params.seed + i). max_tokens_given: the client named a
    limit (else the default may be cut to fit the context window)."""

    messages: list[ChatMessage] | None
    prompt: str | None
    params: GenerationParams
    n: int
    stream: bool
    include_usage: bool
    max_tokens_given: bool


async def _read_json(request: Request) -> dict[str, Any]:
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
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise _bad("We could not parse the JSON body of your request.") from None
    if not isinstance(data, dict):
        raise _bad("The request body must be a JSON object.")
    return data


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _float(body: dict[str, Any], name: str, low: float, high: float, default: float,
           low_open: bool = False) -> float:
    value = body.get(name)
    if value is None:
        return default
    if not _is_number(value) or value != value:
        raise _bad(f"{name} must be a number, got {value!r}.", name)
    if value > high or value < low or (low_open and value == low):
        bracket = "(" if low_open else "["
        raise _bad(f"{name} must be in {bracket}{low:g}, {high:g}], got {value}.", name)
    return float(value)


def _int(body: dict[str, Any], name: str, low: int, high: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"{name} must be an integer, got {value!r}.", name)
    if not low <= value <= high:
        raise _bad(f"{name} must be in [{low}, {high}], got {value}.", name)
    return value


def _bool(body: dict[str, Any], name: str) -> bool:
    value = body.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _bad(f"{name} must be a boolean, got {value!r}.", name)
    return value


def _text_content(content: object, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text" \
                    or not isinstance(part.get("text"), str):
                raise _bad(f"{where}.content parts must be {{'type': 'text', 'text': str}}; "
                           "this model reads text only.", f"{where}.content")
            texts.append(part["text"])
        return "".join(texts)
    raise _bad(f"{where}.content must be a string or a list of text parts.", f"{where}.content")


def _messages(body: dict[str, Any]) -> list[ChatMessage]:
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise _bad("messages must be a non-empty list of messages.", "messages")
    messages = []
    for i, message in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise _bad(f"{where} must be an object with role and content.", where)
        role = message.get("role")
        if role not in _ROLES:
            raise _bad(f"{where}.role must be one of system, developer, user, assistant; "
                       f"got {role!r}.", f"{where}.role")
        content = message.get("content")
        if content is None and role == "assistant":
            content = ""
        messages.append(ChatMessage(_ROLES[role], _text_content(content, where)))
    return messages


def _prompt(body: dict[str, Any]) -> str:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise _bad("prompt must be a string or a list of one string (batches and token ids "
                   "are not supported).", "prompt")
    if not prompt:
        raise _bad("prompt must not be empty.", "prompt")
    return prompt


def _stop(body: dict[str, Any]) -> tuple[str, ...]:
    stop = body.get("stop")
    if stop is None:
        return ()
    stops = [stop] if isinstance(stop, str) else stop
    if not isinstance(stops, list) or len(stops) > MAX_STOP \
            or not all(isinstance(s, str) and s for s in stops):
        raise _bad(f"stop must be a non-empty string or a list of at most {MAX_STOP} of them.",
                   "stop")
    return tuple(stops)


def _refuse_unsupported(body: dict[str, Any], chat: bool) -> None:
    for name in ("tools", "functions", "logit_bias"):
        if body.get(name):
            raise _bad(f"{name} is not supported by this server.", name)
    response_format = body.get("response_format")
    if response_format is not None and (not isinstance(response_format, dict)
                                        or response_format.get("type") != "text"):
        raise _bad("Only response_format {'type': 'text'} is supported.", "response_format")
    if not chat:
        if body.get("echo"):
            raise _bad("echo is not supported by this server.", "echo")
        if body.get("suffix"):
            raise _bad("suffix is not supported by this server.", "suffix")
        best_of = body.get("best_of")
        if best_of is not None and best_of != body.get("n", 1):
            raise _bad("best_of is not supported by this server (it must equal n).", "best_of")


def _logprobs(body: dict[str, Any], chat: bool) -> int | None:
    if not chat:
        return _int(body, "logprobs", 0, MAX_TOP_LOGPROBS)
    top = _int(body, "top_logprobs", 0, MAX_TOP_LOGPROBS)
    if not _bool(body, "logprobs"):
        if top is not None:
            raise _bad("top_logprobs needs logprobs set to true.", "top_logprobs")
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
        raise _bad("model must be the name of a model (see GET /v1/models).", "model")
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
        raise _bad(f"{limit_name} is {max_tokens}; this server allows at most "
                   f"{defaults.max_max_tokens}.", limit_name)
    n = _int(body, "n", 1, MAX_N) or 1
    seed = _int(body, "seed", 0, MAX_SEED - (n - 1))
    stream = _bool(body, "stream")
    options = body.get("stream_options")
    if options is not None and (not stream or not isinstance(options, dict)):
        raise _bad("stream_options is only allowed with stream: true, as an object.",
                   "stream_options")
    include_usage = bool(options and options.get("include_usage"))
    params = GenerationParams(
        max_tokens=max_tokens or defaults.default_max_tokens,
        temperature=_float(body, "temperature", 0.0, 2.0, defaults.default_temperature),
        top_p=_float(body, "top_p", 0.0, 1.0, defaults.default_top_p, low_open=True),
        seed=seed, stop=_stop(body), cache_salt=cache_salt,
        presence_penalty=_float(body, "presence_penalty", -2.0, 2.0, 0.0),
        frequency_penalty=_float(body, "frequency_penalty", -2.0, 2.0, 0.0),
        logprobs=_logprobs(body, chat))
    return ApiRequest(messages, prompt, params, n, stream, include_usage, max_tokens is not None)


# -- running the choices --------------------------------------------------------------------


@dataclass
class _Choice:
    """What one sample's client is sent: its text, its logprobs, its final event."""

    text: list[str] = field(default_factory=list)
    logprobs: list[TokenLogprob] = field(default_factory=list)
    done: GenerationDone | None = None


class _Run:
    """One API request: parsing done, its one :class:`backend.generation.Generation` (source
    "api", n samples run by the engine as one request) and what its client is sent. The
    generation opens and settles the lease, the ticket, the live entry, usage and metrics."""

    def __init__(self, state: AppState, api: ApiRequest, user: UserInfo, prefix: str) -> None:
        self.state, self.api, self.user = state, api, user
        self.id = f"{prefix}-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.prompt_tokens = 0
        self.choices = [_Choice() for _ in range(api.n)]
        self.generation: Generation | None = None

    async def start(self) -> None:
        """Count the prompt, pass the limiter and admission, queue the request with its n
        samples. Raises ApiError (nothing is left held or queued when it does)."""
        state, api = self.state, self.api
        self.prompt_tokens = await self._count_prompt()
        params = replace(api.params, n=api.n)
        room = state.generator.context_length - self.prompt_tokens
        if not api.max_tokens_given and 1 <= room < params.max_tokens:
            params = replace(params, max_tokens=room)
        generations = state.chat.generations
        try:
            self.generation = await run_in_threadpool(generations.admit, self.user.id, USAGE_SOURCE,
                                                      self.prompt_tokens, api.n)
            self.generation.start(self.id, params, messages=api.messages, prompt=api.prompt)
        except (RateLimited, Overloaded) as exc:
            raise _from_domain(exc) from None
        except PromptTooLong as exc:
            await self.close()
            raise _bad(str(exc), self._prompt_param, "context_length_exceeded") from None
        except BaseException:
            await self.close()
            raise

    def failure(self, done: GenerationDone) -> ApiError | None:
        """The error a finished choice reports to its client, if it did not end normally."""
        ended = self.generation.ended_reason if self.generation is not None else None
        if ended is not None and done.finish_reason == FINISH_ABORT:
            return ApiError(403, f"The generation was stopped: {ended}.", code="account_disabled")
        return _failure(done)

    @property
    def _prompt_param(self) -> str:
        return "messages" if self.api.messages is not None else "prompt"

    async def _count_prompt(self) -> int:
        generator = self.state.generator
        try:
            if self.api.messages is not None:
                return await run_in_threadpool(generator.count_prompt_tokens, self.api.messages)
            return await run_in_threadpool(generator.count_text_tokens, self.api.prompt)
        except GenerationError as exc:  # e.g. the chat template refuses this conversation
            raise _bad(str(exc), self._prompt_param) from None

    async def events(self) -> AsyncIterator[tuple[int, GenerationEvent]]:
        """(choice index, event) from every choice as they come; each choice's last event is
        its GenerationDone."""
        if self.generation is None:
            return
        async for event in self.generation.events():
            choice = self.choices[event.index]
            if isinstance(event, TextDelta):
                choice.text.append(event.text)
                choice.logprobs.extend(event.logprobs)
            elif choice.done is None:
                choice.done = event
            yield event.index, event

    async def close(self) -> None:
        """Settle the generation (abort what is unfinished, record usage and metrics, free the
        gates). Idempotent; shielded, so a cancelled request (the client left) still settles."""
        if self.generation is None:
            return
        with anyio.CancelScope(shield=True):
            await self.generation.close()

    def usage(self) -> dict[str, int]:
        completion = sum(c.done.completion_tokens for c in self.choices if c.done is not None)
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": completion,
                "total_tokens": self.prompt_tokens + completion}


def _failure(done: GenerationDone) -> ApiError | None:
    """The error a finished choice reports to its client, if it did not end normally."""
    if done.finish_reason == FINISH_ERROR:
        if done.error_code == ERROR_QUEUE_TIMEOUT:
            return ApiError(503, "The request waited too long in the queue; the server is busy.",
                            type="server_error", code="queue_timeout",
                            retry_after_s=UNAVAILABLE_RETRY_AFTER_S)
        return _server_error(f"The model failed while generating: {done.error or 'unknown error'}")
    if done.finish_reason == FINISH_ABORT:  # the server stopped it (shutting down)
        return ApiError(503, "The generation was cancelled by the server.", type="server_error",
                        code="cancelled", retry_after_s=UNAVAILABLE_RETRY_AFTER_S)
    return None


# -- response shapes ------------------------------------------------------------------------


def _chat_logprobs(entries: list[TokenLogprob]) -> dict[str, Any]:
    def item(lp: TokenLogprob) -> dict[str, Any]:
        return {"token": lp.token, "logprob": lp.logprob, "bytes": list(lp.bytes)}

    return {"content": [{**item(lp), "top_logprobs": [item(t) for t in lp.top]} for lp in entries],
            "refusal": None}


class _TextOffsets:
    """Character offsets of tokens in the completion text, from their raw bytes."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._chars = 0

    def next(self, token_bytes: tuple[int, ...]) -> int:
        offset = self._chars
        self._chars += len(self._decoder.decode(bytes(token_bytes)))
        return offset


def _completion_logprobs(entries: list[TokenLogprob], offsets: _TextOffsets) -> dict[str, Any]:
    return {"tokens": [lp.token for lp in entries],
            "token_logprobs": [lp.logprob for lp in entries],
            "top_logprobs": [{t.token: t.logprob for t in lp.top} for lp in entries],
            "text_offset": [offsets.next(lp.bytes) for lp in entries]}


def _sse(data: dict[str, Any] | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False,
                                                         separators=(",", ":"))
    return f"data: {text}\n\n".encode()


class _Shapes:
    """Chat and text-completion bodies and chunks for one run."""

    def __init__(self, run: _Run, model: str) -> None:
        self.run, self.model = run, model
        self.chat = run.api.messages is not None
        self.want_logprobs = run.api.params.logprobs is not None
        self.offsets = [_TextOffsets() for _ in run.choices]

    def _logprobs(self, index: int, entries: list[TokenLogprob]) -> dict[str, Any] | None:
        if not self.want_logprobs:
            return None
        return _chat_logprobs(entries) if self.chat else _completion_logprobs(entries, self.offsets[index])

    def body(self) -> dict[str, Any]:
        choices = []
        for i, c in enumerate(self.run.choices):
            text = "".join(c.text)
            reason = c.done.finish_reason if c.done else None
            if self.chat:
                choices.append({"index": i, "message": {"role": "assistant", "content": text,
                                                        "refusal": None},
                                "logprobs": self._logprobs(i, c.logprobs), "finish_reason": reason})
            else:
                choices.append({"index": i, "text": text, "logprobs": self._logprobs(i, c.logprobs),
                                "finish_reason": reason})
        return {"id": self.run.id, "object": "chat.completion" if self.chat else "text_completion",
                "created": self.run.created, "model": self.model, "choices": choices,
                "usage": self.run.usage(), "system_fingerprint": None}

    def chunk(self, choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> bytes:
        data: dict[str, Any] = {
            "id": self.run.id, "object": "chat.completion.chunk" if self.chat else "text_completion",
            "created": self.run.created, "model": self.model, "choices": choices,
            "system_fingerprint": None}
        if self.run.api.include_usage:
            data["usage"] = usage
        return _sse(data)

    def _choice(self, index: int, text: str | None, role: bool = False,
                entries: list[TokenLogprob] | None = None, reason: str | None = None) -> dict[str, Any]:
        logprobs = self._logprobs(index, entries) if entries else None
        if not self.chat:
            return {"index": index, "text": text or "", "logprobs": logprobs, "finish_reason": reason}
        delta: dict[str, Any] = {}
        if role:
            delta["role"] = "assistant"
        if text is not None:
            delta["content"] = text
        return {"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": reason}

    def opening(self) -> list[bytes]:
        if not self.chat:
            return []
        return [self.chunk([self._choice(i, "", role=True)]) for i in range(len(self.run.choices))]

    def delta(self, index: int, event: TextDelta) -> bytes:
        return self.chunk([self._choice(index, event.text, entries=list(event.logprobs))])

    def finish(self, index: int, done: GenerationDone) -> bytes:
        return self.chunk([self._choice(index, None if self.chat else "", reason=done.finish_reason)])

    def usage_chunk(self) -> bytes:
        return self.chunk([], usage=self.run.usage())


# -- endpoints ------------------------------------------------------------------------------


def _model_card(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": _STARTED, "owned_by": "crescent"}


async def _list_models(request: Request, state: AppState) -> Response:
    await _authenticate(request)
    return JSONResponse({"object": "list", "data": [_model_card(state.generator.model_name)]})


async def _get_model(request: Request, state: AppState) -> Response:
    await _authenticate(request)
    name = request.path_params["model"]
    if name != state.generator.model_name:
        raise ApiError(404, f"The model `{name}` does not exist or you do not have access to it.",
                       param="model", code="model_not_found")
    return JSONResponse(_model_card(name))


async def _complete(request: Request, state: AppState, chat: bool) -> Response:
    user = await _authenticate(request)
    body = await _read_json(request)
    defaults = await run_in_threadpool(state.runtime_settings.get)
    api = parse_request(body, chat=chat, model_name=state.generator.model_name, defaults=defaults,
                        cache_salt=state.chat.generations.cache_salt(user.id))
    run = _Run(state, api, user, "chatcmpl" if chat else "cmpl")
    await run.start()
    shapes = _Shapes(run, state.generator.model_name)
    if api.stream:
        return await _open_stream(request, run, shapes)
    try:
        failure = await _until_disconnect(request, _collect(run))
    finally:
        await run.close()
    if failure is not None:
        raise failure
    return JSONResponse(shapes.body(), headers={"Cache-Control": "no-store"})


async def _collect(run: _Run) -> ApiError | None:
    async for _, event in run.events():
        if isinstance(event, GenerationDone) and (failure := run.failure(event)) is not None:
            return failure
    return None


async def _until_disconnect(request: Request, work: Awaitable[Any]) -> Any:
    """Run `work`; if the client disconnects first, cancel it (the caller then closes its run,
    which aborts the generations) and raise ClientDisconnect."""
    task = asyncio.ensure_future(work)

    async def watch() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(watch())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.gather(task, watcher, return_exceptions=True)
    if task.cancelled():
        log.info("client left before its reply was ready; generation aborted")
        raise ClientDisconnect()
    return task.result()


async def _open_stream(request: Request, run: _Run, shapes: _Shapes) -> Response:
    """Wait for the first event of the generation before answering, so that anything that ends
    the request before its first token (a queue deadline, the engine refusing it) is a plain
    HTTP error with its status and Retry-After, as without streaming; only then do the 200
    and the event stream start."""
    events = run.events()
    try:
        first = await _until_disconnect(request, anext(events, None))
        failure = run.failure(first[1]) if first is not None and isinstance(first[1], GenerationDone) else None
    except BaseException:
        await run.close()
        raise
    if failure is not None:
        await events.aclose()
        await run.close()
        raise failure
    return StreamingResponse(_stream_body(run, shapes, first, events), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def _stream_body(run: _Run, shapes: _Shapes, first: tuple[int, GenerationEvent] | None,
                       rest: AsyncIterator[tuple[int, GenerationEvent]]) -> AsyncIterator[bytes]:
    async def everything() -> AsyncIterator[tuple[int, GenerationEvent]]:
        if first is not None:
            yield first
        async for item in rest:
            yield item

    try:
        for chunk in shapes.opening():
            yield chunk
        failure = None
        async for index, event in everything():
            if isinstance(event, TextDelta):
                yield shapes.delta(index, event)
            elif (failure := run.failure(event)) is not None:
                break
            else:
                yield shapes.finish(index, event)
        if failure is not None:
            yield _sse(failure.body())
        elif run.api.include_usage:
            yield shapes.usage_chunk()
        yield _sse("[DONE]")
    finally:
        await run.close()


async def _chat_completions(request: Request, state: AppState) -> Response:
    return await _complete(request, state, chat=True)


async def _completions(request: Request, state: AppState) -> Response:
    return await _complete(request, state, chat=False)


async def _unknown(request: Request, state: AppState) -> Response:
    if request.url.path.rstrip("/") in _POST_ONLY:
        raise ApiError(405, f"{request.method} is not allowed on {request.url.path}; use POST.",
                       code="method_not_allowed")
    raise ApiError(404, f"Unknown API route {request.method} {request.url.path}.",
                   code="unknown_url")


_POST_ONLY = ("/v1/chat/completions", "/v1/completions")

routes = [
    Route("/v1/models", _endpoint(_list_models), methods=["GET"]),
    Route("/v1/models/{model:path}", _endpoint(_get_model), methods=["GET"]),
    Route("/v1/chat/completions", _endpoint(_chat_completions), methods=["POST"]),
    Route("/v1/completions", _endpoint(_completions), methods=["POST"]),
    Route("/v1/{rest:path}", _endpoint(_unknown),
          methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
]
