"""The cluster tests' clients: :class:`User`, one browser's cookies (httpx) signing up / logging
in through the forms with their CSRF tokens and making JSON calls with the X-CSRF-Token header,
and :class:`ChatSocket`, a chat WebSocket on /ws. Also :func:`wait_for` (poll with a deadline).

The processes they talk to are in tests/cluster/processes.py.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from contextlib import ExitStack
from typing import Any, Callable, Mapping

import httpx

from web.session import SESSION_COOKIE

PASSWORD = "correct horse battery staple"
INSTANCE_HEADER = "X-Crescent-Instance"
_CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]*)">')


def unique_name(prefix: str = "user") -> str:
    """A username no other test uses (the cluster's database is shared by the whole session)."""
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition",
             interval: float = 0.02) -> Any:
    """Poll `predicate` until it returns a truthy value (returned); AssertionError at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)

# --- browsers --------------------------------------------------------------------------------------

class User:
    """One browser: a cookie jar (httpx; cookies are per host, so one session works against
    every process on 127.0.0.1), the forms' CSRF handling and chat sockets.

    `base_url` is where relative paths go; every method also takes an absolute URL, or
    ``base=`` another process's URL, to send the same cookies elsewhere."""

    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = httpx.Client(follow_redirects=False, timeout=timeout)
        self.username: str | None = None
        self.password = PASSWORD

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "User":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _url(self, path: str, base: str | None) -> str:
        if path.startswith(("http://", "https://")):
            return path
        return (base or self.base_url).rstrip("/") + path

    @property
    def session_token(self) -> str | None:
        return self.http.cookies.get(SESSION_COOKIE)

    def csrf_token(self, base: str | None = None) -> str:
        """The CSRF token for the current cookies, read from a page's meta tag (a 404 page:
        every page has one); anonymous browsers get the double-submit cookie here too."""
        response = self.http.get(self._url("/__csrf_probe__", base), headers={"Accept": "text/html"})
        match = _CSRF_META.search(response.text)
        assert match and match.group(1), f"no csrf-token meta tag in the page ({response.status_code})"
        return match.group(1)

    def request(self, method: str, path: str, base: str | None = None, csrf: bool | str = True,
                **kwargs: Any) -> httpx.Response:
        """An HTTP request; unsafe methods carry ``X-CSRF-Token`` (fetched from `base` unless
        `csrf` is a token, or False for none)."""
        headers = dict(kwargs.pop("headers", None) or {})
        if method.upper() in ("POST", "PUT", "PATCH", "DELETE") and csrf:
            headers.setdefault("X-CSRF-Token", csrf if isinstance(csrf, str) else self.csrf_token(base))
        return self.http.request(method, self._url(path, base), headers=headers, **kwargs)

    def get(self, path: str, base: str | None = None, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, base, **kwargs)

    def post(self, path: str, base: str | None = None, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, base, **kwargs)

    def form(self, path: str, data: Mapping[str, str], base: str | None = None,
             csrf: str | None = None) -> httpx.Response:
        """A form POST with the hidden ``csrf_token`` field (taken from `base` unless given)."""
        token = csrf or self.csrf_token(base)
        return self.http.post(self._url(path, base), data={**data, "csrf_token": token})

    def sign_up(self, username: str | None = None, base: str | None = None) -> str:
        """Sign up through the form (a fresh unique name by default); returns the username."""
        username = username or unique_name()
        response = self.form("/signup", {"username": username, "password": self.password}, base)
        assert response.status_code == 303, f"sign-up failed ({response.status_code}): {response.text[:500]}"
        assert self.session_token, "sign-up set no session cookie"
        self.username = username
        return username

    def log_in(self, username: str, password: str | None = None, base: str | None = None) -> None:
        response = self.form("/login", {"username": username, "password": password or self.password}, base)
        assert response.status_code == 303, f"log-in failed ({response.status_code}): {response.text[:500]}"
        self.username = username

    def websocket(self, base: str | None = None, timeout: float = 30.0) -> "ChatSocket":
        """A chat socket on ``/ws`` of `base` (default: this browser's process) with the cookies."""
        url = self._url("/ws", base).replace("http://", "ws://", 1).replace("https://", "wss://", 1)
        return ChatSocket(url, self.http.cookies, timeout)


class ChatSocket:
    """A chat WebSocket (docs/INTERFACES.md section 4) with a receive timeout; a context manager.

    The handshake response's headers are in :attr:`response_headers` (``X-Crescent-Instance``
    says which process took the socket)."""

    def __init__(self, url: str, cookies: httpx.Cookies, timeout: float = 30.0) -> None:
        from websockets.sync.client import connect

        cookie = "; ".join(f"{name}={value}" for name, value in cookies.items())
        self.timeout = timeout
        self._stack = ExitStack()
        self.connection = self._stack.enter_context(connect(
            url, additional_headers={"Cookie": cookie} if cookie else None, open_timeout=timeout,
            max_size=1 << 22))
        # websockets' Headers: case-insensitive names.
        self.response_headers = self.connection.response.headers

    @property
    def instance(self) -> str | None:
        return self.response_headers.get(INSTANCE_HEADER)

    def __enter__(self) -> "ChatSocket":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()

    def send_json(self, frame: Mapping[str, Any]) -> None:
        self.connection.send(json.dumps(frame))

    def receive_json(self, timeout: float | None = None) -> dict[str, Any]:
        return json.loads(self.connection.recv(timeout=self.timeout if timeout is None else timeout))

    def receive_until(self, kinds: tuple[str, ...] = ("done",), limit: int = 5000,
                      timeout: float | None = None) -> list[dict[str, Any]]:
        """Frames up to and including the first whose type is in `kinds`."""
        frames = []
        for _ in range(limit):
            frame = self.receive_json(timeout)
            frames.append(frame)
            if frame.get("type") in kinds:
                return frames
        raise AssertionError(f"no {kinds} frame in {limit} frames")

    def send_message(self, text: str, conversation_id: str | None = None,
                     client_msg_id: str | None = None) -> dict[str, Any]:
        """Send a ``send`` frame; returns it (its ``client_msg_id`` identifies the ``ack``)."""
        frame = {"type": "send", "client_msg_id": client_msg_id or uuid.uuid4().hex,
                 "conversation_id": conversation_id, "text": text}
        self.send_json(frame)
        return frame

    def ping(self) -> None:
        self.send_json({"type": "ping"})
        assert self.receive_json() == {"type": "pong"}
