"""Which runs a command looks at, decided on the records before any of them is checked.

``--task``, ``--category`` and ``--where meta.KEY=VALUE`` choose runs, and ``infra_failures =
"exclude"`` leaves out the runs an importer flagged as harness errors. Applying them after
scoring meant that a task nobody asked about could still stop the command with its error, and
that counts of missing figures included runs the board then left out; so the choice is made on
the decoded records, and only the tasks and runs it keeps are validated and scored.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from attrs import define, field

from arena_core.io.decoding import InputError, open_binary
from arena_core.io.locations import is_url
from arena_core.io.readers import Located
from arena_core.model.errors import ArenaError
from arena_core.model.records import Submission, Task
from arena_core.model.releases import WINDOWS
from arena_core.stats.runs import UNKNOWN, harness_error, meta_matches, ungraded
from arena_core.stats.windows import TimeWindow

__all__ = ["Pick", "mentions_ungraded"]

#: A record's keys that are submission fields; any other key is kept under its meta.
_FIELDS = frozenset(a.name for a in attrs.fields(Submission))


@define
class Pick:
    """The runs a command keeps."""

    task_ids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    where: Mapping[str, str] = field(factory=dict)
    exclude_harness_errors: bool = False
    time: TimeWindow = field(factory=TimeWindow)
    """``--since``/``--until`` on tasks' ``created_at`` and ``--window`` per model."""
    kept_tasks: frozenset[str] | None = None
    """The tasks kept, once :meth:`tasks_of` has seen the tasks (``None``: all of them)."""
    excluded: int = 0
    """Runs left out as harness errors."""
    ranks: bool = False
    """Whether the command ranks runs (a board, a comparison of boards, a store's board, a fit
    to votes): then the runs no verdict grades are set aside (:meth:`set_aside_ungraded`) and
    :meth:`note` says so. Commands that evaluate, explain or judge runs one by one take each
    as it is."""
    ungraded: dict[str, int] = field(factory=dict)
    """Runs set aside for want of a verdict, by tool and model (:meth:`set_aside_ungraded`)."""

    @property
    def chooses(self) -> bool:
        """Whether anything is left out at all."""
        return bool(self.task_ids or self.categories or self.time.active) or self.narrows_runs

    @property
    def narrows_runs(self) -> bool:
        """Whether runs are chosen one by one (by their meta or their model's window), so the
        records must be read whole."""
        return bool(self.where) or self.exclude_harness_errors or self.time.window is not None

    def tasks_of(self, tasks: dict[str, Task]) -> dict[str, Task]:
        """The tasks ``--task`` and ``--category`` keep, each name checked against ``tasks``."""
        if not self.task_ids and not self.categories and not self.time.active:
            return tasks
        for task_id in self.task_ids:
            if task_id not in tasks:
                raise ArenaError(f"--task {task_id!r}: no such task (tasks: {', '.join(sorted(tasks))})")
        known = {t.category for t in tasks.values()}
        for category in self.categories:
            if category not in known:
                raise ArenaError(
                    f"--category {category!r}: no task has it (categories: {', '.join(sorted(map(str, known)))})"
                )
        kept = {
            t: task
            for t, task in tasks.items()
            if (not self.task_ids or t in self.task_ids) and (not self.categories or task.category in self.categories)
        }
        if self.time.active:
            kept = self.time.tasks(kept)
            if not kept:
                raise ArenaError(f"{self.time.described()}: no task was created in it (tasks' created_at)")
        self.kept_tasks = frozenset(kept)
        return kept

    def keeps(self, record: Any) -> bool:
        """Whether a decoded record is kept; a record that is not an object is kept, so that
        validation reports it."""
        if not isinstance(record, dict):
            return True
        if self.kept_tasks is not None and record.get("task_id") not in self.kept_tasks:
            return False
        if not self.narrows_runs:
            return True
        if not self.time.keeps(record.get("task_id"), record.get("model")):
            return False
        meta = _meta_of(record)
        if not meta_matches(meta, self.where):
            return False
        if self.exclude_harness_errors and harness_error(meta):
            self.excluded += 1
            return False
        return True

    def keeps_meta(self, task_id: str | None, meta: Mapping[str, Any] | None, model: str | None = None) -> bool:
        """:meth:`keeps` for a stored submission: its task, its meta and its model."""
        return self.keeps({"task_id": task_id, "meta": dict(meta or {}), "model": model})

    def apply(self, located: Located) -> None:
        """Drop from ``located`` (in place) the records not kept; keeping none of them is an error
        that says what chose them."""
        if self.kept_tasks is None and not self.narrows_runs:  # every record is kept
            return
        kept = [i for i, record in enumerate(located.records) if self.keeps(record)]
        if len(kept) == len(located.records):
            return
        if not kept:
            window, dateless = self.time.window, self.time.dateless
            undated = f" (no {WINDOWS[window]} for: {', '.join(sorted(dateless))})" if window and dateless else ""
            raise ArenaError(f"{located.path}: no run is kept by {self._described()}{undated}")
        _keep_only(located, kept)

    def set_aside_ungraded(self, located: Located, tasks: Mapping[str, Task]) -> None:
        """Drop from ``located`` the runs no verdict grades: flagged ``not_graded`` by their
        importer (a trajectory without the report that grades it) while their task's only
        criterion is that verdict. Scored, they would rank as failures; a task with another
        criterion (a ``judge``, a command) grades them, and they stay."""
        if not self.ranks:
            return
        kept = []
        for index, record in enumerate(located.records):
            if isinstance(record, dict) and _ungraded(record, tasks):
                group = " / ".join(str(record.get(key) or UNKNOWN) for key in ("tool", "model"))
                self.ungraded[group] = self.ungraded.get(group, 0) + 1
            else:
                kept.append(index)
        if len(kept) == len(located.records):
            return
        if not kept:
            raise ArenaError(f"{located.path}: no run has a verdict: {UNGRADED_HELP}")
        _keep_only(located, kept)

    def _described(self) -> str:
        parts = [f"--task {t}" for t in self.task_ids] + [f"--category {c}" for c in self.categories]
        parts += [f"--where meta.{k}={v}" for k, v in self.where.items()]
        parts += [f"--window {self.time.window}"] if self.time.window else []
        return " ".join(parts + (["infra_failures = exclude"] if self.exclude_harness_errors else []))

    def note(self, outcome: str = "ranked") -> str | None:
        """What the command says of the runs it left out: harness errors, and the ungraded runs
        (not ``outcome``: not ranked, not stored)."""
        notes = self.time.notes()
        if self.excluded:
            runs = "run" if self.excluded == 1 else "runs"
            notes.append(f"note: {self.excluded} {runs} flagged as harness errors left out (infra_failures = exclude)")
        if self.ungraded:
            total = sum(self.ungraded.values())
            groups = ", ".join(f"{group}: {n}" for group, n in sorted(self.ungraded.items()))
            notes.append(
                f"note: {total} {'run has' if total == 1 else 'runs have'} no verdict (flagged not_graded) "
                f"and {'is' if total == 1 else 'are'} not {outcome} ({groups}); {UNGRADED_HELP}"
            )
        return "\n".join(notes) or None


def _keep_only(located: Located, kept: list[int]) -> None:
    """Keep the records at the indices ``kept`` of ``located``, with their lines and places."""
    located.records = [located.records[i] for i in kept]
    if located.lines:
        located.lines = [located.lines[i] for i in kept]
    if located.places is not None:
        located.places = [located.places[i] for i in kept]


#: What grades a run its harness left ungraded: said wherever such runs are set aside.
UNGRADED_HELP = (
    "grade them by giving the report that grades them with them (a SWE-bench run report beside "
    "the trajectories or output.jsonl), or with --tasks whose criteria check the run (a `judge` "
    "criterion, a command)"
)


def mentions_ungraded(path: Path) -> bool:
    """Whether a file of runs may hold one flagged ``not_graded`` (its bytes name the flag, or
    hold a ``\\u`` escape, which could spell it), so that its runs are read as records, where
    ungraded ones are set aside, rather than straight into columns, which do not read the flags.
    A scan at disk speed; a URL or a file that cannot be read is not scanned (its reader
    reports it)."""
    if is_url(str(path)):
        return False
    tail = b""
    try:
        with open_binary(path) as fh:
            while chunk := fh.read(1 << 22):
                joined = tail + chunk[:16]
                if any(mark in joined or mark in chunk for mark in (b'"not_graded"', b"\\u")):
                    return True
                tail = chunk[-16:]
    except (InputError, OSError):
        return False
    return False


def _ungraded(record: dict[str, Any], tasks: Mapping[str, Task]) -> bool:
    """:func:`~arena_core.stats.runs.ungraded` of a record: a record naming no task has none.
    Its flags are looked up where its meta will hold them first (its ``meta`` object's, else
    its own key), so that a record without the flag costs no meta built (500,000 records:
    about a second)."""
    meta = record.get("meta")
    flags = meta.get("flags") if isinstance(meta, dict) and "flags" in meta else record.get("flags")
    if not isinstance(flags, (list, tuple)) or "not_graded" not in flags:
        return False
    task_id = record.get("task_id")
    task = tasks.get(str(task_id)) if task_id is not None else None
    if task_id is not None and task is None:
        return False  # a task not given: its reader reports it
    return ungraded(_meta_of(record), task)


def _meta_of(record: dict[str, Any]) -> dict[str, Any]:
    """A record's meta as its submission will have it: its ``meta`` object and the keys that are
    not submission fields."""
    meta = record.get("meta")
    extra = {k: v for k, v in record.items() if k not in _FIELDS}
    return {**extra, **meta} if isinstance(meta, dict) else extra
