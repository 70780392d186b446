"""``X-Crescent-Instance``: which server process answered (CRESCENT_INSTANCE).

Behind a router several processes serve one site (README, "Several processes / several
machines"); the header tells an operator, and the cluster tests, which one served a response or
accepted a WebSocket. Pure ASGI, so WebSocket handshakes carry it too. Not added when the process
has no instance name (one process, as before).
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

INSTANCE_HEADER = "X-Crescent-Instance"


class InstanceHeaderMiddleware:
    """Adds ``X-Crescent-Instance: <instance>`` to every HTTP response and WebSocket accept."""

    def __init__(self, app: ASGIApp, instance: str) -> None:
        self.app = app
        self.instance = instance

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)[INSTANCE_HEADER] = self.instance
            elif message["type"] == "websocket.accept":
                headers = list(message.get("headers") or [])
                headers.append((INSTANCE_HEADER.lower().encode(), self.instance.encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_header)
