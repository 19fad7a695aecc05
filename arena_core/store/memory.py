"""An in-memory store, for tests and for hosts that persist elsewhere."""

from __future__ import annotations

import copy
import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager

import attrs

from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.store.current import generations_of_rows

__all__ = ["MemoryStore"]


class _Tables:
    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}
        self.baselines: dict[str, Baseline] = {}
        self.baseline_versions: dict[str, tuple[Baseline, ...]] = {}
        self.submissions: dict[str, Submission] = {}
        self.evaluations: dict[str, Evaluation] = {}
        self.evaluation_versions: tuple[tuple[str, str, Evaluation], ...] = ()


class _MemoryTransaction:
    def __init__(self, tables: _Tables) -> None:
        self._t = tables

    def task_ids(self) -> list[str]:
        return list(self._t.tasks)

    def get_task(self, task_id: str) -> Task | None:
        return self._t.tasks.get(task_id)

    def put_task(self, task: Task) -> None:
        self._t.tasks[task.id] = task

    def get_baseline(self, key: str) -> Baseline | None:
        return self._t.baselines.get(key)

    def put_baseline(self, key: str, baseline: Baseline) -> None:
        kept = self._t.baseline_versions.get(key, ())
        if baseline.version is None:
            baseline = attrs.evolve(baseline, version=max((b.version or 0 for b in kept), default=0) + 1)
        self._t.baselines[key] = baseline
        self._t.baseline_versions[key] = (*(b for b in kept if b.version != baseline.version), baseline)

    def baseline_keys(self) -> list[str]:
        return sorted(self._t.baseline_versions)

    def baseline_versions(self, key: str) -> list[Baseline]:
        return sorted(self._t.baseline_versions.get(key, ()), key=lambda b: b.version or 0)

    def get_baseline_version(self, key: str, version: int) -> Baseline | None:
        return next((b for b in self._t.baseline_versions.get(key, ()) if b.version == version), None)

    def task_generations(self) -> dict[str, Hashable]:
        """Each task's record and its baselines' newest versions (:mod:`arena_core.store.current`)."""
        versions = [
            (key, max((b.version or 0 for b in kept), default=0)) for key, kept in self._t.baseline_versions.items()
        ]
        return generations_of_rows([(t.id, t) for t in self._t.tasks.values()], versions)

    def submissions(self, task_id: str) -> list[Submission]:
        return [s for s in self._t.submissions.values() if s.task_id == task_id]

    def put_submission(self, submission: Submission) -> None:
        self._t.submissions[submission.id] = submission

    def evaluations(self, task_id: str) -> list[Evaluation]:
        return [e for e in self._t.evaluations.values() if e.task_id == task_id]

    def put_evaluation(self, evaluation: Evaluation) -> None:
        self._t.evaluations[evaluation.submission_id] = evaluation

    def keep_evaluation_version(self, evaluation: Evaluation, reason: str, superseded_at: str) -> None:
        """Keep ``evaluation`` among the superseded ones (see :mod:`arena_core.store.repricing`)."""
        self._t.evaluation_versions += ((superseded_at, reason, evaluation),)

    def evaluation_versions(self, submission_id: str) -> list[tuple[str, str, Evaluation]]:
        """(superseded at, reason, evaluation) of every superseded evaluation of a run, oldest first."""
        return [v for v in self._t.evaluation_versions if v[2].submission_id == submission_id]


class MemoryStore:
    """Keeps everything in dicts. A transaction works on a copy that replaces the tables on
    success and is dropped on failure; transactions are serialised by a lock."""

    def __init__(self) -> None:
        self._tables = _Tables()
        self._lock = threading.Lock()

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[_MemoryTransaction]:
        with self._lock:
            if not write:
                yield _MemoryTransaction(self._tables)
                return
            working = copy.copy(self._tables)
            for name in ("tasks", "baselines", "baseline_versions", "submissions", "evaluations"):
                setattr(working, name, dict(getattr(self._tables, name)))
            yield _MemoryTransaction(working)
            self._tables = working
