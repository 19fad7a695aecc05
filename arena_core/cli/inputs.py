"""What the commands read: SUBMISSIONS (arena-core's own files, shards of them, or a harness's
output through an importer), ``--tasks``, ``--from`` and ``--example``, with every bad record
reported as ``FILE:LINE``."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from arena_core import examples
from arena_core.cli.app import State
from arena_core.cli.inputoptions import InputFiles, inputs
from arena_core.cli.picking import Pick, mentions_ungraded
from arena_core.engine.ahead import needs_whole_runs
from arena_core.engine.columns import Columns, repeated_ids
from arena_core.engine.records import columns_from_records, metas_are_empty
from arena_core.engine.tablemetas import line_metas
from arena_core.engine.tables import columns_from_table
from arena_core.importing.collect import ImportSession, detect_format
from arena_core.io.locations import is_url
from arena_core.io.readers import (
    Located,
    iter_submissions,
    locate_submission,
    locate_task,
    read_records,
    read_tasks,
    used_twice,
)
from arena_core.io.shards import matching, read_shard_records, read_shard_table, shard_files
from arena_core.io.tables import TABLE_SUFFIXES, read_table
from arena_core.io.votes import check_votes
from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.records import Submission, Task
from arena_core.model.serde import structure

__all__ = ["InputFiles", "Sources", "inputs", "read_columns", "read_inputs", "read_task_file"]


def _importer_for(state: State, given: InputFiles) -> tuple[str | None, tuple[Path, ...]]:
    """The importer that reads the input (``None`` for arena-core's own files) and the paths."""
    remote = [p for p in given.submissions if is_url(p)]
    if remote:
        raise click.UsageError(
            f"{remote[0]}: URLs are read by the streaming path of `arena score` and `arena leaderboard`"
        )
    if given.example == "aider":
        if state.config_path is None:
            state.use_config(examples.AIDER_CONFIG)
        return "aider", examples.AIDER_RUNS
    if given.example:
        return None, (examples.SUBMISSIONS,)
    if not given.submissions:
        raise click.UsageError("give SUBMISSIONS (files, or a harness's output), or --example for a bundled arena")
    importers = state.arena.components.importers
    if given.from_format is not None:
        importers[given.from_format]  # an unknown name is an error naming the known ones
        return given.from_format, tuple(matching(list(given.submissions)))
    paths = tuple(matching(list(given.submissions)))  # quoted globs: the files they match
    name = detect_format(importers.values(), paths)
    if name is None:  # arena-core's own records: one file, or shards, globs kept (io/shards.py)
        return None, tuple(given.submissions)
    return name, paths


def _task_path(given: InputFiles) -> Path | None:
    """The tasks file: --tasks, or the example's."""
    if given.example is not None:
        return examples.AIDER_TASKS if given.example == "aider" else examples.TASKS
    return given.tasks


def read_task_file(state: State, given: InputFiles, pick: Pick) -> dict[str, Task]:
    """The tasks of --tasks (or the example's) that ``pick`` keeps, each checked: for a reader of
    the runs other than this module's (the streaming path)."""
    return _tasks(state, given, None, {}, True, pick)


def _tasks(
    state: State, given: InputFiles, name: str | None, derived: dict[str, Any], need_tasks: bool, pick: Pick
) -> dict[str, Task]:
    """The tasks: --tasks (or the example's), else those the importer derived, those ``pick``
    keeps; each checked (unknown categories, criterion types and parameters) before any work."""
    task_path = _task_path(given)
    if name is None and need_tasks and task_path is None:
        raise click.UsageError("--tasks is required (a .json or .toml file of tasks)")
    tasks = read_tasks(task_path) if task_path else {t: structure(d, Task) for t, d in derived.items()}
    if task_path:
        note_unrecorded(state, tasks)
    tasks = pick.tasks_of(tasks)
    if state.scores_runs:
        for task in tasks.values():
            state.arena.scorer.check_task(task)
    return tasks


def note_unrecorded(state: State, tasks: Mapping[str, Task]) -> None:
    """Tasks written by ``arena import`` (read from a file or a store) say what their format
    never records: the metrics that need it are left out of the overall score
    (:meth:`State.reweight_unrecorded`)."""
    metas = [t.meta for t in tasks.values()]
    kinds = {(m.get("importer"), tuple(m.get("unrecorded") or ())) for m in metas}
    if metas and len(kinds) == 1 and all("unrecorded" in m for m in metas):
        ((importer, fields),) = kinds
        state.reweight_unrecorded(str(importer), fields)


def _read(
    state: State, given: InputFiles, need_tasks: bool, name: str | None, paths: tuple[Path, ...], pick: Pick
) -> tuple[Located, dict[str, Task]]:
    """The records ``pick`` keeps, decoded but not yet structured, and the tasks it keeps."""
    shards = shard_files(paths) if name is None else None
    if shards is not None:
        tasks = _tasks(state, given, None, {}, need_tasks, pick)
        located = read_shard_records(shards, task_id=_only(pick))
        state.sources = Sources(None, _task_path(given), located)
    elif name is None:
        state.sources = Sources(paths[0], _task_path(given))
        tasks = _tasks(state, given, None, {}, need_tasks, pick)
        located = read_records(paths[0], task_id=_only(pick))
    else:
        located, derived = _import(state, name, paths, given)
        state.sources = Sources(None, _task_path(given), located)
        tasks = _tasks(state, given, name, derived, need_tasks, pick)
    pick.apply(located)
    pick.set_aside_ungraded(located, tasks)
    return located, tasks


def _own_files_name_their_runs(given: InputFiles, importer: str | None) -> None:
    """:raises click.UsageError: ``--tool`` or ``--model`` given for arena-core's own files."""
    if importer is None and (given.tool is not None or given.model is not None):
        raise click.UsageError("--tool and --model name what a harness's output does not record; arena-core's "
                               "files record each run's own (set them there)")  # fmt: skip


def _only(pick: Pick) -> str | None:
    """The one task ``pick`` keeps, which readers can filter on as they read."""
    return next(iter(pick.kept_tasks)) if pick.kept_tasks is not None and len(pick.kept_tasks) == 1 else None


def _import(state: State, name: str, paths: tuple[Path, ...], given: InputFiles) -> tuple[Located, dict[str, Any]]:
    """The runs an importer reads, as records with where each came from, and the tasks they name;
    the fields its format never records are left out of the overall score (unless configured).
    ``--tool`` and ``--model`` name what a run's harness did not record."""
    named = {key: value for key, value in (("tool", given.tool), ("model", given.model)) if value is not None}
    importer = state.arena.components.importers[name]
    session = ImportSession(importer, paths)
    located = Located(Path(name))
    located.places = []
    for run in session.runs():
        located.records.append({**named, **{k: v for k, v in run.submission.items() if v is not None}})
        located.places.append(run.where)
        state.judgements.extend(
            (run.where, kind, line) for kind in ("verdict", "label") for line in getattr(run, f"{kind}s")
        )
    state.reweight_unrecorded(name, tuple(getattr(importer, "unrecorded", ())))
    versions = {v for r in located.records if isinstance(v := (r.get("meta") or {}).get("format_version"), str)}
    state.record_inputs(name, sorted(versions))
    return located, dict(session.tasks)


def read_inputs(
    state: State, given: InputFiles, *, need_tasks: bool = True, pick: Pick | None = None, votes_on_these: bool = True
) -> tuple[list[Submission], dict[str, Task]]:
    """Every submission ``pick`` keeps (all by default) as an object, and the tasks it keeps;
    ``--votes`` held against them (a vote naming a run not given, or of another task, is an
    error naming the vote) unless ``votes_on_these`` is false (votes may name stored runs)."""
    subs, tasks = _read_inputs(state, given, need_tasks, pick or Pick())
    state.runs_read = subs
    if state.vote_paths and votes_on_these:
        check_votes(state.votes, {s.id: s.task_id for s in subs})
    return subs, tasks


def _read_inputs(
    state: State, given: InputFiles, need_tasks: bool, pick: Pick
) -> tuple[list[Submission], dict[str, Task]]:
    name, paths = _importer_for(state, given)
    _own_files_name_their_runs(given, name)
    if (
        name is None
        and not pick.chooses
        and shard_files(paths) is None
        and not (pick.ranks and mentions_ungraded(paths[0]))
    ):
        state.sources = Sources(paths[0], _task_path(given))  # arena-core's own file, all of it:
        tasks = _tasks(state, given, None, {}, need_tasks, pick)  # structured while it is read
        subs = list(iter_submissions(paths[0], state.arena.structure_submission))
        if not subs:
            raise ArenaError(f"{paths[0]}: no submissions in the file")
        return subs, tasks
    located, tasks = _read(state, given, need_tasks, name, paths, pick)
    subs = []
    for row, record in enumerate(located.records):
        try:
            subs.append(state.arena.structure_submission(record))
        except ValidationError as error:
            located.problems.add(f"{located.where(row)}: {error}")
    located.problems.raise_if_any()
    return subs, tasks


def read_columns(
    state: State, given: InputFiles, *, pick: Pick | None = None, with_meta: bool = False
) -> tuple[Columns | list[Submission], dict[str, Task]]:
    """Like :func:`read_inputs`, for commands that only score: the records go to columns in one
    pass (no object per submission), with every bad record reported as ``FILE:LINE``.
    ``with_meta``: the columns keep each run's meta (``Columns.metas``), read from the records."""
    runs, tasks = _read_columns(state, given, pick or Pick(), with_meta)
    state.runs_read = runs
    if state.vote_paths:
        if isinstance(runs, Columns):
            check_votes(state.votes, dict(zip(map(str, runs.ids), map(str, runs.task_ids), strict=True)))
        else:
            check_votes(state.votes, {s.id: s.task_id for s in runs})
    return runs, tasks


def _read_columns(
    state: State, given: InputFiles, pick: Pick, with_meta: bool
) -> tuple[Columns | list[Submission], dict[str, Task]]:
    name, paths = _importer_for(state, given)
    _own_files_name_their_runs(given, name)
    shards = shard_files(paths) if name is None else None
    if shards is not None:
        return _shard_columns(state, given, shards, pick, with_meta)
    if name is not None or paths[0].suffix.lower() not in TABLE_SUFFIXES:
        return _checked_columns(state, *_read(state, given, True, name, paths, pick), with_meta)
    state.sources = Sources(paths[0], _task_path(given))
    tasks = _tasks(state, given, None, {}, True, pick)
    whole = pick.kept_tasks is None or _only(pick) is not None
    # A file whose bytes cannot name the flag has no record looked through for it; a URL's bytes
    # are not scanned: its records are read (and so are its metas, not fetched twice).
    url = is_url(str(paths[0]))
    ungraded = pick.ranks and (url or mentions_ungraded(paths[0]))
    straight = whole and not pick.narrows_runs and not (with_meta and url) and not _as_objects(state, tasks)
    columns = _table_columns(state, paths[0], _only(pick), with_meta) if straight and not ungraded else None
    if columns is not None:
        return columns, tasks
    located = read_records(paths[0], task_id=_only(pick))
    pick.apply(located)
    if ungraded:
        pick.set_aside_ungraded(located, tasks)
    return _checked_columns(state, located, tasks, with_meta)


def _shard_columns(
    state: State, given: InputFiles, shards: list[tuple[Path, Path]], pick: Pick, with_meta: bool
) -> tuple[Columns | list[Submission], dict[str, Task]]:
    """:func:`read_columns` of a shard set: one Arrow table of them all when it can be (Parquet or
    JSON Lines, one schema, every row valid), else their records, shard by shard."""
    tasks = _tasks(state, given, None, {}, True, pick)
    whole = pick.kept_tasks is None or _only(pick) is not None
    if whole and not pick.narrows_runs and not with_meta and not _as_objects(state, tasks):
        table = read_shard_table(shards, task_id=_only(pick))
        columns = columns_from_table(table, strict=state.arena.config.strict) if table is not None else None
        if columns is not None and columns.size and not columns.repeated_ids():
            state.sources = Sources(None, _task_path(given))
            return columns, tasks
    located = read_shard_records(shards, task_id=_only(pick))
    pick.apply(located)
    state.sources = Sources(None, _task_path(given), located)
    return _checked_columns(state, located, tasks, with_meta)


def _checked_columns(
    state: State, located: Located, tasks: dict[str, Task], with_meta: bool = False
) -> tuple[Columns | list[Submission], dict[str, Task]]:
    """The records as columns (or objects, for the per-record path), every invalid record and
    every id used twice reported with where it was read."""
    problems = located.problems

    def invalid(row: int, error: ValidationError) -> None:
        problems.add(f"{located.where(row)}: {error}")

    structure_one = state.arena.structure_submission
    read: Columns | list[Submission] | None = None
    if not _as_objects(state, tasks):
        read = columns_from_records(
            located.records, structure_one, strict=state.arena.config.strict, on_invalid=invalid, with_meta=with_meta
        )
    if read is None:  # not plain records, or workspaces: objects, one by one
        read = []
        for row, record in enumerate(located.records):
            try:
                read.append(structure_one(record))
            except ValidationError as error:
                invalid(row, error)
    problems.raise_if_any()  # invalid rows may still be in the columns: report them first
    if isinstance(read, Columns):
        ids, repeats = read.ids, read.repeated_ids()  # kept: evaluate_many does not look again
    else:
        ids = [s.id for s in read]
        repeats = list(repeated_ids(ids))
    for row, first in repeats:
        problems.add(used_twice(located.where(row), ids[row], located.where(first)))
    problems.raise_if_any()
    if len(ids) == 0:
        raise ArenaError(f"{located.path}: no submissions in the file")
    return read, tasks


def _as_objects(state: State, tasks: dict[str, Task]) -> bool:
    """Whether runs are read as objects, not columns: pricing rewrites each record, and a judge
    reads a run's meta (its final answer), which columns leave out."""
    return state.arena.pricer is not None or needs_whole_runs(state.arena.scorer, tasks.values())


def _table_columns(state: State, path: Path, task_id: str | None, with_meta: bool) -> Columns | None:
    """The file read by pyarrow straight into columns, when it is installed and every row is
    valid; ``None`` sends the file to the record reader (which reports the rows at fault).
    ``with_meta``: each run's meta as its record's would be: empty when no run can have one (no
    ``meta`` field, no field the model would put under it, no tokens it would mark as derived;
    500,000 runs, ``arena tasks`` 7.35 -> 4.89 s), else read from the lines by
    :func:`line_metas` (a meta on every run: 8.43 -> 7.97 s)."""
    table = read_table(path, task_id=task_id)
    if table is None or table.num_rows == 0:
        return None
    columns = columns_from_table(table, strict=state.arena.config.strict)
    if columns is None or columns.repeated_ids():
        return None
    if with_meta:
        present = set(table.column_names)
        if metas_are_empty(present):
            columns.metas = [{} for _ in range(columns.size)]
        else:
            columns.metas = line_metas(path, present, table["id"].to_pylist(), task_id)
            if columns.metas is None:
                return None
    return columns


class Sources:
    """The files a command read. Errors raised after reading (while scoring) name a record by its
    id; this finds the record again, on the error path only, to say ``FILE:LINE``."""

    def __init__(self, submissions: Path | None, tasks: Path | None, imported: Located | None = None) -> None:
        self.submissions = submissions
        self.tasks = tasks
        self.imported = imported
        """The records an importer read (instead of ``submissions``), each with where it came from."""

    def locate(self, error: ValidationError) -> str:
        """``"FILE:LINE: "`` for the record ``error`` names, or ``""`` when it is not found."""
        kind, _, ident = error.record.partition(" ")
        try:
            key = ast.literal_eval(ident)
        except (ValueError, SyntaxError):
            return ""
        where = None
        if kind == "submission":
            if self.imported is not None:
                where = next(
                    (self.imported.where(i) for i, r in enumerate(self.imported.records) if r.get("id") == key), None
                )
            elif self.submissions is not None:
                where = locate_submission(self.submissions, key)
        elif kind == "task" and self.tasks is not None:
            where = locate_task(self.tasks, key)
        return f"{where}: " if where else ""
