"""``arena predict`` and ``arena adaptive``: what a board says of the cells nobody ran, and which
tasks a new agent should run next (see docs/adaptive.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from arena_core.cli.app import State, command, main, quiet_option, score_all
from arena_core.cli.inputoptions import InputFiles
from arena_core.cli.inputs import inputs, read_inputs
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
from arena_core.model.serde import to_dict
from arena_core.stats.adaptive import AdaptiveEstimate, AdaptiveTest, responses_of
from arena_core.stats.runs import needs_meta
from arena_core.stats.taskfeatures import parse_features

_MODELS = {"irt": "rasch", "irt_2pl": "2pl"}


@main.command()
@inputs()
@store_option
@by_option
@selection_options
@click.option("--method", type=click.Choice(list(_MODELS)), default="irt", show_default=True,
              help="The item response fit: irt (Rasch) or irt_2pl (a slope per task).")  # fmt: skip
@click.option("--cells", type=click.Choice(["missing", "all"]), default="missing", show_default=True,
              help="Predict the cells no run filled, or every cell.")  # fmt: skip
@click.option("--features", "feature_names", metavar="NAME,...",
              help="Explain the difficulties by these task features (category, difficulty, created_at, meta.KEY): "
              "a task nobody ran is predicted from them.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@quiet_option
@command
def predict(
    state: State,
    inputs: InputFiles,
    store_path: Path | str | None,
    by: str,
    selection: Selection,
    method: str,
    cells: str,
    feature_names: str | None,
    fmt: str,
    quiet: bool,
) -> None:
    """Each group's chance of solving each task it did not run (the expected share of credit,
    with a 95% interval), and its expected score on every task of the board, by the item
    response fit --method irt ranks with. Tasks of the tasks file no run is of are on the board
    too (with --features, predicted from their features). The table shows the groups;
    --format csv gives one row per cell, --format json both.

    \b
    Examples:
      arena predict --example aider --by model
      arena predict runs.jsonl --tasks tasks.json --by model --method irt_2pl --format csv
      arena predict runs.jsonl --tasks tasks.json --by model --features category,meta.repo
    """
    state.reads_only(("correctness",))
    pick = pick_of(state, selection)
    evaluations, meta, tasks = evaluations_of(state, inputs, store_path, pick, needs_meta(by), quiet)
    groups, predicted = state.arena.predict(
        evaluations, by=by, model=_MODELS[method], cells=cells, tasks=tasks,
        features=parse_features(feature_names), meta=meta,
    )  # fmt: skip
    if fmt == "json":
        echo_board(state, tasks, {"groups": json_rows(groups), "rows": json_rows(predicted)}, pick.time)
        return
    if fmt == "csv":
        header = ["group", "task", "probability", "low", "high", "runs", "observed"]
        echo_csv(header, ([p.group, p.task, p.probability, p.low, p.high, p.runs, p.observed] for p in predicted))
        return
    rows = [
        [g.group, f"{g.tasks_run}/{g.tasks}", g.observed, g.expected, f"{g.low:.2f}-{g.high:.2f}", g.ability]
        for g in sorted(groups, key=lambda g: -g.expected)
    ]
    click.echo(render([by.capitalize(), "Ran", "Observed", "Expected", "95% CI", "Ability"], rows))
    click.echo(
        "expected: 100 x the share of credit over every task (its own where it ran, predicted elsewhere); "
        f"{len(predicted):,} cells predicted (--format csv or json lists them)"
    )


@main.group()
def adaptive() -> None:
    """Evaluate a new agent on a board adaptively: which tasks next, where it stands, when to stop."""


def _adaptive_options(function: click.decorators.FC) -> click.decorators.FC:
    for option in reversed(
        [
            inputs(),
            by_option,
            click.option(
                "--runs",
                "runs_path",
                type=click.Path(path_type=Path, dir_okay=False, exists=True),
                help="The new agent's runs so far (JSON Lines); none: it has run nothing yet.",
            ),
            click.option("--method", type=click.Choice(list(_MODELS)), default="irt", show_default=True),
            click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True),
            quiet_option,
        ]
    ):
        function = option(function)
    return function


def _placed(
    state: State, inputs: InputFiles, by: str, runs_path: Path | None, method: str, quiet: bool
) -> tuple[AdaptiveTest, dict[str, float]]:
    """The board fitted, and the new agent's responses (task to its share of credit)."""
    state.reads_only(("correctness",))
    subs, tasks = read_inputs(state, inputs)
    evaluations = score_all(state, subs, tasks, quiet)
    test = state.arena.adaptive(
        evaluations, by=by, model=_MODELS[method], categories={t: task.category for t, task in tasks.items()},
        meta={s.id: s.meta for s in subs},
    )  # fmt: skip
    if runs_path is None:
        return test, {}
    mine, known = read_inputs(state, InputFiles((runs_path,), inputs.tasks, inputs.example, None))
    return test, responses_of(score_all(state, mine, {**tasks, **known}, quiet))


@adaptive.command("next")
@_adaptive_options
@click.option("-n", "count", type=click.IntRange(min=1), default=1, show_default=True, help="How many tasks.")
@click.option("--no-balance", is_flag=True, help="Choose by information alone, not balanced over categories.")
@command
def next_tasks(
    state: State, inputs: InputFiles, by: str, runs_path: Path | None, method: str, fmt: str, quiet: bool,
    count: int, no_balance: bool,
) -> None:  # fmt: skip
    """The next tasks the new agent (--runs) should run: the most informative at its current
    ability estimate, balanced over the tasks' categories.

    \b
    Examples:
      arena adaptive next board.jsonl --tasks tasks.json --by model -n 5
      arena adaptive next board.jsonl --tasks tasks.json --by model --runs mine.jsonl --format json
    """
    test, responses = _placed(state, inputs, by, runs_path, method, quiet)
    chosen = test.next(responses, count, balance=not no_balance)
    if fmt == "json":
        click.echo(json.dumps({"tasks": chosen, "estimate": to_dict(test.estimate(responses))}, indent=2))
        return
    for task in chosen:
        click.echo(task)


@adaptive.command("estimate")
@_adaptive_options
@click.option(
    "--stop-se", type=click.FloatRange(min=0, min_open=True), help="Stop at this standard error of the ability."
)
@click.option("--stop-width", type=click.FloatRange(min=0, min_open=True), metavar="POINTS",
              help="Stop when the predicted score's 95% interval is within +-POINTS.")  # fmt: skip
@command
def estimate(
    state: State, inputs: InputFiles, by: str, runs_path: Path | None, method: str, fmt: str, quiet: bool,
    stop_se: float | None, stop_width: float | None,
) -> None:  # fmt: skip
    """Where the new agent (--runs) stands: its ability, its predicted score on every task of the
    board with a 95% interval, its predicted rank range, and whether the stopping rule is met.

    \b
    Examples:
      arena adaptive estimate board.jsonl --tasks tasks.json --by model --runs mine.jsonl --stop-width 3
    """
    test, responses = _placed(state, inputs, by, runs_path, method, quiet)
    found = test.estimate(responses, stop_se=stop_se, stop_width=stop_width)
    if fmt == "json":
        click.echo(json.dumps(to_dict(found), indent=2))
        return
    click.echo(_described(found, len(test.board)))


def _described(found: AdaptiveEstimate, groups: int) -> str:
    return "\n".join(
        [
            f"tasks run: {found.tasks_run} of {found.tasks}",
            f"ability: {found.ability:.3f} (standard error {found.ability_se:.3f})",
            f"predicted score on every task: {found.expected:.2f} (95% CI {found.low:.2f}-{found.high:.2f})",
            f"predicted rank among the board's {groups} groups: {found.rank} "
            f"(range {found.rank_best}-{found.rank_worst})",
            f"stop: {'yes' if found.stop else 'no'} ({found.reason})",
        ]
    )
