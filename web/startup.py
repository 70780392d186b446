"""Serving while the model loads: the start-up progress and the gate in front of the app.

The lifespan binds the port at once and loads the model on a background thread (web/app.py);
until the services are built, :class:`StartingGate` answers every request itself:

- ``GET /healthz`` -> 503 ``{"status": "starting", "progress": 0.42, "stage": str, "ready": false}``
  (``"status": "failed"`` with ``"error"`` when loading failed); the app's own /healthz after.
- ``/static/...``: served (the starting page needs its script and style sheet).
- A WebSocket: accepted and closed with 1013 "try again later" (RFC 6455 7.4.1), so the chat page's
  reconnect backoff simply retries.
- ``/v1/...``: 503 in the OpenAI error shape; other JSON paths (``/api/``, ``/admin/api/``): 503
  ``{"error": {"code": "starting", "message"}}``; both with ``Retry-After``.
- Any other path: 503 with the starting page (templates/starting.html), whose static/starting.js
  polls /healthz and reloads into the app when it is ready.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Receive, Scope, Send

from web.errors import WS_CLOSE_TRY_AGAIN_LATER

CODE_STARTING = "starting"
RETRY_AFTER_S = 5
_NO_STORE = {"Cache-Control": "no-store"}
# The engine's own progress (load_model's fraction 0..1) covers this share of the bar; building
# the engine (KV cache) and starting its step loop the rest.
LOAD_SHARE = 0.9


@dataclass(frozen=True)
class StartupView:
    """A snapshot of start-up. status: "starting" | "failed" | "ready"; progress: 0..1."""

    status: str
    stage: str
    progress: float
    error: str | None = None


class Startup:
    """Start-up progress, written by the loading thread and read by requests (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._view = StartupView("starting", "starting", 0.0)

    def report(self, stage: str, fraction: float) -> None:
        """Progress of a stage (fraction 0..1 of the whole start-up); never moves backwards."""
        with self._lock:
            if self._view.status == "starting":
                progress = min(max(fraction, self._view.progress), 1.0)
                self._view = StartupView("starting", stage, progress)

    def loader_progress(self, stage: str, fraction: float) -> None:
        """load_model's progress callback (message, fraction 0..1), scaled to LOAD_SHARE."""
        self.report(stage, LOAD_SHARE * fraction)

    def fail(self, error: str) -> None:
        with self._lock:
            self._view = StartupView("failed", "failed", self._view.progress, error)

    def set_ready(self) -> None:
        with self._lock:
            self._view = StartupView("ready", "ready", 1.0)

    def view(self) -> StartupView:
        with self._lock:
            return self._view

    @property
    def is_ready(self) -> bool:
        return self.view().status == "ready"


def starting_json(view: StartupView) -> dict[str, object]:
    """/healthz's body before the app is ready."""
    body: dict[str, object] = {"status": view.status, "progress": round(view.progress, 3),
                               "stage": view.stage, "ready": False}
    if view.error:
        # Anyone may ask /healthz: the cause (paths, device errors) stays in the server log.
        body["error"] = "the model could not be loaded; see the server log"
    return body


def _message(view: StartupView) -> str:
    if view.status == "failed":
        return "The model could not be loaded; see the server log."
    return f"The server is starting: loading the model ({round(100 * view.progress)}%). Try again shortly."


class StartingGate:
    """ASGI middleware: passes everything through once `startup` is ready; answers itself before."""

    def __init__(self, app: ASGIApp, startup: Startup, templates: Jinja2Templates) -> None:
        self.app = app
        self.startup = startup
        self.templates = templates

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (scope["type"] not in ("http", "websocket") or self.startup.is_ready
                or path.startswith("/static/")):
            await self.app(scope, receive, send)
            return
        view = self.startup.view()
        if scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": WS_CLOSE_TRY_AGAIN_LATER,
                        "reason": "starting"})
            return
        response = self._response(Request(scope), path, view)
        await response(scope, receive, send)

    def _response(self, request: Request, path: str, view: StartupView) -> Response:
        headers = {**_NO_STORE, "Retry-After": str(RETRY_AFTER_S)}
        if path == "/healthz":
            return JSONResponse(starting_json(view), status_code=503, headers=headers)
        if path.startswith("/v1/"):
            error = {"message": _message(view), "type": "server_error", "param": None, "code": CODE_STARTING}
            return JSONResponse({"error": error}, status_code=503, headers=headers)
        if path.startswith(("/api/", "/admin/api/")) or "application/json" in request.headers.get("accept", ""):
            return JSONResponse({"error": {"code": CODE_STARTING, "message": _message(view)}},
                                status_code=503, headers=headers)
        return self.templates.TemplateResponse(
            request, "starting.html",
            {"percent": round(100 * view.progress), "stage": view.stage, "failed": view.status == "failed"},
            status_code=503, headers=headers)
