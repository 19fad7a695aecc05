"""``arena trend``: each group's score against its date, the frontier and its slope
(:mod:`arena_core.stats.trend`)."""

from __future__ import annotations

import math
from pathlib import Path

import click

from arena_core.cli.app import State, command, main, quiet_option, score_all
from arena_core.cli.inputs import InputFiles, inputs, read_inputs
from arena_core.cli.selection import by_option, echo_board, models_of, models_option
from arena_core.io.table import render
from arena_core.model.checks import moment
from arena_core.model.errors import ArenaError
from arena_core.model.records import DIMENSIONS, Submission
from arena_core.model.releases import DATE_FIELDS
from arena_core.model.serde import to_dict
from arena_core.stats.runs import gather_runs
from arena_core.stats.tasktable import TaskTable
from arena_core.stats.trend import FRONTIER_RULES, trend


def _x_axis(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if value in (*DATE_FIELDS, "started_at") or (value.startswith("meta.") and len(value) > 5):
        return value
    raise click.BadParameter(f"expected release_date, knowledge_cutoff, started_at or meta.KEY, got {value!r}")


@main.command(name="trend")
@inputs()
@by_option
@click.option(
    "--x",
    "x",
    default="release_date",
    show_default=True,
    callback=_x_axis,
    metavar="release_date|knowledge_cutoff|started_at|meta.KEY",
    help="Each group's date: its model's (from [models] or --models), or the earliest of its runs'.",
)
@click.option("--y", "y", type=click.Choice(["score", *DIMENSIONS]), default="score", show_default=True)
@models_option
@click.option("--rule", type=click.Choice(FRONTIER_RULES), default="strict", show_default=True,
              help="On the frontier: above every earlier group (strict), or at least equal to the best (ties).")  # fmt: skip
@click.option("--resamples", type=click.IntRange(100, 100_000), default=2000, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@quiet_option
@command
def trend_command(
    state: State,
    inputs: InputFiles,
    by: str,
    x: str,
    y: str,
    models_path: Path | None,
    rule: str,
    resamples: int,
    fmt: str,
    quiet: bool,
) -> None:
    """Each group's mean score against its date (a model's release, or when its runs ran), the
    frontier (groups that beat every group dated before them) and the frontier's slope in
    points per year, with a bootstrap interval over tasks.

    \b
    Examples:
      arena trend runs.jsonl --tasks tasks.json --by model --models models.csv
      arena trend runs.jsonl --tasks tasks.json --by tool --x started_at --y correctness
    """
    if y != "score":
        state.reads_only((y,))
    subs, tasks = read_inputs(state, inputs)
    evaluations = score_all(state, subs, tasks, quiet)
    runs = gather_runs(state.arena.scorer, evaluations, by, meta={s.id: s.meta for s in subs})
    table = TaskTable.of(runs)
    scores = table.means if y == "score" else table.dimension_means.get(y)  # NaN where a group ran no task
    if scores is None:
        raise ArenaError(f"--y {y}: no run measured it")
    dates = _dates(state, x, models_path, table.groups, dict(zip(runs.ids, runs.groups, strict=True)), subs)
    if not dates:
        raise ArenaError(f"--x {x}: no group has a date (give models' dates in [models] or --models)")
    found = trend(table.groups, scores, dates, rule=rule, resamples=resamples)
    if fmt == "json":
        echo_board(state, tasks, {**to_dict(found), "x": x, "y": y, "by": by})
        return
    rows = [[p.x, p.group, p.n_tasks, p.y, "yes" if p.on_frontier else ""] for p in found.points]
    click.echo(render([x, by.capitalize(), "Tasks", y.capitalize(), "Frontier"], rows))
    shown = "n/a" if math.isnan(found.slope) else f"{found.slope:+.2f}"
    ci = "" if math.isnan(found.ci_low) else f" (95% CI {found.ci_low:+.2f} to {found.ci_high:+.2f}, tasks resampled)"
    click.echo(f"frontier ({rule}): {shown} points a year{ci}")
    if found.undated:
        click.echo(f"note: no {x} for {', '.join(found.undated)}: left out", err=True)


def _dates(
    state: State, x: str, models_path: Path | None, groups: list[str], group_of: dict[str, str], subs: list[Submission]
) -> dict[str, str]:
    """Each group's date on the ``x`` axis: its model's date, or the earliest of its runs'."""
    if x in DATE_FIELDS:
        models = models_of(state, models_path)
        return {g: date for g in groups if g in models and (date := getattr(models[g], x)) is not None}
    earliest: dict[str, str] = {}
    for s in subs:
        value = s.started_at if x == "started_at" else s.meta.get(x.removeprefix("meta."))
        group = group_of.get(s.id)
        if group is None or not isinstance(value, str) or moment(value) is None:
            continue
        if group not in earliest or moment(value) < moment(earliest[group]):  # type: ignore[operator]
            earliest[group] = value
    return earliest
