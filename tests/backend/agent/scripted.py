"""A scripted TextGenerator for agent runs: reply i of the run is `replies[i]` (a list of text
pieces), streamed as TextDelta events and one GenerationDone (with honour_max_tokens, "length"
once params.max_tokens is reached, as the engine's). `hold_at=(i, n)` pauses reply i
after n pieces until release() or an abort; `crash_at=i` makes call i raise (a crash before that
step); every call is recorded with its messages."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import AsyncIterator, Sequence

from backend.generator import ChatMessage, GenerationDone, GenerationEvent, GenerationParams, TextDelta


def call_text(*calls: tuple[str, dict]) -> str:
    """A tool-call block as the grammar writes it."""
    return "<tool_call>" + json.dumps([{"name": n, "arguments": a} for n, a in calls]) + "</tool_call>"


@dataclass
class Call:
    request_id: str
    messages: list[ChatMessage]
    params: GenerationParams


@dataclass
class ScriptedGenerator:
    replies: list[list[str]]
    tokens_per_piece: int = 1
    prompt_tokens: int = 10
    hold_at: tuple[int, int] | None = None
    honour_max_tokens: bool = False  # True: a reply stops at params.max_tokens, finish_reason "length"
    crash_at: int | None = None  # the call whose stream() raises, as a process dying before that step
    model_name: str = "scripted"
    context_length: int = 4096
    calls: list[Call] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.held = asyncio.Event()
        self._wake = asyncio.Event()

    def count_prompt_tokens(self, messages: Sequence[ChatMessage], tools=()) -> int:
        return self.prompt_tokens

    def stream(self, request_id: str, messages: Sequence[ChatMessage], params: GenerationParams
               ) -> AsyncIterator[GenerationEvent]:
        number = len(self.calls)
        if number == self.crash_at:
            self.calls.append(None)  # type: ignore[arg-type]
            raise RuntimeError("the process died before this step")
        self.calls.append(Call(request_id, list(messages), params))
        pieces = self.replies[number] if number < len(self.replies) else ["(no more script)"]
        if self.honour_max_tokens:
            return self._run(request_id, number, pieces, params.max_tokens)
        return self._run(request_id, number, pieces)  # subclasses override _run(request_id, number, pieces)

    async def _run(self, request_id: str, number: int, pieces: list[str],
                   max_tokens: int | None = None) -> AsyncIterator[GenerationEvent]:
        sent = 0
        cut = False
        for piece in pieces:
            if request_id in self.aborted:
                break
            if max_tokens is not None and (sent + 1) * self.tokens_per_piece > max_tokens:
                cut = True  # max_tokens reached: the reply ends "length", as the engine's does
                break
            yield TextDelta(piece)
            sent += 1
            if self.hold_at == (number, sent):
                self.held.set()
                await self._wake.wait()
            await asyncio.sleep(0)
        reason = "abort" if request_id in self.aborted else "length" if cut else "stop"
        yield GenerationDone(reason, self.prompt_tokens, sent * self.tokens_per_piece)

    def release(self) -> None:
        self._wake.set()

    async def abort(self, request_id: str) -> None:
        self.aborted.append(request_id)
        self._wake.set()

    def prompt_text(self, number: int) -> str:
        return "\n".join(m.content for m in self.calls[number].messages)
