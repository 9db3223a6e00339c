"""The one error shape of the sandbox: `{"error": {"code": "...", "message": "..."}}`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from starlette.responses import JSONResponse


class ApiError(Exception):
    """A 4xx/5xx answer: raised anywhere in a handler, turned into the error body by the app."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = code
        self.message = message
        self.headers = dict(headers or {})

    def response(self) -> JSONResponse:
        """The JSON response carrying this error."""
        return error_response(self.status_code, self.code, self.message, self.headers)


def error_response(
    status_code: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """Build the error body every 4xx/5xx of the sandbox uses."""
    body = {"error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status_code, headers=dict(headers or {}))


def bad_request(message: str) -> ApiError:
    """400 VALIDATION_ERROR with a message naming the field and the rule."""
    return ApiError(400, "VALIDATION_ERROR", message)


def not_found(what: str) -> ApiError:
    """404 NOT_FOUND."""
    return ApiError(404, "NOT_FOUND", f"{what} not found")


T = TypeVar("T")


def found(item: T | None, what: str) -> T:
    """`item`, or 404 NOT_FOUND naming `what` when it is None."""
    if item is None:
        raise not_found(what)
    return item


def conflict(code: str, message: str) -> ApiError:
    """409 with a specific code (DUPLICATE_EXTERNAL_ID, INSUFFICIENT_BALANCE, ...)."""
    return ApiError(409, code, message)
