"""``arena pareto``: the groups no other group beats on both cost (or time, tokens) and quality."""

from __future__ import annotations

import click

from arena_core.cli.app import State, command, main, quiet_option, score_all
from arena_core.cli.inputs import InputFiles, inputs, read_columns, read_inputs
from arena_core.cli.selection import Selection, by_option, echo_board, json_rows, pick_of, selection_options
from arena_core.engine.columns import Columns
from arena_core.io.table import render
from arena_core.model.records import Submission
from arena_core.stats.pareto import X_FIELDS, Y_SCORES
from arena_core.stats.runs import needs_meta


@main.command()
@inputs()
@by_option
@selection_options
@click.option("--x", "x", type=click.Choice(list(X_FIELDS)), default="cost", show_default=True, help="Cost axis.")
@click.option("--y", "y", type=click.Choice(Y_SCORES), default="correctness", show_default=True, help="Quality axis.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@quiet_option
@command
def pareto(
    state: State,
    inputs: InputFiles,
    by: str,
    selection: Selection,
    x: str,
    y: str,
    fmt: str,
    quiet: bool,
) -> None:
    """Place each group at its mean cost (or time, or tokens) per run and its mean score, and
    mark the Pareto front: the groups no other group beats on both at once.

    \b
    Examples:
      arena pareto --example aider --by model
      arena pareto runs.jsonl --tasks tasks.json --by model --x time --y overall
    """
    if y != "overall":  # one dimension's scores, and the runs' own figures on the x axis
        state.reads_only((y,))
    pick = pick_of(state, selection)
    subs: Columns | list[Submission]
    if pick.narrows_runs or needs_meta(by):
        objects, tasks = read_inputs(state, inputs, pick=pick)
        subs, meta = objects, {s.id: s.meta for s in objects}
    else:
        subs, tasks = read_columns(state, inputs, pick=pick)
        meta = None
    evaluations = score_all(state, subs, tasks, quiet)
    if note := pick.note():
        click.echo(note, err=True)
    points = state.arena.pareto(evaluations, subs, by=by, x=x, y=y, meta=meta)
    if fmt == "json":
        echo_board(state, tasks, {"rows": json_rows(points)}, pick.time)
        return
    rows = [
        [
            p.group,
            p.n_tasks,
            p.x,
            _range(p.x_low, p.x_high),
            p.y,
            _range(p.y_low, p.y_high),
            "yes" if p.on_front else "",
            ", ".join(p.dominated_by[:3]) + (f" (+{len(p.dominated_by) - 3})" if len(p.dominated_by) > 3 else ""),
        ]
        for p in points
    ]
    label = "Group" if by.startswith("meta.") else " / ".join(k.capitalize() for k in by.split(","))
    header = [label, "Tasks", x.capitalize(), "95% CI", y.capitalize(), "95% CI", "Front", "Dominated by"]
    click.echo(render(header, rows))
    unplaced = [p.group for p in points if p.x is None]
    if unplaced:
        click.echo(f"not placed (no run measured {X_FIELDS[x]}): {', '.join(unplaced)}")


def _range(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"{low:.2f}-{high:.2f}"
