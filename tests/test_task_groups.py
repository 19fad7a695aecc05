"""A batch's tasks scored together (store/taskgroups.py): each task's results are those a batch
of its own would give, scored record by record."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena_core import Arena, to_dict
from arena_core.config.files import BUILTIN_PROFILES
from arena_core.examples.synthetic import generate_arena
from arena_core.store import MemoryStore, SQLiteStore, Store, taskgroups

TASKS, SUBS = generate_arena(tasks=10, submissions_per_task=14, outliers=6, seed=11)
TASK_MAP = {t["id"]: t for t in TASKS}


def _with_holes(runs: list[dict]) -> list[dict]:
    """Some runs lack a figure, as real telemetry does."""
    holes = ("total_tokens", "execution_time", "estimated_cost", "tool_calls")
    return [{k: v for k, v in s.items() if k != holes[i % 4]} if i % 5 == 0 else s for i, s in enumerate(runs)]


def _failed(run: dict) -> dict:
    return {**run, "success": False, "files_created": [], "tests_passed": 0}


def _tiny(run: dict) -> dict:
    """A run of a task whose runs all spend a thousandth of the tokens of the others, in 3 s:
    among its own task's runs none is an outlier, among other tasks' all would be."""
    return {**run, "total_tokens": max(1, run.get("total_tokens", 1000) // 1000), "execution_time": 3.0}


RUNS = [
    _tiny(s) if s["task_id"] == TASKS[5]["id"] else _failed(s) if i % 3 == 0 else s
    for i, s in enumerate(_with_holes(SUBS))
]
HISTORY = [s for i, s in enumerate(RUNS) if i % 14 < 8]
NEW = [s for i, s in enumerate(RUNS) if i % 14 >= 8]


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Store, Store]:
    if request.param == "postgresql":
        from arena_core.store.postgres import PostgresStore

        server = request.getfixturevalue("postgres_server")
        return PostgresStore(server()), PostgresStore(server())
    if request.param == "memory":
        return MemoryStore(), MemoryStore()
    return SQLiteStore(tmp_path / "together.db"), SQLiteStore(tmp_path / "apart.db")


def _arena(scope: str, gated: bool) -> Arena:
    missing = {f: "reweight" for f in ("total_tokens", "execution_time", "estimated_cost", "tool_calls")}
    config: dict = {"baseline_scope": scope, "missing": missing}
    if gated:  # debugging tasks weigh no correctness: their runs are not gated, the others' are
        weights = {"debugging": {"efficiency": 0.4, "speed": 0.3, "cost": 0.3}}
        config |= {**BUILTIN_PROFILES["gated"], "weights": weights}
    return Arena(config, autoload=False)


def _process(arena: Arena, runs: list[dict], store: Store, tasks: dict | None = None):
    return asyncio.run(arena.process_batch(runs, store=store, tasks=tasks))


def _stored(store: Store) -> dict:
    with store.transaction(write=False) as tx:
        return {
            t: sorted(
                ({k: v for k, v in to_dict(e).items() if k != "evaluated_at"} for e in tx.evaluations(t)),
                key=lambda e: e["submission_id"],
            )
            for t in TASK_MAP
        }


@pytest.mark.parametrize(("scope", "gated"), [("task", False), ("task", True), ("task_tool", True)])
def test_a_batch_over_many_tasks_scores_each_as_a_batch_of_its_own_scored_record_by_record(
    stores: tuple[Store, Store], scope: str, gated: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One batch over ten tasks, whose tasks are scored in groups of a few (the group closes
    once its rows reach ``ROWS_AT_ONCE``, so groups hold one to three tasks), one run of them
    with a workspace to check: each task's evaluations, outliers and next baselines equal those
    of a batch of the task's runs alone, scored record by record."""
    together, apart = stores
    arena = _arena(scope, gated)
    checked = {**NEW[3], "workspace": str(tmp_path)}
    new = [*NEW[:3], checked, *NEW[4:]]
    _process(arena, HISTORY, together, TASK_MAP)
    _process(arena, HISTORY, apart, TASK_MAP)
    monkeypatch.setattr(taskgroups, "ROWS_AT_ONCE", 30)
    groups: list[int] = []
    real_group = taskgroups._run_group
    monkeypatch.setattr(
        taskgroups, "_run_group", lambda arena, tx, held, *a: groups.append(len(held)) or real_group(arena, tx, held, *a)
    )
    result = _process(arena, new, together)
    assert sum(groups) == len(TASK_MAP) and max(groups) > 1 and len(groups) > 1
    monkeypatch.setattr(taskgroups, "evaluate_columns", lambda *args, **kwargs: None)
    alone = [_process(arena, [s for s in new if s["task_id"] == t], apart) for t in TASK_MAP]
    assert [e.submission_id for e in result.evaluations] == [s["id"] for s in new]
    evaluations = {e.submission_id: e for r in alone for e in r.evaluations}

    def shown(e) -> dict:
        return {k: v for k, v in to_dict(e).items() if k != "evaluated_at"}

    assert [shown(e) for e in result.evaluations] == [shown(evaluations[s["id"]]) for s in new]
    assert _stored(together) == _stored(apart)
    by_id = {o.submission_id: o for r in alone for o in r.outliers}
    assert list(result.outliers) == [by_id[s["id"]] for s in new if s["id"] in by_id] != []
    baselines = {k: b for r in alone for k, b in r.baselines.items()}
    assert {k: to_dict(b) | {"last_updated": None} for k, b in result.baselines.items()} == {
        k: to_dict(b) | {"last_updated": None} for k, b in baselines.items()
    }
    assert {b.version for b in result.baselines.values()} == {2}  # every key was stored by the history
    if gated:  # gated tasks and an ungated one shared groups; some runs failed the gate
        assert {"correctness" in e.weights for e in result.evaluations} == {True, False}
        assert 0.0 in {e.scores.get("correctness") for e in result.evaluations}


@pytest.fixture(params=["sqlite", "postgresql"])
def typed_stores(request: pytest.FixtureRequest, tmp_path: Path):
    """Two stores grown alike, and a way to open each anew (a store object with nothing kept)."""
    if request.param == "postgresql":
        from arena_core.store.postgres import PostgresStore

        server = request.getfixturevalue("postgres_server")
        urls = server(), server()
        return lambda i: PostgresStore(urls[i])
    return lambda i: SQLiteStore(tmp_path / f"store{i}.db")


def test_a_cold_batch_reads_its_tasks_figures_and_scores_ahead_a_group_at_a_time(
    typed_stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch over ten tasks into a store object that holds nothing yet reads its tasks' stored
    figures and scores a group at a time, one statement each, not a task at a time (nor counts
    its runs' standing through the index), and stores what a task-at-a-time batch stores."""
    from arena_core.store.taskfigures import FIGURES_OF_TASK, SCORES_OF_TASK, TaskFigures
    from arena_core.store.typed import TypedRows

    arena = _arena("task", gated=True)
    for i in (0, 1):
        _process(arena, HISTORY, typed_stores(i), TASK_MAP)
    monkeypatch.setattr(taskgroups, "ROWS_AT_ONCE", 30)
    statements: list[str] = []
    real_run = TypedRows._run
    monkeypatch.setattr(TypedRows, "_run", lambda self, sql, *a: statements.append(sql) or real_run(self, sql, *a))
    ahead = _process(arena, NEW, typed_stores(0))
    figures_read = [sql for sql in statements if "SELECT task_id, id, tool" in sql]
    scores_read = [sql for sql in statements if "SELECT task_id, submission_id, overall_score" in sql]
    assert len(figures_read) == len(scores_read) == 4  # groups of three tasks, then one
    assert not [sql for sql in statements if sql in (FIGURES_OF_TASK, SCORES_OF_TASK) or "overall_score > " in sql]
    monkeypatch.setattr(TaskFigures, "read_ahead", lambda self, task_ids, rows: 0)  # a task at a time
    statements.clear()
    each = _process(arena, NEW, typed_stores(1))
    assert sum(sql == FIGURES_OF_TASK for sql in statements) == len(TASK_MAP)
    assert sum("overall_score > " in sql for sql in statements) == len(NEW)  # each run counted through the index

    def shown(e) -> dict:
        return {k: v for k, v in to_dict(e).items() if k != "evaluated_at"}

    assert [shown(e) for e in ahead.evaluations] == [shown(e) for e in each.evaluations]
    assert _stored(typed_stores(0)) == _stored(typed_stores(1))
    assert list(ahead.outliers) == list(each.outliers) != []
