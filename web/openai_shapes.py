"""Response bodies and stream chunks of the OpenAI-compatible API (chat and text completions).

When a chat reply may call tools (ApiRequest.tool_names), its text is read by
backend.tool_call_parser: a tool-call block becomes `message.tool_calls` ({id, type "function",
function {name, arguments}}) with content null and finish_reason "tool_calls" (unless max_tokens
cut it: "length"); streamed, `delta.tool_calls` [{index, id, type, function {name, arguments}}]
for a call's first chunk, then [{index, function {arguments}}] fragments. Such a stream opens
with content null; logprobs held back with text ride with the next chunk sent.
"""

from __future__ import annotations

import codecs
import json
from typing import TYPE_CHECKING, Any

from backend.generator import FINISH_STOP, GenerationDone, TextDelta, ToolCall, TokenLogprob
from backend.tool_call_parser import CallDelta, Released, ToolCallStream, parse_reply

if TYPE_CHECKING:
    from web.openai_api import _Run

def _chat_logprobs(entries: list[TokenLogprob]) -> dict[str, Any]:
    def item(lp: TokenLogprob) -> dict[str, Any]:
        return {"token": lp.token, "logprob": lp.logprob, "bytes": list(lp.bytes)}

    return {"content": [{**item(lp), "top_logprobs": [item(t) for t in lp.top]} for lp in entries],
            "refusal": None}


class _TextOffsets:
    """Character offsets of tokens in the completion text, from their raw bytes."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._chars = 0

    def next(self, token_bytes: tuple[int, ...]) -> int:
        offset = self._chars
        self._chars += len(self._decoder.decode(bytes(token_bytes)))
        return offset


def _completion_logprobs(entries: list[TokenLogprob], offsets: _TextOffsets) -> dict[str, Any]:
    return {"tokens": [lp.token for lp in entries],
            "token_logprobs": [lp.logprob for lp in entries],
            "top_logprobs": [{t.token: t.logprob for t in lp.top} for lp in entries],
            "text_offset": [offsets.next(lp.bytes) for lp in entries]}


def sse(data: dict[str, Any] | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False,
                                                         separators=(",", ":"))
    return f"data: {text}\n\n".encode()


FINISH_TOOL_CALLS = "tool_calls"


def _tool_call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def _call_delta(delta: CallDelta) -> dict[str, Any]:
    if delta.id is None:
        return {"index": delta.index, "function": {"arguments": delta.arguments}}
    return {"index": delta.index, "id": delta.id, "type": "function",
            "function": {"name": delta.name, "arguments": delta.arguments}}


class Shapes:
    """Chat and text-completion bodies and chunks for one run."""

    def __init__(self, run: _Run, model: str) -> None:
        self.run, self.model = run, model
        self.chat = run.api.messages is not None
        self.want_logprobs = run.api.params.logprobs is not None
        self.offsets = [_TextOffsets() for _ in run.choices]
        self.tool_names = run.api.tool_names if self.chat else ()
        self.calls = [ToolCallStream(self.tool_names) for _ in run.choices] if self.tool_names else None
        self.held: list[list[TokenLogprob]] = [[] for _ in run.choices]

    def _logprobs(self, index: int, entries: list[TokenLogprob]) -> dict[str, Any] | None:
        if not self.want_logprobs:
            return None
        return _chat_logprobs(entries) if self.chat else _completion_logprobs(entries, self.offsets[index])

    def body(self) -> dict[str, Any]:
        choices = []
        for i, c in enumerate(self.run.choices):
            text = "".join(c.text)
            reason = c.done.finish_reason if c.done else None
            if self.chat:
                message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
                calls = parse_reply(text, self.tool_names)[1] if self.tool_names else None
                if calls is not None:
                    message.update(content=None, tool_calls=[_tool_call(call) for call in calls])
                    reason = FINISH_TOOL_CALLS if reason == FINISH_STOP else reason
                choices.append({"index": i, "message": message,
                                "logprobs": self._logprobs(i, c.logprobs), "finish_reason": reason})
            else:
                choices.append({"index": i, "text": text, "logprobs": self._logprobs(i, c.logprobs),
                                "finish_reason": reason})
        return {"id": self.run.id, "object": "chat.completion" if self.chat else "text_completion",
                "created": self.run.created, "model": self.model, "choices": choices,
                "usage": self.run.usage(), "system_fingerprint": None}

    def chunk(self, choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> bytes:
        data: dict[str, Any] = {
            "id": self.run.id, "object": "chat.completion.chunk" if self.chat else "text_completion",
            "created": self.run.created, "model": self.model, "choices": choices,
            "system_fingerprint": None}
        if self.run.api.include_usage:
            data["usage"] = usage
        return sse(data)

    def _choice(self, index: int, text: str | None, role: bool = False,
                entries: list[TokenLogprob] | None = None, reason: str | None = None) -> dict[str, Any]:
        logprobs = self._logprobs(index, entries) if entries else None
        if not self.chat:
            return {"index": index, "text": text or "", "logprobs": logprobs, "finish_reason": reason}
        delta: dict[str, Any] = {}
        if role:
            delta["role"] = "assistant"
        if text is not None or role:
            delta["content"] = text
        return {"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": reason}

    def opening(self) -> list[bytes]:
        if not self.chat:
            return []
        return [self.chunk([self._choice(i, None if self.calls else "", role=True)])
                for i in range(len(self.run.choices))]

    def delta(self, index: int, event: TextDelta) -> bytes:
        """The chunk for a text delta (b"" when a tool-call reader holds it all back)."""
        if self.calls is None:
            return self.chunk([self._choice(index, event.text, entries=list(event.logprobs))])
        self.held[index] += event.logprobs
        return self._released(index, self.calls[index].feed(event.text))

    def _released(self, index: int, released: Released) -> bytes:
        if not released.content and not released.calls:
            return b""
        choice = self._choice(index, released.content or None, entries=self.held[index])
        self.held[index] = []
        if released.calls:
            choice["delta"]["tool_calls"] = [_call_delta(d) for d in released.calls]
        return self.chunk([choice])

    def finish(self, index: int, done: GenerationDone) -> bytes:
        reason = done.finish_reason
        if self.calls is None:
            return self.chunk([self._choice(index, None if self.chat else "", reason=reason)])
        reader = self.calls[index]
        flushed = self._released(index, reader.finish())
        if reader.calls is not None and reason == FINISH_STOP:
            reason = FINISH_TOOL_CALLS
        entries, self.held[index] = self.held[index], []
        return flushed + self.chunk([self._choice(index, None, entries=entries, reason=reason)])

    def usage_chunk(self) -> bytes:
        return self.chunk([], usage=self.run.usage())


