"""A small web service embedding arena-core: POST runs, GET rankings and the leaderboard.

Run it with ``uvicorn --factory arena_service:create_app`` (the database is ``ARENA_DB``,
default ``arena.db``), or call :func:`create_app` from your own code. Everything the service knows lives in one SQLite
file, so several workers (threads or processes) can serve the same arena: each request is one
store transaction, and SQLite takes them in turn.

Endpoints:

- ``PUT /tasks/{task_id}``: store or replace a task (criteria, category, difficulty).
- ``POST /submissions``: score one run against its task's stored history; 201 with the
  evaluation, 400 with the ``ValidationError`` as JSON (``code``, ``record``, ``field``,
  ``expected``, ``got``) when the run is not valid, 409 when its id is already stored.
- ``GET /tasks/{task_id}/rankings?offset=0&limit=100``: a page of the task's evaluations, best
  first (the store reads only that page, through its index of scores).
- ``GET /leaderboard?by=tool|model``: the rows ``arena leaderboard --format json`` prints.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fastapi import Body, FastAPI, Query
from fastapi.responses import JSONResponse

from arena_core import Arena, ValidationError, to_dict
from arena_core.model.errors import ArenaError
from arena_core.store import SQLiteStore


def create_app(database: str | Path | None = None, arena: Arena | None = None) -> FastAPI:
    """The service over the SQLite file ``database`` (default: ``ARENA_DB``, else ``arena.db``),
    scoring with ``arena`` (default: ``Arena()`` with the installed plugins)."""
    arena = arena or Arena()
    store = SQLiteStore(database or os.environ.get("ARENA_DB", "arena.db"))
    app = FastAPI(title="arena-core service")

    # Plain ``def`` handlers: FastAPI runs them in its thread pool, so a slow scoring never
    # blocks the event loop. The Arena is shared (it holds no per-request state); the store
    # opens one connection per transaction, so sharing it between threads is safe.

    @app.exception_handler(ValidationError)
    def invalid(request: Any, error: ValidationError) -> JSONResponse:
        status = 409 if error.code == "duplicate_id" else 400
        return JSONResponse(status_code=status, content={"error": error.as_dict()})

    @app.exception_handler(ArenaError)
    def refused(request: Any, error: ArenaError) -> JSONResponse:
        return JSONResponse(status_code=400, content={"error": {"message": str(error)}})

    @app.put("/tasks/{task_id}")
    def put_task(task_id: str, task: dict[str, Any] = Body(...)) -> dict[str, Any]:
        if task.get("id", task_id) != task_id:
            raise ValidationError(f"task {task_id!r}", "id", f"{task_id!r}, the id in the URL", task["id"])
        arena.process([], store=store, tasks={task_id: {**task, "id": task_id}})
        return {"id": task_id}

    @app.post("/submissions", status_code=201)
    def post_submission(submission: dict[str, Any] = Body(...)) -> dict[str, Any]:
        result = arena.process([submission], store=store)
        evaluation: dict[str, Any] = to_dict(result.evaluations[0])
        return evaluation

    @app.get("/tasks/{task_id}/rankings")
    def rankings(task_id: str, offset: int = Query(0, ge=0), limit: int = Query(100, ge=1, le=1000)) -> list[Any]:
        with store.transaction(write=False) as tx:
            if tx.get_task(task_id) is None:
                raise ValidationError(f"task {task_id!r}", "task_id", "the id of a stored task", task_id)
            return [to_dict(e) for e in tx.ranked(task_id, offset=offset, limit=limit)]

    @app.get("/leaderboard")
    def leaderboard(by: str = Query("tool")) -> list[dict[str, Any]]:
        return [to_dict(row) for row in arena.leaderboard(store=store, by=by)]

    return app
