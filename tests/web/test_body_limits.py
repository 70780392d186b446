"""The request-body size cap (web.body_limits)."""

from __future__ import annotations

import asyncio

import pytest

from web.body_limits import BodyTooLarge, limited_receive


def _receive_of(chunks: list[bytes]):  # type: ignore[no-untyped-def]
    messages = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]

    async def receive():  # type: ignore[no-untyped-def]
        return messages.pop(0)

    return receive


def test_a_body_up_to_the_limit_passes_and_one_byte_more_is_refused_when_it_arrives() -> None:
    async def read(chunks: list[bytes], limit: int) -> int:
        receive = limited_receive(_receive_of(chunks), limit)
        total = 0
        for _ in chunks:
            total += len((await receive())["body"])
        return total

    assert asyncio.run(read([b"ab", b"cd"], 4)) == 4
    with pytest.raises(BodyTooLarge):
        asyncio.run(read([b"ab", b"cde", b"never read"], 4))
