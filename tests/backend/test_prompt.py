from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backend.generator import ChatMessage, PromptTooLong
from backend.prompt import build_prompt_messages


def fake_count_tokens(messages):
    """Same framing as the conftest counter: 3 per message, 1 per word, 2 for the generation prompt."""
    return sum(3 + len(m.content.split()) for m in messages) + 2


def test_local_counter_equals_the_shared_one(count_tokens):
    msgs = [ChatMessage("user", "a b c"), ChatMessage("assistant", "")]
    assert fake_count_tokens(msgs) == count_tokens(msgs) == 11


def turns(n: int, words: int = 5) -> list[ChatMessage]:
    """user, assistant, user, ... ending with a user turn; each `words` words long."""
    roles = ["user", "assistant"]
    msgs = [ChatMessage(roles[i % 2], " ".join([f"w{i}"] * words)) for i in range(n)]
    assert msgs[-1].role == "user"
    return msgs


def test_everything_fits_everything_is_kept():
    history = turns(5)
    out = build_prompt_messages("sys", history, fake_count_tokens, 4096, 100)
    assert out == [ChatMessage("system", "sys"), *history]


def test_no_system_prompt_keeps_the_template_default():
    history = turns(3)
    assert build_prompt_messages(None, history, fake_count_tokens, 4096, 100) == history


def test_exact_boundary_is_inclusive():
    history = turns(5)  # every message: 3 + 5 = 8 tokens; system "sys": 4; generation prompt: 2
    system = ChatMessage("system", "sys")
    full = fake_count_tokens([system, *history])
    assert full == 4 + 5 * 8 + 2
    max_tokens = 100
    # Budget exactly equal to the full prompt: nothing is dropped.
    out = build_prompt_messages("sys", history, fake_count_tokens, full + max_tokens, max_tokens)
    assert out == [system, *history]
    # One token less: the oldest turn goes, and then the orphaned assistant turn with it.
    out = build_prompt_messages("sys", history, fake_count_tokens, full + max_tokens - 1, max_tokens)
    assert out == [system, *history[2:]]
    assert fake_count_tokens(out) <= full - 1


def test_newest_kept_oldest_dropped_and_no_leading_assistant():
    history = turns(9)
    # Room for the system prompt and 4 messages: 4 + 4 * 8 + 2 = 38.
    out = build_prompt_messages("sys", history, fake_count_tokens, 38 + 10, 10)
    assert out[0] == ChatMessage("system", "sys")
    assert out[1:] == history[-3:]  # 4 fit, but the 4th-newest is an assistant turn
    assert out[1].role == "user"


def test_system_prompt_never_dropped_and_too_long_raises():
    history = turns(1, words=50)
    with pytest.raises(PromptTooLong):
        build_prompt_messages("sys", history, fake_count_tokens, 60, 10)
    with pytest.raises(PromptTooLong):
        build_prompt_messages("a " * 100, [], fake_count_tokens, 60, 10)
    with pytest.raises(PromptTooLong, match="no room"):
        build_prompt_messages("sys", turns(1), fake_count_tokens, 100, 100)


def test_counts_are_logarithmic_in_history_length():
    calls = []

    def counting(messages):
        calls.append(len(messages))
        return fake_count_tokens(messages)

    build_prompt_messages("sys", turns(1001), counting, 2000, 100)
    assert len(calls) <= 15


@given(
    n=st.integers(1, 30),
    lengths=st.lists(st.integers(0, 30), min_size=30, max_size=30),
    budget=st.integers(10, 400),
    system=st.sampled_from([None, "be brief", "a much longer system prompt than that"]),
)
def test_matches_a_linear_reference(n, lengths, budget, system):
    roles = ["user", "assistant"]
    history = [ChatMessage(roles[(n - 1 - i) % 2], "x " * lengths[i]) for i in range(n)]
    head = [ChatMessage("system", system)] if system else []
    max_tokens = 5
    # Reference: the largest suffix that fits, by trying every length.
    fitting = [k for k in range(1, n + 1) if fake_count_tokens(head + history[n - k :]) <= budget]
    if not fitting:
        with pytest.raises(PromptTooLong):
            build_prompt_messages(system, history, fake_count_tokens, budget + max_tokens, max_tokens)
        return
    kept = history[n - max(fitting) :]
    while len(kept) > 1 and kept[0].role == "assistant":
        kept = kept[1:]
    out = build_prompt_messages(system, history, fake_count_tokens, budget + max_tokens, max_tokens)
    assert out == head + kept
    assert fake_count_tokens(out) <= budget
    assert out[-1] == history[-1]
