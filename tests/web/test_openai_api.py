"""The OpenAI-compatible API (/v1) through the app with a scripted generator, driven by the
official `openai` client (over the TestClient's transport) and by raw HTTP where the client
hides the wire format."""

from __future__ import annotations

import json
from typing import Any

import anyio
import openai
import pytest
from sqlalchemy import select

from backend.db import create_db_engine, make_session_factory
from backend.generator import ChatMessage
from backend.admission import AdmissionController
from backend.models import UsageRecord
from tests.web.conftest import app_state, sign_up, use_session, user_id, wait_until

MODEL = "fake-model"
HI = [{"role": "user", "content": "hi there"}]
REPLY = "Hello, **world**!"  # the fake's four tokens


@pytest.fixture
def keys(client):
    """(user id, API key) of a fresh user "alice" (the first account: an admin); cookies cleared."""
    token = sign_up(client, "alice")
    uid = user_id(client, token)
    _, secret = app_state(client).api_keys.create_key(uid, "tests")
    use_session(client, None)
    return uid, secret


@pytest.fixture
def api(client, keys) -> openai.OpenAI:
    return openai.OpenAI(base_url="http://testserver/v1", api_key=keys[1], http_client=client,
                         max_retries=0)


def post(client, keys, path: str, body: Any, **kwargs):
    return client.post(path, content=body if isinstance(body, (bytes, str)) else json.dumps(body),
                       headers={"Authorization": f"Bearer {keys[1]}", "Content-Type": "application/json"},
                       **kwargs)


def sse_events(text: str) -> list[Any]:
    """The data of every server-sent event, JSON-decoded except the final "[DONE]"."""
    assert text.endswith("\n\n")
    events = []
    for block in text.split("\n\n")[:-1]:
        assert block.startswith("data: "), block
        data = block[len("data: "):]
        events.append(data if data == "[DONE]" else json.loads(data))
    return events


def usage_rows(settings) -> list[tuple[str, int, int]]:
    engine = create_db_engine(settings.database_url)
    try:
        with make_session_factory(engine)() as db:
            rows = db.scalars(select(UsageRecord)).all()
            return [(r.source, r.prompt_tokens, r.completion_tokens) for r in rows]
    finally:
        engine.dispose()


def metric(client, line_start: str) -> float:
    for line in app_state(client).metrics.render().decode().splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


# -- models and auth ------------------------------------------------------------------------


def test_models_list_and_retrieve(api):
    assert [m.id for m in api.models.list()] == [MODEL]
    assert api.models.retrieve(MODEL).owned_by == "crescent"
    with pytest.raises(openai.NotFoundError):
        api.models.retrieve("gpt-4o")


def test_a_bad_or_missing_key_is_401_in_the_openai_shape(client, keys, fake):
    bad = openai.OpenAI(base_url="http://testserver/v1", api_key="crk_nope", http_client=client, max_retries=0)
    with pytest.raises(openai.AuthenticationError) as caught:
        bad.chat.completions.create(model=MODEL, messages=HI)
    assert caught.value.code == "invalid_api_key"
    response = client.get("/v1/models")
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}
    assert fake.requests == []


def test_a_session_cookie_is_not_an_api_credential(client, fake):
    sign_up(client, "carol")  # the cookie stays on the client
    response = client.post("/v1/chat/completions", json={"model": MODEL, "messages": HI})
    assert response.status_code == 401 and fake.requests == []


def test_revoked_keys_and_disabled_users_are_refused(client, keys, fake):
    uid, secret = keys
    state = app_state(client)
    view, other = state.api_keys.create_key(uid, "second")
    state.api_keys.revoke_key(uid, view.id)
    assert post(client, (uid, other), "/v1/chat/completions", {"model": MODEL, "messages": HI}).status_code == 401
    bob = user_id(client, sign_up(client, "bob"))
    use_session(client, None)
    _, bob_key = state.api_keys.create_key(bob, "bob")
    assert post(client, (bob, bob_key), "/v1/chat/completions", {"model": MODEL, "messages": HI}).status_code == 200
    state.users.set_status(uid, bob, "disabled")
    assert post(client, (bob, bob_key), "/v1/chat/completions", {"model": MODEL, "messages": HI}).status_code == 401
    assert len(fake.requests) == 1


# -- chat completions -----------------------------------------------------------------------


def test_chat_non_streaming_maps_every_parameter(api, fake, keys, client):
    reply = api.chat.completions.create(
        model=MODEL, user="ignored", messages=[
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "hi "}, {"type": "text", "text": "there"}]},
            {"role": "assistant", "content": None},
            {"role": "user", "content": "again"}],
        temperature=0.5, top_p=0.9, max_tokens=10, stop="END", seed=42, presence_penalty=0.5,
        frequency_penalty=-0.25, extra_body={"some_future_field": 1})
    (request_id, messages, params), = fake.requests
    assert messages == [ChatMessage("system", "Be brief."), ChatMessage("user", "hi there"),
                        ChatMessage("assistant", ""), ChatMessage("user", "again")]
    assert (params.temperature, params.top_p, params.max_tokens, params.stop, params.seed) == (0.5, 0.9, 10, ("END",), 42)
    assert (params.presence_penalty, params.frequency_penalty, params.logprobs) == (0.5, -0.25, None)
    # One prefix-cache namespace per user, the same for chat and /v1 (backend.generation).
    assert params.cache_salt == app_state(client).chat.cache_salt(keys[0]) != app_state(client).chat.cache_salt("x")
    assert reply.object == "chat.completion" and reply.model == MODEL and request_id.startswith(reply.id)
    choice, = reply.choices
    assert (choice.index, choice.message.role, choice.message.content) == (0, "assistant", REPLY)
    assert choice.finish_reason == "stop" and choice.logprobs is None
    prompt_tokens = fake.count_prompt_tokens(messages)
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.total_tokens) == (
        prompt_tokens, 4, prompt_tokens + 4)


def test_omitted_parameters_take_the_admins_defaults(api, fake, client):
    app_state(client).runtime_settings.update(
        {"default_max_tokens": 3, "default_temperature": 0.3, "default_top_p": 0.8}, None)
    reply = api.chat.completions.create(model=MODEL, messages=HI)
    params = fake.requests[0][2]
    assert (params.max_tokens, params.temperature, params.top_p, params.seed, params.stop) == (3, 0.3, 0.8, None, ())
    assert reply.choices[0].finish_reason == "length" and reply.usage.completion_tokens == 3


def test_chat_streaming_sends_role_deltas_finish_usage_and_done(client, keys, fake):
    response = post(client, keys, "/v1/chat/completions", {
        "model": MODEL, "messages": HI, "stream": True, "stream_options": {"include_usage": True}})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    first, *deltas, finish, usage, _ = events
    assert first["choices"] == [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                 "logprobs": None, "finish_reason": None}]
    assert "".join(d["choices"][0]["delta"]["content"] for d in deltas) == REPLY
    assert finish["choices"][0]["finish_reason"] == "stop" and finish["choices"][0]["delta"] == {}
    assert {e["id"] for e in events[:-1]} == {first["id"]}
    assert all(e["object"] == "chat.completion.chunk" and e["usage"] is None for e in events[:-2])
    prompt_tokens = fake.count_prompt_tokens([ChatMessage("user", "hi there")])
    assert usage["choices"] == [] and usage["usage"] == {
        "prompt_tokens": prompt_tokens, "completion_tokens": 4, "total_tokens": prompt_tokens + 4}


def test_chat_streaming_through_the_client(api):
    stream = api.chat.completions.create(model=MODEL, messages=HI, stream=True)
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == REPLY
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks)  # no usage chunk unless asked


def test_n_is_passed_to_the_engine_as_one_request(api, fake):
    reply = api.chat.completions.create(model=MODEL, messages=HI, n=3, seed=7, temperature=1.0)
    # The engine runs the n samples (seeding sample i with seed + i); no fan-out here.
    (_, _, params), = fake.requests
    assert (params.n, params.seed) == (3, 7)
    assert [c.index for c in reply.choices] == [0, 1, 2]
    assert all(c.message.content == REPLY for c in reply.choices)
    assert reply.usage.completion_tokens == 12
    assert reply.usage.prompt_tokens == fake.count_prompt_tokens([ChatMessage("user", "hi there")])
    unseeded = api.chat.completions.create(model=MODEL, messages=HI, n=2)
    assert len(unseeded.choices) == 2 and fake.requests[1][2].seed is None and fake.requests[1][2].n == 2


def test_n_streaming_interleaves_choices(client, keys):
    events = sse_events(post(client, keys, "/v1/chat/completions",
                             {"model": MODEL, "messages": HI, "n": 2, "stream": True}).text)
    for index in (0, 1):
        mine = [e["choices"][0] for e in events[:-1] if e["choices"][0]["index"] == index]
        assert mine[0]["delta"]["role"] == "assistant"
        assert "".join(c["delta"].get("content") or "" for c in mine) == REPLY
        assert mine[-1]["finish_reason"] == "stop"


def test_chat_logprobs_have_the_openai_shape(api, fake):
    reply = api.chat.completions.create(model=MODEL, messages=HI, logprobs=True, top_logprobs=2)
    assert fake.requests[0][2].logprobs == 2
    content = reply.choices[0].logprobs.content
    assert [e.token for e in content] == ["Hello", ", ", "**world**", "!"]
    assert [e.logprob for e in content] == pytest.approx([-0.1, -0.2, -0.3, -0.4])
    assert content[0].bytes == list(b"Hello")
    assert [(t.token, t.logprob) for t in content[2].top_logprobs] == [("**world**", pytest.approx(-0.3)),
                                                                        ("alt1", pytest.approx(-1.3))]
    plain = api.chat.completions.create(model=MODEL, messages=HI, logprobs=True)
    assert fake.requests[1][2].logprobs == 0 and plain.choices[0].logprobs.content[0].top_logprobs == []


def test_streamed_chat_logprobs_ride_with_their_delta(client, keys):
    events = sse_events(post(client, keys, "/v1/chat/completions", {
        "model": MODEL, "messages": HI, "stream": True, "logprobs": True, "top_logprobs": 1}).text)
    deltas = [e["choices"][0] for e in events[1:-2]]
    assert [d["logprobs"]["content"][0]["token"] for d in deltas] == [d["delta"]["content"] for d in deltas]


# -- completions ----------------------------------------------------------------------------


def test_completions_send_the_raw_prompt(api, fake):
    reply = api.completions.create(model=MODEL, prompt="<|im_start|>user\nhi", max_tokens=2, stop=["a", "b"])
    (_, messages, params), = fake.requests
    assert messages == [ChatMessage("prompt", "<|im_start|>user\nhi")]
    assert params.stop == ("a", "b") and params.max_tokens == 2
    assert reply.object == "text_completion" and reply.choices[0].text == "Hello, "
    assert reply.choices[0].finish_reason == "length"
    assert reply.usage.prompt_tokens == fake.count_text_tokens("<|im_start|>user\nhi")
    assert reply.usage.completion_tokens == 2
    api.completions.create(model=MODEL, prompt=["one string"])
    assert fake.requests[1][1] == [ChatMessage("prompt", "one string")]


def test_completions_logprobs_and_text_offsets(api, fake):
    lp = api.completions.create(model=MODEL, prompt="hi", logprobs=2).choices[0].logprobs
    assert lp.tokens == ["Hello", ", ", "**world**", "!"]
    assert lp.token_logprobs == pytest.approx([-0.1, -0.2, -0.3, -0.4])
    assert lp.text_offset == [0, 5, 7, 16]
    assert lp.top_logprobs[0] == {"Hello": pytest.approx(-0.1), "alt1": pytest.approx(-1.1)}


def test_completions_stream(client, keys):
    events = sse_events(post(client, keys, "/v1/completions",
                             {"model": MODEL, "prompt": "hi", "stream": True}).text)
    assert events[-1] == "[DONE]"
    choices = [e["choices"][0] for e in events[:-1]]
    assert "".join(c["text"] for c in choices) == REPLY and choices[-1]["finish_reason"] == "stop"
    assert all(e["object"] == "text_completion" for e in events[:-1])


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path, change, param", [
    ("/v1/chat/completions", {"temperature": 2.5}, "temperature"),
    ("/v1/chat/completions", {"temperature": "hot"}, "temperature"),
    ("/v1/chat/completions", {"top_p": 0}, "top_p"),
    ("/v1/chat/completions", {"n": 9}, "n"),
    ("/v1/chat/completions", {"n": 0}, "n"),
    ("/v1/chat/completions", {"seed": -1}, "seed"),
    ("/v1/chat/completions", {"presence_penalty": 2.5}, "presence_penalty"),
    ("/v1/chat/completions", {"frequency_penalty": True}, "frequency_penalty"),
    ("/v1/chat/completions", {"max_tokens": 0}, "max_tokens"),
    ("/v1/chat/completions", {"stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ("/v1/chat/completions", {"stop": [""]}, "stop"),
    ("/v1/chat/completions", {"messages": []}, "messages"),
    ("/v1/chat/completions", {"messages": "hi"}, "messages"),
    ("/v1/chat/completions", {"messages": [{"role": "function", "content": "x"}]}, "messages[0].role"),
    ("/v1/chat/completions", {"messages": [{"role": "tool", "content": "x"}]}, "messages[0].tool_call_id"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]},
     "messages[0].content"),
    ("/v1/chat/completions", {"top_logprobs": 2}, "top_logprobs"),
    ("/v1/chat/completions", {"logprobs": True, "top_logprobs": 21}, "top_logprobs"),
    ("/v1/chat/completions", {"stream_options": {"include_usage": True}}, "stream_options"),
    ("/v1/chat/completions", {"tools": [{"type": "function"}]}, "tools[0].function"),
    ("/v1/chat/completions", {"logit_bias": {"1": 5}}, "logit_bias"),
    ("/v1/chat/completions", {"model": None}, "model"),
    ("/v1/completions", {"prompt": ["a", "b"]}, "prompt"),
    ("/v1/completions", {"prompt": [1, 2, 3]}, "prompt"),
    ("/v1/completions", {"prompt": ""}, "prompt"),
    ("/v1/completions", {"echo": True}, "echo"),
    ("/v1/completions", {"logprobs": 30}, "logprobs"),
])
def test_bad_parameters_are_400_naming_the_param(client, keys, fake, path, change, param):
    body = {"model": MODEL, **({"messages": HI} if "chat" in path else {"prompt": "hi"}), **change}
    response = post(client, keys, path, body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param and error["message"]
    assert fake.requests == []


def test_bad_parameter_through_the_client(api):
    with pytest.raises(openai.BadRequestError) as caught:
        api.chat.completions.create(model=MODEL, messages=HI, temperature=9)
    assert caught.value.param == "temperature"


def test_unknown_model_is_404_model_not_found(api, fake):
    with pytest.raises(openai.NotFoundError) as caught:
        api.chat.completions.create(model="gpt-4o", messages=HI)
    assert caught.value.code == "model_not_found" and fake.requests == []


def test_max_tokens_over_the_admins_max_is_400(api, client, fake):
    app_state(client).runtime_settings.update({"default_max_tokens": 8, "max_max_tokens": 100}, None)
    with pytest.raises(openai.BadRequestError) as caught:
        api.chat.completions.create(model=MODEL, messages=HI, max_tokens=101)
    assert caught.value.param == "max_tokens" and "100" in caught.value.message
    with pytest.raises(openai.BadRequestError) as caught:
        api.chat.completions.create(model=MODEL, messages=HI, max_completion_tokens=500)
    assert caught.value.param == "max_completion_tokens"
    api.chat.completions.create(model=MODEL, messages=HI, max_completion_tokens=100)
    assert [p.max_tokens for _, _, p in fake.requests] == [100]


def test_a_prompt_too_long_for_the_window_is_400_context_length_exceeded(api, fake):
    with pytest.raises(openai.BadRequestError) as caught:
        api.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "word " * 100}],
                                    max_tokens=2000)
    assert caught.value.code == "context_length_exceeded" and caught.value.param == "messages"
    # Without max_tokens the default is cut to what the window leaves.
    fake.context_length = 120
    api.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "word " * 100}])
    prompt_tokens = fake.count_prompt_tokens([ChatMessage("user", "word " * 100)])
    assert fake.requests[-1][2].max_tokens == 120 - prompt_tokens


def test_malformed_and_oversized_bodies(client, keys, fake):
    response = post(client, keys, "/v1/chat/completions", b"{not json")
    assert response.status_code == 400 and response.json()["error"]["type"] == "invalid_request_error"
    assert post(client, keys, "/v1/chat/completions", b"[1, 2]").status_code == 400
    huge = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "x" * (1 << 20)}]})
    response = post(client, keys, "/v1/chat/completions", huge)
    assert response.status_code == 413 and response.json()["error"]["code"] == "request_too_large"
    assert fake.requests == []


def test_unknown_v1_routes_answer_in_the_openai_shape(client, keys):
    response = post(client, keys, "/v1/embeddings", {"model": MODEL, "input": "x"})
    assert response.status_code == 404 and response.json()["error"]["code"] == "unknown_url"


def test_an_engine_error_is_500_or_an_error_event(api, client, keys, fake):
    fake.fail_after = 2
    with pytest.raises(openai.InternalServerError):
        api.chat.completions.create(model=MODEL, messages=HI)
    events = sse_events(post(client, keys, "/v1/chat/completions",
                             {"model": MODEL, "messages": HI, "stream": True}).text)
    assert events[-1] == "[DONE]"
    assert events[-2]["error"]["type"] == "server_error" and "exploded" in events[-2]["error"]["message"]
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events[:-2]) == "Hello, "
    with pytest.raises(openai.APIError):
        list(api.chat.completions.create(model=MODEL, messages=HI, stream=True))


# -- limits, admission, usage, metrics ------------------------------------------------------


def test_rate_limit_is_429_with_retry_after(api, client, fake):
    app_state(client).runtime_settings.update({"requests_per_minute": 1}, None)
    api.chat.completions.create(model=MODEL, messages=HI)
    with pytest.raises(openai.RateLimitError) as caught:
        api.chat.completions.create(model=MODEL, messages=HI)
    assert caught.value.code == "rate_limit_exceeded"
    assert 1 <= int(caught.value.response.headers["retry-after"]) <= 60
    assert len(fake.requests) == 1
    assert metric(client, 'crescent_requests_rejected_total{kind="rate_limited"}') == 1


def test_a_full_admission_queue_is_503_with_retry_after(api, client, fake):
    state = app_state(client)
    # The gate every generation passes (backend.generation.Generations), chat and /v1 alike.
    state.admission = state.chat.generations.admission = AdmissionController(
        max_waiting_requests=1, max_waiting_prompt_tokens=1000, retry_after_s=7)
    waiting = state.admission.admit(10)  # someone else's request, not started yet
    with pytest.raises(openai.InternalServerError) as caught:
        api.chat.completions.create(model=MODEL, messages=HI)
    assert caught.value.status_code == 503 and caught.value.response.headers["retry-after"] == "7"
    assert caught.value.code == "overloaded" and fake.requests == []
    waiting.release()
    api.chat.completions.create(model=MODEL, messages=HI, n=2)
    assert state.admission.snapshot()["waiting_requests"] == 0


def test_usage_is_recorded_as_api_and_the_lease_released(api, client, keys, settings, fake):
    app_state(client).runtime_settings.update({"max_concurrent_generations": 1}, None)
    for _ in range(3):  # one slot: each request must give it back
        reply = api.chat.completions.create(model=MODEL, messages=HI, n=2)
    with pytest.raises(openai.BadRequestError):  # a failed start gives the slot back too
        api.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "w " * 3000}], max_tokens=5)
    api.completions.create(model=MODEL, prompt="hi")
    rows = usage_rows(settings)
    assert rows[:3] == [("api", reply.usage.prompt_tokens, 8)] * 3 and len(rows) == 4
    assert app_state(client).limiter.active(keys[0]) == 0
    assert metric(client, 'crescent_requests_finished_total{finish_reason="stop",source="api"}') == 7


# -- a client that leaves -------------------------------------------------------------------


async def _drive(app, secret: str, path: str, body: dict[str, Any], leave_after_chunks: int | None,
                 leave_when=None) -> list[dict[str, Any]]:
    """Send one request straight to the ASGI app and disconnect after `leave_after_chunks`
    response body chunks (or once `leave_when()` is true); returns the messages it sent."""
    sent: list[dict[str, Any]] = []
    leave = anyio.Event()
    incoming = [{"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}]

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop(0)
        await leave.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        chunks = sum(1 for m in sent if m["type"] == "http.response.body" and m.get("body"))
        if leave_after_chunks is not None and chunks >= leave_after_chunks:
            leave.set()

    async def watch() -> None:
        while not leave_when():
            await anyio.sleep(0.005)
        leave.set()

    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
             "root_path": "", "client": ("127.0.0.1", 5000), "server": ("testserver", 80), "state": {},
             "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"),
                         (b"authorization", f"Bearer {secret}".encode())]}
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            if leave_when is not None:
                tg.start_soon(watch)
            await app(scope, receive, send)
            tg.cancel_scope.cancel()
    return sent


@pytest.fixture
def holding(fake):
    fake.hold_after = 2  # pauses after two deltas until released or aborted
    return fake


def test_leaving_a_stream_aborts_the_generation(client, keys, holding, settings):
    body = {"model": MODEL, "messages": HI, "stream": True}
    sent = client.portal.call(_drive, client.app, keys[1], "/v1/chat/completions", body, 3)  # role chunk + two deltas
    (request_id, _, _), = holding.requests
    wait_until(lambda: request_id in holding.abort_calls, what="abort")
    assert request_id in holding.closed_early and request_id not in holding.finished
    text = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body").decode()
    assert "[DONE]" not in text and "Hello" in text
    assert app_state(client).limiter.active(keys[0]) == 0
    assert [source for source, _, _ in usage_rows(settings)] == ["api"]
    assert metric(client, 'crescent_requests_finished_total{finish_reason="abort",source="api"}') == 1


def test_leaving_before_a_non_streamed_reply_aborts_it(client, keys, holding):
    body = {"model": MODEL, "prompt": "hi", "n": 2}
    client.portal.call(_drive, client.app, keys[1], "/v1/completions", body, None,
                       lambda: len(holding.requests) == 1)
    ids = [rid for rid, _, _ in holding.requests]
    assert holding.requests[0][2].n == 2
    wait_until(lambda: all(rid in holding.abort_calls for rid in ids), what="aborts")
    assert not any(rid in holding.finished for rid in ids)
    assert app_state(client).limiter.active(keys[0]) == 0


# -- a stream starts with its first event (QA of issue 5) ---------------------------------------


def _queue_timeout(fake, monkeypatch) -> None:
    from backend.generator import FINISH_ERROR, GenerationDone

    async def events(request_id, prompt_tokens, params):
        fake.finished[request_id] = FINISH_ERROR
        yield GenerationDone(FINISH_ERROR, prompt_tokens, 0, error="queue_timeout: waited past 300 s",
                             error_code="queue_timeout")

    monkeypatch.setattr(fake, "_events", events)


def test_a_queue_deadline_before_the_first_token_is_a_plain_503_when_streaming(api, client, keys, fake,
                                                                               monkeypatch):
    _queue_timeout(fake, monkeypatch)
    for n in (1, 2):
        response = post(client, keys, "/v1/chat/completions", {"model": MODEL, "messages": HI, "stream": True, "n": n})
        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == "5"
        assert response.json()["error"]["code"] == "queue_timeout"
    with pytest.raises(openai.InternalServerError) as caught:
        api.completions.create(model=MODEL, prompt="hi", stream=True)
    assert caught.value.status_code == 503 and caught.value.code == "queue_timeout"
    state = app_state(client)
    assert state.admission.snapshot()["waiting_requests"] == 0 and state.limiter.active(keys[0]) == 0


def test_a_stream_whose_first_event_is_a_token_still_streams(client, keys, fake):
    fake.fail_after = 1  # one token, then the engine fails: 200 and an error event, as before
    response = post(client, keys, "/v1/chat/completions", {"model": MODEL, "messages": HI, "stream": True})
    assert response.status_code == 200
    events = sse_events(response.text)
    assert events[-1] == "[DONE]" and "exploded" in events[-2]["error"]["message"]


def test_get_on_a_post_route_is_405_in_the_openai_shape(client, keys):
    for path in ("/v1/chat/completions", "/v1/completions"):
        response = client.get(path, headers={"Authorization": f"Bearer {keys[1]}"})
        assert response.status_code == 405 and response.headers["allow"] == "POST"
        assert response.json()["error"]["code"] == "method_not_allowed"
