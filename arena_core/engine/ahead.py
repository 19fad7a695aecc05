"""Criterion verdicts found ahead of the transaction that stores them.

Checking a run's workspace runs the task's commands (a test suite) or asks a model: seconds or
minutes, which must never be spent holding a store's write lock, where every other writer waits
(an ``arena ingest`` beside it fails as busy, a service's honest posts queue behind one slow
check). The stored pipeline therefore checks first, outside the transaction (the service on
its own bounded pool), and scores inside it with the verdicts found ahead: the metrics that check
criteria (a ``verdicts(submission, task)`` method, as the built-in correctness metric has) read
them here instead of checking again.

Verdicts are kept by the run (its id, workspace and ref) and by the task's criteria, so a task
redefined in between is checked again, inside, against what it says now.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import orjson

from arena_core.model.records import CriterionResult, Submission, Task
from arena_core.model.serde import to_dict

if TYPE_CHECKING:
    from arena_core.engine.scoring import Scorer

__all__ = [
    "Verdicts", "all_found_ahead", "check_ahead", "checked_ahead", "found_ahead", "needs_checking", "needs_whole_runs", "store_checked_for", "verdict_key",
]  # fmt: skip

#: Verdicts of a run's criteria, by :func:`verdict_key`.
Verdicts = Mapping[Hashable, tuple[CriterionResult, ...]]

_AHEAD: ContextVar[Verdicts | None] = ContextVar("arena_verdicts_found_ahead", default=None)
#: The store the runs being checked go to, whose tables keep judges' answers (:func:`checking_for`).
_STORE: ContextVar[Any] = ContextVar("arena_store_checked_for", default=None)


def store_checked_for() -> Any:
    """The store the runs being checked now go to (a judge's verdict cache is kept there), or ``None``."""
    return _STORE.get()


def verdict_key(submission: Submission, task: Task) -> Hashable:
    """What a run's verdicts are kept by: the run (id, workspace, ref), its task and the task's criteria."""
    criteria = orjson.dumps([to_dict(c) for c in task.success_criteria], option=orjson.OPT_SORT_KEYS)
    return (submission.id, submission.workspace, submission.workspace_ref, task.id, hashlib.sha256(criteria).digest())


def _checking(scorer: Scorer) -> list[Any]:
    """The metrics in use that check criteria themselves (``verdicts``), unwrapped."""
    found = []
    for metric in scorer.metrics_in_use().values():
        inner = getattr(metric, "inner", metric)  # a missing-telemetry guard holds the metric
        if callable(getattr(inner, "verdicts", None)) and inner not in found:
            found.append(inner)
    return found


def slow_checks(scorer: Scorer, tasks: Iterable[Task]) -> bool:
    """Whether a criterion of these tasks has a checker that says it is slow (``slow = True``:
    a model judge asks a server)."""
    checkers = scorer.checkers()
    return any(getattr(checkers.get(c.type), "slow", False) for task in tasks for c in task.success_criteria)


def needs_checking(scorer: Scorer, submission: Submission, task: Task) -> bool:
    """Whether scoring the run would run slow checks: a workspace to check, or a criterion whose
    checker is slow (:func:`slow_checks`)."""
    if slow_checks(scorer, [task]):
        return True
    checkers = scorer.checkers()
    return submission.workspace is not None and any(
        hasattr(checkers.get(c.type), "check_workspace") for c in task.success_criteria
    )


def check_ahead(
    scorer: Scorer,
    items: Sequence[tuple[Submission, Task]],
    *,
    pool: Executor | None = None,
    on_each: Callable[[Submission], object] | None = None,
    store: Any = None,
) -> dict[Hashable, tuple[CriterionResult, ...]]:
    """The verdicts of every run of ``items`` whose scoring would run slow checks, found now
    (``check_concurrency`` at a time, or on ``pool``), to be scored later with
    :func:`checked_ahead`. A run whose checks raise (an unknown criterion type: the task's own
    error) is left to be refused where it is scored. ``store``: where the runs go, which keeps
    the judges' verdict cache (:func:`store_checked_for`)."""
    metrics = _checking(scorer)
    slow = [(s, t) for s, t in items if needs_checking(scorer, s, t)]
    if not metrics or not slow:
        return {}

    def one(item: tuple[Submission, Task]) -> tuple[Hashable, tuple[CriterionResult, ...]] | None:
        submission, task = item
        token = _STORE.set(store)  # this thread's: a pool's threads do not share the caller's context
        try:
            results: tuple[CriterionResult, ...] = ()
            for metric in metrics:
                results += tuple(metric.verdicts(submission, task))
            return verdict_key(submission, task), results
        except Exception:  # the same error is raised again, with its record named, when it is scored
            return None
        finally:
            _STORE.reset(token)
            if on_each is not None:
                on_each(submission)

    if pool is not None:
        done = list(pool.map(one, slow))
    else:
        with ThreadPoolExecutor(max_workers=scorer.config.check_concurrency, thread_name_prefix="arena-ahead") as own:
            done = list(own.map(one, slow))
    return dict(found for found in done if found is not None)


@contextmanager
def checked_ahead(found: Verdicts) -> Iterator[None]:
    """Score, within the block, with the verdicts ``found`` ahead (in this thread's context)."""
    token = _AHEAD.set(found)
    try:
        yield
    finally:
        _AHEAD.reset(token)


def found_ahead(submission: Submission, task: Task) -> tuple[CriterionResult, ...] | None:
    """The verdicts found ahead for the run on this task as it is defined now, or ``None``."""
    found = _AHEAD.get()
    return found.get(verdict_key(submission, task)) if found else None


def needs_whole_runs(scorer: Scorer, tasks: Iterable[Task]) -> bool:
    """Whether a criterion of these tasks reads a run's ``meta`` (a judge shown the run's final
    answer or trajectory), which runs read as columns leave out: they are read as objects then."""
    checkers = scorer.checkers()
    return any(getattr(checkers.get(c.type), "reads_meta", False) for task in tasks for c in task.success_criteria)


def all_found_ahead(items: Sequence[tuple[Submission, Task, Any]], scorer: Scorer) -> bool:
    """Whether no item has a slow check left: scoring them then needs no pool of checkers."""
    found = _AHEAD.get()
    return found is not None and all(verdict_key(s, t) in found for s, t, _ in items if needs_checking(scorer, s, t))
