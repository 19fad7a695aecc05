"""What the service reads back: ``GET /leaderboard`` and ``GET /tasks/{task_id}/rankings``, both
of the store's board: its runs against their tasks' current baselines.

The leaderboard is the store's board (every stored run against its task's current baseline:
store/current.py), read from the sums kept per group and task with each task's current
evaluations, which a write rescores for the tasks it touched only, and kept between writes
(:class:`~arena_core.service.state.BoardCache`), so a flood of reads costs one board per write.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi import APIRouter, Query, Request, Response

from arena_core.engine.fingerprints import provenance_of, task_run_digests
from arena_core.model.records import Task
from arena_core.model.serde import to_dict
from arena_core.service.problems import Problem
from arena_core.service.state import Service
from arena_core.stats.leaderboard import leaderboard
from arena_core.stats.pairwise import ADJUSTMENTS, TESTS
from arena_core.stats.windows import TimeWindow
from arena_core.store.cells import GROUPINGS, task_table
from arena_core.store.current import stored_tasks

__all__ = ["MAX_OFFSET", "routes"]

#: The largest ``offset`` of a page (past it, nothing could be stored: SQLite counts rows in 64 bits).
MAX_OFFSET = 1_000_000_000


def routes(service: Service) -> APIRouter:
    router = APIRouter()
    arena, store, config = service.arena, service.store, service.arena.config

    @router.get("/tasks/{task_id}/rankings")
    def rankings(
        task_id: str,
        request: Request,
        response: Response,
        offset: int = Query(0, ge=0, le=MAX_OFFSET),
        limit: int = Query(100, ge=1, le=1000),
    ) -> list[Any]:
        service.gate.principal(request, reading=True)
        with store.transaction(write=False) as tx:
            task = tx.get_task(task_id)
        if task is None:
            raise Problem(404, f"no task {task_id!r} is stored")
        # The task's runs against its current baseline, best first (equal scores first stored first).
        current = arena.current_scores(store)
        ranked = sorted(current.of_task(store, task_id), key=lambda e: -e.overall_score)
        digest = current.run_digests(store)[0].get(task_id)
        command = ["leaderboard", "--by", "submission", "--task", task_id]
        response.headers["Arena-Provenance"] = _provenance(
            {task_id: digest} if digest else {}, len(ranked), {task_id: task}, None, command
        )
        return [to_dict(e) for e in ranked[offset : offset + limit]]

    @router.get("/leaderboard")
    def board(
        request: Request,
        response: Response,
        by: Literal["tool", "model"] = "tool",
        test: Literal[TESTS] = "t",  # type: ignore[valid-type]
        adjust: Literal[ADJUSTMENTS] = "holm",  # type: ignore[valid-type]
        since: str | None = Query(None, description="Only tasks created on or after this ISO-8601 date or time."),
        until: str | None = Query(None, description="Only tasks created on or before it (a date covers its day)."),
        window: Literal["after-cutoff", "after-release"] | None = Query(
            None, description="Each model only on tasks created after its knowledge cutoff (or release)."
        ),
    ) -> list[dict[str, Any]]:
        service.gate.principal(request, reading=True)
        response.headers["Arena-Profile"] = f"{arena.provenance.profile} {arena.provenance.config_digest}"
        command = ["leaderboard", "--by", by, "--test", test, "--adjust", adjust]
        if since or until or window:
            chosen = TimeWindow(since, until, window, config.models, config.model_aliases)  # checked: 400 if not dates
            given = {"--since": since, "--until": until, "--window": window}
            command += [a for name, value in given.items() if value for a in (name, value)]
            rows, notes, made = service.boards.get(
                ("leaderboard", by, test, adjust, since, until, window),
                lambda: _windowed(by, test, adjust, chosen, command),
            )
            response.headers["Arena-Window"] = json.dumps(notes)  # ASCII: json escapes the rest
        else:
            rows, made = service.boards.get(
                ("leaderboard", by, test, adjust), lambda: _board(by, test, adjust, command)
            )
        response.headers["Arena-Provenance"] = made
        return rows

    def _windowed(
        by: str, test: str, adjust: str, chosen: TimeWindow, command: list[str]
    ) -> tuple[list[dict[str, Any]], list[str], str]:
        """The board of the store's current evaluations in the window, what the window says, and
        its provenance (of the runs and tasks in the window)."""
        with store.transaction(write=False) as tx:
            tasks = stored_tasks(tx)
        current, meta = arena.current_scores(store).read(store)
        kept = chosen.evaluations(current, tasks)
        if not kept:
            raise Problem(404, f"{chosen.described()}: no stored run is in the window ({'; '.join(chosen.notes())})")
        rows = arena.leaderboard(
            kept, by=by, test=test, adjustment=adjust, meta=meta
        )  # the runs' meta, as the CLI's board of a store reads it
        shown, ids = {t: tasks[t] for t in chosen.created}, {e.submission_id for e in kept}  # the window's tasks
        with store.transaction(write=False) as tx:
            runs = [s for t in dict.fromkeys(e.task_id for e in kept) for s in tx.submissions(t) if s.id in ids]
        made = _provenance(task_run_digests(runs), len(runs), shown, chosen, command)
        return [to_dict(r) for r in rows], chosen.notes(), made

    def _provenance(
        digests: dict[str, str], count: int, tasks: dict[str, Task], chosen: TimeWindow | None, command: list[str]
    ) -> str:
        """The board's :class:`~arena_core.model.provenance.BoardProvenance`, as compact JSON (a header's value)."""
        made = provenance_of(digests, count, tasks, arena.provenance, chosen, command)
        return json.dumps(to_dict(made), separators=(",", ":"))

    def _board(by: str, test: str, adjust: str, command: list[str]) -> tuple[list[dict[str, Any]], str]:
        current = arena.current_scores(store)
        with store.transaction(write=False) as tx:
            tasks = stored_tasks(tx)
        made = _provenance(*current.run_digests(store), tasks, None, command)
        return _rows(by, test, adjust), made

    def _rows(by: str, test: str, adjust: str) -> list[dict[str, Any]]:
        simple = (
            config.leaderboard_method == "task_mean"
            and config.infra_failures == "fail"
            and not config.model_aliases
            and by in GROUPINGS
        )
        if not simple:  # an aggregator that reads single runs, runs to leave out, aliases
            return [to_dict(r) for r in arena.leaderboard(store=store, by=by, test=test, adjustment=adjust)]
        rows = arena.current_scores(store).cells(store, by)
        found = leaderboard(
            task_table(rows),
            arena.components.aggregators["task_mean"],
            arena.components.interval_methods[config.leaderboard_interval],
            min_tasks=config.min_tasks_per_group,
            test=test,
            adjustment=adjust,
            ranks=config.leaderboard_ranks,
            order=config.leaderboard_order,
        )
        return [to_dict(r) for r in found]

    return router
