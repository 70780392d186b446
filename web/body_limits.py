"""A request body read with a size cap enforced while it arrives, for uploads.

A declared Content-Length over the cap can be refused before reading (the routes do that); a
body that grows past the cap is refused at that point, not after all of it was read.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import Message, Receive

# Room in a multipart body for the boundaries, the part headers and small fields.
MULTIPART_OVERHEAD_BYTES = 16 * 1024


class BodyTooLarge(Exception):
    """The request body grew past the limit while it was being read."""


def limited_request(request: Request, limit: int) -> Request:
    """`request` whose body reads raise BodyTooLarge as soon as more than `limit` bytes came."""
    return Request(request.scope, limited_receive(request.receive, limit))


def limited_receive(receive: Receive, limit: int) -> Receive:
    """`receive`, raising BodyTooLarge as soon as the body passed `limit` bytes."""
    received = 0

    async def limited() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise BodyTooLarge()
        return message

    return limited
