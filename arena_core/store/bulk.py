"""A batch's tasks and baselines read and written a batch at a time where the store offers it.

A batch touches many tasks, and read each task's record and baseline, and wrote each task's
next baselines, one statement at a time: on PostgreSQL each is a wait on the server (a batch of
5,000 runs over 100 tasks made 400 of them for these alone). A store may offer ``get_tasks``,
``get_baselines`` and ``put_baselines`` (the built-in ones do: :mod:`arena_core.store.typed`);
for any other, these read and write record by record through the nine methods every store has.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from arena_core.model.records import Baseline, Task

if TYPE_CHECKING:
    from arena_core.store import Transaction

__all__ = ["read_baselines", "read_tasks", "write_baselines"]


def read_tasks(tx: Transaction, task_ids: Sequence[str]) -> dict[str, Task]:
    """The stored ones of ``task_ids``, by id."""
    many = getattr(tx, "get_tasks", None)
    if many is not None:
        found: dict[str, Task] = many(task_ids)
        return found
    return {task_id: task for task_id in task_ids if (task := tx.get_task(task_id)) is not None}


def read_baselines(tx: Transaction, keys: Sequence[str]) -> dict[str, Baseline | None]:
    """The stored baseline of each of ``keys`` (``None``: none is stored under it)."""
    many = getattr(tx, "get_baselines", None)
    if many is None:
        return {key: tx.get_baseline(key) for key in keys}
    found: Mapping[str, Baseline] = many(keys)
    return {key: found.get(key) for key in keys}


def write_baselines(tx: Transaction, baselines: Iterable[tuple[str, Baseline]]) -> None:
    """``put_baseline`` of each ``(key, baseline)``, in order."""
    pairs = list(baselines)
    many = getattr(tx, "put_baselines", None)
    if many is not None:
        many(pairs)
        return
    for key, baseline in pairs:
        tx.put_baseline(key, baseline)
