"""What a client reads back of what it stored: ``GET /tasks`` (a page of the stored tasks),
``GET /tasks/{task_id}`` (a task, its stored baseline and how many runs it has) and
``GET /submissions/{submission_id}`` (a run's evaluation, its criteria's verdicts, the
evaluations it superseded, and the run as posted).

Reading follows the read endpoints' rule (a token, or none under ``--public-read``). The run as
posted holds its ``meta`` (a harness's notes, a trajectory): only an operator's token, or a
submitter's token for the run's own tool, reads it; everyone else reads the scores.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from arena_core.model.serde import to_dict
from arena_core.service.boards import MAX_OFFSET
from arena_core.service.problems import Problem
from arena_core.service.state import Service
from arena_core.service.tokens import Principal

__all__ = ["routes"]


def routes(service: Service) -> APIRouter:
    router = APIRouter()
    store = service.store

    @router.get("/tasks")
    def list_tasks(
        request: Request,
        offset: int = Query(0, ge=0, le=MAX_OFFSET),
        limit: int = Query(100, ge=1, le=1000),
    ) -> dict[str, Any]:
        service.gate.principal(request, reading=True)
        with store.transaction(write=False) as tx:
            ids = sorted(tx.task_ids())
            page = [tx.get_task(t) for t in ids[offset : offset + limit]]
        tasks = [{"id": t.id, "category": t.category, "difficulty": t.difficulty} for t in page if t is not None]
        return {"total": len(ids), "offset": offset, "limit": limit, "tasks": tasks}

    @router.get("/tasks/{task_id}", response_model=None)
    def get_task(task_id: str, request: Request) -> dict[str, Any]:
        service.gate.principal(request, reading=True)
        with store.transaction(write=False) as tx:
            task = tx.get_task(task_id)
            if task is None:
                raise Problem(404, f"no task {task_id!r} is stored")
            baseline = tx.get_baseline(task_id)
            runs = len(tx.evaluations(task_id))
        return {
            "task": to_dict(task),
            "baseline": to_dict(baseline) if baseline is not None else None,
            "runs": runs,
        }

    @router.get("/submissions/{submission_id}", response_model=None)
    def get_submission(submission_id: str, request: Request) -> dict[str, Any]:
        who = service.gate.principal(request, reading=True)
        with store.transaction(write=False) as tx:
            lookup = getattr(tx, "task_of", None)
            task_id = lookup(submission_id) if lookup is not None else _task_of(tx, submission_id)
            evaluation = (
                next((e for e in tx.evaluations(task_id) if e.submission_id == submission_id), None)
                if task_id
                else None
            )
            if task_id is None or evaluation is None:
                raise Problem(404, f"no run {submission_id!r} is stored")
            versions = getattr(tx, "evaluation_versions", None)
            history = versions(submission_id) if versions is not None else []
            run = next((s for s in tx.submissions(task_id) if s.id == submission_id), None)
        found: dict[str, Any] = {
            "id": submission_id,
            "task_id": task_id,
            "evaluation": to_dict(evaluation),
            "verdicts": [to_dict(c) for c in evaluation.criteria],
            "history": [
                {"superseded_at": at, "reason": reason, "evaluation": to_dict(old)} for at, reason, old in history
            ],
        }
        if run is not None and _may_read_run(who, run.tool):
            found["submission"] = to_dict(run)
        return found

    return router


def _may_read_run(who: Principal | None, tool: str | None) -> bool:
    """The run as posted (its meta) is its submitter's and the operator's."""
    return who is not None and (who.role == "operator" or (who.role == "submitter" and who.may_post_for(tool)))


def _task_of(tx: Any, submission_id: str) -> str | None:
    """The task a run is stored for, on a store without its own look-up."""
    return next((t for t in tx.task_ids() if any(e.submission_id == submission_id for e in tx.evaluations(t))), None)
