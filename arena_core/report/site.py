"""A leaderboard as a static site: an index, a page per task, a score card per submission and,
from a store, the arena's history.

Every page is self-contained (inline CSS, SVG and one small inline script that sorts tables;
no font, script or link that fetches anything) and opens from the file system. The charts are
drawn as SVG by hand: a whisker per group and two scatter plots do not earn a plotting
library, and SVG text stays searchable. Everything comes from the Python API:
``Arena.leaderboard``, ``Arena.pairwise``, ``Arena.pareto``, the score cards and
:mod:`arena_core.store.history`.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from arena_core.arena import Arena
from arena_core.model.records import Evaluation, Submission, Task
from arena_core.model.releases import ModelDates
from arena_core.report.card import cards_for, recompute, render_card, task_baselines
from arena_core.report.charts import pairs_matrix, pareto_svg, whisker
from arena_core.report.html import slug, table
from arena_core.report.taskpages import task_page, task_rows
from arena_core.report.timepage import time_page
from arena_core.stats.leaderboard import GroupRow, dimensions_of
from arena_core.stats.pairwise import PairRow
from arena_core.stats.pareto import ParetoPoint
from arena_core.stats.runs import gather_runs
from arena_core.stats.taskhealth import TaskHealth, task_health
from arena_core.stats.tasktable import TaskTable
from arena_core.store import Store
from arena_core.store.history import Standing, baseline_history, group_history

__all__ = ["CARD_PAGES", "write_site"]

#: The most runs a site writes a score card page for each of; above, each group's best run only.
CARD_PAGES = 1_000

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1rem auto;max-width:72rem;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}th,td{padding:.25rem .5rem;border-bottom:1px solid #ddd}
td.n{text-align:right;font-variant-numeric:tabular-nums}tr.provisional{color:#888}
.scroll{overflow-x:auto;max-width:100%}svg text{font-size:11px}pre{background:#f6f6f6;padding:.5rem;overflow-x:auto}
td,th{white-space:nowrap}h1{overflow-wrap:anywhere}td.up{background:#d4f4dd}td.down{background:#f8d7da}td.same{color:#888}
table.matrix td{padding:.15rem .35rem}svg.pareto{max-width:none}
th{cursor:pointer;user-select:none}th[data-order=asc]::after{content:" \\25B2"}th[data-order=desc]::after{content:" \\25BC"}
"""
#: Sorts a table by the column whose header is clicked (numbers as numbers, "-" last); a page
#: opened as ``index.html#sort=-6`` starts with its first table sorted by column 6, descending.
_SCRIPT = """
function sortTable(table, column, descending) {
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  function key(row) {
    var text = row.cells[column] ? row.cells[column].textContent.trim() : "";
    var number = parseFloat(text);
    return isNaN(number) ? [text === "-" ? 2 : 1, text] : [0, number];
  }
  rows.sort(function (a, b) {
    var x = key(a), y = key(b);
    if (x[0] !== y[0]) return x[0] - y[0];
    var order = x[0] === 0 ? x[1] - y[1] : String(x[1]).localeCompare(String(y[1]));
    return descending ? -order : order;
  });
  rows.forEach(function (row) { body.appendChild(row); });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    if (i === column) th.setAttribute("data-order", descending ? "desc" : "asc"); else th.removeAttribute("data-order");
  });
}
Array.prototype.forEach.call(document.querySelectorAll("table"), function (table) {
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
    th.addEventListener("click", function () { sortTable(table, column, th.getAttribute("data-order") === "asc"); });
  });
});
var wanted = /^#sort=(-?)(\\d+)$/.exec(location.hash);
if (wanted && document.querySelector("table")) sortTable(document.querySelector("table"), +wanted[2], wanted[1] === "-");
"""


def write_site(
    arena: Arena,
    submissions: Sequence[Submission],
    tasks: Mapping[str, Task],
    folder: Path,
    *,
    by: str = "tool",
    store: Store | None = None,
    method: str | None = None,
    cluster: str | None = None,
    pass_k: Sequence[int] = (),
    models: Mapping[str, ModelDates] | None = None,
    scored: tuple[Sequence[Submission], Sequence[Evaluation]] | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write the site into ``folder`` (created); the paths of the pages written.

    :param store: the store the submissions come from: adds a history page (the leaderboard
        after each stored batch, and every baseline version).
    :param method: the leaderboard's aggregator, ``cluster`` the ``meta.KEY`` naming each task's
        family (intervals and rank ranges resample families), ``pass_k`` the k of the pass@k
        columns over repeated attempts: as ``arena leaderboard`` takes them.
    :param models: models' dates: a board by model adds a time page (scores against release
        dates and the frontier; the contamination gaps where tasks have ``created_at``).
    :param scored: the runs of the submissions' tasks and their evaluations, scored already (a
        store's board: every stored run against its task's current baseline), of which the
        site shows ``submissions``; by default the submissions are scored here, on their own.
    :param provenance: what the site was computed from (a board's provenance, as ``arena report``
        records it): written as ``provenance.json`` and summed up at the foot of every page.
    """
    if scored is None:
        evaluations: Sequence[Evaluation] = arena.evaluate_many(list(submissions), tasks)
        peers, peer_evaluations = submissions, evaluations
    else:
        peers, peer_evaluations = scored
        shown = {s.id for s in submissions}
        evaluations = [e for e in peer_evaluations if e.submission_id in shown]
    meta = {s.id: s.meta for s in submissions}  # a run whose model is unknown is named by its harness run
    families: dict[str, Any] = (
        {"cluster": cluster, "task_meta": {t.id: t.meta for t in tasks.values()}} if cluster else {}
    )
    board = arena.leaderboard(evaluations, by=by, meta=meta, method=method, **families)
    repeats = arena.repeats(evaluations, list(pass_k), by=by, meta=meta) if pass_k else {}
    extra = (
        [f"pass@{k}" for k in pass_k],
        {
            g: [e.value * 100 if (e := r.pass_at_k.get(k)) is not None else None for k in pass_k]
            for g, r in repeats.items()
        },
    )
    pairs = arena.pairwise(evaluations, by=by, meta=meta)
    charts = {
        x: arena.pareto(evaluations, submissions, by=by, x=x, y="correctness", meta=meta) for x in ("cost", "time")
    }
    runs = gather_runs(arena.scorer, evaluations, by, meta=meta)
    labels = dict(zip(runs.ids, runs.groups, strict=True))  # each run's group as the board names it
    best: dict[str, str] = {}
    each = list(evaluations)  # the batch's records made once, for the loops below (not once per loop)
    for evaluation in sorted(each, key=lambda found: -found.overall_score):
        if evaluation.submission_id in labels:
            best.setdefault(labels[evaluation.submission_id], evaluation.submission_id)
    # A card page per run while that stays small; above CARD_PAGES runs, the board's (each group's
    # best run): 12,500 cards took 99 MB, and `arena card ID` shows any run's. Task pages read
    # the runs' evaluations, not their cards.
    every = [s.id for s in submissions]
    written = every if len(every) <= CARD_PAGES else list(dict.fromkeys(best.values()))
    baselines = task_baselines(arena, peers, tasks, peer_evaluations)  # once: the cards' and the task pages'
    cards = {c["submission_id"]: c for c in cards_for(arena, submissions, tasks, written, each, baselines)}
    by_task = task_rows(submissions, each, baselines)
    shown_tasks = {t: task for t, task in tasks.items() if t in by_task}
    index = _index(board, pairs, charts, best, shown_tasks, by, store is not None, extra)
    timed = time_page(TaskTable.of(runs), tasks, models) if by == "model" and models else None
    if timed is not None:
        index += '<p><a href="time.html">Time: scores against release dates, and before and after each cutoff</a></p>'
    pages = [(Path("index.html"), "Leaderboard", index)]
    if timed is not None:
        pages.append((Path("time.html"), "Time", timed))
    difficulty_labels = {t.id: t.difficulty for t in tasks.values()}
    health = task_health(runs, meta, labels=difficulty_labels)
    pages.append((Path("task-health.html"), "Task health", _health_page(health, tasks)))
    if store is not None:
        body = _history_page(group_history(arena, store, by=by), baseline_history(store))
        pages.append((Path("history.html"), "History", body))
    linked = set(written)
    for task in tasks.values():
        if task.id in by_task:  # a page per task with runs: a selection of 231 of 500 tasks writes 231
            page = task_page(task, by_task[task.id], linked)
            pages.append((Path("tasks", f"{slug(task.id)}.html"), f"Task {task.id}", page))
    for ident in written:
        pages.append((Path("cards", f"{slug(ident)}.html"), f"Score card {ident}", _card_page(cards[ident])))
    return _publish(folder, pages, provenance)


def _publish(folder: Path, pages: Sequence[tuple[Path, str, str]], provenance: Mapping[str, Any] | None) -> list[Path]:
    """Write every page into a fresh sibling of ``folder``, then put it in ``folder``'s place:
    a failure part-way (a full disk) leaves the previous site, or none, never half of one."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        (staging / "tasks").mkdir()
        (staging / "cards").mkdir()
        foot = ""
        if provenance is not None:
            (staging / "provenance.json").write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
            foot = _foot(provenance)
        for relative, title, body in pages:
            _write(staging / relative, title, body, foot)
        if folder.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old.", dir=folder.parent))
            folder.rename(retired / folder.name)
            staging.rename(folder)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            staging.rename(folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [folder / relative for relative, _, _ in pages]


def _foot(provenance: Mapping[str, Any]) -> str:
    """A page's foot: what the site was computed from, short (``provenance.json`` has it whole)."""
    window = ", ".join(f"{k} {v}" for k, v in provenance["window"].items())
    return (
        f"<footer><p>Computed by arena-core {escape(provenance['arena_core'])} from {provenance['n_runs']:,} runs "
        f"(SHA-256 {provenance['runs'][:16]}) of {provenance['n_tasks']:,} tasks (SHA-256 {provenance['tasks'][:16]}), "
        f"configuration {escape(provenance['config_digest'])} (profile {escape(provenance['profile'])})"
        f"{'; window: ' + escape(window) if window else ''}: "
        f'<a href="{{depth}}provenance.json">provenance</a>.</p></footer>'
    )


def _write(path: Path, title: str, body: str, foot: str = "") -> Path:
    depth = "../" if path.parent.name in ("tasks", "cards") else ""
    page = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{escape(title)}</title>'
        f'<style>{_STYLE}</style></head><body><p><a href="{depth}index.html">Leaderboard</a></p>'
        f"<h1>{escape(title)}</h1>{body}{foot.replace('{depth}', depth)}<script>{_SCRIPT}</script></body></html>\n"
    )
    path.write_text(page, encoding="utf-8")
    return path


def _index(
    board: Sequence[GroupRow],
    pairs: Sequence[PairRow],
    charts: Mapping[str, Sequence[ParetoPoint]],
    best: Mapping[str, str],
    tasks: Mapping[str, Task],
    by: str,
    history: bool,
    extra: tuple[list[str], Mapping[str, list[Any]]] = ([], {}),
) -> str:
    dims = dimensions_of(board)
    headers, cells = extra
    rows = [
        [
            g.rank,
            g.tier,
            f'<a href="cards/{slug(best[g.group])}.html">{escape(g.group)}</a>'
            + (" *" if g.provisional else " \u2020" if g.apart else ""),
            g.n_runs,
            g.n_tasks,
            g.score,
            whisker(g),
            "-" if g.rank_low is None else f"{g.rank_low}-{g.rank_high}",
            g.coverage,
            *(g.means.get(d) for d in dims),
            *cells.get(g.group, [None] * len(headers)),
        ]
        for g in board
    ]
    classes = ["provisional" if g.provisional or g.apart else "" for g in board]
    header = ["Rank", "Tier", escape(by), "Runs", "Tasks", "Score", "95% CI", "Ranks", "Coverage", *dims, *headers]
    matrix = pairs_matrix([g.group for g in board], pairs)
    task_links = "".join(f'<li><a href="tasks/{slug(t)}.html">{escape(t)}</a></li>' for t in tasks)
    inverted = "".join(
        f"<li>{escape(g.group)} ranked above {escape(', '.join(g.inverts))}</li>" for g in board if g.inverts
    )
    return (
        table(header, rows, classes)
        + "<p>Each group's name links to the score card of its best run; * marks provisional groups, "
        "\u2020 groups that share no task with the ranked ones (not ranked against them).</p>"
        + (
            "<h2>Inversions</h2><p class=inversions>This score ranks these groups above groups whose correctness "
            f"is significantly higher on the tasks both ran (paired t-test, Holm-adjusted):</p><ul>{inverted}</ul>"
            if inverted
            else ""
        )
        + "<p>Click a column's header to sort by it.</p>"
        + "<h2>Correctness against cost</h2>"
        + pareto_svg(charts["cost"], "mean cost per run", "$")
        + "<h2>Correctness against time</h2>"
        + pareto_svg(charts["time"], "mean time per run", "s")
        + "<h2>Paired differences</h2>"
        + matrix
        + ('<p><a href="history.html">History: the leaderboard after each stored batch</a></p>' if history else "")
        + f"<h2>Tasks</h2><ul>{task_links}</ul>"
        + '<p><a href="task-health.html">Task health: which tasks are unsolved, saturated, flaky or undiscriminating</a></p>'
    )


def _health_page(rows: Sequence[TaskHealth], tasks: Mapping[str, Task]) -> str:
    """``arena tasks`` as a page: one row per task, linked to its page (see docs/leaderboards.md)."""
    cells = [
        [
            f'<a href="tasks/{slug(r.task)}.html">{escape(r.task)}</a>' if r.task in tasks else escape(r.task),
            r.runs,
            r.groups,
            r.solve_rate * 100,
            r.mean_score,
            r.discrimination,
            r.difficulty,
            escape(", ".join(r.flags)),
        ]
        for r in rows
    ]
    return (
        table(["Task", "Runs", "Groups", "Solved %", "Mean", "Discrimination", "Difficulty", "Flags"], cells)
        + "<p>A run solves a task when its correctness is 100. Discrimination: the point-biserial correlation "
        "of a run's verdict with its group's solve rate over all tasks. Difficulty: fitted to the runs' "
        "correctness by a Rasch model, in logits. Flags: unsolved, saturated, flaky (a group's attempts "
        "disagree), undiscriminating, harness_errors, step_limit, label_disagrees.</p>"
    )


def _history_page(standings: Sequence[Standing], baselines: Mapping[str, Sequence[Any]]) -> str:
    groups = list(dict.fromkeys(g.group for s in standings for g in s.groups))
    rows = []
    for s in standings:
        cells = {g.group: f"{g.score:.2f} " + ("*" if g.rank is None else f"#{g.rank}") for g in s.groups}
        rows.append(
            [s.batch, escape(s.evaluated_at[:19].replace("T", " ")), s.runs, *(cells.get(g, "-") for g in groups)]
        )
    versions = [
        [
            escape(key.replace("\x1f", " / ")),
            b.version,
            escape((b.last_updated or "")[:19].replace("T", " ")),
            b.submission_count,
            b.median_tokens,
            b.median_execution_time,
            b.median_cost,
            escape(", ".join(b.defaulted)),
        ]
        for key, kept in baselines.items()
        for b in kept
    ]
    return (
        "<p>The leaderboard over the evaluations stored up to each batch (#rank; * provisional). Each stored "
        "evaluation names the baseline version it was scored against.</p>"
        + table(["Batch", "Scored at", "Runs", *(escape(g) for g in groups)], rows)
        + "<h2>Baselines by version</h2>"
        + table(
            ["Task", "Version", "Stored at", "Runs", "Median tokens", "Median time", "Median cost", "Defaulted"],
            versions,
        )
    )


def _card_page(card: Mapping[str, Any]) -> str:
    return (
        f'<p class="overall">Overall score <strong>{card["overall_score"]:.2f}</strong> '
        f"(recomputed from the numbers below: {recompute(card):.2f}); "
        f'<a href="../tasks/{slug(card["task_id"])}.html">task {escape(card["task_id"])}</a></p>'
        f"<pre>{escape(render_card(card))}</pre>"
        "<h2>Provenance</h2><p>The profile, algorithms and plugin versions that made the score.</p>"
        f"<pre>{escape(json.dumps(card['provenance'], indent=2), quote=False)}</pre>"
    )
