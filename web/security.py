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
- :class:`CsrfMiddleware` requires a CSRF token on every unsafe request outside ``/v1/`` (the
  OpenAI API authenticates with ``Authorization: Bearer`` only, so it has no cookie to abuse).
  The token travels in the ``X-CSRF-Token`` header (fetch calls; read from
  ``<meta name="csrf-token">``) or, for ``application/x-www-form-urlencoded`` forms, in a hidden
  ``csrf_token`` field (multipart bodies must use the header). A request with a session cookie
  needs HMAC-SHA256(secret, "session:" + session token); one without (the log-in and sign-up
  forms) needs HMAC-SHA256(secret, "anon:" + the ``crescent_csrf`` cookie), a double-submit
  cookie set when a page first asks for a token. Failure: 403, code ``csrf_failed``. Being a
  middleware, it covers every route added later without any change to the route. A request
  with ``Authorization: Bearer`` and no session cookie needs no token (an API client such as
  an upload script): a browser never attaches that header by itself, and a cross-site page
  cannot add it without a CORS preflight this server never grants; without the cookie there is
  no ambient credential to abuse. A request with both still needs the token.

The app passes a key derived from the one server secret (backend/secret_key.py), so tokens stay
valid across restarts and between processes started with the same secret. Without one (tiny test
apps) the key is random per middleware.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from typing import Iterable
from urllib.parse import parse_qs, urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import HTTPConnection, Request, cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from web.errors import CODE_FORBIDDEN_ORIGIN, WS_CLOSE_FORBIDDEN_ORIGIN, error_response
from web.session import SESSION_COOKIE, USER_STATE_KEY

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


# --- CSRF ------------------------------------------------------------------------------------

CSRF_COOKIE = "crescent_csrf"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"
CODE_CSRF_FAILED = "csrf_failed"
CSRF_FAILED_MESSAGE = (
    "This form or page is out of date, or the request did not come from this site. "
    "Reload the page and try again."
)
# Paths whose unsafe requests need no token: Bearer-authenticated only, no cookie.
CSRF_EXEMPT_PREFIXES: tuple[str, ...] = ("/v1/",)
# A urlencoded form is buffered to find its token; bigger bodies must send the header.
MAX_CSRF_FORM_BYTES = 1 << 20
_FORM_TYPE = "application/x-www-form-urlencoded"
_STATE_KEY = "crescent_csrf"


@dataclass
class _CsrfContext:
    """Per-request CSRF state, kept in ``scope["state"]`` for :func:`csrf_token_for`."""

    secret: bytes
    session: str | None
    anon: str | None        # the crescent_csrf cookie the request carried
    new_anon: str | None = None  # made for this response when the request had none
    cookie_secure: bool = False

    def token(self) -> str:
        if self.session:
            return _sign(self.secret, "session:" + self.session)
        if self.anon is None and self.new_anon is None:
            self.new_anon = secrets.token_urlsafe(24)
        return _sign(self.secret, "anon:" + (self.anon or self.new_anon or ""))

    def expected(self) -> str | None:
        """The token this request must carry; None when it cannot carry a valid one."""
        if self.session:
            return _sign(self.secret, "session:" + self.session)
        if self.anon:
            return _sign(self.secret, "anon:" + self.anon)
        return None


def _is_bearer(scope: Scope) -> bool:
    """The request carries ``Authorization: Bearer <credential>`` (scheme case-insensitive)."""
    scheme, _, credential = Headers(scope=scope).get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and bool(credential.strip())


def _sign(secret: bytes, message: str) -> str:
    return hmac.new(secret, message.encode("utf-8"), hashlib.sha256).hexdigest()


def _cookies(scope: Scope) -> dict[str, str]:
    # The parser Request.cookies uses, so this middleware and the routes see the same session.
    return cookie_parser(Headers(scope=scope).get("cookie", ""))


def csrf_token_for(request: HTTPConnection) -> str:
    """The CSRF token to embed in the page served for `request` (meta tag, hidden fields).

    Raises RuntimeError when :class:`CsrfMiddleware` is not installed.
    """
    context = request.scope.get("state", {}).get(_STATE_KEY)
    if context is None:
        raise RuntimeError("CsrfMiddleware is not installed on this app")
    return context.token()


class CsrfMiddleware:
    """Checks the CSRF token of unsafe HTTP requests and sets the double-submit cookie.

    Args:
        secret: HMAC key (web.app passes ServerKeys.csrf; None: 32 random bytes).
        cookie_secure: mark the ``crescent_csrf`` cookie Secure (served over HTTPS).
        exempt_prefixes: path prefixes that need no token.
    """

    def __init__(
        self, app: ASGIApp, secret: bytes | None = None, cookie_secure: bool = False,
        exempt_prefixes: Iterable[str] = CSRF_EXEMPT_PREFIXES,
    ) -> None:
        self.app = app
        self.secret = secret or secrets.token_bytes(32)
        self.cookie_secure = cookie_secure
        self.exempt_prefixes = tuple(exempt_prefixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cookies = _cookies(scope)
        context = _CsrfContext(
            self.secret, cookies.get(SESSION_COOKIE) or None, cookies.get(CSRF_COOKIE) or None,
            cookie_secure=self.cookie_secure,
        )
        scope.setdefault("state", {})[_STATE_KEY] = context
        if (
            scope["method"] in UNSAFE_METHODS
            and not scope["path"].startswith(self.exempt_prefixes)
            and not (context.session is None and _is_bearer(scope))
        ):
            verdict = await self._verify(scope, receive, context)
            if isinstance(verdict, tuple):
                status, message = verdict
                code = CODE_CSRF_FAILED if status == 403 else "too_large"
                response = error_response(Request(scope, receive), status, code, message)
                await response(scope, receive, send)
                return
            receive = verdict

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start" and context.new_anon is not None:
                headers = MutableHeaders(scope=message)
                flags = "; Path=/; HttpOnly; SameSite=Lax" + ("; Secure" if context.cookie_secure else "")
                headers.append("set-cookie", f"{CSRF_COOKIE}={context.new_anon}{flags}")
            await send(message)

        await self.app(scope, receive, send_with_cookie)

    async def _verify(self, scope: Scope, receive: Receive, context: _CsrfContext) -> Receive | tuple[int, str]:
        """The receive callable to pass on (the body replayed when it was read), or the
        (status, message) of the refusal."""
        expected = context.expected()
        headers = Headers(scope=scope)
        provided = headers.get(CSRF_HEADER)
        if provided is None and headers.get("content-type", "").split(";")[0].strip().lower() == _FORM_TYPE:
            body = await _read_body(receive, MAX_CSRF_FORM_BYTES)
            if body is None:
                return 413, "The form is too large."
            receive = _replay(body, receive)
            try:
                values = parse_qs(body.decode("latin-1"), max_num_fields=1000).get(CSRF_FIELD, [])
            except ValueError:
                values = []
            provided = values[0] if len(values) == 1 else None
        if expected is None or provided is None or not hmac.compare_digest(provided.encode(), expected.encode()):
            log.info("refused %s %s: missing or wrong CSRF token", scope["method"], scope["path"])
            return 403, CSRF_FAILED_MESSAGE
        return receive


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # client gone
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def template_context(request: Request) -> dict[str, object]:
    """Jinja2 context processor: ``csrf_token`` ("" where the CSRF middleware did not run, e.g.
    the origin check's error page) and ``nav_user`` (the user :func:`web.session.current_user`
    found for this request, if a route asked; None otherwise)."""
    state = request.scope.get("state", {})
    context = state.get(_STATE_KEY)
    return {
        "csrf_token": context.token() if context is not None else "",
        "nav_user": state.get(USER_STATE_KEY),
    }
