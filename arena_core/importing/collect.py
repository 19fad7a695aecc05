"""Running an importer over paths: every bad source reported, or skipped with ``skip_bad``.

The runs stream through (an importer reads one source at a time); only the derived tasks and
the problem list are held, so a directory of 100,000 trials sits in memory once, as the
records its consumer keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena_core.importing.heads import shared_heads
from arena_core.importing.runs import ImportedRun, regular_files
from arena_core.io.decoding import InputError
from arena_core.io.readers import Problems

if TYPE_CHECKING:
    from arena_core.model.protocols import Importer

__all__ = ["ImportSession", "detect_format"]


class ImportSession:
    """One import: the runs of ``paths`` read by ``importer``, one at a time (:meth:`runs`),
    the tasks they name (:attr:`tasks`) and what could not be read (:attr:`problems`).

    :param skip_bad: a source that cannot be read is reported in :attr:`skipped` and the rest
        imported; without it, :meth:`runs` raises once the whole input was read, naming every
        bad source (so nothing is written from a half-read input).
    """

    def __init__(self, importer: Importer, paths: Sequence[Path], *, skip_bad: bool = False) -> None:
        self.importer = importer
        self.paths = list(paths)
        self.skip_bad = skip_bad
        self.tasks: dict[str, Mapping[str, Any]] = {}
        self.problems = Problems()
        self.skipped: list[str] = []
        self.count = 0

    def runs(self) -> Iterator[ImportedRun]:
        """The runs in source order; :raises InputError: every bad source, one per line."""
        for path in self.paths:
            if not path.exists():
                raise InputError(f"{path}: no such file or directory")
        ids: dict[str, str] = {}
        for item in self.importer.read(self.paths):
            if isinstance(item, InputError):
                self.bad(str(item))
                continue
            submission_id = item.submission.get("id")
            if isinstance(submission_id, str) and submission_id in ids:
                self.bad(
                    f"{item.where}: id: expected an id used once, {submission_id!r} is also the id of the run from {ids[submission_id]}"
                )
                continue
            if isinstance(submission_id, str):
                ids[submission_id] = item.where
            if item.task is not None:
                self._task(item)
            self.count += 1
            yield item
        if not self.skip_bad:
            self.problems.raise_if_any()
        if self.count == 0 and not self.problems:
            raise InputError(f"{', '.join(map(str, self.paths))}: no {self.importer.name} runs found")

    def bad(self, message: str) -> None:
        """A source (or run) that cannot be used: skipped with ``skip_bad``, else reported when
        :meth:`runs` ends, with the others."""
        if self.skip_bad:
            self.skipped.append(message)
        else:
            self.problems.add(message)

    def _task(self, run: ImportedRun) -> None:
        task = dict(run.task or {})
        known = self.tasks.get(task["id"])
        if known is None:
            self.tasks[task["id"]] = task
            return
        for key in ("category", "difficulty"):  # what one source names and another does not is kept
            if key in task and key not in known:
                self.tasks[task["id"]] = {**known, key: task[key]}


def detect_format(importers: Iterable[Importer], paths: Sequence[Path]) -> str | None:
    """The name of the one importer that recognises every path, ``None`` when none recognises
    any (the paths are arena-core's own files). :raises InputError: when the paths are claimed
    by several importers or only some are recognised.

    A folder is listed once for every importer that tells its output by a file in it
    (``detect_file``): each file is asked of them in turn, its head read once
    (:func:`~arena_core.importing.heads.shared_heads`), and no further file is asked once all of them
    have claimed the folder. The others are asked ``detect(folder)`` as before."""
    importers = list(importers)
    claims: dict[str, list[Path]] = {}
    for path in paths:
        claimed = _claimants(importers, path)
        for importer in importers:
            if importer.name in claimed:
                claims.setdefault(importer.name, []).append(path)
    if not claims:
        return None
    whole = [name for name, claimed in claims.items() if len(claimed) == len(paths)]
    if len(whole) == 1 and len(claims) == 1:
        return whole[0]
    found = "; ".join(f"{name}: {', '.join(map(str, claimed))}" for name, claimed in claims.items())
    raise InputError(f"cannot tell the format of the input ({found}); give it with --from FORMAT")


def _claimants(importers: list[Importer], path: Path) -> set[str]:
    """The names of the importers that claim ``path``."""
    folder = path.is_dir()
    by_file = [i for i in importers if folder and callable(getattr(i, "detect_file", None))]
    claimed = {i.name for i in importers if i not in by_file and i.detect(path)}
    pending = list(by_file)
    with shared_heads():
        for found in regular_files(path) if pending else ():
            pending = [i for i in pending if not i.detect_file(found)]  # type: ignore[attr-defined]
            if not pending:
                break
    return claimed | {i.name for i in by_file if i not in pending}
