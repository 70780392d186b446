"""Prompt assembly: the system prompt plus as much recent history as fits the context window."""

from __future__ import annotations

from typing import Callable, Sequence

from backend.generator import ChatMessage, PromptTooLong


def build_prompt_messages(
    system_prompt: str | None,
    history: Sequence[ChatMessage],
    count_tokens: Callable[[Sequence[ChatMessage]], int],
    context_length: int,
    max_tokens: int,
) -> list[ChatMessage]:
    """The messages to send: system prompt (if any) + the newest history that fits.

    Budget: the prompt (as measured by `count_tokens` over the whole candidate list, chat
    template included) must be <= context_length - max_tokens, leaving room for the reply.
    History is cut at message granularity, oldest first. The system prompt and the newest
    message are never dropped. When the cut would leave an assistant message first, it is
    dropped too, so the kept history starts with a user turn (unless only assistant turns remain).

    Tokens are counted O(log n) times (binary search): the count grows with every message kept.

    Raises:
        PromptTooLong: max_tokens >= context_length, or the system prompt and the newest
            message alone exceed the budget.
        ValueError: context_length or max_tokens is not positive.
    """
    if context_length <= 0 or max_tokens <= 0:
        raise ValueError(f"context_length and max_tokens must be positive, got {context_length}, {max_tokens}")
    budget = context_length - max_tokens
    if budget <= 0:
        raise PromptTooLong(f"max_tokens ({max_tokens}) leaves no room in the {context_length}-token window")
    head = [ChatMessage("system", system_prompt)] if system_prompt is not None else []
    if not history:
        needed = count_tokens(head)
        if needed > budget:
            raise PromptTooLong(f"system prompt takes {needed} tokens; the budget is {budget}")
        return head

    def fits(keep: int) -> bool:
        return count_tokens(head + list(history[len(history) - keep :])) <= budget

    if not fits(1):
        needed = count_tokens(head + list(history[-1:]))
        raise PromptTooLong(
            f"the message needs {needed} prompt tokens with the system prompt; at most {budget} fit "
            f"({context_length}-token window minus {max_tokens} for the reply)"
        )
    low, high = 1, len(history)  # invariant: fits(low)
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    kept = list(history[len(history) - low :])
    # An assistant turn without the user turn it answered reads as a non sequitur; dropping
    # it only shortens the prompt, so the result still fits.
    while len(kept) > 1 and kept[0].role == "assistant":
        kept.pop(0)
    return head + kept
