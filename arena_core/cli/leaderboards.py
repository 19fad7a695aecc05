"""Commands that rank groups: ``leaderboard`` (with ``--pairwise``) and ``pareto``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from arena_core.cli.app import State, command, main, quiet_option, score_all
from arena_core.cli.correcting import corrected_rows, corrected_table
from arena_core.cli.grouping import mixed_models_note, spellings_note
from arena_core.cli.inputs import InputFiles, inputs, read_inputs
from arena_core.cli.repeated import cap_note, parse_ks, repeat_cells, with_repeats
from arena_core.cli.selection import (
    Selection,
    echo_board,
    evaluations_of,
    json_rows,
    pick_of,
    selection_options,
    store_option,
    stored_arena,
)
from arena_core.cli.streams import stream_leaderboard, streamed_source
from arena_core.config.settings import CORRECTNESS_SOURCES, LEADERBOARD_ORDERS, RANK_RULES
from arena_core.io.table import render
from arena_core.model.errors import ArenaError
from arena_core.model.serde import to_dict
from arena_core.pricing.notes import cost_notes
from arena_core.stats.celltable import CellTable
from arena_core.stats.corrected import CorrectedRow
from arena_core.stats.leaderboard import GroupRow, dimensions_of
from arena_core.stats.pairwise import ADJUSTMENTS, TESTS, PairRow
from arena_core.stats.prediction import GroupExpectation
from arena_core.stats.runs import needs_meta
from arena_core.stats.tasktable import TaskTable


@main.command()
@inputs()
@store_option
@click.option(
    "--by",
    default="tool",
    show_default=True,
    metavar="tool|model|tool,model|meta.KEY|submission",
    help="Group runs by tool, model, both or a key of the submissions' meta, or list every submission.",
)
@selection_options
@click.option("--method", help="Aggregator scoring each group (default: leaderboard_method, task_mean).")
@click.option(
    "--pool",
    type=click.Choice(["tasks", "runs"]),
    help="tasks: each task counts once (task_mean); runs: every run is one sample (pooled).",
)
@click.option("--interval", help="Interval method over a group's tasks (default: leaderboard_interval, student_t).")
@click.option(
    "--ranks",
    type=click.Choice(RANK_RULES),
    help="How rank ranges and tiers are made (default: leaderboard_ranks, paired_bootstrap).",
)
@click.option(
    "--cluster",
    metavar="meta.KEY",
    help="Tasks come in families named by this key of the runs' meta, or of the task's where runs lack it "
    "(e.g. meta.repo): intervals and rank ranges resample families.",
)
@click.option(
    "--order",
    type=click.Choice(LEADERBOARD_ORDERS),
    help="score, or outcome-first: a group whose correctness is significantly higher ranks above, the score "
    "orders the rest (default: leaderboard_order; outcome-first under -p gated).",
)
@click.option("--pairwise", is_flag=True, help="Also test every two ranked groups on the tasks both ran.")
@click.option(
    "--test",
    type=click.Choice(TESTS),
    default="t",
    show_default=True,
    help="Paired test for --pairwise and for the inversions each row names.",
)
@click.option("--adjust", type=click.Choice(ADJUSTMENTS), default="holm", show_default=True, help="p-value adjustment.")
@click.option("--pass-k", "pass_k", metavar="K,K,...", help="Add pass@k and pass^k over repeated attempts, e.g. 1,2,5.")
@click.option(
    "--correctness-source",
    type=click.Choice(CORRECTNESS_SOURCES),
    help="corrected: add each group's mean correctness corrected by people's labels (--labels), "
    "prediction-powered, with its interval (default: correctness_source, judge).",
)
@click.option(
    "--expected",
    is_flag=True,
    help="Add each group's expected score on every task (its own where it ran, the IRT fit's prediction "
    "elsewhere), with its interval: for boards where groups ran different tasks (see docs/adaptive.md).",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option(
    "--executor",
    metavar="NAME",
    help="Where runs are scored (by task partitions) and workspaces checked: threads, processes, dask, or a "
    "plugin's (default: check_executor).",
)
@quiet_option
@command
def leaderboard(
    state: State,
    inputs: InputFiles,
    store_path: Path | str | None,
    by: str,
    selection: Selection,
    method: str | None,
    pool: str | None,
    interval: str | None,
    ranks: str | None,
    cluster: str | None,
    order: str | None,
    pairwise: bool,
    test: str,
    adjust: str,
    pass_k: str | None,
    correctness_source: str | None,
    expected: bool,
    fmt: str,
    executor: str | None,
    quiet: bool,
) -> None:
    """Rank groups by their score over tasks, with intervals, rank ranges and tiers.

    A group's score is, by default, the mean over tasks of its per-task mean overall score, so
    each task counts once; its 95% interval treats the tasks as the sample. Rank ranges are
    the best and worst ranks the data allow (by default a paired bootstrap over tasks); a tier
    is a group and those ranked below it that could take its place.
    Groups with fewer than min_tasks_per_group tasks are provisional (*): listed, not ranked.
    Parquet runs of more than partition_rows runs (or at URLs) are streamed, a partition of whole
    tasks at a time, in bounded memory, with the same board, unless an option needs every run
    (a store, --by meta.KEY, --where, --task, --cluster, --pass-k, --pool runs). See docs/scaling.md.
    See docs/leaderboards.md.

    \b
    Examples:
      arena leaderboard --example
      arena leaderboard runs.jsonl --tasks tasks.toml --by model --pairwise
      arena leaderboard --example aider --by model --where meta.benchmark=polyglot
      arena leaderboard --example --by submission --task debugging-009
      arena leaderboard --store arena.db --method win_rate
      arena leaderboard --from swebench report.json --by model --cluster meta.repo
    """
    state.executor = executor
    if pool is not None:
        if method is not None:
            raise click.UsageError("give --method or --pool, not both")
        method = "pooled" if pool == "runs" else "task_mean"
    pick = pick_of(state, selection)
    if by == "submission":
        _submission_board(state, inputs, store_path, selection.task_ids, fmt, quiet)
        return
    reads = getattr(state.arena.components.aggregators[method or state.arena.config.leaderboard_method], "reads", None)
    if reads:  # an aggregator of some dimensions only (irt: the verdicts)
        state.reads_only(reads)
    arena = state.arena
    priced = arena.pricer is not None
    corrected = (correctness_source or arena.config.correctness_source) == "corrected"
    held = _held(arena, by, method, cluster, pass_k, store_path, corrected)
    source = streamed_source(state, inputs, pick, why_not=held)
    evaluations: Sequence[Any] | TaskTable | CellTable
    if source is not None:
        by_cells = bool(
            getattr(arena.components.aggregators[method or arena.config.leaderboard_method], "cells", False)
        )
        streamed = stream_leaderboard(state, source, inputs, pick, by, quiet, fmt == "json", by_cells)
        (evaluations, tasks), meta = streamed, None
    else:
        evaluations, meta, tasks = evaluations_of(
            state, inputs, store_path, pick, needs_meta(by) or bool(cluster) or priced, quiet
        )
    families: dict[str, Any] = {}
    if cluster and source is None:  # a task may name the family its runs do not
        families["task_meta"] = {t.id: t.meta for t in tasks.values()}
    groups = arena.leaderboard(
        evaluations,
        by=by,
        method=method,
        interval=interval,
        test=test,
        adjustment=adjust,
        ranks=ranks,
        order=order,
        meta=meta,
        cluster=cluster,
        **families,
    )
    pairs = arena.pairwise(evaluations, by=by, test=test, adjustment=adjust, order=order, meta=meta) if pairwise else []
    ks = parse_ks(pass_k)
    found = (
        arena.repeats(evaluations, ks, by=by, meta=meta)
        if ks and not isinstance(evaluations, TaskTable | CellTable)
        else {}
    )
    if not isinstance(evaluations, TaskTable | CellTable):
        mixed_models_note(evaluations, by, arena.config.model_aliases, attempts=False)
        spellings_note(evaluations, by, arena.config.model_aliases)
    fixed = {}
    if corrected and not isinstance(evaluations, TaskTable | CellTable):
        fixed = corrected_rows(state, arena, evaluations, tasks, by, meta, store_path)
    whole = {}
    if expected:
        whole = {g.group: g for g in arena.predict(evaluations, by=by, cells="none", tasks=tasks, meta=meta)[0]}
    if fmt == "json":
        rows = json_rows(pairs) if pairwise else [_json_row(g, found, fixed, whole) for g in groups]
        echo_board(state, tasks, {"rows": rows}, pick.time)
        return
    extra = repeat_cells(ks, found) if ks else ([], {})
    if whole:
        cells = {g: [f"{e.expected:.2f} ({e.low:.2f}-{e.high:.2f})"] for g, e in whole.items()}
        extra = _joined(extra, ["Expected (95% CI)"], cells)
    if fixed:
        extra = _joined(extra, *corrected_table(fixed, [g.group for g in groups]))
    click.echo(_board(groups, by, extra))
    if fixed:
        click.echo(
            "corrected: the mean correctness over each group's runs, the judges' plus the mean of people's minus "
            "judges' over its labelled runs (prediction-powered, valid for a random sample); 95% CI of it"
        )
        for row in fixed.values():
            for warning in row.warnings:
                click.echo(f"warning: {row.group}: {warning}", err=True)
    method_name = method or arena.config.leaderboard_method
    aggregator = arena.components.aggregators[method_name]
    spread = "bootstrap over tasks" if cluster is None else f"bootstrap over the tasks' {cluster} families"
    if hasattr(aggregator, "units") and cluster is None:
        unit = getattr(aggregator, "unit", "units")
        spread = f"{interval or arena.config.leaderboard_interval} over each group's {unit}"
    ordered = order or arena.config.leaderboard_order
    shown = f"; order: {ordered}" if ordered != "score" else ""
    click.echo(f"score: {method_name}; 95% CI: {spread}; ranks: {ranks or arena.config.leaderboard_ranks}{shown}")
    if any(g.provisional for g in groups):
        click.echo(f"* provisional: fewer than {arena.config.min_tasks_per_group} tasks (min_tasks_per_group)")
    if any(g.apart for g in groups):
        click.echo(
            "\u2020 apart: shares no task with the ranked groups (directly or through others): not ranked against them"
        )
    for line in [*inversion_lines(groups, test, adjust, ordered), *filter(None, [ks and cap_note(ks, found)])]:
        click.echo(line)
    if meta is not None:
        for line in cost_notes(((i, m.get("pricing")) for i, m in meta.items()), arena.config.cost_tolerance):
            click.echo(line)
    if pairwise:
        click.echo("")
        click.echo(_matrix(groups, pairs, adjust))


def _joined(
    extra: tuple[list[str], dict[str, list[Any]]], header: list[str], cells: dict[str, list[Any]]
) -> tuple[list[str], dict[str, list[Any]]]:
    """The board's extra columns with ``header``'s appended (``-`` where a group has none)."""
    groups = {*extra[1], *cells}
    return [*extra[0], *header], {
        g: [*extra[1].get(g, ["-"] * len(extra[0])), *cells.get(g, ["-"] * len(header))] for g in groups
    }


def _json_row(
    group: GroupRow, found: dict[str, Any], fixed: dict[str, CorrectedRow], whole: dict[str, GroupExpectation]
) -> dict[str, Any]:
    row = with_repeats(to_dict(group), found.get(group.group))
    if group.group in fixed:
        row["correctness_corrected"] = to_dict(fixed[group.group])
    if group.group in whole:
        row["expected"] = to_dict(whole[group.group])
    return row


def _held(
    arena: Any, by: str, method: str | None, cluster: str | None, pass_k: str | None, store: Any, corrected: bool
) -> str | None:
    """What of the leaderboard's options keeps its runs in memory (see arena_core/cli/streams.py)."""
    if store is not None:
        return "reads files, not a store"
    if corrected:
        return "does not correct correctness by people's labels"
    if by not in ("tool", "model", "tool,model"):
        return "groups by tool or model"
    if cluster or pass_k:
        return "does not take --cluster or --pass-k"
    if getattr(arena.components.aggregators[method or arena.config.leaderboard_method], "reads_runs", False):
        return "ranks with an aggregator of per-task cells (not pooled)"
    return None


def _board(groups: Sequence[GroupRow], by: str, extra: tuple[list[str], dict[str, list[Any]]]) -> str:
    dims = dimensions_of(groups)
    rows = [
        [
            g.rank,
            g.tier,
            g.group + (" *" if g.provisional else " \u2020" if g.apart else ""),
            g.n_runs,
            g.n_tasks,
            g.score,
            f"{g.ci_low:.2f}-{g.ci_high:.2f}",
            "-" if g.rank_low is None else f"{g.rank_low}-{g.rank_high}",
            f"{g.coverage:.2f}",
            *(g.means.get(d) for d in dims),
            *extra[1].get(g.group, ["-"] * len(extra[0])),
        ]
        for g in groups
    ]
    label = "Group" if by.startswith("meta.") else " / ".join(k.capitalize() for k in by.split(","))
    header = ["Rank", "Tier", label, "Runs", "Tasks", "Score", "95% CI", "Ranks", "Coverage"]
    return render([*header, *(d.capitalize() for d in dims), *extra[0]], rows)


def inversion_lines(groups: Sequence[GroupRow], test: str, adjust: str, order: str = "score") -> list[str]:
    """A note per group ranked above groups whose correctness is significantly higher (``inverts``);
    under the score order, the order that has none is suggested."""
    lines = [
        f"inverts: {g.group} ranked above {', '.join(g.inverts)}, whose correctness is significantly higher"
        for g in groups
        if g.inverts
    ]
    if lines:
        test_name = "paired t-test" if test == "t" else "sign-flip test"
        hint = "; --order outcome-first has none" if order == "score" else "; tasks differ from pair to pair"
        lines.append(f"  ({test_name} of per-task correctness on shared tasks, {adjust}-adjusted, 0.05{hint})")
    return lines


def _matrix(groups: Sequence[GroupRow], pairs: Sequence[PairRow], adjust: str) -> str:
    """Row group minus column group: mean per-task difference and adjusted p-value (* below 0.05)."""
    names = [g.group for g in groups if not g.provisional]
    cell = {}
    for p in pairs:
        mark = "*" if p.significant else ""
        p_text = "n/a" if math.isnan(p.p_adjusted) else f"{p.p_adjusted:.3f}"
        cell[(p.a, p.b)] = f"{p.difference:+.2f} ({p_text}){mark}"
        cell[(p.b, p.a)] = f"{-p.difference:+.2f} ({p_text}){mark}"
    rows = [[a, *(cell.get((a, b), "") for b in names)] for a in names]
    note = f"row minus column: mean per-task difference (p, {adjust}-adjusted; * significant at 0.05)"
    return render(["", *names], rows) + "\n" + note


def _submission_board(
    state: State, inputs: InputFiles, store_path: Path | str | None, task_ids: tuple[str, ...], fmt: str, quiet: bool
) -> None:
    """``--by submission``: every submission with its rank in its task and its outlier flags."""
    if len(task_ids) > 1:
        raise click.UsageError("--by submission takes at most one --task")
    task_id = task_ids[0] if task_ids else None
    if store_path is not None:
        evaluations, subs, tasks = stored_arena(state, store_path, task_id)
        state.runs_read, tasks = subs, {task_id: tasks[task_id]} if task_id in tasks else tasks
    else:
        subs, tasks = read_inputs(state, inputs)
        if task_id is not None:
            if task_id not in tasks:
                raise ArenaError(f"--task {task_id!r}: no such task (tasks: {', '.join(sorted(tasks))})")
            subs = [s for s in subs if s.task_id == task_id]
            tasks, state.runs_read = {task_id: tasks[task_id]}, subs
        evaluations = list(score_all(state, subs, tasks, quiet))
    if fmt == "json":
        echo_board(state, tasks, {"rows": [to_dict(e) for e in evaluations]})
        return
    dims = list(dict.fromkeys(d for e in evaluations for d in e.scores))
    flags: dict[str, tuple[str, ...]] = {}
    for tid in {e.task_id for e in evaluations}:
        for outlier in state.arena.detect_outliers([s for s in subs if s.task_id == tid]):
            flags[outlier.submission_id] = outlier.flags
    ordered = sorted(evaluations, key=lambda e: (e.task_id, e.overall_ranking or 0, e.submission_id))
    rows = [
        [
            e.task_id,
            e.overall_ranking,
            e.submission_id,
            e.tool,
            e.overall_score,
            *(e.scores.get(d) for d in dims),
            e.percentile,
            ", ".join([*(["provisional"] if e.provisional else []), *flags.get(e.submission_id, ())]),
        ]
        for e in ordered
    ]
    header = ["Task", "Rank", "Submission", "Tool", "Overall", *(d.capitalize() for d in dims), "Pctl", "Flags"]
    click.echo(render(header, rows))
