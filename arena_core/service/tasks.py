"""``PUT /tasks/{task_id}``: an operator stores or replaces a task (its criteria decide what
commands run on a run's workspace, so no one else may)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from arena_core.model.errors import ValidationError
from arena_core.service.guards import parse_body
from arena_core.service.problems import Problem
from arena_core.service.state import Service

__all__ = ["routes"]


def routes(service: Service) -> APIRouter:
    router = APIRouter()

    @router.put("/tasks/{task_id}")
    async def put_task(task_id: str, request: Request) -> dict[str, str]:
        service.gate.operator(request)
        data = parse_body(await request.body())
        if not isinstance(data, dict):
            raise Problem(400, "a task is a JSON object")
        if data.get("id", task_id) != task_id:
            raise ValidationError(f"task {task_id!r}", "id", f"{task_id!r}, the id in the URL", data["id"])
        await service.write(
            lambda: service.arena.process([], store=service.store, tasks={task_id: {**data, "id": task_id}})
        )
        return {"id": task_id}

    return router
