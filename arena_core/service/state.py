"""What the service's endpoints share: the arena and its store, who may call, the one writer,
the pool that checks workspaces before the writer stores their runs, and the boards between writes.

Writes go through one writer thread, so concurrent posts take turns on the store instead of
contending for its lock. Whatever is slow about a post (its workspace checked, a model judge
asked) happens before that, on a pool of ``check_concurrency`` threads of its own, with at most
``checks_per_token`` posts of one token in it at once: one submitter's slow checks never hold
the writer, nor fill the pool against everyone else.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from arena_core.arena import Arena
from arena_core.service.guards import Gate
from arena_core.service.problems import Problem
from arena_core.service.tokens import Principal, TokenStore
from arena_core.store import Store

__all__ = ["BoardCache", "Service"]

T = TypeVar("T")


class BoardCache:
    """Boards as last computed, by their parameters, until this service writes again or ``ttl``
    seconds pass (what another instance or ``arena ingest`` wrote shows within that time): an
    anonymous flood of board reads costs one computation per write, not one per read."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._found: dict[Hashable, tuple[int, float, Any]] = {}
        self._generation = 0
        self._lock = threading.Lock()

    @property
    def generation(self) -> int:
        """How many times this service has written: a reader's cue that what it holds may be stale."""
        return self._generation

    def written(self) -> None:
        with self._lock:
            self._generation += 1
            self._found.clear()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            generation = self._generation
            held = self._found.get(key)
        if held is not None and held[0] == generation and time.monotonic() - held[1] < self.ttl:
            return held[2]  # type: ignore[no-any-return]
        value = compute()
        with self._lock:
            if self._generation == generation:
                self._found[key] = (generation, time.monotonic(), value)
        return value


class Service:
    """The shared state of one app (see the module's note)."""

    def __init__(
        self,
        arena: Arena,
        store: Store,
        tokens: TokenStore,
        gate: Gate,
        *,
        checks_per_token: int,
        board_ttl: float,
        token_quota: int,
    ) -> None:
        self.arena, self.store, self.tokens, self.gate = arena, store, tokens, gate
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-writer")
        self.checks = ThreadPoolExecutor(max_workers=arena.config.check_concurrency, thread_name_prefix="arena-check")
        self.checks_per_token = checks_per_token
        self.token_quota = token_quota
        self.boards = BoardCache(board_ttl)
        self._in_flight: dict[str, int] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self.checks.shutdown(wait=False, cancel_futures=True)
        self.writer.shutdown(wait=True)

    async def write(self, work: Callable[[], T]) -> T:
        """``work`` on the one writer thread; the boards are computed anew afterwards."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self.writer, work)
        finally:
            self.boards.written()

    async def check(self, who: Principal, work: Callable[[], T]) -> T:
        """``work`` (a post's slow checks) on the checks' pool, refused (429) when the token has
        ``checks_per_token`` posts there already."""
        with self._lock:
            if self._in_flight.get(who.token_id, 0) >= self.checks_per_token:
                raise Problem(
                    429,
                    f"this token has {self.checks_per_token} runs being checked already; post the next when one "
                    "of them is answered",
                    {"Retry-After": "1"},
                )
            self._in_flight[who.token_id] = self._in_flight.get(who.token_id, 0) + 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self.checks, work)
        finally:
            with self._lock:
                self._in_flight[who.token_id] -= 1
                if not self._in_flight[who.token_id]:
                    del self._in_flight[who.token_id]
