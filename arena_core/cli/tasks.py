"""``arena tasks``: one row per task, its solve rates, discrimination and health flags."""

from __future__ import annotations

import math
from pathlib import Path

import click

from arena_core.cli.app import State, command, main, quiet_option
from arena_core.cli.grouping import mixed_models_note, spellings_note
from arena_core.cli.inputs import InputFiles, inputs
from arena_core.cli.picking import Pick
from arena_core.cli.selection import (
    Selection,
    by_option,
    echo_board,
    echo_csv,
    evaluations_of,
    json_rows,
    pick_of,
    selection_options,
    store_option,
)
from arena_core.io.table import render
from arena_core.model.records import Task
from arena_core.model.serde import to_dict
from arena_core.stats.irt import MODELS
from arena_core.stats.similar import SimilarTask
from arena_core.stats.taskfeatures import parse_features


@main.command()
@inputs()
@store_option
@by_option
@selection_options
@click.option("--irt", "model", type=click.Choice(MODELS), default="rasch", show_default=True,
              help="The item response model the difficulties are fitted with (2pl adds a slope column).")  # fmt: skip
@click.option("--select", "size", type=click.IntRange(min=1), help="Also pick the N most informative tasks.")
@click.option("--features", "feature_names", metavar="NAME,...",
              help="Explain the difficulties by these task features (category, difficulty, created_at, meta.KEY) "
              "and show each one's effect with its interval.")  # fmt: skip
@click.option("--similar", metavar="TASK", help="Instead, the tasks most like TASK: solved by the same groups (and "
              "alike in --features).")  # fmt: skip
@click.option(
    "-n", "count", type=click.IntRange(min=1), default=10, show_default=True, help="How many --similar tasks."
)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@quiet_option
@command
def tasks(
    state: State,
    inputs: InputFiles,
    store_path: Path | str | None,
    by: str,
    selection: Selection,
    model: str,
    size: int | None,
    feature_names: str | None,
    similar: str | None,
    count: int,
    fmt: str,
    quiet: bool,
) -> None:
    """One row per task: runs, groups, solve rate, mean overall score, discrimination and flags.

    A run solves a task when its correctness is 100. Discrimination is the point-biserial
    correlation between a run's verdict and its group's solve rate over all tasks. Difficulty
    is fitted by item response theory (logits; --irt 2pl adds the slope). Flags: unsolved,
    saturated, flaky (some group's attempts disagree), undiscriminating, harness_errors,
    step_limit, label_disagrees. --select N picks the N tasks that say most about the groups
    and reports how closely they rank them as all tasks do. See docs/leaderboards.md.

    \b
    Examples:
      arena tasks --example
      arena tasks runs.jsonl --tasks tasks.json --by model --format json
      arena tasks --example --irt 2pl --select 4
      arena tasks --example --features category,meta.lines
      arena tasks --example --similar debugging-009 -n 5
    """
    pick = pick_of(state, selection)
    features = parse_features(feature_names)
    evaluations, meta, known = evaluations_of(state, inputs, store_path, pick, True, quiet)
    if similar is not None:
        found = state.arena.similar_tasks(
            evaluations, task=similar, count=count, tasks=known, features=features, by=by, model=model, meta=meta
        )
        _similar(state, known, found, similar, fmt, pick)
        return
    effects = (
        state.arena.feature_effects(evaluations, tasks=known, features=features, by=by, model=model, meta=meta)
        if features
        else []
    )
    labels = {t.id: t.difficulty for t in known.values()}
    mixed_models_note(evaluations, by, state.arena.config.model_aliases, attempts=True)
    spellings_note(evaluations, by, state.arena.config.model_aliases)
    rows = state.arena.task_health(evaluations, by=by, meta=meta, model=model, labels=labels)
    chosen = state.arena.select_tasks(evaluations, size, by=by, model=model) if size else None
    if fmt == "json":
        selected = {} if chosen is None else {"selection": to_dict(chosen)}
        explained = {"effects": json_rows(effects)} if features else {}
        echo_board(state, known, {"rows": json_rows(rows), **selected, **explained}, pick.time)
        return
    cells = [
        [
            r.task,
            r.runs,
            r.groups,
            f"{r.solve_rate * 100:.2f}",
            r.mean_score,
            "-" if math.isnan(r.discrimination) else f"{r.discrimination:.2f}",
            "-" if math.isnan(r.difficulty) else f"{r.difficulty:.2f}",
            *([] if model == "rasch" else ["-" if r.slope is None else f"{r.slope:.2f}"]),
            ", ".join(r.flags),
        ]
        for r in rows
    ]
    header = ["Task", "Runs", "Groups", "Solved %", "Mean", "Discrimination", "Difficulty",
              *([] if model == "rasch" else ["Slope"]), "Flags"]  # fmt: skip
    if fmt == "csv":
        echo_csv(header, cells)
        return
    click.echo(render(header, cells))
    click.echo(
        f"difficulty: {model} fit to the runs' correctness, logits (a group of equal ability solves it half the time)"
    )
    if effects:
        click.echo("")
        shown = [[e.feature, f"{e.effect:+.3f}", f"{e.low:+.3f} to {e.high:+.3f}"] for e in effects]
        click.echo(render(["Feature", "Effect", "95% CI"], shown))
        click.echo("effect: on a task's difficulty, logits (positive: harder), against the most common value; "
                   "numbers per standard deviation")  # fmt: skip
    if chosen is not None:
        click.echo(
            f"selected {len(chosen.tasks)} most informative tasks: {', '.join(chosen.tasks)}; fitted on them alone, "
            f"they rank the {chosen.groups} groups as all tasks do at Kendall tau-b {chosen.kendall_tau:.3f}"
        )


def _similar(state: State, known: dict[str, Task], found: list[SimilarTask], task: str, fmt: str, pick: Pick) -> None:
    if fmt == "json":
        echo_board(state, known, {"task": task, "rows": json_rows(found)}, pick.time)
        return
    rows = [
        [s.task, f"{s.similarity:.3f}", "-" if s.correlation is None else f"{s.correlation:+.2f}", s.groups,
         f"{s.difficulty_gap:+.2f}", ", ".join(s.shared)]
        for s in found
    ]  # fmt: skip
    header = ["Task", "Similarity", "Correlation", "Groups", "Difficulty gap", "Shared"]
    if fmt == "csv":
        echo_csv(header, rows)
        return
    click.echo(f"tasks most like {task}:")
    click.echo(render(header, rows))
    click.echo("correlation: of the groups' shares of credit on both tasks, over the groups that ran both")
