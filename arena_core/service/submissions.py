"""``POST /submissions``: a run scored against its task's stored history and stored.

A submitter posts for its own tools and models only; an id already stored is 409 unless
``?replace=true``, which a submitter may use only on its own tools' runs. What a submitter
controls is bounded: a run's ``meta`` (:data:`MAX_META_BYTES`), the bytes of runs a token may
have stored (its quota), and how many of its posts may be having their workspaces checked at
once. The checks happen before the writer takes the run, on the checks' pool.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Request

from arena_core.engine.ahead import Verdicts, needs_checking
from arena_core.model.serde import to_dict
from arena_core.service.guards import parse_body
from arena_core.service.problems import Problem
from arena_core.service.state import Service
from arena_core.service.tokens import Principal
from arena_core.stats.runs import HARNESS_ERRORS, harness_error, ungraded
from arena_core.store import Store
from arena_core.store.pipeline import check_first, run_batch
from arena_core.store.standings import submission_columns

__all__ = ["MAX_META_BYTES", "routes"]

#: The most a run's ``meta`` may hold, as JSON (a harness's notes, not a place to store files).
MAX_META_BYTES = 64 << 10


def routes(service: Service) -> APIRouter:
    router = APIRouter()
    arena, store = service.arena, service.store

    @router.post("/submissions", status_code=201)
    async def post_submission(request: Request, replace: bool = False) -> dict[str, Any]:
        who = service.gate.principal(request, reading=False)
        assert who is not None
        raw = await request.body()
        data = parse_body(raw)
        if not isinstance(data, dict):
            raise Problem(400, "a submission is a JSON object")
        _may_post(who, data)
        submission = arena.structure_submission(data)
        with store.transaction(write=False) as tx:
            task = tx.get_task(submission.task_id) if submission.task_id is not None else None
        if task is not None and ungraded(submission.meta, task):
            raise Problem(
                400,
                f"run {submission.id!r} has no verdict (meta.flags: not_graded) and task {task.id!r} is graded by "
                "the harness's verdict alone: stored, it would rank as a failure; post it with its verdict "
                "(success), or define the task with a criterion that checks the run",
            )
        found: Verdicts = {}
        if task is not None and needs_checking(arena.scorer, submission, task):  # a workspace, a judge
            known = {task.id: task}
            found = await service.check(who, lambda: check_first(arena, [submission], store, known))

        def score() -> dict[str, Any]:
            if replace:
                _may_replace(store, who, submission.id)
            if not service.tokens.charge(who.token_id, len(raw), service.token_quota):
                raise Problem(
                    403,
                    f"this token has had {service.token_quota:,} bytes of runs stored, its quota; an operator "
                    "raises it (arena serve --token-quota) or gives a new token",
                )
            try:
                result = run_batch(arena, [submission], store, replace=replace, checked=found)
            except BaseException:
                service.tokens.refund(who.token_id, len(raw))
                raise
            evaluation: dict[str, Any] = to_dict(result.evaluations[0])
            return evaluation

        return await service.write(score)  # the quota counted on the writer: never waiting on its lock

    return router


def _may_post(who: Principal, data: dict[str, Any]) -> None:
    """Refuse a run the token may not post: another tool's or model's, a run flagged as a harness
    failure by a submitter, a ``meta`` past :data:`MAX_META_BYTES`."""
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
    meta = data.get("meta")
    if who.role != "operator" and harness_error(meta if isinstance(meta, dict) else None):
        raise Problem(
            403,
            "only an operator's token may flag a run as a harness failure (meta.flags: "
            f"{', '.join(sorted(HARNESS_ERRORS))}): a submitter's failures count as its own",
        )
    if meta is not None and len(size := orjson.dumps(meta)) > MAX_META_BYTES:
        raise Problem(
            413,
            f"the run's meta holds {len(size):,} bytes of JSON; the most a run's meta may hold is {MAX_META_BYTES:,}",
        )


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
