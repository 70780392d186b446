"""A scripted :class:`backend.generator.TextGenerator` for the cluster tests' server processes.

It runs inside another OS process, so a test steers it through files in a control directory
(``SCRIPTED_CONTROL_DIR``), read before every token:

- ``tokens``: a JSON list of strings, the reply (default ``SCRIPTED_TOKENS`` or "Hello, world!"
  in four tokens);
- ``delay_s``: seconds to wait before each token (default ``SCRIPTED_TOKEN_DELAY_S`` or 0);
- ``hold``: while this file exists a stream waits before its next token once it has emitted
  as many tokens as the file says (empty: 0, so before the first) -- at most ``HOLD_LIMIT_S``,
  then the stream ends with finish_reason "error" -- so a test can act mid-stream without
  timing guesses.

Every stream appends one JSON line to ``events.jsonl`` when it starts (``{"event": "start",
"request_id", "instance", "prompt"}``) and one when it ends (``"end"`` with ``finish_reason``
and ``completion_tokens``). Test code only: never imported by the product.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any, AsyncIterator, Sequence

from backend.generator import (
    FINISH_ABORT,
    FINISH_LENGTH,
    FINISH_STOP,
    ChatMessage,
    GenerationDone,
    GenerationEvent,
    GenerationParams,
    GeneratorStats,
    PromptTooLong,
    TextDelta,
)

DEFAULT_TOKENS = ("Hello", ", ", "world", "!")
HOLD_LIMIT_S = 60.0


class ScriptedGenerator:
    """Streams the control directory's tokens at its pace; counts what it did for ``stats()``."""

    model_name = "scripted-model"
    context_length = 4096

    def __init__(self, control_dir: str | os.PathLike[str], instance: str = "") -> None:
        self.control = Path(control_dir)
        self.control.mkdir(parents=True, exist_ok=True)
        self.instance = instance
        self._default_tokens = tuple(json.loads(os.environ["SCRIPTED_TOKENS"])) \
            if os.environ.get("SCRIPTED_TOKENS") else DEFAULT_TOKENS
        self._default_delay = float(os.environ.get("SCRIPTED_TOKEN_DELAY_S", "0") or 0)
        self._aborted: set[str] = set()
        self._running = 0
        self._prompt_total = 0
        self._generated_total = 0

    # -- control ---------------------------------------------------------------------------
    def _tokens(self) -> list[str]:
        path = self.control / "tokens"
        if path.exists():
            return [str(t) for t in json.loads(path.read_text())]
        return list(self._default_tokens)

    def _delay(self) -> float:
        path = self.control / "delay_s"
        if path.exists():
            try:
                return float(path.read_text().strip() or 0)
            except ValueError:
                return self._default_delay
        return self._default_delay

    def _held(self, emitted: int) -> bool:
        try:
            after = (self.control / "hold").read_text().strip()
        except FileNotFoundError:
            return False
        return emitted >= (int(after) if after.isdigit() else 0)

    def _record(self, **event: object) -> None:
        line = json.dumps({"instance": self.instance, "time": time.time(), **event}) + "\n"
        # One small O_APPEND write per event: lines from concurrent streams never interleave.
        fd = os.open(self.control / "events.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    # -- TextGenerator -----------------------------------------------------------------------
    def count_prompt_tokens(self, messages: Sequence[ChatMessage], tools: Sequence[Any] = ()) -> int:
        return sum(4 + len(m.content.split()) for m in messages) + 2

    def count_text_tokens(self, text: str) -> int:
        return len(text.split()) + 1

    def stats(self) -> GeneratorStats:
        return GeneratorStats(running=self._running, waiting=0, kv_blocks_used=self._running,
                              kv_blocks_total=100, kv_usage=self._running / 100,
                              prefix_cache_queries=0, prefix_cache_hits=0, preemptions=0,
                              prompt_tokens_total=self._prompt_total,
                              generation_tokens_total=self._generated_total)

    def stream(self, request_id: str, messages: Sequence[ChatMessage],
               params: GenerationParams) -> AsyncIterator[GenerationEvent]:
        return self._start(request_id, list(messages), params, self.count_prompt_tokens(messages))

    def stream_prompt(self, request_id: str, prompt: str,
                      params: GenerationParams) -> AsyncIterator[GenerationEvent]:
        return self._start(request_id, [ChatMessage("prompt", prompt)], params, self.count_text_tokens(prompt))

    async def abort(self, request_id: str) -> None:
        self._aborted.add(request_id)

    def _start(self, request_id: str, messages: list[ChatMessage], params: GenerationParams,
               prompt_tokens: int) -> AsyncIterator[GenerationEvent]:
        if prompt_tokens + params.max_tokens > self.context_length:
            raise PromptTooLong(f"{prompt_tokens} + {params.max_tokens} > {self.context_length}")
        self._record(event="start", request_id=request_id,
                     prompt=messages[-1].content if messages else "")
        return self._events(request_id, prompt_tokens, params)

    async def _events(self, request_id: str, prompt_tokens: int,
                      params: GenerationParams) -> AsyncIterator[GenerationEvent]:
        emitted = 0
        reason = "error"
        error: str | None = None
        tokens = self._tokens()
        self._running += 1
        self._prompt_total += prompt_tokens
        try:
            for token in tokens[: params.max_tokens]:
                held_since = time.monotonic()
                while self._held(emitted) and request_id not in self._aborted:
                    if time.monotonic() - held_since > HOLD_LIMIT_S:
                        error = f"scripted generator held for {HOLD_LIMIT_S} s"
                        raise TimeoutError(error)
                    await asyncio.sleep(0.01)
                if request_id in self._aborted:
                    reason = FINISH_ABORT
                    break
                delay = self._delay()
                if delay > 0:
                    await asyncio.sleep(delay)
                emitted += 1
                self._generated_total += 1
                yield TextDelta(token, (), index=0)
            else:
                reason = FINISH_LENGTH if params.max_tokens < len(tokens) else FINISH_STOP
        except TimeoutError:
            reason = "error"
        finally:
            self._running -= 1
            self._record(event="end", request_id=request_id, finish_reason=reason,
                         completion_tokens=emitted)
        yield GenerationDone(finish_reason=reason, prompt_tokens=prompt_tokens,
                             completion_tokens=emitted, queue_ms=0.5, ttft_ms=1.0,
                             decode_tokens_per_s=100.0, error=error, e2e_ms=2.0, tpot_ms=1.0,
                             itl_ms=(1.0,) * max(emitted - 1, 0), index=0)
