"""A comparison as a researcher reads it: a terminal report and a self-contained HTML page.

The HTML page has no scripts, fonts or links to fetch: two inline SVG charts (each tool's rank
under A and under B, and the distribution of per-submission score differences), the tables
of the terminal report, and the provenance of both scorings. It can be attached to a paper or
a pull request as it is. The charts are drawn directly as SVG: two simple charts do not earn
a plotting library's dependency, and SVG text stays searchable and diffable.
"""

from __future__ import annotations

import math
from html import escape
from statistics import fmean
from typing import Any

import numpy as np

from arena_core.io.table import render
from arena_core.model.provenance import Provenance
from arena_core.stats.comparison import Comparison

__all__ = ["render_text", "render_html"]


def _num(value: float | None, places: int = 3) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{places}f}"


def _signed(value: float) -> str:
    return f"{value:+.2f}"


def _summary(c: Comparison) -> list[str]:
    n, tasks = len(c.submissions), len(c.tasks)
    mean_a = fmean(c.submissions.column("score_a").tolist()) if n else math.nan
    mean_b = fmean(c.submissions.column("score_b").tolist()) if n else math.nan
    low, high = c.delta_interval
    measured = [
        t for t in c.tasks if not math.isnan(t["kendall_tau_b"])
    ]  # NaN: a task whose scores are all tied under A or B
    lines = [
        f"Comparing B = {c.b} with A = {c.a}: {n} submissions on {tasks} tasks",
        f"Mean overall score: A {mean_a:.2f}, B {mean_b:.2f}; mean difference B - A {_signed(c.mean_delta)} "
        f"({c.confidence_level:.0%} CI {_signed(low)} to {_signed(high)}; "
        + (
            f"paired bootstrap, {c.resamples} resamples, seed {c.seed})"
            if c.interval_method == "paired bootstrap"
            else f"{c.interval_method})"
        ),
        f"Rank agreement (all submissions): Kendall tau-b {_num(c.kendall_tau_b)}, Spearman rho {_num(c.spearman_rho)}",
    ]
    if measured:
        lowest = min(measured, key=lambda t: t["kendall_tau_b"])
        median = float(np.median([t["kendall_tau_b"] for t in measured]))
        lines.append(
            f"Within tasks: median tau-b {median:.3f}, lowest {lowest['kendall_tau_b']:.3f} ({lowest['task_id']})"
        )
    lines.append(f"Top-{c.top_k} overlap: {_num(c.top_k_overlap * 100, 0)}%")  # NaN (no submissions) stays n/a
    for name, found in (("A", c.inversions_a), ("B", c.inversions_b)):
        listed = "; ".join(f"{above} above {below}" for above, below in found)
        lines.append(
            f"Inversions under {name}: {len(found)}"
            + (f" ({listed}: ranked above a tool whose correctness is significantly higher)" if found else "")
        )
    return lines


def _changed_metrics(rows: Any) -> list[str]:
    """Metrics whose delta is not zero for some row (unchanged ones would only add columns of zeros)."""
    return list(dict.fromkeys(name for r in rows for name, d in r["metric_deltas"].items() if d))


def _label(by: str, plural: bool = False) -> str:
    """The heading of the groups' column: ``Tool``, ``Model``, ``Tool / Model``, ``Group``."""
    label = "Group" if by.startswith("meta.") else " / ".join(k.capitalize() for k in by.split(","))
    return label + ("s" if plural else "")


def _tool_rows(c: Comparison) -> tuple[list[str], list[list[Any]]]:
    names = _changed_metrics(c.tools)
    headers = [_label(c.by), "N", "Rank A", "Rank B", "Mean A", "Mean B", "Delta", *(f"d {n}" for n in names)]
    rows = [
        [
            (t["tool"] or "(none)") + (" *" if t.get("provisional") else ""),
            t["submissions"],
            "-" if t["rank_a"] is None else t["rank_a"],
            "-" if t["rank_b"] is None else t["rank_b"],
            t["mean_a"],
            t["mean_b"],
            t["mean_delta"],
            *(t["metric_deltas"].get(n) for n in names),
        ]
        for t in sorted(c.tools, key=lambda t: (t["rank_b"] is None, t["rank_b"] or 0, -t["mean_b"], str(t["tool"])))
    ]
    return headers, rows


def _mover_rows(c: Comparison) -> tuple[list[str], list[list[Any]]]:
    headers = ["Submission", "Task", _label(c.by), "Rank A", "Rank B", "Moved", "Score A", "Score B", "Delta"]
    rows = [
        [
            r["submission_id"],
            r["task_id"],
            r["tool"] or "(none)",
            r["rank_a"],
            r["rank_b"],
            f"{r['rank_change']:+d}" if r["rank_change"] else "0",
            r["score_a"],
            r["score_b"],
            r["delta"],
        ]
        for r in c.largest_movers
    ]
    return headers, rows


def _task_rows(c: Comparison) -> tuple[list[str], list[list[Any]]]:
    headers = ["Task", "N", "Kendall tau-b", "Spearman rho", f"Top-{c.top_k} overlap"]
    rows = [
        [t["task_id"], t["submissions"], _num(t["kendall_tau_b"]), _num(t["spearman_rho"]), _num(t["top_k_overlap"], 2)]
        for t in sorted(
            c.tasks,  # tasks whose tau is undefined (every run tied) last
            key=lambda t: (
                math.isnan(t["kendall_tau_b"]),
                0.0 if math.isnan(t["kendall_tau_b"]) else t["kendall_tau_b"],
                t["task_id"],
            ),
        )
    ]
    return headers, rows


def _plugins(p: Provenance) -> str:
    return ", ".join(f"{k} ({v})" for k, v in sorted(p.plugins.items()))


def _provenance_lines(a: Provenance, b: Provenance) -> list[str]:
    lines = []
    for label, p, other in (("A", a, b), ("B", b, a)):
        changed = ", ".join(f"{k} = {v}" for k, v in p.algorithms.items() if other.algorithms.get(k) != v)
        lines.append(f"{label} {p.profile}: configuration {p.config_digest}" + (f"; {changed}" if changed else ""))
        if a.plugins != b.plugins:
            lines.append(f"  plugins: {_plugins(p)}")
    if a.plugins == b.plugins:
        lines.append(f"Plugins (both): {_plugins(a)}")
    lines.append("The full algorithm list of each profile is in the JSON report (--format json).")
    return lines


def render_text(c: Comparison) -> str:
    """The terminal report: summary, tools, largest movers, tasks (least agreement first), provenance."""
    parts = [
        "\n".join(_summary(c)),
        f"{_label(c.by, plural=True)} (ranked by the mean over tasks of their per-task mean overall score under B)\n"
        + render(*_tool_rows(c))
        + (
            "\n* provisional: fewer tasks than min_tasks_per_group, not ranked"
            if any(t.get("provisional") for t in c.tools)
            else ""
        ),
    ]
    headers, rows = _mover_rows(c)
    parts.append(
        "Largest movers (rank within task; positive: moved up under B)\n"
        + (render(headers, rows) if rows else "none: every submission kept its score and rank")
    )
    parts.append("Tasks (least agreement first)\n" + render(*_task_rows(c)))
    parts.append("Provenance\n" + "\n".join(_provenance_lines(c.provenance_a, c.provenance_b)))
    return "\n\n".join(parts) + "\n"


# -- HTML -----------------------------------------------------------------------------------------

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:60rem;color:#222;padding:0 1rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}table{border-collapse:collapse;font-size:.85rem}
td,th{padding:.2rem .6rem;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}
.summary p{margin:.3rem 0}svg{max-width:100%;height:auto}.note{color:#666;font-size:.8rem}
"""


def _table_html(headers: list[str], rows: list[list[Any]]) -> str:
    def cell(value: Any) -> str:
        return escape("-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value))

    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def rank_shift_svg(c: Comparison) -> str:
    """Slope chart: each ranked tool's rank by mean overall score under A (left) and B (right)
    (provisional ones have no rank to draw)."""
    tools = [t for t in c.tools if t["rank_a"] is not None and t["rank_b"] is not None]
    count = max(len(tools), 1)
    row, top, width = 26, 40, 720
    height = top + row * count + 20
    left_x, right_x = 280, 440  # room for "12. a-long-tool-name/variant (100.00)" on either side
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="Rank of each tool under A and under B">',
        f'<text x="{left_x}" y="20" text-anchor="middle" font-weight="bold">A: {escape(c.a)}</text>',
        f'<text x="{right_x}" y="20" text-anchor="middle" font-weight="bold">B: {escape(c.b)}</text>',
    ]
    for t in tools:
        ya, yb = top + (t["rank_a"] - 1) * row, top + (t["rank_b"] - 1) * row
        colour = "#2a7" if t["rank_b"] < t["rank_a"] else "#c33" if t["rank_b"] > t["rank_a"] else "#888"
        name = escape(str(t["tool"] or "(none)"))
        out += [
            f'<line x1="{left_x}" y1="{ya}" x2="{right_x}" y2="{yb}" stroke="{colour}" stroke-width="2"/>',
            f'<circle cx="{left_x}" cy="{ya}" r="4" fill="{colour}"/><circle cx="{right_x}" cy="{yb}" r="4" fill="{colour}"/>',
            f'<text x="{left_x - 10}" y="{ya + 4}" text-anchor="end">{t["rank_a"]}. {name} ({t["mean_a"]:.2f})</text>',
            f'<text x="{right_x + 10}" y="{yb + 4}">{t["rank_b"]}. {name} ({t["mean_b"]:.2f})</text>',
        ]
    out.append("</svg>")
    return "".join(out)


def delta_histogram_svg(c: Comparison, bins: int = 30) -> str:
    """Histogram of per-submission overall differences (B - A), with the mean and its interval."""
    deltas = np.asarray(c.submissions.column("delta"), dtype=float)
    width, height, pad = 720, 260, 40
    if len(deltas) == 0:
        return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}"><text x="20" y="40">no submissions</text></svg>'
    low, high = float(deltas.min()), float(deltas.max())
    ci_low, ci_high = c.delta_interval
    low, high = min(low, ci_low, 0.0), max(high, ci_high, 0.0)
    if high == low:
        low, high = low - 1, high + 1
    counts, edges = np.histogram(deltas, bins=bins, range=(low, high))
    tallest = max(int(counts.max()), 1)

    def x(value: float) -> float:
        return pad + (value - low) / (high - low) * (width - 2 * pad)

    base = height - pad
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="Distribution of per-submission score differences">',
        f'<rect x="{x(ci_low):.1f}" y="{pad / 2}" width="{max(x(ci_high) - x(ci_low), 1):.1f}" '
        f'height="{base - pad / 2:.1f}" fill="#fd8" opacity="0.5"/>',
    ]
    for count, start, stop in zip(counts, edges[:-1], edges[1:], strict=True):
        if count:
            bar = (base - pad / 2) * count / tallest
            out.append(
                f'<rect x="{x(start):.1f}" y="{base - bar:.1f}" width="{max(x(stop) - x(start) - 1, 1):.1f}" '
                f'height="{bar:.1f}" fill="#48c"><title>{count} submission{"s" if count != 1 else ""} '
                f"from {start:.2f} to {stop:.2f}</title></rect>"
            )
    out += [
        f'<line x1="{pad}" y1="{base}" x2="{width - pad}" y2="{base}" stroke="#333"/>',
        f'<line x1="{x(0):.1f}" y1="{pad / 2}" x2="{x(0):.1f}" y2="{base}" stroke="#333" stroke-dasharray="4 3"/>',
        f'<line x1="{x(c.mean_delta):.1f}" y1="{pad / 2}" x2="{x(c.mean_delta):.1f}" y2="{base}" stroke="#c33" stroke-width="2"/>',
        f'<text x="{pad}" y="{pad / 2 - 6}" font-size="11">tallest bar: {tallest} submissions</text>',
        f'<text x="{pad}" y="{base + 16}" font-size="11">{low:.2f}</text>',
        f'<text x="{width - pad}" y="{base + 16}" font-size="11" text-anchor="end">{high:.2f}</text>',
        f'<text x="{width / 2}" y="{height - 6}" font-size="12" text-anchor="middle">overall score B - A per submission '
        f"(red: mean {c.mean_delta:+.2f}; band: {c.confidence_level:.0%} CI)</text>",
        "</svg>",
    ]
    return "".join(out)


def _provenance_html(label: str, p: Provenance) -> str:
    algorithms = ", ".join(f"{escape(k)} = {escape(v)}" for k, v in p.algorithms.items())
    plugins = ", ".join(f"{escape(k)} ({escape(v)})" for k, v in sorted(p.plugins.items()))
    return (
        f"<p><b>{label}: {escape(p.profile)}</b> (configuration {escape(p.config_digest)})<br>"
        f"<span class=note>algorithms: {algorithms}<br>plugins: {plugins}</span></p>"
    )


def render_html(c: Comparison) -> str:
    """A self-contained page: summary, rank-shift plot, score-difference plot, tables, provenance."""
    summary = "".join(f"<p>{escape(line)}</p>" for line in _summary(c))
    movers = _mover_rows(c)
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<title>{escape(c.b)} vs {escape(c.a)}: scoring comparison</title><style>{_STYLE}</style></head><body>"
        f"<h1>Scoring comparison: {escape(c.b)} (B) vs {escape(c.a)} (A)</h1><div class=summary>{summary}</div>"
        f"<h2>Rank shift of {_label(c.by, plural=True).lower()}</h2>{rank_shift_svg(c)}"
        f"<p class=note>Rank by mean overall score; green moved up under B, red down.</p>"
        f"<h2>Score differences</h2>{delta_histogram_svg(c)}"
        f"<h2>{_label(c.by, plural=True)}</h2>{_table_html(*_tool_rows(c))}"
        f"<h2>Largest movers</h2>{_table_html(*movers) if movers[1] else '<p>none</p>'}"
        f"<h2>Tasks</h2>{_table_html(*_task_rows(c))}"
        f"<h2>Provenance</h2>{_provenance_html('A', c.provenance_a)}{_provenance_html('B', c.provenance_b)}"
        "</body></html>\n"
    )
