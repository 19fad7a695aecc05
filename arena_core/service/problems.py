"""Every error the service answers, in one shape: RFC 9457 problem details.

``{"type", "title", "status", "detail"}`` as ``application/problem+json``; a record the arena
refused carries its :meth:`~arena_core.model.errors.ValidationError.as_dict` under ``error``
(``code``, ``record``, ``field``, ``expected``, ``got``). No response carries an exception's
text or a host path: what is not the client's to know is said in general terms.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from arena_core.model.errors import ValidationError
from arena_core.store.pipeline import REPLACE_HINT

__all__ = ["Problem", "install", "problem"]

TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Content too large",
    429: "Too many requests",
    500: "Internal server error",
}


class Problem(Exception):
    """An error to answer with ``status`` and ``detail`` (and ``headers``, e.g. ``Retry-After``)."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.headers = status, detail, headers or {}


def problem(status: int, detail: str, headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    body = {"type": "about:blank", "title": TITLES.get(status, "Error"), "status": status, "detail": detail, **extra}
    return JSONResponse(body, status_code=status, headers=headers, media_type="application/problem+json")


def install(app: FastAPI) -> None:
    """Answer every error of ``app`` as a problem."""

    @app.exception_handler(Problem)
    def _problem(request: Request, error: Problem) -> JSONResponse:
        return problem(error.status, error.detail, error.headers)

    @app.exception_handler(ValidationError)
    def _invalid(request: Request, error: ValidationError) -> JSONResponse:
        if error.code != "duplicate_id":
            return problem(400, str(error), error=error.as_dict())
        detail = str(error).replace(REPLACE_HINT, "?replace=true")  # what an HTTP client can do
        fields = {k: v.replace(REPLACE_HINT, "?replace=true") if isinstance(v, str) else v
                  for k, v in error.as_dict().items()}  # fmt: skip
        return problem(409, detail, error=fields)

    @app.exception_handler(RequestValidationError)
    def _parameters(request: Request, error: RequestValidationError) -> JSONResponse:
        where = "; ".join(".".join(str(p) for p in e.get("loc", ())) + f": {e.get('msg', '')}" for e in error.errors())
        return problem(400, f"invalid request parameters ({where})")

    @app.exception_handler(HTTPException)
    def _http(request: Request, error: HTTPException) -> JSONResponse:
        return problem(error.status_code, str(error.detail) if error.status_code < 500 else TITLES[500])

    @app.exception_handler(Exception)
    def _unexpected(request: Request, error: Exception) -> JSONResponse:
        return problem(500, "the request could not be completed; the operator's log says why")
