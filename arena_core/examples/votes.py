"""Seeded synthetic votes on the synthetic arena's runs, for ``arena votes --example`` and the
community page (docs/community.md).

Forty voters compare two runs of a task from different tools. Each prefers, on the logit, the
run with more of its tests passing (2 per unit of pass rate), the one that succeeded (+1) and,
slightly, the shorter one (0.3 per unit of ``(b - a) / (a + b)`` tokens: a style effect); a tie
one time in ten. Voter ``v-zealot`` always backs ``swe-agent``, the lowest-rated tool: the
hygiene test's to find. The same seed always gives the same votes.
"""

from __future__ import annotations

import math
import random
from typing import Any

__all__ = ["generate_votes"]


def generate_votes(runs: list[dict[str, Any]], *, votes: int = 1200, seed: int = 11) -> list[dict[str, Any]]:
    """``votes`` votes between pairs of ``runs`` (spec-shaped dicts) of the same task."""
    rng = random.Random(seed)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_task.setdefault(run["task_id"], []).append(run)
    tasks = sorted(by_task)
    found = []
    for n in range(votes):
        zealot = n % 60 == 0
        while True:
            a, b = rng.sample(by_task[tasks[rng.randrange(len(tasks))]], 2)
            if a["tool"] != b["tool"] and (not zealot or "swe-agent" in (a["tool"], b["tool"])):
                break
        if zealot:
            winner = "a" if a["tool"] == "swe-agent" else "b"
        else:
            edge = 2 * (_rate(a) - _rate(b)) + (a.get("success", True) - b.get("success", True))
            edge += 0.3 * (b["total_tokens"] - a["total_tokens"]) / (a["total_tokens"] + b["total_tokens"])
            roll = rng.random()
            winner = "tie" if roll < 0.1 else "a" if rng.random() < 1 / (1 + math.exp(-edge)) else "b"
        voter = "v-zealot" if zealot else f"v{rng.randrange(40):02d}"
        at = f"2026-11-{1 + n // 100:02d}T{(n // 4) % 24:02d}:{n % 60:02d}:00Z"
        found.append({"id": f"vote-{n:04d}", "task_id": a["task_id"], "a": a["id"], "b": b["id"], "winner": winner,
                      "voter": voter, "at": at})  # fmt: skip
    return found


def _rate(run: dict[str, Any]) -> float:
    total = run.get("tests_total") or 0
    return (run.get("tests_passed") or 0) / total if total else 0.0
