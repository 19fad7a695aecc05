"""Which runs a command looks at, decided on the records before any of them is checked.

``--task``, ``--category`` and ``--where meta.KEY=VALUE`` choose runs, and ``infra_failures =
"exclude"`` leaves out the runs an importer flagged as harness errors. Applying them after
scoring meant that a task nobody asked about could still stop the command with its error, and
that counts of missing figures included runs the board then left out; so the choice is made on
the decoded records, and only the tasks and runs it keeps are validated and scored.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from attrs import define, field

from arena_core.io.decoding import InputError, open_binary
from arena_core.io.locations import is_url
from arena_core.io.readers import Located
from arena_core.model.checks import moment
from arena_core.model.errors import ArenaError
from arena_core.model.records import Submission, Task
from arena_core.model.releases import WINDOWS, ModelDates, after
from arena_core.stats.runs import UNKNOWN, harness_error, meta_matches, ungraded

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
    since: str | None = None
    """Only tasks created on or after this ISO-8601 date or time (``Task.created_at``)."""
    until: str | None = None
    """Only tasks created on or before it (a date covers its whole day)."""
    undated: int = 0
    """Tasks left out of a window for want of a ``created_at``."""
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
    window: str | None = None
    """``after-cutoff`` or ``after-release``: each run only on tasks created after its model's
    knowledge cutoff (or release), from ``models`` by the name after ``aliases``."""
    models: Mapping[str, ModelDates] = field(factory=dict)
    aliases: Mapping[str, str] = field(factory=dict)
    created: dict[str, str] = field(factory=dict)
    """Each kept task's ``created_at``, once :meth:`tasks_of` has seen the tasks (for ``window``)."""
    dateless: dict[str, int] = field(factory=dict)
    """Runs left out of ``window`` because their model has no date for it, by model."""
    windows: dict[str, tuple[str, set[str]]] = field(factory=dict)
    """Each model's window: its date, and the tasks of its runs kept."""

    @property
    def chooses(self) -> bool:
        """Whether anything is left out at all."""
        return bool(self.task_ids or self.categories or self.since or self.until or self.window) or self.narrows_runs

    @property
    def narrows_runs(self) -> bool:
        """Whether runs are chosen one by one (by their meta or their model's window), so the
        records must be read whole."""
        return bool(self.where) or self.exclude_harness_errors or self.window is not None

    def tasks_of(self, tasks: dict[str, Task]) -> dict[str, Task]:
        """The tasks ``--task`` and ``--category`` keep, each name checked against ``tasks``."""
        if not self.task_ids and not self.categories and not self.since and not self.until and not self.window:
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
        if self.since or self.until or self.window:
            self.undated = sum(1 for task in kept.values() if task.created_at is None)
            kept = {
                t: task for t, task in kept.items() if task.created_at is not None and self._in_window(task.created_at)
            }
            if not kept:
                raise ArenaError(f"{self._window()}: no task was created in it (tasks' created_at)")
            self.created = {t: task.created_at for t, task in kept.items() if task.created_at is not None}
        self.kept_tasks = frozenset(kept)
        return kept

    def _in_window(self, created_at: str) -> bool:
        when = moment(created_at)
        assert when is not None  # Task validated it
        return (self.since is None or when >= _start(self.since)) and (self.until is None or when < _end(self.until))

    def _window(self) -> str:
        return " ".join(part for part in (f"--since {self.since}" if self.since else "",
                                          f"--until {self.until}" if self.until else "",
                                          f"--window {self.window}" if self.window else "") if part)  # fmt: skip

    def keeps(self, record: Any) -> bool:
        """Whether a decoded record is kept; a record that is not an object is kept, so that
        validation reports it."""
        if not isinstance(record, dict):
            return True
        if self.kept_tasks is not None and record.get("task_id") not in self.kept_tasks:
            return False
        if not self.narrows_runs:
            return True
        if self.window is not None and not self._in_model_window(record):
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

    def _in_model_window(self, record: Mapping[str, Any]) -> bool:
        """Whether the run's task was created after its model's date (counted for the note)."""
        assert self.window is not None
        raw = record.get("model")
        name = self.aliases.get(raw, raw) if isinstance(raw, str) and raw else None
        found = self.models.get(name) if name is not None else None
        date = found.date(self.window) if found is not None else None
        if name is None or date is None:
            shown = name or UNKNOWN
            self.dateless[shown] = self.dateless.get(shown, 0) + 1
            return False
        task_id = record.get("task_id")
        created = self.created.get(task_id) if isinstance(task_id, str) else None
        if created is None or not after(created, date):
            return False
        self.windows.setdefault(name, (date, set()))[1].add(str(task_id))
        return True

    def apply(self, located: Located) -> None:
        """Drop from ``located`` (in place) the records not kept; keeping none of them is an error
        that says what chose them."""
        kept = [i for i, record in enumerate(located.records) if self.keeps(record)]
        if len(kept) == len(located.records):
            return
        if not kept:
            undated = (
                f" (no {WINDOWS[self.window]} for: {', '.join(sorted(self.dateless))})"
                if self.dateless and self.window
                else ""
            )
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
        parts += [f"--window {self.window}"] if self.window else []
        return " ".join(parts + (["infra_failures = exclude"] if self.exclude_harness_errors else []))

    def note(self, outcome: str = "ranked") -> str | None:
        """What the command says of the runs it left out: harness errors, and the ungraded runs
        (not ``outcome``: not ranked, not stored)."""
        notes = []
        if self.undated:
            tasks = "task has" if self.undated == 1 else "tasks have"
            notes.append(f"note: {self.undated} {tasks} no created_at and {'is' if self.undated == 1 else 'are'} "
                         f"in no window ({self._window()}): left out")  # fmt: skip
        notes += self._window_notes()
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

    def _window_notes(self) -> list[str]:
        """Each model's window and task count, and the models left out for want of a date."""
        if self.window is None:
            return []
        field_name = WINDOWS[self.window]
        notes = [
            f"window {self.window}: {name}: tasks created after {date} ({len(tasks)} task{'' if len(tasks) == 1 else 's'})"
            for name, (date, tasks) in sorted(self.windows.items())
        ]
        if self.dateless:
            total = sum(self.dateless.values())
            named = ", ".join(f"{name} ({n})" for name, n in sorted(self.dateless.items()))
            notes.append(
                f"note: {total} {'run' if total == 1 else 'runs'} of models without a {field_name} left out of "
                f'--window {self.window}: {named}; give the dates in [models."NAME"] or --models FILE'
            )
        return notes


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


def _start(text: str) -> datetime.datetime:
    """The first moment a ``--since`` covers."""
    when = moment(text)
    assert when is not None  # checked when given
    return when


def _end(text: str) -> datetime.datetime:
    """The first moment after what an ``--until`` covers: the next day for a date alone."""
    when = moment(text)
    assert when is not None
    return when + datetime.timedelta(days=1) if len(text.strip()) == 10 else when + datetime.timedelta(microseconds=1)


def mentions_ungraded(path: Path) -> bool:
    """Whether a file of runs may hold one flagged ``not_graded`` (its bytes name the flag), so
    that its runs are read as records, where ungraded ones are set aside, rather than straight
    into columns, which do not read the flags. A scan at disk speed; a URL or a file that
    cannot be read is not scanned (its reader reports it)."""
    if is_url(str(path)):
        return False
    tail = b""
    try:
        with open_binary(path) as fh:
            while chunk := fh.read(1 << 22):
                if b'"not_graded"' in tail + chunk[:16] or b'"not_graded"' in chunk:
                    return True
                tail = chunk[-16:]
    except (InputError, OSError):
        return False
    return False


def _ungraded(record: dict[str, Any], tasks: Mapping[str, Task]) -> bool:
    """:func:`~arena_core.stats.runs.ungraded` of a record: a record naming no task has none."""
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
