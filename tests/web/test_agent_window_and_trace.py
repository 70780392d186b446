"""Agent replies and the model's window, and their traces (issue 15, found with the real model):
the prompt of a run is fitted counting the tools' prompt overhead (older turns dropped as for a
plain reply; a message too long even alone gets a clear error and the conversation stays
usable); a model step that cannot start ends its step and its run "error" with the reason; each
model step has an agent.model_step span with the engine's spans under it, and the done frame has
the run's timings."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, AsyncIterator, Sequence

import pytest
from sqlalchemy import select

from backend import tracing
from backend.agent.models import AgentStep
from backend.generator import (ChatMessage, EngineTimeline, GenerationDone, GenerationEvent, GenerationParams,
                               GeneratorUnavailable, PromptTooLong, TextDelta)

from .conftest import app_state, sign_up, wait_until
from .test_agent_runs import CALC, ScriptedModel, runs, send, tools_on, until_done

TOOLS_OVERHEAD = 150  # prompt tokens the tools' definitions take, as this model counts them
LONG = " ".join(["word"] * 300)  # fits the window without the tools (64 reserved), not with them


class WindowedModel(ScriptedModel):
    """ScriptedModel with a 600-token window that its tools take 150 tokens of, refusing a
    prompt that does not fit as the engine does (PromptTooLong at stream()); fail_at: the
    request number whose stream() raises GeneratorUnavailable. Final events carry timings and
    an engine timeline, as the real adapter's do."""

    context_length = 600

    def __init__(self, replies: list[list[str]], fail_at: int | None = None) -> None:
        super().__init__(replies)
        self.fail_at = fail_at
        self.refused: list[int] = []
        self.cut: int | None = None  # the request number whose reply max_tokens cuts ("length")

    def count_prompt_tokens(self, messages: Sequence[ChatMessage], tools=()) -> int:
        return super().count_prompt_tokens(messages) + (TOOLS_OVERHEAD if tools else 0)

    def stream(self, request_id: str, messages: Sequence[ChatMessage], params: GenerationParams
               ) -> AsyncIterator[GenerationEvent]:
        needed = self.count_prompt_tokens(messages, params.tools)
        if needed + params.max_tokens > self.context_length:
            self.refused.append(needed)
            raise PromptTooLong(f"prompt has {needed} tokens; with max_tokens={params.max_tokens} that is more "
                                f"than the window of {self.context_length} tokens")
        if self.fail_at == len(self.requests):
            self.requests.append((request_id, list(messages), params))
            raise GeneratorUnavailable("the model is not running")
        inner = super().stream(request_id, messages, params)
        return self._timed(inner, len(self.requests) - 1)

    async def _timed(self, inner: AsyncIterator[GenerationEvent], number: int) -> AsyncIterator[GenerationEvent]:
        arrival = time.time_ns()
        first: int | None = None
        async for event in inner:
            now = time.time_ns()
            if isinstance(event, TextDelta) and first is None:
                first = now
            if isinstance(event, GenerationDone):
                first = first or now
                if number == self.cut:
                    event = replace(event, finish_reason="length")
                event = replace(event, queue_ms=10.0 + number, ttft_ms=100.0 + number,
                                decode_tokens_per_s=1000.0 + number, timeline=EngineTimeline(
                                    arrival_ns=arrival, scheduled_ns=arrival + 1000, first_token_ns=first,
                                    finished_ns=now, prefill_chunks=((arrival + 1000, first, 10),)))
            yield event


@pytest.fixture
def fake() -> WindowedModel:
    return WindowedModel([[CALC], ["The answer ", "is 42."]])


def steps_of(client, run_id: str) -> list[tuple[int, str, str, str]]:
    with app_state(client).conversations._sessions() as db:
        return [(s.index, s.kind, s.status, s.text) for s in
                db.scalars(select(AgentStep).where(AgentStep.run_id == run_id).order_by(AgentStep.index))]


def test_a_message_too_long_with_the_tools_is_refused_clearly_and_the_conversation_stays_usable(client, fake):
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, LONG)
        done = until_done(ws)[-1]
        assert (done["type"], done["status"]) == ("done", "error"), done
        assert "your message is too long for the model's window" in done["error"], done["error"]
        assert fake.requests == [] and fake.refused == []  # refused before any model call
        # The next message: the long one is dropped from the prompt as an older turn.
        send(ws, conversation_id)
        frames = until_done(ws)
    done = frames[-1]
    assert (done["status"], done["content"]) == ("complete", "The answer is 42."), done
    assert fake.refused == []
    first_prompt = fake.requests[0][1]
    assert all("word word" not in m.content for m in first_prompt)
    assert first_prompt[-1].content == "What is 6 times 7?"
    assert fake.count_prompt_tokens(first_prompt, fake.requests[0][2].tools) + 256 <= fake.context_length
    assert [r.status for r in runs(client)] == ["done"]


def test_a_message_that_fits_once_but_not_restated_after_the_results_is_refused_up_front(client, fake):
    # New-user run (2026-12-02): a 27,915-character message ran its tool, then the answer step
    # (the question restated after the results) was 12,532 tokens for an 8,192-token window.
    medium = " ".join(["word"] * 150)  # 305 tokens with the tools: fits 600 - 256 once, not twice
    assert fake.count_prompt_tokens([ChatMessage("user", medium)], ("tools",)) + 256 <= fake.context_length
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, medium)
        done = until_done(ws)[-1]
    assert (done["status"], fake.requests) == ("error", []), done
    assert "your message is too long for the model's window" in done["error"]


def test_older_turns_are_dropped_to_fit_the_tools_and_a_short_turn_keeps_them(client, fake):
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    fake.replies = [["Short answer."], [CALC], ["The answer ", "is 42."]]
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id, "hello there")
        assert until_done(ws)[-1]["status"] == "complete"
        send(ws, conversation_id)
        assert until_done(ws)[-1]["status"] == "complete"
    # Both turns fit with the tools: the second prompt still holds the first turn.
    assert [m.content for m in fake.requests[1][1] if m.role in ("user", "assistant")][:3] == [
        "hello there", "Short answer.", "What is 6 times 7?"]


def one_turn(client) -> tuple[str, str, list[dict]]:
    """(token, conversation id, frames up to done) of alice's first message with tools on."""
    token = sign_up(client, "alice")
    conversation_id = tools_on(client, token)
    with client.websocket_connect("/ws") as ws:
        send(ws, conversation_id)
        return token, conversation_id, until_done(ws)


def test_a_model_step_that_cannot_start_ends_its_step_and_the_run_with_the_reason(client, fake):
    fake.fail_at = 1  # the answer step, after the calculator ran
    token, conversation_id, frames = one_turn(client)
    done = frames[-1]
    assert (done["status"], done["finish_reason"]) == ("error", "error"), done
    assert "the model is not running" in done["error"]
    step = [f for f in frames if f["type"] == "agent_step" and f["index"] == 2][-1]
    assert step["status"] == "error" and "the model is not running" in step["text"]
    [run] = wait_until(lambda: [r for r in runs(client) if r.status != "running"] or None)
    assert run.status == "error" and "the model is not running" in (run.ending or "")
    steps = steps_of(client, run.id)
    assert [(i, k, s) for i, k, s, _ in steps] == [(0, "model", "done"), (1, "tool", "done"), (2, "model", "error")]
    assert "the model is not running" in steps[2][3]


def test_an_agent_turns_trace_has_each_model_step_with_the_engines_spans_and_the_done_frame_timings(client, fake):
    token, conversation_id, frames = one_turn(client)
    done = frames[-1]
    assert done["status"] == "complete"
    # The first model step's queue and TTFT, the answer step's decode speed (WindowedModel: request i),
    # the run's wall time.
    timings = dict(done["timings"])
    total_ms = timings.pop("total_ms")
    assert timings == {"queue_ms": 10.0, "ttft_ms": 100.0, "decode_tokens_per_s": 1001.0}
    assert isinstance(total_ms, float) and total_ms > 0
    stored = next(m for m in client.get(f"/api/conversations/{conversation_id}").json()["messages"]
                  if m["id"] == done["message_id"])  # the footer after a reload
    assert (stored["queue_ms"], stored["ttft_ms"], stored["decode_tokens_per_s"], stored["total_ms"]) == (
        10.0, 100.0, 1001.0, total_ms)
    trace_id = done["trace_id"]
    store = tracing.store()
    assert store is not None and tracing.valid_trace_id(trace_id)
    spans = wait_until(lambda: (s := store.get(trace_id)) and any(x.name == "chat.turn" for x in s) and s)
    assert {tracing.trace.format_trace_id(s.context.trace_id) for s in spans} == {trace_id}
    by_id = {s.context.span_id: s for s in spans}
    steps = sorted((s for s in spans if s.name == "agent.model_step"), key=lambda s: s.start_time)
    assert [s.attributes["index"] for s in steps] == [0, 2]
    assert [(s.attributes["prompt_tokens"], s.attributes["completion_tokens"]) for s in steps] == [(10, 1), (10, 2)]
    assert by_id[steps[0].parent.span_id].name == "chat.reply"
    engine: dict[int, list[str]] = {}
    for s in spans:
        if s.name in ("engine.queue", "engine.prefill", "engine.decode"):
            engine.setdefault(s.parent.span_id, []).append(s.name)
    for step in steps:
        assert sorted(engine[step.context.span_id]) == ["engine.decode", "engine.prefill", "engine.queue"]
    assert sum(len(v) for v in engine.values()) == 6  # none outside the steps
    tool = next(s for s in spans if s.name == "agent.tool_call")
    assert steps[0].end_time <= tool.start_time and tool.end_time <= steps[1].start_time


def test_an_answer_cut_at_the_token_limit_ends_the_reply_length_as_a_plain_reply_does(client, fake):
    # New-user pass: with tools on, a long story cut at max_tokens was shown complete, with no
    # "Cut at the token limit" and no Continue (finish_reason "stop").
    fake.cut = 1  # the answer step, after the calculator ran
    token, conversation_id, frames = one_turn(client)
    done = frames[-1]
    assert (done["status"], done["finish_reason"], done["content"]) == ("complete", "length", "The answer is 42."), done
    view = client.get(f"/api/conversations/{conversation_id}", headers={"Authorization": f"Bearer {token}"}).json()
    assert view["messages"][-1]["finish_reason"] == "length"
