"""``arena calibrate``: how far a judge agrees with people, group by group, and the pass rate
corrected by their labels (:mod:`arena_core.stats.calibration`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import click

from arena_core.cli.app import State, command, main, quiet_option
from arena_core.cli.inputs import InputFiles, inputs, read_inputs
from arena_core.cli.picking import Pick
from arena_core.cli.selection import echo_csv, echo_json, evaluations_of, store_option, stored_on_arrival, stored_runs
from arena_core.io.judgements import VerdictLine, label_of, read_verdicts, verdict_of
from arena_core.io.table import render
from arena_core.model.errors import ArenaError
from arena_core.model.labels import Item, Label
from arena_core.model.records import Evaluation, Submission, Task
from arena_core.stats.calibration import CalibrationRow, calibrate, requirement_categories, verdicts_of
from arena_core.store.labels import LabelStore

#: What ``--by`` may group by.
GROUPINGS = ("tool", "model", "judge", "category", "requirement_category", "none")


@main.command(name="calibrate")
@inputs(tasks="optional")
@store_option
@click.option("--verdicts", "verdict_paths", multiple=True, type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="Judges' verdicts (the recorded format). Repeatable. Default: the runs' judge criteria, scored.")  # fmt: skip
@click.option("--by", type=click.Choice(GROUPINGS), default="tool", show_default=True, help="One row per group.")
@click.option("--confidence-level", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True,
              help="Of the corrected pass rate's interval.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@quiet_option
@command
def calibrate_command(
    state: State,
    inputs: InputFiles,
    store_path: Path | str | None,
    verdict_paths: tuple[Path, ...],
    by: str,
    confidence_level: float,
    fmt: str,
    quiet: bool,
) -> None:
    """How far the judges agree with people's labels, per group, and the pass rate corrected by them.

    Each item (a requirement of a run, or a whole run where the labels are of whole runs) the
    judge gave a verdict on is compared with the people's majority: agreement, Cohen's kappa,
    Krippendorff's alpha, the confusion matrix, sensitivity and specificity. The corrected pass
    rate is prediction-powered: the judge's rate over every item plus the mean of label minus
    verdict over the labelled ones, with its interval, valid when the labelled items are a
    random sample (a warning says where that is not known or not likely). Without --verdicts
    the verdicts are the judge criteria's, scored (from the verdict cache when asked before),
    or, for labels of whole runs on tasks without one, the runs' reported success. With --store,
    the labels stored (arena ingest --labels, the service's review queue) count too. Runs read
    by an importer whose source records judgements (DevAI's) bring their verdicts and labels.
    See docs/judges.md.

    \b
    Examples:
      arena calibrate runs.jsonl --tasks tasks.json --labels labels.jsonl --verdicts verdicts.jsonl
      arena calibrate runs.jsonl --tasks tasks.json --labels labels.jsonl --by judge --format json
      arena calibrate devai/benchmark/judgment --by tool
    """
    labels = list(state.labels)
    given = [line for path in verdict_paths for line in read_verdicts(path)]
    if not labels and not (inputs.submissions or inputs.example or store_path):
        raise click.UsageError("give --labels FILE: people's labels, to calibrate the judges against")
    runs, tasks, verdicts = _runs_and_verdicts(state, inputs, store_path, given, labels, by, quiet)
    if store_path is not None:
        labels = [*labels, *LabelStore(store_path).labels()]
    recorded_verdicts, recorded_labels = _recorded(state)
    labels = labels or recorded_labels
    verdicts = given or recorded_verdicts or verdicts
    if not labels:
        raise click.UsageError("give --labels FILE: people's labels, to calibrate the judges against")
    group_of = _grouping(by, runs, tasks)
    known = {s.id for s in runs}
    if runs:
        unknown = {label.submission_id for label in labels} - known
        if unknown:
            click.echo(f"note: {len(unknown)} labelled runs are not among the runs given: left out", err=True)
        labels = [label for label in labels if label.submission_id in known]
        verdicts = [line for line in verdicts if line.submission_id in known]
    rows = calibrate(verdicts, labels, group_of, by_judge=by == "judge", confidence_level=confidence_level)
    _print(rows, fmt, confidence_level)


def _runs_and_verdicts(
    state: State, given: InputFiles, store_path: Path | str | None, verdicts: list[VerdictLine],
    labels: Sequence[Label], by: str, quiet: bool,
) -> tuple[list[Submission], dict[str, Task], list[VerdictLine]]:  # fmt: skip
    """The runs (when given), their tasks, and the verdicts: those given, else the runs' judge
    criteria scored, else (labels of whole runs) their reported success."""
    if not given.submissions and given.example is None and store_path is None:
        if not verdicts or by not in ("judge", "none"):
            raise click.UsageError(f"give the runs (files or --store) to group by {by}, or to score their judges")
        return [], {}, verdicts
    if verdicts or (given.submissions and not labels):  # given, or (DevAI) recorded by the runs' source
        if store_path is not None:
            runs, tasks = stored_runs(store_path)
            return runs, tasks, verdicts
        # The verdicts are given (or recorded): the tasks are only read for their categories,
        # never checked (their judges need not be configured to be calibrated).
        state.scores_runs = False
        runs, tasks = read_inputs(state, given, need_tasks=False)
        return runs, tasks, verdicts
    if store_path is not None:  # the verdicts found when each run was stored: a judge is not asked again
        runs, tasks = stored_runs(store_path)
        evaluations: Sequence[Evaluation] = stored_on_arrival(store_path)
    else:
        evaluations, _, tasks = evaluations_of(state, given, None, Pick(), False, quiet)
        runs, _ = read_inputs(state, given)
    found = verdicts_of(evaluations)
    if not found and all(label.requirement is None for label in labels):
        found = [VerdictLine(s.id, None, "reported", s.success) for s in runs]
    if not found:
        raise ArenaError("the runs' tasks have no judge criterion: give the judges' verdicts with --verdicts")
    return runs, tasks, found


def _recorded(state: State) -> tuple[list[VerdictLine], list[Label]]:
    """The verdicts and labels the imported runs' source records (DevAI's judgments), checked."""
    verdicts = [verdict_of(line, where, "recorded") for where, kind, line in state.judgements if kind == "verdict"]
    labels = [label_of(line, where) for where, kind, line in state.judgements if kind == "label"]
    return verdicts, labels


def _grouping(by: str, runs: Sequence[Submission], tasks: dict[str, Task]) -> Callable[[Item], str | None] | None:
    if by in ("judge", "none"):
        return None
    run = {s.id: s for s in runs}
    if by == "requirement_category":
        category = requirement_categories(tasks.values())

        def of_requirement(item: Item) -> str | None:
            found = run.get(item[0])
            if found is None or item[1] is None:
                return None
            return str(category.get((str(found.task_id), item[1])) or "(none)")

        return of_requirement

    def of_run(item: Item) -> str | None:
        found = run.get(item[0])
        if found is None:
            return None
        if by == "category":
            task = tasks.get(str(found.task_id))
            return (task.category if task is not None else None) or "(none)"
        return getattr(found, by) or "(unknown)"

    return of_run


def _print(rows: list[CalibrationRow], fmt: str, confidence_level: float) -> None:
    if fmt == "json":
        echo_json(rows)
        return
    header = ["Group", "Items", "n", "Agree %", "Kappa", "Alpha", "TP", "FP", "FN", "TN", "Sens", "Spec",
              "Judge %", "People %", "Corrected %", f"{confidence_level:.0%} CI", "Raters alpha", "Judges alpha"]  # fmt: skip
    cells = [_cells(r) for r in rows]
    if fmt == "csv":
        echo_csv(header, cells)
    else:
        click.echo(render(header, cells))
        click.echo(
            "agree, kappa, alpha: the judge against the people's majority; corrected: the judge's rate over every "
            "item plus the mean of label minus verdict over the labelled ones (prediction-powered), valid for a random sample"
        )
    for row in rows:  # in the rows of --format json; on stderr for the others
        for warning in row.warnings:
            click.echo(f"warning: {row.group}: {warning}", err=True)


def _cells(r: CalibrationRow) -> list[object]:
    interval = "-" if math.isnan(r.corrected_low) else f"{r.corrected_low * 100:.2f}-{r.corrected_high * 100:.2f}"
    return [r.group, r.items, r.n, _pct(r.agreement), _num(r.kappa), _num(r.alpha), r.tp, r.fp, r.fn, r.tn,
            _num(r.sensitivity), _num(r.specificity), _pct(r.judge_rate), _pct(r.people_rate), _pct(r.corrected),
            interval, _num(r.raters_alpha), _num(r.judges_alpha)]  # fmt: skip


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{value * 100:.2f}"


def _num(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}".replace("-0.000", "0.000")
