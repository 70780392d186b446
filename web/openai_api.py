"""The OpenAI-compatible HTTP API under ``/v1``: models, chat completions, completions.

``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /v1/chat/completions``,
``POST /v1/completions``: the shapes of OpenAI's API reference, streaming as server-sent events
(``data: {chunk}\\n\\n`` ... ``data: [DONE]\\n\\n``) or one JSON body. Authentication is
``Authorization: Bearer <API key>`` only (no cookie, hence no CSRF surface).

Parameters: model (must be the served model's name, else 404 model_not_found), messages
(roles system / developer (read as system) / user / assistant / tool; content a string or a
list of text parts) or prompt (a string or a list of one string), temperature [0, 2], top_p (0, 1],
max_tokens / max_completion_tokens (<= the admin's max, else 400; omitted: the admin's default,
cut to what the context window leaves), stop (a string or up to 4), seed, n [1, 8] (n samples
that the engine runs as one request sharing the prompt; the i-th seeded seed + i), presence_penalty / frequency_penalty [-2, 2], logprobs / top_logprobs
(chat: bool + [0, 20]; completions: [0, 20]), stream, stream_options.include_usage, user
(ignored). Omitted temperature and top_p take the admin's defaults (as vLLM takes the model's).
Structured output (enforced by grammar-constrained decoding in the engine): response_format
(text / json_object / json_schema {name, schema, strict, description}; chat and completions),
and vLLM's extension fields structured_outputs {json | regex | choice | grammar | json_object}
and guided_json / guided_regex / guided_choice / guided_grammar (web/openai_format_request.py).
Tool calls (chat): tools (type function: name, description, parameters JSON Schema, strict),
tool_choice (none / auto / required / {type: function, function: {name}}), parallel_tool_calls
(default true); history messages: assistant with tool_calls (content may be null) and tool
(tool_call_id, content) answering an earlier call (web/openai_tools_request.py); replies carry
message.tool_calls with finish_reason "tool_calls", streamed as delta.tool_calls
(web/openai_shapes.py). How tools, calls, results and schemas reach the prompt:
backend/tool_prompt.py and backend/schema_prompt.py. A schema that is not a valid JSON Schema,
or one the engine cannot compile, is a 400 naming the field (response_format, tools[i]...,
structured_outputs, guided_json).
Unknown fields are ignored as OpenAI does; known ones we cannot honour (functions /
function_call, logit_bias, echo, suffix, best_of > n, a response_format together with tools
that may be called) are refused with 400.

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
text it was sent. Requests are validated in web/openai_request.py and answered in the shapes of
web/openai_shapes.py; this module runs them; the lifecycle is backend's.
"""

from __future__ import annotations

import asyncio
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

from backend import tracing
from backend.auth import UserInfo
from backend.errors import DomainError
from backend.generation import Generation
from backend.generator import (ERROR_QUEUE_TIMEOUT, FINISH_ABORT, FINISH_ERROR, GenerationDone,
                               GenerationError, GenerationEvent, GeneratorUnavailable,
                               InvalidGenerationParams, InvalidOutputConstraint, PromptTooLong,
                               TextDelta, TokenLogprob)
from backend.generator import prepare as prepare_generation
from backend.limits import Overloaded, RateLimited
from web import session
from web.openai_request import (UNAVAILABLE_RETRY_AFTER_S, ApiError, ApiRequest, bad_request, read_json,
                                server_error, parse_request)
from web.openai_shapes import Shapes, sse
from web.state import AppState, app_state

log = logging.getLogger(__name__)

USAGE_SOURCE = "api"
_STARTED = int(time.time())


def _from_domain(exc: Exception) -> ApiError:
    """Limiter, admission and generator refusals -> their OpenAI-shaped errors."""
    if isinstance(exc, RateLimited):
        return ApiError(429, exc.message, type="rate_limit_error", code="rate_limit_exceeded",
                        retry_after_s=exc.retry_after_s)
    if isinstance(exc, Overloaded):
        # "overloaded" (the admission queue is full) or "unavailable" (the shared limits in
        # Redis cannot be checked: backend.limits.LimitsUnavailable).
        return ApiError(503, exc.message, type="server_error", code=exc.code,
                        retry_after_s=exc.retry_after_s)
    if isinstance(exc, GeneratorUnavailable):
        return ApiError(503, str(exc) or "The model is not ready.", type="server_error",
                        code="unavailable", retry_after_s=UNAVAILABLE_RETRY_AFTER_S)
    if isinstance(exc, InvalidOutputConstraint):  # the engine cannot compile the constraint
        return bad_request(str(exc), param=exc.param, code="invalid_output_constraint")
    if isinstance(exc, InvalidGenerationParams):
        message = str(exc)
        return bad_request(message, param=message.split(" ", 1)[0] if message else None)
    if isinstance(exc, DomainError):
        return bad_request(exc.message, code=exc.code)
    return server_error()


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
            return server_error().response()

    return endpoint


async def _authenticate(request: Request) -> UserInfo:
    if session.bearer_token(request) is None:
        raise ApiError(401, "You didn't provide an API key. Send it as 'Authorization: Bearer "
                       "<key>'; create one on your account page.", code="invalid_api_key")
    user = await session.user_for_bearer(request)
    if user is None:
        raise ApiError(401, "Incorrect API key provided.", code="invalid_api_key")
    return user


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
        # One trace per request (backend/tracing.py); close() ends its root span.
        self.span = tracing.start_root("v1.request", {"endpoint": prefix, "user_id": user.id, "n": api.n,
                                                      "stream": api.stream})
        self.trace_id = tracing.trace_id_of(self.span)

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
            await prepare_generation(state.generator, params)  # a new grammar: built off the loop
            self.generation = await run_in_threadpool(generations.admit, self.user.id, USAGE_SOURCE,
                                                      self.prompt_tokens, api.n)
            self.generation.start(self.id, params, messages=api.messages, prompt=api.prompt)
        except (RateLimited, Overloaded) as exc:
            raise _from_domain(exc) from None
        except PromptTooLong as exc:
            await self.close()
            raise bad_request(str(exc), self._prompt_param, "context_length_exceeded") from None
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
        with tracing.span("prompt.assemble") as span:
            count = await self._count_prompt_tokens()
            span.set_attribute("prompt_tokens", count)
            return count

    async def _count_prompt_tokens(self) -> int:
        generator = self.state.generator
        try:
            if self.api.messages is not None:
                return await run_in_threadpool(generator.count_prompt_tokens, self.api.messages,
                                               self.api.params.tools)
            return await run_in_threadpool(generator.count_text_tokens, self.api.prompt)
        except GenerationError as exc:  # e.g. the chat template refuses this conversation
            raise bad_request(str(exc), self._prompt_param) from None

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
        if self.generation is not None:
            with anyio.CancelScope(shield=True):
                await self.generation.close()
        if self.span.is_recording():
            self.span.end()

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
        return server_error(f"The model failed while generating: {done.error or 'unknown error'}")
    if done.finish_reason == FINISH_ABORT:  # the server stopped it (shutting down)
        return ApiError(503, "The generation was cancelled by the server.", type="server_error",
                        code="cancelled", retry_after_s=UNAVAILABLE_RETRY_AFTER_S)
    return None


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
    body = await read_json(request)
    defaults = await run_in_threadpool(state.runtime_settings.get)
    # Off the event loop: the meta-schema checks of large schemas and tools take seconds.
    api = await run_in_threadpool(
        parse_request, body, chat=chat, model_name=state.generator.model_name, defaults=defaults,
        cache_salt=state.chat.generations.cache_salt(user.id))
    run = _Run(state, api, user, "chatcmpl" if chat else "cmpl")
    with tracing.use(run.span):
        try:
            await run.start()
        except BaseException:
            await run.close()
            raise
        shapes = Shapes(run, state.generator.model_name)
        if api.stream:
            return await _open_stream(request, run, shapes)
        try:
            failure = await _until_disconnect(request, _collect(run))
        finally:
            await run.close()
    if failure is not None:
        raise failure
    return JSONResponse(shapes.body(), headers={"Cache-Control": "no-store", "X-Trace-Id": run.trace_id})


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


async def _open_stream(request: Request, run: _Run, shapes: Shapes) -> Response:
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
    body = tracing.iterate_within(run.span, _stream_body(run, shapes, first, events))
    return StreamingResponse(body, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no",
                                      "X-Trace-Id": run.trace_id})


async def _stream_body(run: _Run, shapes: Shapes, first: tuple[int, GenerationEvent] | None,
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
                if chunk := shapes.delta(index, event):
                    yield chunk
            elif (failure := run.failure(event)) is not None:
                break
            else:
                yield shapes.finish(index, event)
        if failure is not None:
            yield sse(failure.body())
        elif run.api.include_usage:
            yield shapes.usage_chunk()
        yield sse("[DONE]")
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
