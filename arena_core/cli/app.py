"""The ``arena`` command: score, rank and inspect an arena from the terminal.

Exit status: 0 on success, 1 when the data has findings (``validate``, ``outliers``), 2 on
bad usage or bad input. Errors print one line (``Error: FILE:LINE: field: expected ...,
got ...``); set ``ARENA_RAISE_ERRORS=1`` for the traceback instead.
"""

from __future__ import annotations

import ast
import gc
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any

import attrs
import click

from arena_core import examples
from arena_core.arena import Arena
from arena_core.config.files import ConfigError, LoadedConfig, config_error, load_config
from arena_core.engine.columns import Columns, repeated_ids
from arena_core.engine.records import columns_from_records
from arena_core.io.readers import iter_submissions, locate_submission, locate_task, read_records, read_tasks, used_twice
from arena_core.io.table import printable
from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.records import Evaluation, Submission, Task
from arena_core.registry.manager import plugin_names

__all__ = ["main"]


class State:
    """What every command shares: the configuration file and the Arena built from it."""

    def __init__(self, config_path: Path | None, profile: str | None = None, disable: Sequence[str] = ()) -> None:
        self.config_path = config_path
        self.profile = profile
        #: ``--disable`` names: plugins to block and components to leave out.
        self.disable = tuple(disable)
        #: The files read, so an error about a record names its FILE:LINE.
        self.sources: Sources | None = None
        self._loaded: LoadedConfig | None = None
        self._arena: Arena | None = None

    @property
    def loaded(self) -> LoadedConfig:
        if self._loaded is None:
            self._loaded = load_config(self.config_path)
        return self._loaded

    @property
    def arena(self) -> Arena:
        if self._arena is None:
            name, config = self.loaded.profile(self.profile) if self.profile else ("default", self.loaded.config)
            installed = plugin_names()
            plugins = [n for n in self.disable if n in installed]
            components = [n for n in self.disable if n not in installed]
            config = attrs.evolve(config, disabled_components=(*config.disabled_components, *components))
            try:
                self._arena = Arena(config, profile=name, blocked=tuple(plugins))
            except ArenaError as exc:
                if self.loaded.path is None:
                    raise
                if isinstance(exc, ValidationError) and exc.record == "configuration":
                    raise config_error(self.loaded.path, exc) from None
                raise ConfigError(f"{self.loaded.path}: {exc}") from None
        return self._arena


def command(function: Callable[..., Any]) -> Callable[..., Any]:
    """Pass the shared state and turn the library's errors into one line and exit status 2."""

    @click.pass_obj
    @wraps(function)
    def run(state: State, *args: Any, **kwargs: Any) -> Any:
        previous = signal.signal(signal.SIGTERM, _stop)
        # A command builds millions of short-lived lists and dicts (records read, records
        # written) and none of them in cycles; the cyclic collector would scan them again and
        # again for nothing (a third of `arena score`'s time on a million submissions). It is
        # off for the command, which ends with the process; reference counting still frees.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return function(state, *args, **kwargs)
        except BrokenPipeError:  # the reader went away (| head): stop quietly, as the docs of sys advise
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except (ArenaError, OSError, KeyboardInterrupt, Stopped) as exc:
            if os.environ.get("ARENA_RAISE_ERRORS"):
                raise
            click.echo(f"Error: {printable(_message(state, exc))}", err=True)
            sys.exit(2)
        finally:
            signal.signal(signal.SIGTERM, previous)
            if collecting:
                gc.enable()

    return run


class Stopped(BaseException):
    """The command was stopped by a signal; whatever it was writing was removed or rolled back.

    A ``BaseException``, like ``KeyboardInterrupt``: the handler raises it wherever the program
    is, and libraries' ``except Exception`` blocks (cattrs has some) must not swallow it.
    """


def _stop(signum: int, frame: object) -> None:
    raise Stopped(f"stopped by {signal.Signals(signum).name}; nothing was written")


def _message(state: State, exc: BaseException) -> str:
    """One line (or one per bad record) saying where, what and what was expected."""
    if isinstance(exc, KeyboardInterrupt):
        return "stopped by SIGINT; nothing was written"
    if isinstance(exc, OSError):
        where = exc.filename or "output"
        return f"{where}: {exc.strerror or exc}"
    if isinstance(exc, ValidationError) and state.sources is not None:
        return f"{state.sources.locate(exc)}{exc}"
    return str(exc)


def inputs(*, tasks: str = "required") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """SUBMISSIONS, --tasks and --example; ``tasks`` is ``required`` or ``optional``."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        options = [
            click.argument("submissions", type=click.Path(path_type=Path, dir_okay=False), required=False),
            click.option(
                "--tasks",
                "tasks_path",
                type=click.Path(path_type=Path, dir_okay=False),
                help="Tasks file (.json or .toml)" + ("." if tasks == "required" else ", for task defaults."),
            ),
            click.option("--example", is_flag=True, help="Use the bundled example arena."),
        ]
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress bar.")


def input_paths(
    submissions: Path | None, tasks_path: Path | None, example: bool, *, need_tasks: bool
) -> tuple[Path, Path | None]:
    if example:
        return examples.SUBMISSIONS, examples.TASKS
    if submissions is None:
        raise click.UsageError("give a SUBMISSIONS file, or --example for the bundled arena")
    if need_tasks and tasks_path is None:
        raise click.UsageError("--tasks is required (a .json or .toml file of tasks)")
    return submissions, tasks_path


def _tasks_for(
    state: State, submissions: Path | None, tasks_path: Path | None, example: bool, need_tasks: bool
) -> tuple[Path, dict[str, Task]]:
    """The submissions file and the tasks, each checked (unknown categories, criterion types and
    parameters) before any work; the files are remembered so later errors can name FILE:LINE."""
    sub_path, task_path = input_paths(submissions, tasks_path, example, need_tasks=need_tasks)
    state.sources = Sources(sub_path, task_path)
    tasks = read_tasks(task_path) if task_path else {}
    for task in tasks.values():
        state.arena.scorer.check_task(task)
    return sub_path, tasks


def read_inputs(
    state: State, submissions: Path | None, tasks_path: Path | None, example: bool, *, need_tasks: bool = True
) -> tuple[list[Submission], dict[str, Task]]:
    sub_path, tasks = _tasks_for(state, submissions, tasks_path, example, need_tasks)
    subs = list(iter_submissions(sub_path, state.arena.structure_submission))
    if not subs:
        raise ArenaError(f"{sub_path}: no submissions in the file")
    return subs, tasks


def read_columns(
    state: State, submissions: Path | None, tasks_path: Path | None, example: bool, *, task_id: str | None = None
) -> tuple[Columns | list[Submission], dict[str, Task]]:
    """Like :func:`read_inputs`, for commands that only score: the records go to columns in one
    pass (no object per submission), with every bad record reported as ``FILE:LINE``.

    :param task_id: keep only this task's submissions (it must be among the tasks).
    """
    sub_path, tasks = _tasks_for(state, submissions, tasks_path, example, True)
    if task_id is not None and task_id not in tasks:
        raise ArenaError(f"--task {task_id!r}: no such task (tasks: {', '.join(sorted(tasks))})")
    located = read_records(sub_path, task_id=task_id)
    problems = located.problems

    def invalid(row: int, error: ValidationError) -> None:
        problems.add(f"{located.where(row)}: {error}")

    structure_one = state.arena.structure_submission
    read: Columns | list[Submission] | None = columns_from_records(
        located.records, structure_one, strict=state.arena.config.strict, on_invalid=invalid
    )
    if read is None:  # not plain records, or workspaces: objects, one by one
        read = []
        for row, record in enumerate(located.records):
            try:
                read.append(structure_one(record))
            except ValidationError as error:
                invalid(row, error)
    problems.raise_if_any()  # invalid rows may still be in the columns: report them first
    ids = read.ids if isinstance(read, Columns) else [s.id for s in read]
    for row, first in repeated_ids(ids):
        problems.add(used_twice(located.where(row), ids[row], located.where(first)))
    problems.raise_if_any()
    if len(ids) == 0:
        raise ArenaError(f"{sub_path}: no submissions in the file")
    return read, tasks


class Sources:
    """The files a command read. Errors raised after reading (while scoring) name a record by its
    id; this finds the record again, on the error path only, to say ``FILE:LINE``."""

    def __init__(self, submissions: Path, tasks: Path | None) -> None:
        self.submissions = submissions
        self.tasks = tasks

    def locate(self, error: ValidationError) -> str:
        """``"FILE:LINE: "`` for the record ``error`` names, or ``""`` when it is not found."""
        kind, _, ident = error.record.partition(" ")
        try:
            key = ast.literal_eval(ident)
        except (ValueError, SyntaxError):
            return ""
        if kind == "submission":
            where = locate_submission(self.submissions, key)
        elif kind == "task" and self.tasks is not None:
            where = locate_task(self.tasks, key)
        else:
            where = None
        return f"{where}: " if where else ""


@contextmanager
def progress(total: int, label: str, quiet: bool) -> Iterator[Callable[[int], object]]:
    """A progress bar on stderr when it is a terminal; silent when piped or ``--quiet``."""
    if quiet or not sys.stderr.isatty():
        yield lambda n: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update


def score_all(
    state: State, subs: Columns | list[Submission], tasks: dict[str, Task], quiet: bool
) -> Sequence[Evaluation]:
    with progress(subs.size if isinstance(subs, Columns) else len(subs), "Scoring", quiet) as update:
        return state.arena.evaluate_many(subs, tasks, progress=update)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Configuration file (default: the nearest arena.toml, or [tool.arena] in pyproject.toml).",
)
@click.option(
    "-p",
    "--profile",
    metavar="NAME_OR_FILE",
    help="Score with this profile: a [profiles.NAME] of the configuration or a profile .toml file.",
)
@click.option(
    "--disable",
    metavar="NAME",
    multiple=True,
    help="Leave out a plugin, or a single component (metric, criterion type, ...), by name. Repeatable.",
)
@click.version_option(package_name="arena-core")
@click.pass_context
def main(ctx: click.Context, config_path: Path | None, profile: str | None, disable: tuple[str, ...]) -> None:
    """Score and rank workflow submissions of AI coding tools.

    \b
    Start with:
      arena leaderboard --example
    """
    ctx.obj = State(config_path, profile, disable)
