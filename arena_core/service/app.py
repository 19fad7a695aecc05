"""The service's endpoints (docs/serve.md has them with their rules and examples).

- ``GET /health``: no token.
- ``PUT /tasks/{task_id}``: an operator stores or replaces a task.
- ``POST /submissions[?replace=true]``: a run is scored against its task's stored history
  (201 with the evaluation). A submitter posts for its own tools only; an id already stored
  is 409 unless ``replace``, which a submitter may use only on its own tools' runs.
- ``GET /tasks/{task_id}/rankings?offset&limit``: a page of a task's evaluations, best first.
- ``GET /leaderboard?by=tool|model``: the rows ``arena leaderboard --format json`` prints, read
  from the cells the store keeps per group and task (store/cells.py), so its time does not grow
  with the number of stored runs.

Reads need a token unless the app was made with ``public_read``. Writes go through one writer
thread, so concurrent posts take turns on the store instead of contending for its lock; reads
run in FastAPI's thread pool beside them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVar

from fastapi import FastAPI, Query, Request

from arena_core.arena import Arena
from arena_core.config.settings import owner_rule
from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.serde import to_dict
from arena_core.service.guards import BodyLimit, Gate, RateLimiter, parse_body
from arena_core.service.problems import Problem, install
from arena_core.service.tokens import Principal, TokenStore
from arena_core.stats.leaderboard import leaderboard
from arena_core.stats.pairwise import ADJUSTMENTS, TESTS
from arena_core.stats.runs import HARNESS_ERRORS, harness_error
from arena_core.store import Store
from arena_core.store.cells import task_table
from arena_core.store.standings import submission_columns

__all__ = ["create_app"]

T = TypeVar("T")


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
) -> FastAPI:
    """The service over ``store``, scoring with ``arena``, callers known by ``tokens``.

    :param public_read: the read endpoints need no token.
    :param body_limit: the largest request body, in bytes (413 above).
    :param rate: requests a second per token on average (429 above), ``burst`` at once.
    :param allow_local_runner: serve although criterion commands run unconfined (the ``local``
        runner): only when the operator trusts every task author and every workspace.
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
    writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-writer")
    gate = Gate(tokens, RateLimiter(rate, burst), public_read)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        writer.shutdown(wait=True)

    app = FastAPI(
        title="arena-core",
        summary="Scores and ranks the runs of AI coding agents.",
        description="Authenticated with API tokens (`arena serve token create`); every error is an RFC 9457 problem.",
        lifespan=lifespan,
    )
    install(app)
    app.add_middleware(BodyLimit, limit=body_limit)

    async def write(work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(writer, work)

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.put("/tasks/{task_id}")
    async def put_task(task_id: str, request: Request) -> dict[str, str]:
        gate.operator(request)
        data = parse_body(await request.body())
        if not isinstance(data, dict):
            raise Problem(400, "a task is a JSON object")
        if data.get("id", task_id) != task_id:
            raise ValidationError(f"task {task_id!r}", "id", f"{task_id!r}, the id in the URL", data["id"])
        await write(lambda: arena.process([], store=store, tasks={task_id: {**data, "id": task_id}}))
        return {"id": task_id}

    @app.post("/submissions", status_code=201)
    async def post_submission(request: Request, replace: bool = False) -> dict[str, Any]:
        who = gate.principal(request, reading=False)
        assert who is not None
        data = parse_body(await request.body())
        if not isinstance(data, dict):
            raise Problem(400, "a submission is a JSON object")
        if not who.may_post_for(data.get("tool")):
            raise Problem(
                403, f"this token posts runs for {', '.join(who.tools)} only (the run's tool is {data.get('tool')!r})"
            )
        if not who.may_post_model(data.get("model")):
            raise Problem(
                403,
                f"this token posts runs of the models {', '.join(who.models) or '(none)'} only (the run's model is "
                f"{data.get('model')!r}); an operator binds models to a token with arena serve token create --model",
            )
        if who.role != "operator" and harness_error(data.get("meta") if isinstance(data.get("meta"), dict) else None):
            raise Problem(
                403,
                "only an operator's token may flag a run as a harness failure (meta.flags: "
                f"{', '.join(sorted(HARNESS_ERRORS))}): a submitter's failures count as its own",
            )

        def score() -> dict[str, Any]:
            if replace:
                _may_replace(store, who, data.get("id"))
            result = arena.process([data], store=store, replace=replace)
            evaluation: dict[str, Any] = to_dict(result.evaluations[0])
            return evaluation

        return await write(score)

    @app.get("/tasks/{task_id}/rankings")
    def rankings(
        task_id: str, request: Request, offset: int = Query(0, ge=0), limit: int = Query(100, ge=1, le=1000)
    ) -> list[Any]:
        gate.principal(request, reading=True)
        with store.transaction(write=False) as tx:
            if tx.get_task(task_id) is None:
                raise Problem(404, f"no task {task_id!r} is stored")
            ranked = getattr(tx, "ranked", None)
            page = (
                ranked(task_id, offset=offset, limit=limit)
                if ranked
                else tx.evaluations(task_id)[offset : offset + limit]
            )
            return [to_dict(e) for e in page]

    @app.get("/leaderboard")
    def board(
        request: Request,
        by: Literal["tool", "model"] = "tool",
        test: Literal[TESTS] = "t",  # type: ignore[valid-type]
        adjust: Literal[ADJUSTMENTS] = "holm",  # type: ignore[valid-type]
    ) -> list[dict[str, Any]]:
        gate.principal(request, reading=True)
        with store.transaction(write=False) as tx:
            cells = getattr(tx, "board_cells", None)
            simple = (
                config.leaderboard_method == "task_mean"
                and config.infra_failures == "fail"
                and not config.model_aliases
            )
            rows = cells(by) if cells is not None and simple else None
        if rows is None:  # no cells, an aggregator that reads single runs, runs to leave out, aliases
            return [to_dict(r) for r in arena.leaderboard(store=store, by=by, test=test, adjustment=adjust)]
        table = task_table(rows)
        found = leaderboard(
            table,
            arena.components.aggregators["task_mean"],
            arena.components.interval_methods[config.leaderboard_interval],
            min_tasks=config.min_tasks_per_group,
            test=test,
            adjustment=adjust,
            ranks=config.leaderboard_ranks,
        )
        return [to_dict(r) for r in found]

    return app


def _may_replace(store: Store, who: Principal, submission_id: object) -> None:
    """A submitter replaces only runs of its own tools."""
    if who.role == "operator" or not isinstance(submission_id, str):
        return
    with store.transaction(write=False) as tx:
        lookup = getattr(tx, "task_of", None)
        task_id = lookup(submission_id) if lookup else None
        if task_id is None:
            return
        stored = submission_columns(tx, task_id)
        tool = next((t for i, t in zip(stored.ids, stored.tools, strict=True) if i == submission_id), None)
    if tool not in who.tools:
        raise Problem(
            403, f"run {submission_id!r} belongs to another tool; this token may replace only its own tools' runs"
        )
