"""Where tasks, baselines, submissions and evaluations live between batches.

A store is anything with a ``transaction()`` context manager yielding a :class:`Transaction`.
All reads and writes of a batch happen inside one transaction: when the batch fails, nothing
it wrote remains. Two stores ship with arena-core: :class:`MemoryStore` and
:class:`SQLiteStore` (the embedded default: one file, WAL, safe across processes). A host
application plugs in its own database by implementing the nine methods of
:class:`Transaction`; see ``docs/store.md``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.store.memory import MemoryStore
from arena_core.store.sqlite import SQLiteStore

__all__ = ["MemoryStore", "SQLiteStore", "Store", "Transaction"]


class Transaction(Protocol):
    """Reads and writes inside one transaction. ``put_*`` replace the record with the same key."""

    def task_ids(self) -> list[str]:
        """Ids of every stored task."""
        ...

    def get_task(self, task_id: str) -> Task | None: ...

    def put_task(self, task: Task) -> None: ...

    def get_baseline(self, key: str) -> Baseline | None:
        """The stored baseline for ``key``: a task id, or a task id and group under a scoped baseline."""
        ...

    def put_baseline(self, key: str, baseline: Baseline) -> None: ...

    def submissions(self, task_id: str) -> list[Submission]:
        """Every stored submission of the task, in the order first stored."""
        ...

    def put_submission(self, submission: Submission) -> None: ...

    def evaluations(self, task_id: str) -> list[Evaluation]:
        """Every stored evaluation of the task, in the order first stored."""
        ...

    def put_evaluation(self, evaluation: Evaluation) -> None:
        """Store ``evaluation``, replacing the one of the same submission id."""
        ...


@runtime_checkable
class Store(Protocol):
    """A place to keep an arena. ``write=False`` promises the transaction only reads."""

    def transaction(self, *, write: bool = True) -> AbstractContextManager[Transaction]: ...
