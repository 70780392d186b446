"""Tool calls on /v1/chat/completions with a scripted generator: request validation (400 naming
the field), what reaches the generator (tools, the grammar, the history), and the reply read out
of a tagged block written in awkward pieces: non-streamed and streamed (deltas joined equal the
non-streamed message), through the official `openai` client and raw HTTP."""

from __future__ import annotations

import json
from typing import Any, Sequence

import openai
import pytest

from backend.generator import ChatMessage, ToolCall, ToolFunction
from tests.web.conftest import FakeGenerator
from tests.web.test_openai_api import MODEL, api, keys, post, sse_events  # noqa: F401 (fixtures)

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                    "unit": {"enum": ["c", "f"]}},
                   "required": ["city"]}}}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {
    "type": "object", "properties": {"zone": {"type": "string"}}}}}
ASK = [{"role": "user", "content": "Weather in Paris and Rome?"}]
# A two-call block cut at awkward places: inside the begin tag, inside a name, inside a string
# with an escaped quote and a comma, between the calls, inside the end tag.
BLOCK_PIECES = ["<", "tool_c", 'all>[{"na', 'me":"get_wea', 'ther","arguments":{"city":"Pa',
                'ris \\"1,2\\"}', '","unit":"c"}},{"name":"get_weather","argu', 'ments":{"city":"Ro',
                'me"}}]</tool', "_call>"]
CALLS = [("get_weather", '{"city":"Paris \\"1,2\\"}","unit":"c"}'), ("get_weather", '{"city":"Rome"}')]


class ToolFake(FakeGenerator):
    """The scripted generator, counting tools as a real one does."""

    def count_prompt_tokens(self, messages: Sequence[ChatMessage], tools: Sequence[ToolFunction] = ()) -> int:
        return super().count_prompt_tokens(messages) + 10 * len(tools)


@pytest.fixture
def fake() -> ToolFake:
    return ToolFake(BLOCK_PIECES)


def chat(client, keys, **body: Any):
    return post(client, keys, "/v1/chat/completions", {"model": MODEL, "messages": ASK, **body})


# -- validation -----------------------------------------------------------------------------

CALLED = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]}


@pytest.mark.parametrize("change, param", [
    ({"tools": "get_weather"}, "tools"),
    ({"tools": []}, "tools"),
    ({"tools": [{"type": "retrieval"}]}, "tools[0].type"),
    ({"tools": [{"type": "function", "function": {"name": "has space"}}]}, "tools[0].function.name"),
    ({"tools": [{"type": "function", "function": {"name": "x" * 65}}]}, "tools[0].function.name"),
    ({"tools": [WEATHER, WEATHER]}, "tools[1].function.name"),
    ({"tools": [{"type": "function", "function": {"name": "f", "description": 5}}]},
     "tools[0].function.description"),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "string"}}}]},
     "tools[0].function.parameters"),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "nonsense"}}}}}]}, "tools[0].function.parameters"),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "required": "a"}}}]}, "tools[0].function.parameters"),
    ({"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "get_time"}}}, "tool_choice"),
    ({"tools": [WEATHER], "tool_choice": "sometimes"}, "tool_choice"),
    ({"tool_choice": "required"}, "tool_choice"),
    ({"tools": [WEATHER], "parallel_tool_calls": "yes"}, "parallel_tool_calls"),
    ({"functions": [WEATHER["function"]]}, "functions"),
    ({"tools": [WEATHER], "response_format": {"type": "json_object"}}, "response_format"),
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_1", "content": "x"}]},
     "messages[1].tool_call_id"),
    ({"messages": [{"role": "tool", "tool_call_id": "call_1", "content": "x"}, CALLED]}, "messages[0].tool_call_id"),
    ({"messages": [CALLED, {"role": "tool", "content": "sunny"}]}, "messages[1].tool_call_id"),
    ({"messages": [CALLED, {"role": "tool", "tool_call_id": "call_1", "content": None}]}, "messages[1].content"),
    ({"messages": [{**CALLED, "tool_calls": [{"id": "c", "type": "function", "function": {
        "name": "get_weather", "arguments": "{not json"}}]}]}, "messages[0].tool_calls[0].function.arguments"),
    ({"messages": [{**CALLED, "tool_calls": [{"id": "c", "type": "function", "function": {
        "name": "get_weather", "arguments": "[1]"}}]}]}, "messages[0].tool_calls[0].function.arguments"),
    ({"messages": [{**CALLED, "tool_calls": [{"type": "function", "function": {
        "name": "get_weather", "arguments": "{}"}}]}]}, "messages[0].tool_calls[0]"),
    ({"messages": [{**CALLED, "tool_calls": {"id": "c"}}]}, "messages[0].tool_calls"),
])
def test_bad_tool_requests_are_400_naming_the_field(client, keys, fake, change, param):
    response = chat(client, keys, **change)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param and error["message"]
    assert fake.requests == []


def test_an_unknown_tool_choice_name_through_the_client(api, fake):
    with pytest.raises(openai.BadRequestError) as caught:
        api.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER],
                                    tool_choice={"type": "function", "function": {"name": "launch"}})
    assert caught.value.param == "tool_choice" and "launch" in caught.value.message
    assert fake.requests == []


# -- what reaches the generator -------------------------------------------------------------


@pytest.mark.parametrize("choice, parallel, required, names, want_parallel", [
    (None, None, False, ["get_weather", "get_time"], True),
    ("auto", False, False, ["get_weather", "get_time"], False),
    ("required", None, True, ["get_weather", "get_time"], True),
    ({"type": "function", "function": {"name": "get_time"}}, None, True, ["get_time"], False),
])
def test_tool_choice_becomes_the_grammar(client, keys, fake, choice, parallel, required, names, want_parallel):
    body: dict[str, Any] = {"tools": [WEATHER, TIME]}
    if choice is not None:
        body["tool_choice"] = choice
    if parallel is not None:
        body["parallel_tool_calls"] = parallel
    assert chat(client, keys, **body).status_code == 200
    (_, _, params), = fake.requests
    assert [t.name for t in params.tools] == ["get_weather", "get_time"]
    assert json.loads(params.tools[0].parameters) == WEATHER["function"]["parameters"]
    assert params.tools[0].description == "Current weather of a city." and params.tools[1].description is None
    grammar = params.structured_output.tool_calls
    assert params.structured_output.param == "tools"
    assert [name for name, _ in grammar.functions] == names
    assert (grammar.required, grammar.parallel) == (required, want_parallel)
    assert (grammar.begin, grammar.end) == ("<tool_call>", "</tool_call>")


def test_tool_choice_none_sends_no_tools_and_reads_no_calls(client, keys, fake):
    body = chat(client, keys, tools=[WEATHER], tool_choice="none").json()
    (_, _, params), = fake.requests
    assert params.tools == () and params.structured_output is None
    message = body["choices"][0]["message"]
    assert message["content"] == "".join(BLOCK_PIECES) and "tool_calls" not in message
    assert body["choices"][0]["finish_reason"] == "stop"


def test_history_with_calls_and_results_reaches_the_generator(client, keys, fake):
    messages = [{"role": "user", "content": "Weather in Paris?"}, CALLED,
                {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "sunny"}]},
                {"role": "user", "content": "And now?"}]
    assert chat(client, keys, messages=messages, tools=[WEATHER]).status_code == 200
    (_, sent, _), = fake.requests
    assert sent == [ChatMessage("user", "Weather in Paris?"),
                    ChatMessage("assistant", "", tool_calls=(ToolCall("call_1", "get_weather", '{"city":"Paris"}'),)),
                    ChatMessage("tool", "sunny", tool_call_id="call_1", name="get_weather"),
                    ChatMessage("user", "And now?")]


# -- replies --------------------------------------------------------------------------------


def test_a_tool_call_reply_non_streamed(client, keys, fake):
    body = chat(client, keys, tools=[WEATHER]).json()
    choice, = body["choices"]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["content"] is None and message["role"] == "assistant"
    assert [(c["type"], c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]] == [
        ("function", name, arguments) for name, arguments in CALLS]
    ids = [c["id"] for c in message["tool_calls"]]
    assert all(i.startswith("call_") and len(i) > 12 for i in ids) and len(set(ids)) == 2
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"city": 'Paris "1,2"}', "unit": "c"}
    assert body["usage"]["completion_tokens"] == len(BLOCK_PIECES)
    assert body["usage"]["prompt_tokens"] == fake.count_prompt_tokens(fake.requests[0][1], fake.requests[0][2].tools)


def joined(events: list[Any], index: int = 0) -> dict[str, Any]:
    """A streamed choice accumulated the way OpenAI's clients do."""
    content, calls, reason = None, {}, None
    for event in events[:-1]:
        for choice in event["choices"]:
            if choice["index"] != index:
                continue
            delta = choice["delta"]
            if delta.get("content"):
                content = (content or "") + delta["content"]
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(call["index"], {"id": None, "type": None, "function": {"name": None, "arguments": ""}})
                if "id" in call:
                    assert slot["id"] is None, "a call's id comes once"
                    slot.update(id=call["id"], type=call["type"])
                    slot["function"]["name"] = call["function"]["name"]
                slot["function"]["arguments"] += call["function"].get("arguments", "")
            reason = choice["finish_reason"] or reason
    return {"content": content, "tool_calls": [calls[i] for i in sorted(calls)] or None, "finish_reason": reason}


def without_ids(calls: list[dict[str, Any]] | None) -> list[Any] | None:
    return None if calls is None else [(c["type"], c["function"]["name"], c["function"]["arguments"]) for c in calls]


def test_streamed_tool_call_deltas_join_to_the_non_streamed_message(client, keys, fake):
    plain = chat(client, keys, tools=[WEATHER])
    events = sse_events(chat(client, keys, tools=[WEATHER], stream=True).text)
    assert events[-1] == "[DONE]"
    streamed = joined(events)
    message = plain.json()["choices"][0]["message"]
    assert streamed["content"] == message["content"] is None
    assert without_ids(streamed["tool_calls"]) == without_ids(message["tool_calls"]) == [
        ("function", name, arguments) for name, arguments in CALLS]
    assert streamed["finish_reason"] == "tool_calls"
    deltas = [c["delta"] for e in events[:-1] for c in e["choices"]]
    assert deltas[0] == {"role": "assistant", "content": None}
    # No part of the tag (nor anything else) was ever sent as content.
    assert not any(d.get("content") for d in deltas)
    # The arguments really stream: in more than one fragment per call.
    fragments = [call for d in deltas for call in d.get("tool_calls") or [] if "id" not in call]
    assert len(fragments) >= 3


def test_streamed_tool_calls_through_the_client(api, fake):
    with api.chat.completions.stream(model=MODEL, messages=ASK, tools=[WEATHER]) as stream:
        final = stream.get_final_completion()
    calls = final.choices[0].message.tool_calls
    assert [(c.function.name, c.function.arguments) for c in calls] == CALLS
    assert final.choices[0].finish_reason == "tool_calls"
    plain = api.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER])
    assert [(c.function.name, c.function.arguments) for c in plain.choices[0].message.tool_calls] == CALLS


@pytest.mark.parametrize("pieces", [["<", "tools", " are ", "fun"], ["  <tool", "box> is", " a word"], ["<tool_c"]])
def test_text_that_starts_like_the_tag_is_content_once_it_cannot_be_the_tag(client, keys, fake, pieces):
    fake.tokens = pieces
    message = chat(client, keys, tools=[WEATHER]).json()["choices"][0]["message"]
    assert message["content"] == "".join(pieces) and "tool_calls" not in message
    streamed = joined(sse_events(chat(client, keys, tools=[WEATHER], stream=True).text))
    assert streamed == {"content": "".join(pieces), "tool_calls": None, "finish_reason": "stop"}


def test_a_block_cut_by_max_tokens_is_text_with_finish_reason_length(client, keys, fake):
    body = chat(client, keys, tools=[WEATHER], max_tokens=6).json()
    choice = body["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["content"] == "".join(BLOCK_PIECES[:6]) and "tool_calls" not in choice["message"]


def test_a_call_to_an_undeclared_function_is_text(client, keys, fake):
    fake.tokens = ['<tool_call>[{"name":"rm_rf","arguments":{}}]</tool_call>']
    message = chat(client, keys, tools=[WEATHER]).json()["choices"][0]["message"]
    assert message["content"] == fake.tokens[0] and "tool_calls" not in message


@pytest.mark.parametrize("lead", ["", " "])
def test_a_streamed_call_to_an_undeclared_function_is_never_announced(client, keys, fake, lead):
    fake.tokens = [lead + '<tool_call>[{"name":"rm_rf",', '"arguments":{"city":1}}', "]</tool_call>"]
    events = sse_events(chat(client, keys, tools=[WEATHER], stream=True).text)
    assert not any(c["delta"].get("tool_calls") for e in events if isinstance(e, dict) for c in e["choices"])


def test_n_choices_each_carry_their_own_calls(client, keys, fake):
    body = chat(client, keys, tools=[WEATHER], n=2).json()
    assert [c["finish_reason"] for c in body["choices"]] == ["tool_calls", "tool_calls"]
    ids = [call["id"] for c in body["choices"] for call in c["message"]["tool_calls"]]
    assert len(set(ids)) == 4
    events = sse_events(chat(client, keys, tools=[WEATHER], n=2, stream=True).text)
    for index in (0, 1):
        assert without_ids(joined(events, index)["tool_calls"]) == [("function", n, a) for n, a in CALLS]
    assert body["usage"]["completion_tokens"] == 2 * len(BLOCK_PIECES)


def test_streamed_logprobs_are_all_sent_with_tool_calls(client, keys, fake):
    events = sse_events(chat(client, keys, tools=[WEATHER], stream=True, logprobs=True).text)
    tokens = [lp["token"] for e in events[:-1] for c in e["choices"] if c["logprobs"]
              for lp in c["logprobs"]["content"]]
    assert tokens == BLOCK_PIECES


def test_every_split_of_a_block_streams_to_the_whole_reply():
    from backend.tool_call_parser import ToolCallStream, parse_reply

    text = "".join(BLOCK_PIECES)
    whole = parse_reply(text, {"get_weather"}, new_id=lambda: "call_x")
    assert whole[0] is None and [(c.name, c.arguments) for c in whole[1]] == CALLS
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1, 7):
            stream = ToolCallStream({"get_weather"}, new_id=lambda: "call_x")
            content, calls = "", {}
            for piece in (text[:i], text[i:j], text[j:]):
                released = stream.feed(piece)
                content += released.content
                for d in released.calls:
                    slot = calls.setdefault(d.index, ["", ""])
                    slot[0] += d.name or ""
                    slot[1] += d.arguments
            content += stream.finish().content
            assert content == "" and [tuple(calls[k]) for k in sorted(calls)] == CALLS, (i, j)
