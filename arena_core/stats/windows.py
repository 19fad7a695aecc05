"""Windows in time: the tasks created in a range of dates, and each model's tasks created after
its knowledge cutoff (or release), as every board takes them (docs/time.md).

One definition for the CLI (which chooses records before they are scored), the Python API and
the service (which choose evaluations): a task without ``created_at`` is in no window; a run
counts in a model's window only on a task created after the model's date (the day of a date
alone excluded); a model without the date is left out, and counted.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any

from attrs import define, field

from arena_core.model.checks import moment
from arena_core.model.errors import ValidationError
from arena_core.model.records import Evaluation, Task
from arena_core.model.releases import WINDOWS, ModelDates, after
from arena_core.model.serde import structure
from arena_core.stats.runs import UNKNOWN

__all__ = ["TimeWindow"]


@define
class TimeWindow:
    """``since``/``until`` on tasks' ``created_at`` (both ends included; a date covers its day)
    and ``window`` (``after-cutoff`` or ``after-release``) per model, with what each left out."""

    since: str | None = None
    until: str | None = None
    window: str | None = None
    models: Mapping[str, ModelDates] = field(factory=dict)
    """Models' dates, by the name runs are grouped under."""
    aliases: Mapping[str, str] = field(factory=dict)
    """Model spelling to that name (``[model_aliases]``)."""
    undated: int = 0
    """Tasks left out for want of a ``created_at``."""
    created: dict[str, str] = field(factory=dict)
    """Each kept task's ``created_at`` (once :meth:`tasks` has seen them)."""
    dateless: dict[str, int] = field(factory=dict)
    """Runs left out of ``window`` because their model has no date for it, by model."""
    windows: dict[str, tuple[str, set[str]]] = field(factory=dict)
    """Each model's window: its date, and the tasks of its runs kept."""

    def __attrs_post_init__(self) -> None:
        if self.window is not None and self.window not in WINDOWS:
            raise ValidationError("window", "window", f"one of {', '.join(WINDOWS)}", self.window)
        for name in ("since", "until"):
            text = getattr(self, name)
            if text is not None and moment(text) is None:
                raise ValidationError("window", name, "an ISO-8601 date or time", text)

    @property
    def active(self) -> bool:
        return bool(self.since or self.until or self.window)

    def tasks(self, given: Mapping[str, Task | Mapping[str, Any]]) -> dict[str, Task]:
        """The tasks created in the range (all dated tasks under a window per model alone);
        records or dicts."""
        tasks = {t: task if isinstance(task, Task) else structure(task, Task) for t, task in given.items()}
        if not self.active:
            return tasks
        self.undated = sum(1 for task in tasks.values() if task.created_at is None)
        kept = {t: task for t, task in tasks.items() if task.created_at is not None and self._in_range(task.created_at)}
        self.created = {t: task.created_at for t, task in kept.items() if task.created_at is not None}
        return kept

    def keeps(self, task_id: object, model: object) -> bool:
        """Whether a run of ``model`` on ``task_id`` (a task :meth:`tasks` kept) is in its model's
        window (always, without ``window``); counted for :meth:`notes`."""
        if self.window is None:
            return True
        name = self.aliases.get(model, model) if isinstance(model, str) and model else None
        found = self.models.get(name) if name is not None else None
        date = found.date(self.window) if found is not None else None
        if name is None or date is None:
            shown = name or UNKNOWN  # as a board names a run without a model
            self.dateless[shown] = self.dateless.get(shown, 0) + 1
            return False
        created = self.created.get(task_id) if isinstance(task_id, str) else None
        if created is None or not after(created, date):
            return False
        self.windows.setdefault(name, (date, set()))[1].add(str(task_id))
        return True

    def evaluations(
        self, evaluations: Iterable[Evaluation], tasks: Mapping[str, Task | Mapping[str, Any]]
    ) -> list[Evaluation]:
        """The evaluations whose runs are in the window, of ``tasks`` (the Python API's and the
        service's way in; the CLI chooses records before scoring them)."""
        kept = self.tasks(tasks)
        return [e for e in evaluations if e.task_id in kept and self.keeps(e.task_id, e.model)]

    def described(self) -> str:
        """The window as its options say it (``--since ... --window after-cutoff``)."""
        parts = (f"--since {self.since}" if self.since else "", f"--until {self.until}" if self.until else "",
                 f"--window {self.window}" if self.window else "")  # fmt: skip
        return " ".join(part for part in parts if part)

    def notes(self) -> list[str]:
        """What the window left out, and each model's window and task count."""
        notes = []
        if self.undated:
            tasks = "task has" if self.undated == 1 else "tasks have"
            notes.append(f"note: {self.undated} {tasks} no created_at and {'is' if self.undated == 1 else 'are'} "
                         f"in no window ({self.described()}): left out")  # fmt: skip
        if self.window is None:
            return notes
        notes += [
            f"window {self.window}: {name}: tasks created after {date} ({len(tasks)} task{'' if len(tasks) == 1 else 's'})"
            for name, (date, tasks) in sorted(self.windows.items())
        ]
        if self.dateless:
            total = sum(self.dateless.values())
            named = ", ".join(f"{name} ({n})" for name, n in sorted(self.dateless.items()))
            notes.append(
                f"note: {total} {'run' if total == 1 else 'runs'} of models without a {WINDOWS[self.window]} left "
                f'out of --window {self.window}: {named}; give the dates in [models."NAME"] or --models FILE'
            )
        return notes

    def _in_range(self, created_at: str) -> bool:
        when = moment(created_at)
        assert when is not None  # Task validated it
        return (self.since is None or when >= _start(self.since)) and (self.until is None or when < _end(self.until))


def _start(text: str) -> datetime.datetime:
    """The first moment a ``since`` covers."""
    when = moment(text)
    assert when is not None  # checked when made
    return when


def _end(text: str) -> datetime.datetime:
    """The first moment after what an ``until`` covers: the next day for a date alone."""
    when = moment(text)
    assert when is not None
    return when + datetime.timedelta(days=1) if len(text.strip()) == 10 else when + datetime.timedelta(microseconds=1)
