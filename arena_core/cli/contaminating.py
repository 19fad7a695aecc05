"""``arena contamination``: each model's score before and after its cutoff, and the gap once
problems getting harder over time is taken out (:mod:`arena_core.stats.contamination`)."""

from __future__ import annotations

import math
from pathlib import Path

import click

from arena_core.cli.app import State, command, main, quiet_option, score_all
from arena_core.cli.inputs import InputFiles, inputs, read_inputs
from arena_core.cli.selection import echo_board, finite, models_of, models_option
from arena_core.io.table import render
from arena_core.model.errors import ArenaError
from arena_core.model.releases import WINDOWS
from arena_core.model.serde import to_dict
from arena_core.stats.contamination import contamination, reference_models
from arena_core.stats.runs import task_table


@main.command(name="contamination")
@inputs()
@models_option
@click.option(
    "--window",
    type=click.Choice(sorted(WINDOWS)),
    default="after-cutoff",
    show_default=True,
    help="Which date splits a model's problems: its knowledge cutoff or its release.",
)
@click.option(
    "--reference",
    "references",
    multiple=True,
    metavar="MODEL",
    help="A model whose date precedes every problem, to adjust by (default: every such model). Repeatable.",
)
@click.option("--y", "y", type=click.Choice(["correctness", "score"]), default="correctness", show_default=True)
@click.option("--resamples", type=click.IntRange(100, 100_000), default=2000, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@quiet_option
@command
def contamination_command(
    state: State,
    inputs: InputFiles,
    models_path: Path | None,
    window: str,
    references: tuple[str, ...],
    y: str,
    resamples: int,
    fmt: str,
    quiet: bool,
) -> None:
    """Each model's mean score on the problems published before its knowledge cutoff and after
    it, the naive gap, and the gap adjusted by reference models that saw neither period (a
    difference in differences per problem), with a bootstrap interval over problems.

    \b
    Examples:
      arena contamination runs.jsonl --tasks tasks.json --models models.csv
      arena contamination runs.jsonl --tasks tasks.json --reference gpt-4-0613 --format json
    """
    if y == "correctness":
        state.reads_only(("correctness",))
    subs, tasks = read_inputs(state, inputs)
    evaluations = score_all(state, subs, tasks, quiet)
    table = task_table(state.arena.scorer, evaluations, "model")
    scores = table.means if y == "score" else table.dimension_means.get(y)  # NaN where a model ran no problem
    if scores is None:
        raise ArenaError(f"--y {y}: no run measured it")
    models = models_of(state, models_path)
    dates = {m: date for m in table.groups if m in models and (date := models[m].date(window)) is not None}
    created = {t: task.created_at for t, task in tasks.items() if task.created_at is not None}
    if not created:
        raise ArenaError("no task has a created_at: the problems' publication dates are what splits them")
    chosen = list(references) or reference_models(dates, created)
    for name in chosen:
        if name not in dates:
            raise ArenaError(
                f"--reference {name!r}: no dated model of that name ran (dated: {', '.join(sorted(dates))})"
            )
        if name not in reference_models({name: dates[name]}, created):
            raise ArenaError(f"--reference {name!r}: its date {dates[name]} does not precede every problem")
    gaps = contamination(table, scores, created, dates, chosen, resamples=resamples)
    undated = sorted(set(table.groups) - set(dates))
    if fmt == "json":
        echo_board(state, tasks, {"window": window, "y": y, "references": chosen, "undated_models": undated,
                                  "models": [to_dict(g) for g in gaps]})  # fmt: skip
        return
    rows = [
        [g.model, g.date, g.before_tasks, g.after_tasks, *finite([g.before, g.after, g.naive, g.adjusted]),
         "" if math.isnan(g.ci_low) else f"{g.ci_low:.2f} to {g.ci_high:.2f}", g.note]
        for g in gaps
    ]  # fmt: skip
    field = WINDOWS[window]
    click.echo(render(["Model", field, "Before", "After", "Mean before", "Mean after", "Naive gap", "Adjusted gap",
                       "95% CI", "Note"], rows))  # fmt: skip
    click.echo(f"{y}: mean over problems; references (saw no problem): {', '.join(chosen) or 'none'}")
    if undated:
        click.echo(f"note: no {field} for {', '.join(undated)}: left out (give it in [models] or --models)", err=True)
    if len(created) < len(tasks):
        click.echo(f"note: {len(tasks) - len(created)} tasks have no created_at: left out", err=True)
