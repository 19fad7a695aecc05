"""What the commands that rank or describe runs share: where the runs come from (files or an
arena database) and which of them to look at (``--task``, ``--category``, ``--where``, chosen
before anything is checked: :mod:`arena_core.cli.picking`)."""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import wraps
from pathlib import Path
from typing import Any

import click
import numpy as np
from attrs import frozen

from arena_core.cli.app import State, score_all
from arena_core.cli.inputs import InputFiles, note_unrecorded, read_columns
from arena_core.cli.picking import Pick
from arena_core.cli.provenances import board_document
from arena_core.cli.stores import StoreLocation, open_store
from arena_core.engine.columns import Columns
from arena_core.io.modelfiles import read_models
from arena_core.model.checks import TIMESTAMP_EXPECTED, moment
from arena_core.model.errors import ArenaError
from arena_core.model.records import Evaluation, Submission, Task
from arena_core.model.releases import WINDOWS, ModelDates
from arena_core.model.serde import to_dict
from arena_core.stats.windows import TimeWindow
from arena_core.store import Store
from arena_core.store.current import score_stored, stored_columns, stored_tasks

store_option = click.option(
    "--store",
    "store_path",
    type=StoreLocation(),
    help="Rank what an arena database (a SQLite file or a postgresql:// URL) holds instead of files.",
)
by_option = click.option(
    "--by",
    default="tool",
    show_default=True,
    metavar="tool|model|tool,model|meta.KEY",
    help="Group runs by tool, model, both, or a key of the submissions' meta.",
)


#: ``--models FILE``: models' dates over the configuration's ``[models]`` (docs/time.md).
models_option = click.option(
    "--models",
    "models_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Models' release_date and knowledge_cutoff (TOML, JSON or CSV), over [models] of arena.toml.",
)


@frozen
class Selection:
    """What --task, --category, --where, --since, --until, --window and --models chose, handed
    to a board command as ``selection`` (one argument where the options are seven)."""

    task_ids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    conditions: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    window: str | None = None
    models_path: Path | None = None


def selection_options(function: Any) -> Any:
    """--task, --category, --where, --since, --until, --window and --models: which runs a
    leaderboard looks at, handed to the command as ``selection``."""

    @wraps(function)  # keeps the options declared below, in ``__click_params__``
    def run(
        *args: Any,
        task_ids: tuple[str, ...],
        categories: tuple[str, ...],
        conditions: tuple[str, ...],
        since: str | None,
        until: str | None,
        window: str | None,
        models_path: Path | None,
        **kwargs: Any,
    ) -> Any:
        chosen = Selection(task_ids, categories, conditions, since, until, window, models_path)
        return function(*args, selection=chosen, **kwargs)

    for option in reversed(
        [
            click.option("--task", "task_ids", multiple=True, help="Only this task. Repeatable."),
            click.option("--category", "categories", multiple=True, help="Only tasks of this category. Repeatable."),
            click.option(
                "--where",
                "conditions",
                multiple=True,
                metavar="meta.KEY=VALUE",
                help="Only runs whose submission's meta has KEY equal to VALUE. Repeatable.",
            ),
            click.option("--since", metavar="DATE", callback=_date, help="Only tasks created on or after DATE."),
            click.option("--until", metavar="DATE", callback=_date, help="Only tasks created on or before DATE."),
            click.option(
                "--window",
                type=click.Choice(sorted(WINDOWS)),
                help="Each model only on tasks created after its knowledge cutoff (or release): docs/time.md.",
            ),
            models_option,
        ]
    ):
        run = option(run)
    return run


def where_of(conditions: tuple[str, ...]) -> dict[str, str]:
    where = {}
    for condition in conditions:
        key, sep, value = condition.partition("=")
        if not sep or not key.startswith("meta.") or len(key) == 5:
            raise click.UsageError(f"--where {condition!r}: expected meta.KEY=VALUE")
        where[key.removeprefix("meta.")] = value
    return where


def _date(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and moment(value) is None:
        raise click.BadParameter(f"expected {TIMESTAMP_EXPECTED}, got {value!r}")
    return value


def models_of(state: State, models_path: Path | None) -> dict[str, ModelDates]:
    """Models' dates: the configuration's ``[models]``, with a ``--models`` file's over them."""
    return {**state.arena.config.models, **(read_models(models_path) if models_path else {})}


def pick_of(state: State, selection: Selection) -> Pick:
    """The runs the command's selection keeps, and ``infra_failures``."""
    config = state.arena.config
    models = models_of(state, selection.models_path)
    time = TimeWindow(selection.since, selection.until, selection.window, models, config.model_aliases)
    return Pick(selection.task_ids, selection.categories, where_of(selection.conditions),
                config.infra_failures == "exclude", ranks=True, time=time)  # fmt: skip


def evaluations_of(
    state: State, inputs: InputFiles, store_path: Path | str | None, pick: Pick, with_meta: bool, quiet: bool
) -> tuple[Sequence[Evaluation], dict[str, Any] | None, dict[str, Task]]:
    """(evaluations of the runs ``pick`` keeps, submission id to meta when asked for or needed,
    the tasks it keeps), from the store or the files; the runs left out are never checked."""
    with_meta = with_meta or pick.narrows_runs
    evaluations: Sequence[Evaluation]
    found: dict[str, Any] | None
    read = _stored_columns(state, store_path, pick, with_meta) if store_path is not None else None
    if read is not None:
        evaluations, found, tasks = read
    elif store_path is not None:
        stored, subs, tasks = stored_arena(state, store_path)
        tasks = pick.tasks_of(tasks)
        kept = {s.id for s in subs if pick.keeps_meta(s.task_id, s.meta, s.model)}
        state.runs_read = [s for s in subs if s.id in kept]
        evaluations = [e for e in stored if e.submission_id in kept]
        if not evaluations:
            raise ArenaError(f"{store_path}: no stored run is kept by the options given")
        found = {s.id: s.meta for s in subs if s.id in kept} if with_meta else None
    elif with_meta:  # columns that keep each run's meta: no object per run
        runs, tasks = read_columns(state, inputs, pick=pick, with_meta=True)
        evaluations = score_all(state, runs, tasks, quiet)
        if isinstance(runs, Columns):
            assert runs.metas is not None, "columns read with_meta keep the metas"
            found = dict(zip(map(str, runs.ids), runs.metas, strict=True))
        else:
            found = {s.id: s.meta for s in runs}
    else:
        records, tasks = read_columns(state, inputs, pick=pick)
        evaluations, found = score_all(state, records, tasks, quiet), None
    if note := pick.note():
        click.echo(note, err=True)
    return evaluations, found, tasks


def _stored_columns(
    state: State, path: Path | str, pick: Pick, with_meta: bool
) -> tuple[Sequence[Evaluation], dict[str, Any] | None, dict[str, Task]] | None:
    """:func:`evaluations_of` a store, its runs read as columns that keep each run's meta and
    scored as one batch (no object per run: a board of 200,000 stored runs spent most of its
    time making them); ``None`` when scoring needs the runs as objects (a criterion that reads
    their meta or is slow to check, priced costs: :func:`~arena_core.store.current.stored_columns`)."""
    store = _opened(path)
    read = stored_columns(state.arena, store)
    if read is None:
        return None
    tasks, runs, _ = read
    if not runs.size:
        raise ArenaError(f"{path}: no stored runs")
    note_unrecorded(state, tasks)
    # as score_stored scores them, without its look-up of stored verdicts: these runs need none
    scored: Sequence[Evaluation] = state.arena.evaluate_many(runs, tasks, evaluated_at=datetime.now(UTC).isoformat())
    tasks = pick.tasks_of(tasks)
    metas = runs.metas
    assert metas is not None, "a store's columns keep the metas"
    if pick.kept_tasks is not None or pick.narrows_runs:  # runs chosen one by one, as their objects were
        chosen = zip(runs.task_ids, metas, runs.models, strict=True)
        kept = [i for i, (task_id, meta, model) in enumerate(chosen) if pick.keeps_meta(task_id, meta, model)]
        if not kept:
            raise ArenaError(f"{path}: no stored run is kept by the options given")
        if len(kept) < runs.size:
            runs, metas, scored = runs.take(np.array(kept)), [metas[i] for i in kept], [scored[i] for i in kept]
    state.runs_read = runs
    return scored, dict(zip(map(str, runs.ids), metas, strict=True)) if with_meta else None, tasks


def stored_runs(path: Path | str, task_id: str | None = None) -> tuple[list[Submission], dict[str, Task]]:
    """The runs a store holds (of one task, or all) and its tasks."""
    return _stored(_opened(path), path, task_id)


def _stored(store: Store, path: Path | str, task_id: str | None) -> tuple[list[Submission], dict[str, Task]]:
    with store.transaction(write=False) as tx:
        ids = [task_id] if task_id else tx.task_ids()
        subs = [s for t in ids for s in tx.submissions(t)]
        tasks = stored_tasks(tx)
    if not subs:
        raise ArenaError(f"{path}: no stored runs" + (f" for task {task_id!r}" if task_id else ""))
    return subs, tasks


def stored_on_arrival(path: Path | str) -> list[Evaluation]:
    """Every stored evaluation as the pipeline made it when its run arrived (the store's
    history: its verdicts, scores against the baseline of that moment)."""
    with _opened(path).transaction(write=False) as tx:
        return [e for t in tx.task_ids() for e in tx.evaluations(t)]


def stored_arena(
    state: State, path: Path | str, task_id: str | None = None
) -> tuple[list[Evaluation], list[Submission], dict[str, Task]]:
    """The store's board inputs: every stored run (of one task, or all) scored against its
    task's current baseline (:mod:`arena_core.store.current`), the runs, and the tasks (whose
    format's unrecorded figures are left out, as when they are read from files)."""
    store = _opened(path)
    subs, tasks = _stored(store, path, task_id)
    note_unrecorded(state, tasks)
    return score_stored(state.arena, store, subs, tasks), subs, tasks


def _opened(path: Path | str) -> Store:
    if isinstance(path, Path) and not path.exists():
        raise ArenaError(f"{path}: no such arena database (create one with `arena ingest`)")
    return open_store(path)


def finite(value: Any) -> Any:
    """``value`` with NaN floats as ``None``: JSON has no NaN."""
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def echo_json(rows: Sequence[Any]) -> None:
    """Rows (attrs records or dicts) as a JSON array, NaN as null."""
    click.echo(json.dumps(json_rows(rows), indent=2))


def echo_csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A table as CSV on standard output (``None`` as an empty cell)."""
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)


def json_rows(rows: Sequence[Any]) -> list[Any]:
    """Rows (attrs records or dicts) as JSON values, NaN as null."""
    return [finite(row if isinstance(row, dict) else to_dict(row)) for row in rows]


def echo_board(state: State, tasks: Mapping[str, Task], body: Mapping[str, Any], window: Any = None) -> None:
    """A JSON board: ``body`` (its rows, and what else it shows) after its provenance."""
    click.echo(json.dumps(finite(board_document(state, tasks, body, window)), indent=2))
