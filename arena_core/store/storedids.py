"""Whether a batch's run ids are stored already, and where: an id names one run for good.

Kept apart from the pipeline (:mod:`arena_core.store.pipeline`), which refuses a batch's run
whose id is stored for another task unless it replaces on purpose.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from arena_core.model.errors import ValidationError
from arena_core.model.records import Submission

if TYPE_CHECKING:
    from arena_core.store import Transaction

__all__ = ["REPLACE_HINT", "StoredIds"]

#: How a caller replaces stored runs, as a refusal of a stored id says it; the service says it
#: in its own terms (``?replace=true``) for the HTTP client that receives it.
REPLACE_HINT = "replace=True, or arena ingest --replace"


class StoredIds:
    """Refuses a submission whose id is stored under another task: storing it would move the
    stored run (and take its evaluation from the first task's board). With ``replace`` the run
    moves, on purpose."""

    def __init__(self) -> None:
        self._all: dict[str, str | None] | None = None
        self._looked_up: dict[str, str] | None = None

    def look_up(self, tx: Transaction, ids: list[str]) -> None:
        """The tasks of those of ``ids`` that are stored, in a few statements where the store
        offers ``tasks_of`` (a batch of a million runs had made a million look-ups)."""
        many = getattr(tx, "tasks_of", None)
        if many is not None:
            self._looked_up = many(ids)

    def stored_for(self, task_id: str, ids: Iterable[str]) -> set[str] | None:
        """Those of ``ids`` stored for ``task_id`` when they were looked up, or ``None`` when the
        store offered no look-up (a batch then finds them among its task's stored ids)."""
        if self._looked_up is None:
            return None
        return {i for i in ids if self._looked_up.get(i) == task_id}

    def check(self, tx: Transaction, submission: Submission, replace: bool) -> None:
        where = self.task_of(tx, submission.id)
        if where is None or where == submission.task_id or replace:
            return
        raise ValidationError(
            f"submission {submission.id!r}",
            "id",
            f"an id not yet stored (it is stored for task {where!r}; ids are never reused for another task: "
            f"give the run a new id, or move it on purpose with {REPLACE_HINT})",
            submission.task_id,
            code="duplicate_id",
        )

    def task_of(self, tx: Transaction, submission_id: str) -> str | None:
        """The task ``submission_id`` is stored for: the store's own look-up when it has one, else
        the task lists of every task (read once per batch)."""
        if self._looked_up is not None:
            return self._looked_up.get(submission_id)
        lookup = getattr(tx, "task_of", None)
        if lookup is not None:
            found: str | None = lookup(submission_id)
            return found
        if self._all is None:
            self._all = {s.id: t for t in tx.task_ids() for s in tx.submissions(t)}
        return self._all.get(submission_id)
