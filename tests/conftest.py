"""Shared fixtures: every test gets plugins from this checkout only, never from the machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena_core import Arena
from arena_core.registry.manager import DISABLE_AUTOLOAD_ENV, DISABLED_PLUGINS_ENV

REAL_DATA = Path(__file__).parent / "data" / "aider-leaderboards"

BASELINE = {
    "median_tokens": 5000, "min_tokens": 1000, "max_tokens": 10000,
    "median_tool_calls": 10, "min_tool_calls": 2, "max_tool_calls": 30,
    "median_execution_time": 300, "min_execution_time": 60, "max_execution_time": 1800,
    "median_cost": 0.05, "min_cost": 0.01, "max_cost": 0.20,
    "median_iterations": 3,
}


@pytest.fixture(autouse=True)
def _isolated_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Entry-point plugins installed on the machine must not change test results."""
    monkeypatch.setenv(DISABLE_AUTOLOAD_ENV, "1")
    monkeypatch.delenv(DISABLED_PLUGINS_ENV, raising=False)


@pytest.fixture(scope="session")
def arena() -> Arena:
    return Arena(autoload=False)


@pytest.fixture
def baseline() -> dict[str, float]:
    return dict(BASELINE)


@pytest.fixture(scope="session")
def real_submissions() -> list[dict]:
    with (REAL_DATA / "submissions.jsonl").open() as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="session")
def real_tasks() -> dict[str, dict]:
    return {t["id"]: t for t in json.loads((REAL_DATA / "tasks.json").read_text())}
