"""Seeded synthetic arenas: realistic-looking tasks and submissions for examples and benchmarks.

Telemetry is drawn log-normally around a per-task scale (tokens, time and cost spread over an
order of magnitude, as real runs do), tools differ systematically, and a few submissions are
planted outliers (implausibly few tokens, finished in seconds, one tool call). The same seed
always gives the same arena.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

__all__ = ["CATEGORIES", "DIFFICULTIES", "TOOLS", "generate_arena"]

CATEGORIES = ("frontend_development", "backend_development", "data_analysis", "debugging", "refactoring")
DIFFICULTIES = ("beginner", "intermediate", "advanced")
#: tool -> (model, token factor, speed factor, skill): how each tool tends to behave.
TOOLS: dict[str, tuple[str, float, float, float]] = {
    "aider/diff": ("claude-sonnet-4", 0.8, 0.9, 0.85),
    "openhands/codeact": ("gpt-4.1", 1.3, 1.2, 0.8),
    "claude-code": ("claude-opus-4", 1.1, 0.8, 0.9),
    "cursor/agent": ("gpt-4.1-mini", 0.9, 0.7, 0.7),
    "swe-agent": ("deepseek-v3", 1.5, 1.5, 0.65),
}
_TASK_FILES = {
    "frontend_development": ("src/App.tsx", "src/App.test.tsx"),
    "backend_development": ("app/api.py", "tests/test_api.py"),
    "data_analysis": ("analysis.py", "report.md"),
    "debugging": ("src/fix.py", "tests/test_regression.py"),
    "refactoring": ("lib/module.py", "tests/test_module.py"),
}


def _task(rng: random.Random, index: int) -> dict[str, Any]:
    category = CATEGORIES[index % len(CATEGORIES)]
    difficulty = DIFFICULTIES[(index // len(CATEGORIES)) % len(DIFFICULTIES)]
    main_file, test_file = _TASK_FILES[category]
    return {
        "id": f"{category.split('_')[0]}-{index + 1:03d}",
        "category": category,
        "difficulty": difficulty,
        "success_criteria": [
            {"type": "file_exists", "file_path": main_file},
            {"type": "file_exists", "file_path": test_file},
            {"type": "no_errors"},
            {"type": "tests_pass"},
        ],
        "meta": {"scale": round(rng.uniform(0.5, 2.0) * (1 + DIFFICULTIES.index(difficulty)), 3)},
    }


def _submission(rng: random.Random, task: dict[str, Any], number: int, tool: str) -> dict[str, Any]:
    model, token_factor, speed_factor, skill = TOOLS[tool]
    scale = task["meta"]["scale"]
    main_file, test_file = (c["file_path"] for c in task["success_criteria"][:2])
    tokens = int(rng.lognormvariate(0, 0.45) * 20_000 * scale * token_factor)
    tests_total = rng.choice((8, 10, 12, 20))
    passed = min(tests_total, max(0, round(rng.gauss(skill, 0.2) * tests_total)))
    success = rng.random() < 0.4 + skill * 0.6
    files = [main_file] + ([test_file] if rng.random() < skill else [])
    submission: dict[str, Any] = {
        "id": f"{task['id']}/{number:03d}",
        "task_id": task["id"],
        "tool": tool,
        "model": model,
        "total_tokens": tokens,
        "tool_calls": max(1, int(rng.lognormvariate(0, 0.5) * 12 * scale * token_factor)),
        "iterations": max(1, round(rng.lognormvariate(0, 0.5) * 2 * scale / 1.5)),
        "execution_time": round(rng.lognormvariate(0, 0.5) * 240 * scale * speed_factor, 1),
        "estimated_cost": round(tokens * rng.uniform(2.0, 6.0) / 1_000_000, 4),
        "success": success,
        "files_created": files,
        "tests_passed": passed,
        "tests_total": tests_total,
    }
    if rng.random() < 0.06:  # telemetry gaps real runs have: no timing, no cost
        submission.pop(rng.choice(("execution_time", "estimated_cost")))
    return submission


def _plant_outlier(submission: dict[str, Any]) -> None:
    submission.update(total_tokens=max(10, submission["total_tokens"] // 40), execution_time=3.0, tool_calls=1)
    submission["meta"] = {"planted_outlier": True}


def generate_arena(
    *, tasks: int = 12, submissions_per_task: int = 15, outliers: int = 3, seed: int = 7
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(tasks, submissions)`` as spec-shaped dicts; submissions cycle through :data:`TOOLS`."""
    rng = random.Random(seed)
    task_list = [_task(rng, i) for i in range(tasks)]
    tools = list(TOOLS)
    subs = [
        _submission(rng, task, n, tools[(n + t) % len(tools)])
        for t, task in enumerate(task_list)
        for n in range(submissions_per_task)
    ]
    for index in rng.sample(range(len(subs)), k=min(outliers, len(subs))):
        _plant_outlier(subs[index])
    for task in task_list:
        del task["meta"]["scale"]
    return task_list, subs


def generate_columns(
    *, tasks: int = 1000, submissions_per_task: int = 1000, seed: int = 7
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """A large seeded arena as columns (NumPy arrays), for benchmarks: ``(columns, tasks by id)``.

    Same shape as :func:`generate_arena`, drawn with NumPy so a million rows take a second:
    log-normal telemetry around per-task scales, tool effects, rounded values (so scores tie),
    a few percent of runs without time or cost.
    """
    rng = np.random.default_rng(seed)
    task_list = [_task(random.Random(seed + i), i) for i in range(tasks)]
    scale = np.array([t["meta"].pop("scale") for t in task_list])
    n = tasks * submissions_per_task
    task_index = np.repeat(np.arange(tasks), submissions_per_task)
    tool_names = list(TOOLS)
    tool_index = rng.integers(0, len(tool_names), n)
    token_factor = np.array([TOOLS[t][1] for t in tool_names])[tool_index]
    speed_factor = np.array([TOOLS[t][2] for t in tool_names])[tool_index]
    skill = np.array([TOOLS[t][3] for t in tool_names])[tool_index]
    s = scale[task_index]
    tokens = np.round(rng.lognormal(0, 0.45, n) * 20_000 * s * token_factor, -2)
    time = np.round(rng.lognormal(0, 0.5, n) * 240 * s * speed_factor)
    cost = np.round(tokens * rng.uniform(2.0, 6.0, n) / 1_000_000, 3)
    time[rng.random(n) < 0.03] = np.nan
    cost[rng.random(n) < 0.03] = np.nan
    tests_total = rng.choice([8, 10, 12, 20], n).astype(float)
    files = [(f,) for f in ("src/App.tsx", "app/api.py", "analysis.py", "src/fix.py", "lib/module.py")]
    columns: dict[str, Any] = {
        "id": [f"r{i}" for i in range(n)],
        "task_id": [task_list[i]["id"] for i in task_index],
        "tool": [tool_names[i] for i in tool_index],
        "total_tokens": tokens,
        "tool_calls": np.maximum(1, np.round(rng.lognormal(0, 0.5, n) * 12 * s * token_factor)),
        "iterations": np.maximum(1, np.round(rng.lognormal(0, 0.5, n) * 2 * s / 1.5)),
        "execution_time": time,
        "estimated_cost": cost,
        "success": rng.random(n) < 0.4 + skill * 0.6,
        "tests_total": tests_total,
        "tests_passed": np.clip(np.round(rng.normal(skill, 0.2) * tests_total), 0, tests_total),
        "files_created": [files[i % 5] for i in task_index],
    }
    return columns, {t["id"]: t for t in task_list}
