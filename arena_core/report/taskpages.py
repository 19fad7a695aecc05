"""The report's page per task: its baseline (for the figures its runs reported), its runs ranked
with each one's verdict, and its criteria's pass rates, read from the runs' evaluations (a card
per run is not needed to show its row)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from arena_core.model.records import Baseline, Submission, Task
from arena_core.report.card import FIGURE_BASELINE, baseline_view
from arena_core.report.html import slug, table

__all__ = ["task_page", "task_rows"]


def task_rows(
    submissions: Sequence[Submission], evaluations: Sequence[Any], baselines: Mapping[str, Baseline]
) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Per task with runs: its baseline (of ``baselines``) as a card shows it, and per run what
    its row on the task page shows (its figures, rank, scores and verdicts), from the evaluations."""
    by_id = {e.submission_id: e for e in evaluations}
    peers: dict[str, list[Submission]] = {}
    for s in submissions:
        peers.setdefault(str(s.task_id), []).append(s)
    found = {}
    for task_id, mine in peers.items():
        rows = [
            {
                "submission_id": s.id,
                "tool": s.tool,
                "model": s.model,
                "rank": by_id[s.id].overall_ranking,
                "overall_score": by_id[s.id].overall_score,
                "coverage": by_id[s.id].coverage,
                "criteria": [{"type": c.type, "status": c.status} for c in by_id[s.id].criteria],
                "figures": {f: getattr(s, f) for f in FIGURE_BASELINE},
            }
            for s in mine
        ]
        found[task_id] = (baseline_view(baselines[task_id]), rows)
    return found


def task_page(task: Task, found: tuple[dict[str, Any], list[dict[str, Any]]], written: set[str]) -> str:
    baseline, cards = found
    defaulted = set(baseline["defaulted"])
    reported = {f for c in cards for f, v in c["figures"].items() if v is not None}
    figures = table(
        ["Figure", "Baseline (min / median / max)"],
        [
            [
                escape(figure) + (" (default)" if figure in defaulted else ""),
                " / ".join(f"{v:g}" for v in values.values()),
            ]
            for figure, values in baseline.items()
            if isinstance(values, dict) and figure in reported  # no baseline for a figure no run has
        ],
    )
    ranked = sorted(cards, key=lambda c: (c["rank"] or 0, c["submission_id"]))
    runs = table(
        ["Rank", "Run", "Tool", "Model", "Verdict", "Overall", "Coverage"],
        [
            [
                c["rank"],
                f'<a href="../cards/{slug(c["submission_id"])}.html">{escape(c["submission_id"])}</a>'
                if c["submission_id"] in written
                else escape(c["submission_id"]),
                escape(str(c["tool"])),
                escape(str(c["model"])),
                _verdict(c["criteria"]),
                c["overall_score"],
                c["coverage"],
            ]
            for c in ranked
        ],
    )
    criteria: dict[str, list[int]] = {}
    for card in cards:
        for c in card["criteria"]:
            tally = criteria.setdefault(c["type"], [0, 0])
            tally[0] += c["status"] == "passed"
            tally[1] += 1
    rates = table(["Criterion", "Passed", "Runs"], [[escape(k), v[0], v[1]] for k, v in criteria.items()])
    return (
        f"<p>Category {escape(str(task.category))}, difficulty {escape(str(task.difficulty))}; baseline of "
        f"{baseline['submission_count']} runs (figures marked default come from the default baseline).</p>"
        + figures
        + "<h2>Runs</h2>"
        + runs
        + (
            ""
            if all(c["submission_id"] in written for c in cards)
            else "<p>Runs without a link: their score cards are not written in a site this large; "
            "<code>arena card ID</code> (with the same input) shows any run's.</p>"
        )
        + "<h2>Criteria</h2>"
        + rates
    )


def _verdict(criteria: Sequence[Mapping[str, Any]]) -> str:
    """A run's verdict in a word: passed, failed with how many criteria it met, or unscored."""
    scored = [c for c in criteria if c["status"] != "unscored"]
    if not criteria:
        return "no criteria"
    if not scored:
        return "unscored"
    met = sum(c["status"] == "passed" for c in scored)
    return "passed" if met == len(scored) else f"failed ({met}/{len(scored)})"
