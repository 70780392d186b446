"""The issue-15 report with the real model (SmolLM2-135M, 8192-token window, slow): a message
that fits the window for a plain reply but not with the tools' definitions in the prompt made
every agent turn of its conversation fail with the engine's PromptTooLong. TurnPlanner.fit_with_tools
counts the tools with the real tokenizer: alone, the message is refused with a clear reason; as
an older turn, it is dropped, and the engine takes the prompt that is left."""

from __future__ import annotations

import asyncio
import json

import pytest

from backend.agent.tools.registry import ToolRegistry
from backend.chat.planning import TurnPlanner
from backend.generator import ChatMessage, GenerationDone, GenerationParams, PromptTooLong, ToolFunction

pytestmark = pytest.mark.slow

REPLY = 512  # the deployment's default reply length (Settings.max_tokens)
WORDS = "the river bridge opened in spring and the town grew along both banks of it".split()


def long_message(generator, tokens: int) -> str:
    """English-like text of about `tokens` prompt tokens (plain, as one user message)."""
    low, high = 1, 60_000
    text = " ".join(WORDS[i % len(WORDS)] for i in range(12_000))
    while low < high:  # the longest prefix within `tokens`
        mid = (low + high + 1) // 2
        if generator.count_prompt_tokens([ChatMessage("user", text[:mid])]) <= tokens:
            low = mid
        else:
            high = mid - 1
    return text[:low]


def test_a_message_that_fits_only_without_the_tools_is_refused_alone_and_dropped_as_an_older_turn(real_generator):
    specs = ToolRegistry(documents=None, retriever=None, notes=None, session_factory=None).specs()
    tools = tuple(ToolFunction(s.name, s.description, json.dumps(s.parameters)) for s in specs)
    window = real_generator.context_length
    long = ChatMessage("user", long_message(real_generator, window - REPLY - 50))
    # The plain path's budget takes it; with the tools it is over.
    assert real_generator.count_prompt_tokens([long]) + REPLY <= window
    with_tools = real_generator.count_prompt_tokens([long], tools)
    assert with_tools + REPLY > window
    planner = TurnPlanner(real_generator, None, False)

    with pytest.raises(PromptTooLong) as refused:
        planner.fit_with_tools([long], tools, REPLY)
    assert "your message is too long for the model's window" in str(refused.value)
    assert f"({with_tools} tokens" in str(refused.value) and f"at most {window - REPLY}" in str(refused.value)
    # the room kept for the question the run reads again after its tools is said apart from the reply's
    # (new-user pass: "minus 4417 for the reply" for a 512-token reply)
    with pytest.raises(PromptTooLong) as refused:
        planner.fit_with_tools([long], tools, REPLY + 100, 100)
    assert f"minus {REPLY} for the reply and 100 for your message, which the run reads again" in str(refused.value)

    question = ChatMessage("user", "What is 12 * 34?")
    fitted = planner.fit_with_tools([long, ChatMessage("assistant", "Noted."), question], tools, REPLY)
    assert fitted == [question]

    async def generate() -> GenerationDone:
        done = None
        async for event in real_generator.stream("window-fit", fitted, GenerationParams(max_tokens=REPLY, tools=tools,
                                                                                        temperature=0.0)):
            if isinstance(event, GenerationDone):
                done = event
        assert done is not None
        return done

    done = asyncio.run(generate())
    assert done.finish_reason in ("stop", "length") and 0 < done.prompt_tokens + REPLY <= window
