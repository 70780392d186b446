"""The OpenAI-compatible API through the official `openai` client, against the real server and
the real model (the session's server from conftest).

Oracles: the model is deterministic at temperature 0 and with a seed, so each test compares the
server with itself under a different route (streamed vs not, n=2 vs two seeded calls, a stop
string vs the text without it) or with a reference run; the abort test counts the tokens the
engine generated (from /metrics) against a run that was not abandoned. Replies are kept short:
the model makes about 25 tokens/s on two CPU cores.
"""

from __future__ import annotations

import re
import time
import uuid

import httpx
import openai
import pytest

from .conftest import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# Both engine paths answer it the same way (the France question is a near-tie at its first token).
QUESTION = [{"role": "user", "content": "What is the capital of Germany?"}]
# A prompt the model answers at length: its greedy reply does not end within COUNT_TOKENS.
COUNTING = [{"role": "user", "content": "Count from 1 to 200, separated by commas."}]
COUNT_TOKENS = 64
_CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]*)">')


def _csrf(http: httpx.Client, path: str) -> str:
    match = _CSRF_META.search(http.get(path, headers={"Accept": "text/html"}).text)
    assert match, f"no csrf-token meta tag on {path}"
    return match.group(1)


def _log_in(http: httpx.Client, username: str, signup: bool = False) -> None:
    path = "/signup" if signup else "/login"
    response = http.post(path, data={"username": username, "password": PASSWORD,
                                     "csrf_token": _csrf(http, path)})
    assert response.status_code == 303, response.text[:500]


@pytest.fixture(scope="module")
def api_key(server: str) -> str:
    """A key of a new (non-admin) account, made the way a person does: sign up, then create a
    key through the account page's JSON endpoint."""
    with httpx.Client(base_url=server, follow_redirects=False, timeout=30) as http:
        _log_in(http, "api-" + uuid.uuid4().hex[:10], signup=True)
        response = http.post("/api/account/keys", json={"name": "e2e"},
                             headers={"X-CSRF-Token": _csrf(http, "/account")})
        assert response.status_code == 201, response.text
        return response.json()["secret"]


@pytest.fixture(scope="module")
def client(server: str, api_key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=server + "/v1", api_key=api_key, max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def model(client: openai.OpenAI) -> str:
    (card,) = client.models.list().data
    return card.id


@pytest.fixture(scope="module")
def admin_http(server: str, admin_username: str):
    with httpx.Client(base_url=server, follow_redirects=False, timeout=30) as http:
        _log_in(http, admin_username)
        yield http


def _metric(admin_http: httpx.Client, series: str) -> float | None:
    """The value of one series (name with its labels, as exposed), or None when absent."""
    response = admin_http.get("/metrics")
    assert response.status_code == 200, response.text[:300]
    for line in response.text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_models_list_names_the_served_model(client, model):
    assert model == "SmolLM2-135M-Instruct"
    assert client.models.retrieve(model).id == model


def test_chat_non_streaming_and_streaming_agree(client, model):
    reply = client.chat.completions.create(model=model, messages=QUESTION, max_tokens=12, temperature=0)
    choice = reply.choices[0]
    assert "Berlin" in choice.message.content and choice.message.role == "assistant"
    assert choice.finish_reason in ("stop", "length")
    usage = reply.usage
    assert usage.prompt_tokens > 5 and 1 <= usage.completion_tokens <= 12
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    stream = client.chat.completions.create(model=model, messages=QUESTION, max_tokens=12, temperature=0,
                                            stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == choice.message.content
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == [choice.finish_reason]
    assert chunks[-1].choices == [] and chunks[-1].usage.model_dump() == usage.model_dump()


def test_completions_with_a_raw_prompt(client, model):
    prompt = ("<|im_start|>system\nBe brief.<|im_end|>\n"
              "<|im_start|>user\nWhat is the capital of Germany?<|im_end|>\n<|im_start|>assistant\n")
    raw = client.completions.create(model=model, prompt=prompt, max_tokens=12, temperature=0)
    chat = client.chat.completions.create(model=model, max_tokens=12, temperature=0, messages=[
        {"role": "system", "content": "Be brief."}, *QUESTION])
    # The same conversation, rendered by hand: the same tokens in, the same reply out.
    assert raw.choices[0].text == chat.choices[0].message.content
    assert raw.usage.prompt_tokens == chat.usage.prompt_tokens
    assert raw.object == "text_completion"


def test_n_samples_are_seeded_seed_plus_i(client, model):
    args = dict(model=model, messages=QUESTION, max_tokens=10, temperature=1.0)
    both = client.chat.completions.create(n=2, seed=1234, **args)
    first = client.chat.completions.create(seed=1234, **args)
    second = client.chat.completions.create(seed=1235, **args)
    assert [c.index for c in both.choices] == [0, 1]
    assert both.choices[0].message.content == first.choices[0].message.content
    assert both.choices[1].message.content == second.choices[0].message.content
    assert both.usage.completion_tokens == first.usage.completion_tokens + second.usage.completion_tokens
    again = client.chat.completions.create(seed=1234, **args)
    assert again.choices[0].message.content == first.choices[0].message.content


def test_stop_string_cuts_the_reply(client, model):
    args = dict(model=model, messages=COUNTING, max_tokens=24, temperature=0)
    full = client.chat.completions.create(**args).choices[0].message.content
    words = full.split()
    assert len(words) >= 4, full
    stop = words[len(words) // 2]  # a word from the middle: the reply is cut before it
    stopped = client.chat.completions.create(stop=[stop, "never said"], **args).choices[0]
    assert stopped.finish_reason == "stop"
    assert stopped.message.content == full.split(stop)[0] and len(stopped.message.content) < len(full)


def test_logprobs_for_chat_and_completions(client, model):
    reply = client.chat.completions.create(model=model, messages=QUESTION, max_tokens=8, temperature=0,
                                           logprobs=True, top_logprobs=3)
    content = reply.choices[0].logprobs.content
    assert bytes(b for e in content for b in e.bytes).decode() == reply.choices[0].message.content
    for entry in content:  # greedy: the sampled token is the most likely one
        assert len(entry.top_logprobs) == 3 and entry.logprob <= 0
        assert entry.token == entry.top_logprobs[0].token
        assert entry.logprob == pytest.approx(entry.top_logprobs[0].logprob)
        assert entry.top_logprobs[0].logprob >= entry.top_logprobs[1].logprob >= entry.top_logprobs[2].logprob
    text = client.completions.create(model=model, prompt="The capital of France is", max_tokens=6,
                                     temperature=0, logprobs=2).choices[0]
    lp = text.logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == len(lp.text_offset) == 6
    assert lp.text_offset[0] == 0 and lp.text_offset == sorted(lp.text_offset)
    assert all(len(top) <= 2 and max(top.values()) == pytest.approx(v) for top, v in zip(lp.top_logprobs, lp.token_logprobs))


def test_errors_map_to_the_clients_exceptions(server, client, model):
    bad = openai.OpenAI(base_url=server + "/v1", api_key="crk_not-a-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.chat.completions.create(model=model, messages=QUESTION, max_tokens=4)
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=model, messages=QUESTION, max_tokens=4, temperature=5)
    assert caught.value.param == "temperature"
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-4o", messages=QUESTION, max_tokens=4)
    assert caught.value.code == "model_not_found"


def _wait_idle(admin_http: httpx.Client, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while (_metric(admin_http, "crescent_num_requests_running")
           or _metric(admin_http, "crescent_num_requests_waiting")):
        assert time.monotonic() < deadline, "the engine never went idle"
        time.sleep(0.1)


def test_closing_a_stream_aborts_the_generation(client, model, admin_http):
    args = dict(model=model, messages=COUNTING, temperature=0)
    full = client.chat.completions.create(max_tokens=COUNT_TOKENS, **args).choices[0]
    assert full.finish_reason == "length"  # the greedy reply runs past COUNT_TOKENS tokens
    _wait_idle(admin_http)
    generated = "crescent_engine_generation_tokens_total"
    aborted = 'crescent_requests_finished_total{finish_reason="abort",source="api"}'
    before = _metric(admin_http, generated)
    aborts_before = _metric(admin_http, aborted) or 0.0
    # The same greedy reply with room for far more tokens: left alone it would make more than
    # COUNT_TOKENS (its first COUNT_TOKENS tokens are the reply above, which did not stop).
    stream = client.chat.completions.create(max_tokens=1000, stream=True, **args)
    received = 0
    for chunk in stream:
        received += bool(chunk.choices and chunk.choices[0].delta.content)
        if received == 3:
            break
    stream.close()
    _wait_idle(admin_http)
    spent = _metric(admin_http, generated) - before
    assert 3 <= spent < COUNT_TOKENS, f"the engine generated {spent} tokens after the client left"
    assert _metric(admin_http, aborted) == aborts_before + 1
