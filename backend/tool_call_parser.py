"""Reading tool calls out of a reply's text as it streams.

A reply that calls tools is ``<tool_call>`` + a JSON array of ``{"name": ..., "arguments": {...}}``
+ ``</tool_call>`` (backend.output_constraint.ToolCallFormat; the grammar writes it compactly),
after nothing but whitespace; anything else is plain text. :class:`ToolCallStream` is fed the
reply's text deltas and releases, per delta, the content text and the tool-call deltas in
OpenAI's streaming shape (a call's id and name first, then fragments of its arguments' JSON
text). The start of a reply is held back while it could still be the begin tag, so no part of
a tag is ever released as content.

Whole replies go through the same class (:func:`parse_reply`), so the streamed deltas joined
are exactly the non-streamed message. A call's ``arguments`` is the JSON text the model wrote
for it. A block that is not a non-empty array of such calls to declared functions (a reply cut
by max_tokens) is invalid: the whole reply is then plain content in a non-streamed reply
(:attr:`ToolCallStream.calls` is None), while a stream has already sent what it sent.
Text after the end tag is dropped (the grammar ends the reply there).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Callable, Collection

from backend.generator import ToolCall
from backend.output_constraint import TOOL_CALL_BEGIN, TOOL_CALL_END

_WHITESPACE = " \t\r\n"


def new_call_id() -> str:
    """An id for a call, as OpenAI's: "call_" + 24 random characters."""
    return "call_" + secrets.token_hex(12)


@dataclass
class CallDelta:
    """Part of one call. The first delta of call `index` carries its id and name."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass
class Released:
    """What one fed delta (or the end) lets out."""

    content: str = ""
    calls: list[CallDelta] = field(default_factory=list)


@dataclass
class _Element:
    """One array element being scanned: its keys' raw values so far."""

    name: str | None = None
    announced: bool = False
    arguments_start: int | None = None  # index in the block of the value's first character
    arguments_end: int | None = None  # one past its last non-whitespace character so far
    arguments_sent: int = 0  # characters of the value released
    id: str = ""


class ToolCallStream:
    """Incremental parser of one reply (one choice). names: the declared functions (a call to
    another makes the block invalid); new_id: the id maker (tests pass a fixed one)."""

    def __init__(self, names: Collection[str], begin: str = TOOL_CALL_BEGIN, end: str = TOOL_CALL_END,
                 new_id: Callable[[], str] = new_call_id) -> None:
        self.names, self.begin, self.end, self._new_id = set(names), begin, end, new_id
        self._mode = "start"  # start -> text | block -> after
        self._held = ""  # start: text that may still be the begin tag
        self._block = ""  # block: text after the begin tag
        self._pos = 0  # block: characters scanned
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._key_start: int | None = None  # depth-2 string being read as a key
        self._expect_key = False
        self._key: str | None = None  # depth-2 key whose value is being read
        self._after_colon = False  # the next non-whitespace character starts that value
        self._value_start: int | None = None
        self._array_end: int | None = None
        self._elements: list[_Element] = []

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, delta: str) -> Released:
        """Take the next text delta; returns what may be released now."""
        if self._mode == "text":
            return Released(content=delta)
        if self._mode == "after":
            self._block += delta
            return Released()
        if self._mode == "start":
            self._held += delta
            stripped = self._held.lstrip(_WHITESPACE)
            if stripped.startswith(self.begin):
                self._mode = "block"
                delta = stripped[len(self.begin):]
            elif not stripped or self.begin.startswith(stripped):
                return Released()
            else:
                self._mode, held, self._held = "text", self._held, ""
                return Released(content=held)
        self._block += delta
        self._scan()
        return Released(calls=self._release())

    def finish(self) -> Released:
        """The reply ended: release what was held (the start that was never a tag)."""
        if self._mode == "start":
            self._mode, held, self._held = "text", self._held, ""
            return Released(content=held)
        return Released()

    # -- results ---------------------------------------------------------------------------

    @property
    def calls(self) -> list[ToolCall] | None:
        """The calls of a complete, valid block (after finish), else None."""
        if self._mode not in ("block", "after") or self._array_end is None:
            return None
        tail = self._block[self._array_end:].lstrip(_WHITESPACE)
        if not tail.startswith(self.end):
            return None
        try:
            array = json.loads(self._block[:self._array_end])
        except ValueError:
            return None
        if not isinstance(array, list) or not array or len(array) != len(self._elements):
            return None
        calls = []
        for item, element in zip(array, self._elements):
            if not isinstance(item, dict) or set(item) != {"name", "arguments"} \
                    or item["name"] not in self.names or not isinstance(item["arguments"], dict) \
                    or element.arguments_start is None or element.arguments_end is None:
                return None
            calls.append(ToolCall(element.id, item["name"],
                                  self._block[element.arguments_start:element.arguments_end]))
        return calls

    # -- scanning --------------------------------------------------------------------------

    def _scan(self) -> None:
        block = self._block
        while self._pos < len(block) and self._array_end is None:
            i, ch = self._pos, block[self._pos]
            self._pos += 1
            if self._in_string:
                if self._escape:
                    self._escape = False
                elif ch == "\\":
                    self._escape = True
                elif ch == '"':
                    self._in_string = False
                    self._string_closed(i)
                self._grow_value(i)
                continue
            if ch in _WHITESPACE:
                continue
            if self._depth == 2 and ch == ":":
                self._after_colon = True
                continue
            if self._after_colon:
                self._after_colon = False
                self._value_start = i
                if self._key == "arguments":
                    self._elements[-1].arguments_start = i
            if ch == '"':
                self._in_string = True
                if self._depth == 2 and self._expect_key:
                    self._key_start, self._expect_key = i, False
            elif ch in "[{":
                self._depth += 1
                if self._depth == 2 and ch == "{":
                    self._elements.append(_Element(id=self._new_id()))
                    self._expect_key, self._key = True, None
            elif ch in "]}":
                self._depth -= 1
                if self._depth == 1:
                    self._end_value()
                elif self._depth == 0:
                    self._array_end = i + 1
                    self._mode = "after"
            elif self._depth == 2 and ch == ",":
                self._end_value()
                self._expect_key = True
            self._grow_value(i)

    def _string_closed(self, i: int) -> None:
        if self._key_start is not None:  # a key at depth 2
            try:
                self._key = json.loads(self._block[self._key_start:i + 1])
            except ValueError:
                self._key = None
            self._key_start, self._value_start = None, None
        elif self._depth == 2 and self._key == "name" and self._value_start is not None and self._elements:
            try:
                name = json.loads(self._block[self._value_start:i + 1])
            except ValueError:
                return
            if isinstance(name, str):
                self._elements[-1].name = name

    def _grow_value(self, i: int) -> None:
        """The arguments value being read now ends at least at character i."""
        if self._key == "arguments" and self._value_start is not None and self._elements \
                and self._depth >= 2 and self._block[i] not in _WHITESPACE:
            self._elements[-1].arguments_end = i + 1

    def _end_value(self) -> None:
        self._key, self._value_start = None, None

    def _release(self) -> list[CallDelta]:
        out = []
        for index, element in enumerate(self._elements):
            if element.name is None or element.name not in self.names:
                continue  # an undeclared function is never announced (the block is invalid)
            delta = CallDelta(index)
            if not element.announced:
                element.announced = True
                delta.id, delta.name = element.id, element.name
            start, end = element.arguments_start, element.arguments_end
            if start is not None and end is not None:
                delta.arguments = self._block[start + element.arguments_sent:end]
                element.arguments_sent = end - start
            if delta.id is not None or delta.arguments:
                out.append(delta)
        return out


def parse_reply(text: str, names: Collection[str], new_id: Callable[[], str] = new_call_id
                ) -> tuple[str | None, list[ToolCall] | None]:
    """(content, calls) of a whole reply: calls None and the text as content unless it is a
    valid block; content None when there are calls."""
    stream = ToolCallStream(names, new_id=new_id)
    stream.feed(text)
    stream.finish()
    calls = stream.calls
    return (None, calls) if calls is not None else (text, None)
