"""What every request passes before it reaches the arena: a size limit on the body, a parse with
nesting and field limits, a token, and a rate per token."""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
from starlette.requests import Request

from arena_core.model.scalars import nesting
from arena_core.service.problems import Problem, problem
from arena_core.service.tokens import Principal, TokenStore

__all__ = ["BodyLimit", "Gate", "RateLimiter", "parse_body"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: How deep a request's JSON may nest, and how many keys its top-level object may have.
MAX_NESTING = 32
MAX_FIELDS = 200


class _TooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes is answered 413 before the app reads it
    (by its ``Content-Length``, or as it streams when it is sent in chunks)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem(413, f"the request body is larger than the service's limit of {self.limit:,} bytes")
        await response(scope, receive, send)


def parse_body(raw: bytes) -> Any:
    """A request's JSON, refused with a problem (400) when it is not JSON, nests deeper than
    :data:`MAX_NESTING` or has more than :data:`MAX_FIELDS` top-level fields."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise Problem(400, "the request body is not JSON (or nests deeper than JSON parsers allow)") from None
    if nesting(data) > MAX_NESTING:
        raise Problem(400, f"the request body nests deeper than {MAX_NESTING} levels")
    if isinstance(data, dict) and len(data) > MAX_FIELDS:
        raise Problem(400, f"the request body has more than {MAX_FIELDS} fields")
    return data


class RateLimiter:
    """A token bucket per API token: ``rate`` requests a second on average, ``burst`` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> None:
        """Take one request from ``key``'s bucket; :raises Problem: 429 when it is empty."""
        now = time.monotonic()
        with self._lock:
            level, then = self._buckets.get(key, (float(self.burst), now))
            level = min(float(self.burst), level + (now - then) * self.rate)
            if level < 1.0:
                wait = (1.0 - level) / self.rate
                self._buckets[key] = (level, now)
                raise Problem(
                    429, f"more than {self.rate:g} requests a second", {"Retry-After": f"{max(1, round(wait))}"}
                )
            self._buckets[key] = (level - 1.0, now)


class Gate:
    """Who may call what: every request first takes from its address's bucket (so a flood of
    anonymous reads, or of tokens that do not verify, is cut before any token is looked up), then
    a bearer token is checked against the token store and limited per token."""

    def __init__(
        self, tokens: TokenStore, limiter: RateLimiter, public_read: bool, addresses: RateLimiter | None = None
    ) -> None:
        self.tokens, self.limiter, self.public_read = tokens, limiter, public_read
        self.addresses = addresses or RateLimiter(limiter.rate * 4, limiter.burst * 4)

    def principal(
        self, request: Request, *, reading: bool, reviewing: bool = False, voting: bool = False
    ) -> Principal | None:
        """The caller; ``None`` only for a read when ``public_read`` opens reads.

        :param reviewing: the endpoint is the review queue's: the only one a reviewer may call (a
            reviewer judges runs blind: what the other endpoints show, tools, models and the
            judges' verdicts, is what it must not see); ``voting``: the endpoint is the battles',
            the only one a voter may call, for the same reason.
        :raises Problem: 401 without a valid token, 429 over the address's or the token's rate,
            403 for a reviewer's token elsewhere than the review queue, a voter's elsewhere than
            the battles.
        """
        self.addresses.take(f"address {request.client.host if request.client else '-'}")
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if not token:
            if reading and self.public_read:
                return None
            raise Problem(
                401, "an API token is required: Authorization: Bearer <token>", {"WWW-Authenticate": "Bearer"}
            )
        found = self.tokens.verify(token.strip()) if scheme.lower() == "bearer" else None
        if found is None:
            raise Problem(
                401, "the API token is not valid (unknown, malformed or revoked)", {"WWW-Authenticate": "Bearer"}
            )
        self.limiter.take(found.token_id)
        if found.role == "reviewer" and not reviewing:
            raise Problem(403, "a reviewer's token may only review (/review/next, /review/{item})")
        if found.role == "voter" and not voting:
            raise Problem(403, "a voter's token may only vote (/battles/next, /votes)")
        return found

    def voter(self, request: Request) -> Principal:
        """The voter calling (an operator may vote too). :raises Problem: 403 for other roles."""
        found = self.principal(request, reading=False, voting=True)
        if found is None or found.role not in ("voter", "operator"):
            raise Problem(403, "only a voter's (or an operator's) token may vote")
        return found

    def reviewer(self, request: Request) -> Principal:
        """The reviewer calling (an operator may review too). :raises Problem: 403 for a submitter."""
        found = self.principal(request, reading=False, reviewing=True)
        if found is None or found.role not in ("reviewer", "operator"):
            raise Problem(403, "only a reviewer's (or an operator's) token may review")
        return found

    def operator(self, request: Request) -> Principal:
        found = self.principal(request, reading=False)
        if found is None or found.role != "operator":
            raise Problem(403, "only an operator's token may do this")
        return found
