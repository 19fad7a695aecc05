"""The report's charts and its matrix of paired differences, drawn as SVG and HTML by hand.

A scatter of 25 to 500 groups must stay readable: both axes carry ticks and their units, and a
label is drawn only where its box overlaps no other label (the first free place of four around
its point, the front's points placed first); the groups left unlabelled are listed under the
chart. Label boxes are estimated from the text (SVG text of 11 px: at most about 7 px a character),
and a browser test measures the drawn ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from arena_core.stats.leaderboard import GroupRow
from arena_core.stats.pairwise import PairRow
from arena_core.stats.pareto import ParetoPoint

__all__ = ["MATRIX_GROUPS", "p_text", "pairs_matrix", "pareto_svg", "trend_svg", "whisker"]

#: The most groups whose paired differences are drawn as a matrix; above, the significant pairs
#: are listed (a matrix of 500 groups has 250,000 cells).
MATRIX_GROUPS = 60
_CHAR = 7.0  # px a character of 11 px text takes at most, about (digits and most letters take 6-6.5)
_LINE = 12  # px a label's line takes


def p_text(p: float) -> str:
    """A p-value as people read it: ``<0.001`` below 0.001, never ``0.00``."""
    if math.isnan(p):
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def whisker(row: GroupRow) -> str:
    """The score and its interval on a 0-100 axis."""

    def x(v: float) -> float:
        return 5 + 190 * max(0.0, min(100.0, v)) / 100

    return (
        f'<svg width="200" height="14" role="img" aria-label="{row.ci_low:.1f} to {row.ci_high:.1f}">'
        f'<line x1="{x(row.ci_low):.1f}" x2="{x(row.ci_high):.1f}" y1="7" y2="7" stroke="#555"/>'
        f'<circle cx="{x(row.score):.1f}" cy="7" r="3.5" fill="#1f6feb"/></svg>'
    )


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round values from ``low`` to ``high`` (steps of 1, 2 or 5 times a power of 10)."""
    span = (high - low) or 1.0
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    return [round(first + k * step, 10) for k in range(int((high - first) / step + 1e-9) + 1)]


def _overlaps(box: tuple[float, float, float, float], boxes: list[tuple[float, float, float, float]]) -> bool:
    x0, y0, x1, y1 = box
    return any(x0 < b[2] and b[0] < x1 and y0 < b[3] and b[1] < y1 for b in boxes)


def pareto_svg(points: Sequence[ParetoPoint], axis: str, unit: str) -> str:
    """Mean correctness against a mean figure per run (``axis``, in ``unit``), one point per
    placed group, the front joined by a line, labels where they fit and the rest listed."""
    placed = [(p.group, p.x, p.y, p.on_front, p.group) for p in points if p.x is not None]
    if not placed:
        return f"<p>No group measured the {escape(axis)}.</p>"
    top = max(x or 0.0 for _, x, _, _, _ in placed) or 1.0
    ticks = [(t, f"{t:g}") for t in _ticks(0.0, top)]
    return _scatter(placed, (0.0, top), ticks, f"{axis} ({unit})", "correctness (%)", f"correctness against {axis}")


def trend_svg(points: Sequence[tuple[str, float, float, bool]], y_label: str) -> str:
    """Scores against dates: ``(group, years since 1970, score, on the frontier)`` each, the
    frontier joined by a line, the x axis ticked by month or year. Model names are long and
    dates crowd, so each point is labelled with its number in ``points`` (counting from 1),
    which the page's table lists; the full name is the point's tooltip."""
    if not points:
        return "<p>No group has a date.</p>"
    low, high = min(p[1] for p in points), max(p[1] for p in points)
    pad = max((high - low) * 0.05, 0.1)
    low, high = low - pad, high + pad
    ticks = [(t, _month(t)) for t in _ticks(low, high)]
    numbered = [(group, x, y, on, str(k)) for k, (group, x, y, on) in enumerate(points, start=1)]
    return _scatter(numbered, (low, high), ticks, "date", y_label, f"{y_label} against date")


def _month(years: float) -> str:
    """Years since 1970 as ``YYYY-MM``."""
    whole = math.floor(years)
    return f"{1970 + whole}-{min(12, 1 + int((years - whole) * 12)):02d}"


def _scatter(
    placed: Sequence[tuple[str, float, float, bool, str]],
    x_range: tuple[float, float],
    ticks: Sequence[tuple[float, str]],
    x_label: str,
    y_label: str,
    aria: str,
) -> str:
    """One point per group (its name, x, y, whether it is marked, its label), the marked ones
    joined by a line in x order, labels where they fit (the marked ones placed first) and the
    rest listed under the chart."""
    width, height, left, right, top_pad, bottom_pad = 720, 400, 56, 20, 20, 46
    start, stop = x_range
    bottom = max(0.0, math.floor((min(p[2] for p in placed) - 5) / 10) * 10)

    def sx(v: float) -> float:
        return left + (width - left - right) * (v - start) / (stop - start)

    def sy(v: float) -> float:
        return height - bottom_pad - (height - top_pad - bottom_pad) * (v - bottom) / (100 - bottom)

    parts = [
        f'<line x1="{left}" y1="{sy(bottom):.1f}" x2="{width - right}" y2="{sy(bottom):.1f}" stroke="#333"/>',
        f'<line x1="{left}" y1="{sy(100):.1f}" x2="{left}" y2="{sy(bottom):.1f}" stroke="#333"/>',
    ]
    for t, text in ticks:
        parts.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{sy(bottom):.1f}" y2="{sy(bottom) + 4:.1f}" stroke="#333"/>'
                     f'<text class="tick" x="{sx(t):.1f}" y="{sy(bottom) + 15:.1f}" text-anchor="middle">{text}</text>')  # fmt: skip
    for t in _ticks(bottom, 100.0):
        parts.append(f'<line x1="{left - 4}" x2="{left}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" stroke="#333"/>'
                     f'<text class="tick" x="{left - 6}" y="{sy(t) + 4:.1f}" text-anchor="end">{t:g}</text>')  # fmt: skip
    parts.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 8}" text-anchor="middle">'
                 f"{escape(x_label)}</text>")  # fmt: skip
    parts.append(f'<text x="12" y="{(top_pad + height - bottom_pad) / 2:.0f}" text-anchor="middle" '
                 f'transform="rotate(-90 12 {(top_pad + height - bottom_pad) / 2:.0f})">{escape(y_label)}</text>')  # fmt: skip
    front = sorted((p for p in placed if p[3]), key=lambda p: p[1])
    line = " ".join(f"{sx(p[1]):.1f},{sy(p[2]):.1f}" for p in front)
    parts.append(f'<polyline points="{line}" fill="none" stroke="#1f6feb"/>')
    boxes: list[tuple[float, float, float, float]] = []
    unlabelled = []
    ordered = sorted(placed, key=lambda p: (not p[3], -p[2]))  # the front's labels first
    for _, x, y, _, _ in ordered:
        cx, cy = sx(x), sy(y)
        boxes.append((cx - 4, cy - 4, cx + 4, cy + 4))  # no label over a point
    for group, x, y, marked, text in ordered:
        cx, cy = sx(x), sy(y)
        colour = "#1f6feb" if marked else "#999"
        dot = f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="{colour}"><title>{escape(group)}</title></circle>'
        wide = len(text) * _CHAR
        label = ""
        for dx, dy in ((6, -5), (6, 13), (-6 - wide, -5), (-6 - wide, 13)):
            box = (cx + dx, cy + dy - _LINE + 2, cx + dx + wide, cy + dy + 2)
            inside = box[0] >= 0 and box[2] <= width and box[1] >= 0 and box[3] <= height - bottom_pad
            if inside and not _overlaps(box, [b for b in boxes if b != (cx - 4, cy - 4, cx + 4, cy + 4)]):
                boxes.append(box)
                label = f'<text class="label" x="{cx + dx:.1f}" y="{cy + dy:.1f}">{escape(text)}</text>'
                break
        else:
            unlabelled.append(text)
        parts.append(f'<g class="point">{dot}{label}</g>')
    rest = f'<p class="unlabelled">Not labelled (no room): {escape(", ".join(unlabelled))}.</p>' if unlabelled else ""
    return (
        f'<div class="scroll"><svg class="pareto" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(aria)}">{"".join(parts)}</svg></div>{rest}'
    )


def pairs_matrix(order: Sequence[str], pairs: Sequence[PairRow]) -> str:
    """The paired differences: up to :data:`MATRIX_GROUPS` groups, a matrix (row minus column,
    coloured by sign where the adjusted p is below the level, the interval and p on hover);
    above, the significant pairs as a list."""
    found = {(p.a, p.b): p for p in pairs}
    if len(order) > MATRIX_GROUPS:
        significant = [p for p in pairs if p.significant]
        items = "".join(
            f"<li>{escape(p.a)} above {escape(p.b)}: {p.difference:+.2f} on {p.n_tasks} tasks "
            f"(p adjusted {p_text(p.p_adjusted)})</li>"
            for p in sorted(significant, key=lambda p: p.p_adjusted)
        )
        return (
            f"<p>{len(order)} groups: the {len(significant)} pairs whose difference is significant "
            f"(of {len(pairs)}), most significant first.</p><ul>{items}</ul>"
        )
    head = "".join(f'<th class="name" title="{escape(g)}">{k + 1}</th>' for k, g in enumerate(order))
    rows = []
    for k, row in enumerate(order):
        cells = []
        for column in order:
            pair = found.get((row, column)) or found.get((column, row))
            if row == column or pair is None:
                cells.append('<td class="n">·</td>' if row == column else '<td class="n">-</td>')
                continue
            sign = 1.0 if pair.a == row else -1.0
            difference = sign * pair.difference
            shade = ("up" if difference > 0 else "down") if pair.significant else "same"
            hover = (
                f"{row} minus {column}: {difference:+.2f} [{sign * (pair.ci_low if sign > 0 else pair.ci_high):+.2f}, "
                f"{sign * (pair.ci_high if sign > 0 else pair.ci_low):+.2f}] on {pair.n_tasks} tasks, "
                f"p adjusted {p_text(pair.p_adjusted)}"
            )
            cells.append(f'<td class="n {shade}" title="{escape(hover)}">{difference:+.1f}</td>')
        rows.append(f'<tr><th class="name">{k + 1}. {escape(row)}</th>{"".join(cells)}</tr>')
    return (
        '<div class="scroll"><table class="matrix"><thead><tr><th></th>' + head + "</tr></thead><tbody>"
        + "".join(rows) + "</tbody></table></div>"
        + "<p>Each cell: the row's score minus the column's, over the tasks both ran; green where the row is "
        "significantly higher, red where lower (paired test, adjusted), grey where the test cannot tell them "
        "apart. Hover a cell for its interval, task count and adjusted p.</p>"
    )  # fmt: skip
