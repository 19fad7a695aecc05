"""People judging runs through the service: ``GET /review/next``, ``POST /review/{item}`` and
``GET /calibration`` (docs/serve.md#the-review-queue).

The queue (:class:`~arena_core.store.labels.LabelStore`) holds every requirement of the stored
runs' judge criteria, grouped as the leaderboard groups them (``review_by``), and is brought up
to date with the store before an item is handed out (at most once per write, or per
``board_ttl`` seconds for what other instances wrote). A reviewer is shown the task, the
requirement and the evidence a judge was shown: never the run's id, tool or model, nor any
judge's verdict. ``GET /calibration`` gives the rows of ``arena calibrate`` over what is stored.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Literal

from fastapi import APIRouter, Request, Response

from arena_core.model.errors import ValidationError
from arena_core.model.labels import Item
from arena_core.model.records import Evaluation
from arena_core.model.serde import to_dict
from arena_core.service.guards import parse_body
from arena_core.service.problems import Problem
from arena_core.service.state import Service
from arena_core.stats.calibration import calibrate, requirement_categories, verdicts_of
from arena_core.store.current import stored_tasks
from arena_core.store.labels import LabelStore, QueuedItem

__all__ = ["ReviewQueue", "routes"]


class ReviewQueue:
    """The service's queue: the label store, and when it last took in the store's runs."""

    def __init__(self, labels: LabelStore, by: str, disagreement_share: float) -> None:
        self.labels, self.by, self.disagreement_share = labels, by, disagreement_share
        self._synced: tuple[int, float] | None = None
        self._lock = threading.Lock()

    def sync(self, service: Service) -> None:
        """Queue the stored runs' requirements not queued yet, when the store may have changed."""
        with self._lock:
            generation = service.boards.generation
            fresh = self._synced is not None and time.monotonic() - self._synced[1] < service.boards.ttl
            if fresh and self._synced is not None and self._synced[0] == generation:
                return
            self.labels.queue(queued_items(_evaluations(service), self.by))
            self._synced = (generation, time.monotonic())


def queued_items(evaluations: list[Evaluation], by: str) -> list[QueuedItem]:
    """Each requirement of each evaluation's judge criteria, in its group, split when its judges
    gave both verdicts."""
    found = []
    for evaluation in evaluations:
        group = str(getattr(evaluation, by) or "(unknown)")
        for result in evaluation.criteria:
            for part in result.details:
                requirement, judges = part.get("requirement"), part.get("judges")
                if requirement is None or not isinstance(judges, dict):
                    continue
                said = {a.get("verdict") for a in judges.values() if isinstance(a, dict)}
                found.append(
                    QueuedItem(
                        evaluation.submission_id, evaluation.task_id, str(requirement), group, {True, False} <= said
                    )
                )
    return found


def _evaluations(service: Service) -> list[Evaluation]:
    with service.store.transaction(write=False) as tx:
        return [e for task_id in tx.task_ids() for e in tx.evaluations(task_id)]


def routes(service: Service, queue: ReviewQueue) -> APIRouter:
    router = APIRouter()
    store, checkers = service.store, service.arena.scorer.checkers()

    @router.get("/review/next", response_model=None)
    def next_item(request: Request) -> dict[str, Any] | Response:
        who = service.gate.reviewer(request)
        queue.sync(service)
        item = queue.labels.next(who.token_id, disagreement_share=queue.disagreement_share)
        if item is None:
            return Response(status_code=204)
        with store.transaction(write=False) as tx:
            task = tx.get_task(item.task_id)
            run = next((s for s in tx.submissions(item.task_id) if s.id == item.submission_id), None)
        shown = None
        if task is not None and run is not None and item.requirement is not None:
            for criterion in task.success_criteria:
                view = getattr(checkers.get(criterion.type), "review_view", None)
                if view is not None and (shown := view(run, criterion, task, item.requirement)) is not None:
                    break
        if shown is None:
            raise Problem(410, "the run or the task of this item is no longer stored as it was queued")
        about = {"id": task.id, **({"category": task.category} if task and task.category else {})}  # type: ignore[union-attr]
        return {"item": item.id, "task": about, **shown}

    @router.post("/review/{item}", status_code=201)
    async def answer(item: str, request: Request) -> dict[str, Any]:
        who = service.gate.reviewer(request)
        body = parse_body(await request.body())
        if not isinstance(body, dict) or not isinstance(body.get("label"), bool):
            raise Problem(422, "label: expected true (the requirement is met) or false")
        try:
            found = await service.write(lambda: queue.labels.answer(item, who.token_id, body["label"]))
        except LookupError:
            raise Problem(404, f"no review item {item!r}") from None
        except PermissionError:
            raise Problem(403, "this item was not handed to this token (GET /review/next)") from None
        except FileExistsError:
            raise Problem(409, "this token labelled this item already") from None
        return {"item": item, "label": found.label, "at": found.at}

    @router.get("/calibration")
    def calibration(
        request: Request, by: Literal["tool", "model", "judge", "category", "requirement_category"] = "tool"
    ) -> list[dict[str, Any]]:
        service.gate.principal(request, reading=True)
        evaluations = _evaluations(service)
        run = {e.submission_id: e for e in evaluations}
        with store.transaction(write=False) as tx:
            tasks = stored_tasks(tx)
        categories = requirement_categories(tasks.values())

        def group_of(item: Item) -> str | None:
            found = run.get(item[0])
            if found is None:
                return None
            if by == "category":
                task = tasks.get(found.task_id)
                return (task.category if task else None) or "(none)"
            if by == "requirement_category":
                return None if item[1] is None else categories.get((found.task_id, item[1]), "(none)")
            return str(getattr(found, by) or "(unknown)")

        try:
            rows = calibrate(verdicts_of(evaluations), queue.labels.labels(), group_of, by_judge=by == "judge")
        except ValidationError as error:
            raise Problem(422, str(error)) from None
        return [_finite(to_dict(row)) for row in rows]

    return router


def _finite(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
