"""Response security headers and the same-origin check for state-changing requests.

Two pure ASGI middlewares (pure ASGI so that they see WebSocket scopes too, and add no task per
request the way ``BaseHTTPMiddleware`` does):

- :class:`SecurityHeadersMiddleware` adds the CSP of docs/INTERFACES.md section 4 and the usual
  hardening headers to every HTTP response.
- :class:`OriginCheckMiddleware` refuses unsafe methods (POST, PUT, PATCH, DELETE) whose
  ``Origin`` is not the request's own ``scheme://host`` or one of ``allowed_origins`` (403), and
  WebSocket upgrades likewise (closed with 4403 before the handshake completes, so the socket
  never opens). A request without ``Origin`` passes: browsers send it on every cross-origin
  POST and every WebSocket upgrade, so its absence means a non-browser client, which CSRF does not
  concern. ``Origin: null`` (sandboxed frames, some redirects) never matches.
"""

from __future__ import annotations

import logging
from typing import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from web.errors import CODE_FORBIDDEN_ORIGIN, WS_CLOSE_FORBIDDEN_ORIGIN, error_response

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

log = logging.getLogger(__name__)

_DEFAULT_PORTS = {"http": 80, "https": 443}
_WS_TO_HTTP = {"ws": "http", "wss": "https"}


class SecurityHeadersMiddleware:
    """Adds :data:`SECURITY_HEADERS` to every HTTP response (a route's own value wins)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


def normalize_origin(origin: str) -> tuple[str, str, int] | None:
    """``"HTTP://Example.com"`` -> ``("http", "example.com", 80)``; None when not an http(s)
    origin (``"null"``, garbage, other schemes)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme]


def own_origin(scope: Scope) -> str | None:
    """The origin a page served by this request would have: scheme (ws -> http) and Host."""
    host = Headers(scope=scope).get("host")
    if not host:
        return None
    scheme = scope.get("scheme", "http")
    return f"{_WS_TO_HTTP.get(scheme, scheme)}://{host}"


def is_same_origin(scope: Scope, allowed_origins: Iterable[str] = ()) -> bool:
    """True when the request carries no ``Origin`` or one equal to its own or an allowed one."""
    origin = Headers(scope=scope).get("origin")
    if origin is None:
        return True
    candidate = normalize_origin(origin)
    if candidate is None:
        return False
    own = own_origin(scope)
    trusted = [own] if own else []
    trusted.extend(allowed_origins)
    return any(normalize_origin(t) == candidate for t in trusted)


class OriginCheckMiddleware:
    """Refuses cross-origin unsafe HTTP methods (403) and WebSocket upgrades (close 4403)."""

    def __init__(self, app: ASGIApp, allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed_origins = tuple(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            if not is_same_origin(scope, self.allowed_origins):
                _log_refusal(scope)
                # Closing before accept makes the server answer the upgrade with HTTP 403.
                await send({"type": "websocket.close", "code": WS_CLOSE_FORBIDDEN_ORIGIN, "reason": ""})
                return
        elif scope["type"] == "http" and scope["method"] in UNSAFE_METHODS:
            if not is_same_origin(scope, self.allowed_origins):
                _log_refusal(scope)
                request = Request(scope, receive)
                response = error_response(
                    request, 403, CODE_FORBIDDEN_ORIGIN, "Cross-origin request refused."
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _log_refusal(scope: Scope) -> None:
    # Behind a reverse proxy that rewrites Host, every browser request fails this check: the
    # log line (origin vs host) is how an operator finds out and sets CRESCENT_ALLOWED_ORIGINS.
    headers = Headers(scope=scope)
    log.warning(
        "refused cross-origin %s %s: Origin %r, own origin %r",
        scope.get("method", "WEBSOCKET"), scope.get("path", ""), headers.get("origin"), own_origin(scope),
    )
