"""The ``arena`` command: score, rank and inspect an arena from the terminal.

Exit status: 0 on success, 1 when the data has findings (``validate``, ``outliers``), 2 on
bad usage or bad input. Errors print one line (``Error: FILE:LINE: field: expected ...,
got ...``); set ``ARENA_RAISE_ERRORS=1`` for the traceback instead.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import click

from arena_core.arena import Arena
from arena_core.cli.provenances import RecordingCommand
from arena_core.cli.stores import STORE_ENV
from arena_core.config.files import ConfigError, LoadedConfig, config_error, load_config
from arena_core.config.settings import DEFAULT_MISSING
from arena_core.engine.collector import collector_paused
from arena_core.engine.columns import Columns
from arena_core.engine.telemetry import required_fields
from arena_core.io.judgements import read_labels
from arena_core.io.table import printable
from arena_core.io.votes import read_vote_files
from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.labels import Label
from arena_core.model.records import Evaluation, Submission, Task
from arena_core.model.votes import Vote
from arena_core.partitioned import evaluate_partitioned
from arena_core.registry.manager import plugin_names
from arena_core.stats.judging import judging_spent
from arena_core.stats.room import BoardTooLarge
from arena_core.store.trust import redact

if TYPE_CHECKING:
    from arena_core.cli.inputs import Sources

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
        #: Fields left out of the overall score because the imported format never records them.
        self.unrecorded: tuple[str, ...] = ()
        #: ``--executor``: where workspace checks run, over the configuration's ``check_executor``.
        self.executor: str | None = None
        #: The importer that read the runs and the format versions it read, for the provenance.
        self.inputs: tuple[str, tuple[str, ...]] | None = None
        #: What the imported runs' sources record of their judgement: ``(where, "verdict" or
        #: "label", line)``, for ``arena calibrate`` (DevAI's judgments).
        self.judgements: list[tuple[str, str, Mapping[str, Any]]] = []
        #: Whether the command scores the runs it reads: their tasks are then checked against the
        #: configuration (checkers, judges) and a note says what their format never records.
        #: Not so for ``arena calibrate`` given the verdicts.
        self.scores_runs = True
        #: ``--labels`` files: people's labels of the runs (:attr:`labels`).
        self.label_paths: tuple[Path, ...] = ()
        self._labels: list[Label] | None = None
        #: ``--votes`` files: people's votes between runs (:attr:`votes`).
        self.vote_paths: tuple[Path, ...] = ()
        self._votes: list[Vote] | None = None
        #: The runs the command read after selection, or each task's digest of them (streamed,
        #: or from a store), and how many: for the provenance of a JSON board.
        self.runs_read: Columns | Sequence[Submission] | Mapping[str, str] | None = None
        self.runs_count = 0

    def record_inputs(self, importer: str, formats: Sequence[str]) -> None:
        """Say in the provenance of the evaluations which importer read the runs, and which versions."""
        self.inputs = (importer, tuple(formats))
        if self._arena is not None:
            self._arena.record_inputs(*self.inputs)

    def use_config(self, path: Path) -> None:
        """Read the configuration from ``path`` (a bundled example's own), before any work."""
        self.config_path = path
        self._loaded = self._arena = None

    def reweight_unrecorded(self, importer: str, fields: Sequence[str]) -> None:
        """Leave out of the overall score the metrics that need ``fields``, which ``importer``'s
        format never records, unless the configuration says what to do when they are missing;
        a note on stderr says so."""
        configured = {key.rsplit(".", 1)[-1] for key in self.loaded.file_keys if ".missing." in f".{key}"}
        chosen = tuple(f for f in fields if f in DEFAULT_MISSING and f not in configured)
        if chosen and self.scores_runs:
            self.unrecorded = chosen
            self._arena = None
            click.echo(
                f"note: {importer} output never records {', '.join(chosen)}: the metrics that need "
                f"{'it' if len(chosen) == 1 else 'them'} are left out of the overall score ([missing] in arena.toml can say otherwise)",
                err=True,
            )

    def reads_only(self, dimensions: Sequence[str]) -> None:
        """The command reads only these dimensions' scores: a figure that only other dimensions
        need is left out where missing (``reweight``) instead of refusing the runs, silently, as
        nothing the command shows rests on it."""
        scorer = self.arena.scorer
        used = required_fields([scorer.metric(d) for d in dimensions if d in scorer.slots()])
        spare = tuple(f for f in required_fields(scorer.metrics_in_use().values()) if f not in used)
        if spare:
            self.unrecorded = (*self.unrecorded, *(f for f in spare if f not in self.unrecorded))
            self._arena = None

    @property
    def labels(self) -> list[Label]:
        """The people's labels of ``--labels``, each line checked (an error names the bad one)."""
        if self._labels is None:
            self._labels = [label for path in self.label_paths for label in read_labels(path)]
        return self._labels

    @property
    def votes(self) -> list[Vote]:
        """The people's votes of ``--votes``, each line checked (an error names the bad one); a
        vote id given in two files is refused."""
        if self._votes is None:
            self._votes = read_vote_files(self.vote_paths)
        return self._votes

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
            config = attrs.evolve(
                config,
                disabled_components=(*config.disabled_components, *components),
                missing={**config.missing, **dict.fromkeys(self.unrecorded, "reweight")},
                check_executor=self.executor or config.check_executor,
            )
            try:
                self._arena = Arena(config, profile=name, blocked=tuple(plugins))
                if self.inputs is not None:
                    self._arena.record_inputs(*self.inputs)
            except ArenaError as exc:
                if self.loaded.path is None:
                    raise
                if isinstance(exc, ValidationError) and exc.record == "configuration":
                    raise config_error(self.loaded.path, exc) from None
                raise ConfigError(f"{self.loaded.path}: {exc}") from None
            if self.label_paths:
                self._arena.use_labels(self.labels)
            if self.vote_paths:
                self._arena.use_votes(self.votes)
        return self._arena


def command(function: Callable[..., Any]) -> Callable[..., Any]:
    """Pass the shared state and turn the library's errors into one line and exit status 2."""

    @click.pass_obj
    @wraps(function)
    def run(state: State, *args: Any, **kwargs: Any) -> Any:
        previous = signal.signal(signal.SIGTERM, _stop)
        try:
            with collector_paused():  # a command builds millions of short-lived, acyclic records
                return function(state, *args, **kwargs)
        except BrokenPipeError:  # the reader went away (| head): stop quietly, as the docs of sys advise
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except (ArenaError, OSError, KeyboardInterrupt, Stopped, MemoryError) as exc:
            if os.environ.get("ARENA_RAISE_ERRORS"):
                raise
            click.echo(f"Error: {printable(redact(_message(state, exc), *sys.argv[1:], *_store_urls()))}", err=True)
            sys.exit(2)
        finally:
            signal.signal(signal.SIGTERM, previous)

    return run


def _store_urls() -> list[str]:
    """URLs the command may have read from its environment, whose passwords no message may show."""
    return [os.environ[STORE_ENV]] if STORE_ENV in os.environ else []


class Stopped(BaseException):
    """The command was stopped by a signal; whatever it was writing was removed or rolled back.

    A ``BaseException``, like ``KeyboardInterrupt``: the handler raises it wherever the program
    is, and libraries' ``except Exception`` blocks (cattrs has some) must not swallow it.
    """

    def __init__(self, signal_name: str) -> None:
        super().__init__(f"stopped by {signal_name}; nothing was written")
        self.signal_name = signal_name


def _stop(signum: int, frame: object) -> None:
    raise Stopped(signal.Signals(signum).name)


def _message(state: State, exc: BaseException) -> str:
    """One line (or one per bad record) saying where, what and what was expected."""
    if isinstance(exc, KeyboardInterrupt):
        return "stopped by SIGINT; nothing was written"
    if isinstance(exc, MemoryError):  # NumPy says which array: "Unable to allocate 14.9 GiB for an array ..."
        context = click.get_current_context(silent=True)
        what = f"arena {context.info_name}" if context is not None else "the command"
        if isinstance(exc, BoardTooLarge):  # it says what to do itself, before anything was allocated
            return f"{what}: {exc}; nothing was written"
        detail = f" ({exc})" if str(exc) else ""
        return (
            f"{what} ran out of memory{detail}; nothing was written. Read the runs as Parquet shards, which "
            "are streamed in bounded memory (docs/scaling.md), or narrow them with --where, --task or --category"
        )
    if isinstance(exc, OSError):
        where = exc.filename or "output"
        return f"{where}: {exc.strerror or exc}"
    if isinstance(exc, ValidationError) and state.sources is not None:
        return f"{state.sources.locate(exc)}{exc}"
    return str(exc)


quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress bar.")


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
    """The runs scored: on a cluster's workers by task partitions when the check executor is one
    (``--executor dask``) and no run has a workspace to check there, else here."""
    arena = state.arena
    remote = not getattr(arena.components.check_executors[arena.config.check_executor], "local", True)
    if remote and (isinstance(subs, Columns) or all(s.workspace is None for s in subs)):
        return evaluate_partitioned(arena, subs, tasks)
    with progress(subs.size if isinstance(subs, Columns) else len(subs), "Scoring", quiet) as update:
        evaluations = arena.evaluate_many(subs, tasks, progress=update)
    judged = any(c.type == "judge" for t in tasks.values() for c in t.success_criteria)
    if judged and (spent := judging_spent(evaluations)) is not None:
        click.echo(str(spent), err=True)  # a judge's cost, apart from the runs'
    return evaluations


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


main.command_class = RecordingCommand  # every subcommand keeps its arguments, for provenance
