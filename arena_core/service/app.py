"""The service's app (docs/serve.md has its endpoints with their rules and examples).

- ``GET /health``: no token.
- ``PUT /tasks/{task_id}``: an operator stores or replaces a task (:mod:`~arena_core.service.tasks`).
- ``POST /submissions[?replace=true]``: a run scored against its task's stored history
  (:mod:`~arena_core.service.submissions`).
- ``GET /tasks/{task_id}/rankings``, ``GET /leaderboard``: what is stored, read back
  (:mod:`~arena_core.service.boards`).
- ``GET /review/next``, ``POST /review/{item}``: people label the stored runs' requirements,
  blind; ``GET /calibration``: the judges against their labels (:mod:`~arena_core.service.reviews`).

Reads need a token unless the app was made with ``public_read``. What the endpoints share
(the writer, the checks' pool, the boards kept between writes) is :class:`~arena_core.service.state.Service`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from arena_core.arena import Arena
from arena_core.config.settings import owner_rule
from arena_core.model.errors import ArenaError
from arena_core.service import battles, boards, reading, reviews, submissions, tasks
from arena_core.service.guards import BodyLimit, Gate, RateLimiter
from arena_core.service.problems import install
from arena_core.service.state import Service
from arena_core.service.tokens import TokenStore
from arena_core.store import Store
from arena_core.store.labels import LabelStore
from arena_core.store.votes import VoteStore

__all__ = ["create_app"]


def create_app(
    arena: Arena,
    store: Store,
    tokens: TokenStore,
    *,
    public_read: bool = False,
    body_limit: int = 1 << 20,
    rate: float = 50.0,
    burst: int = 100,
    allow_local_runner: bool = False,
    checks_per_token: int = 2,
    board_ttl: float = 2.0,
    token_quota: int = 1 << 30,
    labels: LabelStore | None = None,
    review_by: str = "tool",
    disagreement_share: float = 0.0,
    votes: VoteStore | None = None,
    vote_rate: float = 1.0,
) -> FastAPI:
    """The service over ``store``, scoring with ``arena``, callers known by ``tokens``.

    :param public_read: the read endpoints need no token.
    :param body_limit: the largest request body, in bytes (413 above).
    :param rate: requests a second per token on average (429 above), ``burst`` at once; an
        address may make four times as many, whatever its tokens.
    :param allow_local_runner: serve although criterion commands run unconfined (the ``local``
        runner): only when the operator trusts every task author and every workspace.
    :param checks_per_token: posts of one token whose workspaces may be being checked at once.
    :param board_ttl: seconds a board is kept for readers when this service has not written
        since (what another instance or ``arena ingest`` stored shows after at most this long).
    :param token_quota: bytes of runs (as posted) one token may have stored; 0: no quota.
    :param labels: where people's labels and the review queue are kept (by default beside the
        tokens, in the same database), ``review_by`` the group (``tool`` or ``model``) the queue
        draws uniformly within, ``disagreement_share`` the share of items it draws from those a
        panel of judges split on instead.
    :param votes: where people's votes, battles and learned profiles are kept (by default beside
        the tokens); ``vote_rate`` the votes a second one voter may cast on average (ten at once);
        battles pair runs of different ``review_by`` groups.
    :raises ArenaError: the arena runs commands unconfined without ``allow_local_runner``, or
        lets a record name a workspace that is not its own.
    """
    config = arena.config
    if config.command_runner == "local" and not allow_local_runner:
        raise ArenaError(
            'arena serve: command_runner = "local" runs task commands unconfined on this host; use '
            '"sandbox", or --allow-local-runner if you trust every task author and every workspace'
        )
    if owner_rule(config) != "id":
        raise ArenaError("arena serve: workspace_owner must be 'id', so that no run can name another's workspace")
    gate = Gate(tokens, RateLimiter(rate, burst), public_read)
    service = Service(
        arena, store, tokens, gate, checks_per_token=checks_per_token, board_ttl=board_ttl, token_quota=token_quota
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        service.close()

    app = FastAPIOffline(  # /docs and /redoc served from the package's own assets: they work offline
        title="arena-core",
        summary="Scores and ranks the runs of AI coding agents.",
        description="Authenticated with API tokens (`arena serve token create`); every error is an RFC 9457 problem.",
        lifespan=lifespan,
    )
    install(app)
    app.add_middleware(BodyLimit, limit=body_limit)

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    for module in (tasks, submissions, boards, reading):
        app.include_router(module.routes(service))
    queue = reviews.ReviewQueue(labels or LabelStore(tokens.where), review_by, disagreement_share)
    app.include_router(reviews.routes(service, queue))
    desk = battles.BattleDesk(votes or VoteStore(tokens.where), review_by, vote_rate, 10)
    app.include_router(battles.routes(service, desk))
    return app
