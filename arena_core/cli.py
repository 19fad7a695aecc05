"""The ``arena`` command: score, rank and inspect an arena from the terminal.

Exit status: 0 on success, 1 when the data has findings (``validate``, ``outliers``), 2 on
bad usage or bad input. Errors print one line (``Error: FILE:LINE: field: expected ...,
got ...``); set ``ARENA_RAISE_ERRORS=1`` for the traceback instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any

import click

from arena_core import examples
from arena_core.arena import Arena
from arena_core.configfile import ConfigError, LoadedConfig, effective_lines, find_config, load_config, starter_toml
from arena_core.errors import ArenaError
from arena_core.formats import FORMATS, write_evaluations
from arena_core.io import atomic_output, iter_submissions, read_tasks
from arena_core.leaderboard import aggregate
from arena_core.models import Evaluation, Submission, Task
from arena_core.serde import to_dict
from arena_core.store import SQLiteStore
from arena_core.table import render

__all__ = ["main"]


class _State:
    """What every command shares: the configuration file and the Arena built from it."""

    def __init__(self, config_path: Path | None, profile: str | None = None) -> None:
        self.config_path = config_path
        self.profile = profile
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
            try:
                self._arena = Arena(config, profile=name)
            except ArenaError as exc:
                if self.loaded.path is None:
                    raise
                raise ConfigError(f"{self.loaded.path}: {exc}") from None
        return self._arena


def _command(function: Callable[..., Any]) -> Callable[..., Any]:
    """Pass the shared state and turn the library's errors into one line and exit status 2."""

    @click.pass_obj
    @wraps(function)
    def run(state: _State, *args: Any, **kwargs: Any) -> Any:
        try:
            return function(state, *args, **kwargs)
        except ArenaError as exc:
            if os.environ.get("ARENA_RAISE_ERRORS"):
                raise
            click.echo(f"Error: {exc}", err=True)
            sys.exit(2)

    return run


def _inputs(*, tasks: str = "required") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """SUBMISSIONS, --tasks and --example; ``tasks`` is ``required`` or ``optional``."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        options = [
            click.argument("submissions", type=click.Path(path_type=Path, dir_okay=False), required=False),
            click.option("--tasks", "tasks_path", type=click.Path(path_type=Path, dir_okay=False),
                         help="Tasks file (.json or .toml)" + ("." if tasks == "required" else ", for task defaults.")),
            click.option("--example", is_flag=True, help="Use the bundled example arena."),
        ]
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


_quiet = click.option("-q", "--quiet", is_flag=True, help="No progress bar.")


def _paths(submissions: Path | None, tasks_path: Path | None, example: bool, *, need_tasks: bool) -> tuple[Path, Path | None]:
    if example:
        return examples.SUBMISSIONS, examples.TASKS
    if submissions is None:
        raise click.UsageError("give a SUBMISSIONS file, or --example for the bundled arena")
    if need_tasks and tasks_path is None:
        raise click.UsageError("--tasks is required (a .json or .toml file of tasks)")
    return submissions, tasks_path


def _read(state: _State, submissions: Path | None, tasks_path: Path | None, example: bool,
          *, need_tasks: bool = True) -> tuple[list[Submission], dict[str, Task]]:
    sub_path, task_path = _paths(submissions, tasks_path, example, need_tasks=need_tasks)
    tasks = read_tasks(task_path) if task_path else {}
    subs = list(iter_submissions(sub_path, state.arena._structure))
    if not subs:
        raise ArenaError(f"{sub_path}: no submissions in the file")
    return subs, tasks


@contextmanager
def _progress(total: int, label: str, quiet: bool) -> Iterator[Callable[[int], object]]:
    """A progress bar on stderr when it is a terminal; silent when piped or ``--quiet``."""
    if quiet or not sys.stderr.isatty():
        yield lambda n: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update


def _score(state: _State, subs: list[Submission], tasks: dict[str, Task], quiet: bool) -> list[Evaluation]:
    with _progress(len(subs), "Scoring", quiet) as update:
        return state.arena.evaluate_many(subs, tasks, progress=update)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-c", "--config", "config_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Configuration file (default: the nearest arena.toml, or [tool.arena] in pyproject.toml).")
@click.option("-p", "--profile", metavar="NAME_OR_FILE",
              help="Score with this profile: a [profiles.NAME] of the configuration or a profile .toml file.")
@click.version_option(package_name="arena-core")
@click.pass_context
def main(ctx: click.Context, config_path: Path | None, profile: str | None) -> None:
    """Score and rank workflow submissions of AI coding tools.

    \b
    Start with:
      arena leaderboard --example
    """
    ctx.obj = _State(config_path, profile)


@main.command()
@_inputs()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="jsonl", show_default=True)
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write here instead of stdout (the file appears only when scoring succeeded).")
@_quiet
@_command
def score(state: _State, submissions: Path | None, tasks_path: Path | None, example: bool,
          fmt: str, output: Path | None, quiet: bool) -> None:
    """Score every submission: one evaluation per submission, in input order.

    \b
    Examples:
      arena score runs.jsonl --tasks tasks.toml > evaluations.jsonl
      arena score runs.csv --tasks tasks.json --format csv -o scores.csv
      arena score --example --format table
    """
    subs, tasks = _read(state, submissions, tasks_path, example)
    evaluations = _score(state, subs, tasks, quiet)
    with atomic_output(output) as out:
        write_evaluations(evaluations, fmt, out)


def _submission_rows(state: _State, evaluations: Sequence[Evaluation], subs: Sequence[Submission]) -> list[list[Any]]:
    flags: dict[str, tuple[str, ...]] = {}
    for task_id in {e.task_id for e in evaluations}:
        for outlier in state.arena.detect_outliers([s for s in subs if s.task_id == task_id]):
            flags[outlier.submission_id] = outlier.flags
    dims = list(dict.fromkeys(d for e in evaluations for d in e.scores))
    ordered = sorted(evaluations, key=lambda e: (e.task_id, e.overall_ranking or 0, e.submission_id))
    return [
        [e.task_id, e.overall_ranking, e.submission_id, e.tool, e.overall_score,
         *(e.scores.get(d) for d in dims), e.percentile,
         ", ".join([*(["provisional"] if e.provisional else []), *flags.get(e.submission_id, ())])]
        for e in ordered
    ]


@main.command()
@_inputs()
@click.option("--store", "store_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Rank what an arena database holds (see `arena ingest`) instead of files.")
@click.option("--by", type=click.Choice(["tool", "model", "submission"]), default="tool", show_default=True,
              help="Rank tools or models by mean overall score, or list every submission.")
@click.option("--task", "task_id", help="Only this task.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@_quiet
@_command
def leaderboard(state: _State, submissions: Path | None, tasks_path: Path | None, example: bool,
                store_path: Path | None, by: str, task_id: str | None, fmt: str, quiet: bool) -> None:
    """Print a ranked leaderboard.

    Groups show the number of submissions, the mean overall score with its confidence
    interval (the configured method) and the mean of each dimension; groups and entries below
    min_submissions_per_tool are marked provisional (*), and --by submission shows outlier flags.

    \b
    Examples:
      arena leaderboard --example
      arena leaderboard runs.jsonl --tasks tasks.toml --by model
      arena leaderboard --example --by submission --task debugging-009
      arena leaderboard --store arena.db
    """
    if store_path is not None:
        evaluations, subs = _from_store(store_path, task_id)
    else:
        subs, tasks = _read(state, submissions, tasks_path, example)
        if task_id is not None:
            if task_id not in tasks:
                raise ArenaError(f"--task {task_id!r}: no such task (tasks: {', '.join(sorted(tasks))})")
            subs = [s for s in subs if s.task_id == task_id]
        evaluations = _score(state, subs, tasks, quiet)
    if by == "submission":
        dims = list(dict.fromkeys(d for e in evaluations for d in e.scores))
        rows = _submission_rows(state, evaluations, subs)
        if fmt == "json":
            click.echo(json.dumps([to_dict(e) for e in evaluations], indent=2))
            return
        click.echo(render(["Task", "Rank", "Submission", "Tool", "Overall", *(d.capitalize() for d in dims), "Pctl",
                           "Flags"], rows))
        return
    groups = aggregate(state.arena, evaluations, by)
    if fmt == "json":
        click.echo(json.dumps([to_dict(g) for g in groups], indent=2))
        return
    dims = list(dict.fromkeys(d for g in groups for d in g.means))
    rows = [[g.rank, g.name + (" *" if g.provisional else ""), g.submissions, g.mean_overall,
             f"{g.ci_low:.2f}-{g.ci_high:.2f}", *(g.means.get(d) for d in dims)] for g in groups]
    click.echo(render(["Rank", by.capitalize(), "N", "Overall", "95% CI", *(d.capitalize() for d in dims)], rows))
    if any(g.provisional for g in groups):
        click.echo(f"* provisional: fewer than {state.arena.config.min_submissions_per_tool} submissions")


def _from_store(path: Path, task_id: str | None) -> tuple[list[Evaluation], list[Submission]]:
    if not path.exists():
        raise ArenaError(f"{path}: no such arena database (create one with `arena ingest`)")
    store = SQLiteStore(path)
    with store.transaction(write=False) as tx:
        ids = [task_id] if task_id else tx.task_ids()
        evaluations = [e for t in ids for e in tx.evaluations(t)]
        subs = [s for t in ids for s in tx.submissions(t)]
    if not evaluations:
        raise ArenaError(f"{path}: no evaluations" + (f" for task {task_id!r}" if task_id else ""))
    return evaluations, subs


@main.command()
@_inputs(tasks="optional")
@click.option("--task", "task_id", help="Only this task.")
@_command
def baseline(state: _State, submissions: Path | None, tasks_path: Path | None, example: bool, task_id: str | None) -> None:
    """Print each task's dynamic baseline (the spec's calculate_task_baseline) as JSON Lines.

    \b
    Examples:
      arena baseline runs.jsonl
      arena baseline --example --task backend-002
    """
    subs, tasks = _read(state, submissions, tasks_path, example, need_tasks=False)
    by_task: dict[str, list[Submission]] = {}
    for s in subs:
        by_task.setdefault(s.task_id or "(no task)", []).append(s)
    for tid, group in by_task.items():
        if task_id is None or tid == task_id:
            click.echo(json.dumps(to_dict(state.arena.compute_baseline(tid, group, task=tasks.get(tid)))))


@main.command()
@_inputs(tasks="optional")
@_command
def outliers(state: _State, submissions: Path | None, tasks_path: Path | None, example: bool) -> None:
    """Flag suspicious submissions per task (the spec's detect_outliers) as JSON Lines.

    Exits with status 1 when any submission is flagged.

    \b
    Examples:
      arena outliers runs.jsonl
      arena outliers --example
    """
    subs, _ = _read(state, submissions, tasks_path, example, need_tasks=False)
    by_task: dict[str | None, list[Submission]] = {}
    for s in subs:
        by_task.setdefault(s.task_id, []).append(s)
    found = [o for group in by_task.values() for o in state.arena.detect_outliers(group)]
    for outlier in found:
        click.echo(json.dumps(to_dict(outlier)))
    click.echo(f"{len(found)} of {len(subs)} submissions flagged for review", err=True)
    if found:
        sys.exit(1)


@main.command()
@_inputs()
@_quiet
@_command
def validate(state: _State, submissions: Path | None, tasks_path: Path | None, example: bool, quiet: bool) -> None:
    """Score every submission and check the evaluations (the spec's validate_evaluation_metrics).

    Prints one finding per line; exits with status 1 when there is any.

    \b
    Examples:
      arena validate runs.jsonl --tasks tasks.toml
      arena validate --example
    """
    subs, tasks = _read(state, submissions, tasks_path, example)
    evaluations = _score(state, subs, tasks, quiet)
    findings = [
        f"{ev.submission_id}: {message}"
        for ev, sub in zip(evaluations, subs)
        for message in state.arena.validate(ev, sub.total_tokens)
    ]
    for finding in findings:
        click.echo(finding)
    click.echo(f"{len(findings)} findings in {len(evaluations)} evaluations", err=True)
    if findings:
        sys.exit(1)


@main.command()
@_inputs(tasks="optional")
@click.option("--store", "store_path", type=click.Path(path_type=Path, dir_okay=False), default="arena.db",
              show_default=True, help="The arena database (SQLite; created if missing).")
@_command
def ingest(state: _State, submissions: Path | None, tasks_path: Path | None, example: bool, store_path: Path) -> None:
    """Add submissions to an arena database: score, rank and update baselines in one transaction.

    Tasks given with --tasks are stored too; later batches may omit them. Re-submitting an id
    replaces it.

    \b
    Examples:
      arena ingest runs.jsonl --tasks tasks.toml --store arena.db
      arena ingest more-runs.jsonl --store arena.db
      arena leaderboard --store arena.db
    """
    subs, tasks = _read(state, submissions, tasks_path, example, need_tasks=False)
    result = asyncio.run(state.arena.process_batch(subs, store=SQLiteStore(store_path), tasks=tasks or None))
    task_count = len({e.task_id for e in result.evaluations})
    click.echo(f"Stored {len(result.evaluations)} evaluations for {task_count} tasks in {store_path}; "
               f"{len(result.outliers)} flagged for review")


@main.command()
@_inputs()
@click.option("--a", "profile_a", default="default", show_default=True, metavar="NAME_OR_FILE",
              help="Profile A: a [profiles.NAME] of the configuration, 'default', or a profile .toml file.")
@click.option("--b", "profile_b", required=True, metavar="NAME_OR_FILE", help="Profile B, compared with A.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html"]), default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write here instead of stdout (the file appears only when the comparison succeeded).")
@click.option("--top-k", type=click.IntRange(min=1), default=10, show_default=True, help="Size of the top set compared.")
@click.option("--movers", type=click.IntRange(min=0), default=10, show_default=True, help="Largest movers listed.")
@click.option("--resamples", type=click.IntRange(min=1), default=2000, show_default=True, help="Bootstrap resamples.")
@click.option("--confidence-level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed: same inputs, same report.")
@_command
def compare(state: _State, submissions: Path | None, tasks_path: Path | None, example: bool, profile_a: str,
            profile_b: str, fmt: str, output: Path | None, top_k: int, movers: int, resamples: int,
            confidence_level: float, seed: int) -> None:
    """Compare two scoring profiles on the same submissions.

    Reports B against A: score deltas per submission and tool (overall and per metric),
    rank changes and the largest movers, Kendall's tau-b and Spearman's rho (pooled and per
    task), top-k overlap and a seeded paired bootstrap interval of the mean difference.

    \b
    Examples:
      arena compare --example --b log-tokens
      arena compare runs.jsonl --tasks tasks.toml --a default --b robust.toml
      arena compare --example --b log-tokens --format html -o comparison.html
    """
    from arena_core.compare import compare as compare_profiles
    from arena_core.report import render_html, render_text

    a, b = state.loaded.profile(profile_a), state.loaded.profile(profile_b)
    subs, tasks = _read(state, submissions, tasks_path, example)
    report = compare_profiles(subs, tasks, a, b, top_k=top_k, resamples=resamples, confidence_level=confidence_level,
                              seed=seed, movers=movers)
    text = (json.dumps(report.as_dict(), indent=2) + "\n" if fmt == "json"
            else render_html(report) if fmt == "html" else render_text(report))
    with atomic_output(output) as out:
        out.write(text)


@main.command()
@click.option("--all", "include_builtins", is_flag=True, help="Include the built-in plugins.")
@click.option("--hook", help="Only plugins implementing this hook.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_command
def plugins(state: _State, include_builtins: bool, hook: str | None, as_json: bool) -> None:
    """List plugins: their distributions, the components each registered, and blocked ones.

    \b
    Examples:
      arena plugins
      arena plugins --all --hook arena_register_metrics
      ARENA_DISABLED_PLUGINS=example arena plugins
    """
    infos = [i for i in state.arena.plugins(include_builtins=include_builtins) if hook is None or hook in i.hooks]
    if as_json:
        click.echo(json.dumps([to_dict(i) for i in infos], indent=2))
        return
    rows = [
        [i.name, "blocked" if i.blocked else ("built-in" if i.builtin else f"{i.distribution} {i.version}"),
         "; ".join(f"{family}: {', '.join(names)}" for family, names in i.components.items())]
        for i in infos
    ]
    click.echo(render(["Plugin", "Source", "Registers"], rows) if rows else "No third-party plugins installed.")


@main.group()
def config() -> None:
    """Write or inspect the configuration file."""


@config.command("init")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False), default="arena.toml")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@_command
def config_init(state: _State, path: Path, force: bool) -> None:
    """Write a complete starter configuration (every key at its default, each explained).

    \b
    Examples:
      arena config init
      arena config init team-arena.toml
    """
    if path.exists() and not force:
        raise ArenaError(f"{path}: already exists (use --force to overwrite)")
    text = starter_toml(state.arena.scorer.slots())
    with atomic_output(path) as out:
        out.write(text)
    click.echo(f"Wrote {path}")


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_command
def config_show(state: _State, as_json: bool) -> None:
    """Print the effective configuration and where each value came from.

    \b
    Examples:
      arena config show
      arena -c team-arena.toml config show --json
    """
    state.arena  # noqa: B018  (validates every configured name)
    lines = effective_lines(state.loaded)
    if as_json:
        click.echo(json.dumps([{"key": k, "value": v, "source": src} for k, v, src in lines], indent=2))
        return
    found = state.loaded.path or find_config()
    click.echo(f"# configuration file: {found or 'none found (all defaults)'}")
    for key, value, source in lines:
        click.echo(f"{key} = {json.dumps(value)}  # {source}")
