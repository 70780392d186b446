"""The error shape of the OpenAI-compatible API: ``{"error": {"message", "type", "param",
"code"}}`` with its status (and Retry-After / WWW-Authenticate / Allow where they apply)."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse


class ApiError(Exception):
    """An error answered in OpenAI's shape. param: the request field at fault, if any."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None,
                 retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.type = status, message, type
        self.param, self.code, self.retry_after_s = param, code, retry_after_s

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}

    def response(self) -> JSONResponse:
        headers = {"Cache-Control": "no-store"}
        if self.retry_after_s is not None:
            headers["Retry-After"] = str(self.retry_after_s)
        if self.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        if self.status == 405:
            headers["Allow"] = "POST"
        return JSONResponse(self.body(), status_code=self.status, headers=headers)


def bad_request(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, param=param, code=code)


def server_error(message: str = "The server had an error while processing your request.",
                  code: str = "server_error") -> ApiError:
    return ApiError(500, message, type="server_error", code=code)
