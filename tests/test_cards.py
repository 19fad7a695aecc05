"""Score cards: their numbers alone recompute every overall score, on the bundled arenas."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena_core import Arena
from arena_core.config.files import load_config
from arena_core.examples import SUBMISSIONS, TASKS
from arena_core.io.readers import read_submissions, read_tasks
from arena_core.model.records import Task
from arena_core.model.serde import structure
from arena_core.report.card import cards_for, recompute

ROOT = Path(__file__).parent.parent
REAL = ROOT / "tests" / "data" / "aider-leaderboards"


def test_every_card_of_the_bundled_arena_recomputes_its_overall_score(arena: Arena) -> None:
    subs, tasks = read_submissions(SUBMISSIONS), read_tasks(TASKS)
    cards = cards_for(arena, subs, tasks, [s.id for s in subs])
    assert len(cards) == 180
    for card in cards:
        assert recompute(card) == card["overall_score"], card["submission_id"]
        assert sum(d["weight"] for d in card["dimensions"]) == pytest.approx(1.0)
        for d in card["dimensions"]:  # a composite's score is the weighted mean of its measured parts
            measured = [p for p in d["parts"] if p["score"] is not None]
            if measured:
                expected = sum(p["score"] * p["weight"] for p in measured) / sum(p["weight"] for p in measured)
                assert d["score"] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("profile", ["default", "robust"])
def test_cards_recompute_on_real_data_with_holes(profile: str) -> None:
    _, config = load_config(ROOT / "arena_core" / "examples" / "aider" / "arena.toml").profile(profile)
    arena = Arena(config, autoload=False)
    subs = [arena.structure_submission(json.loads(line)) for line in (REAL / "submissions.jsonl").read_text().splitlines()]
    tasks = {t["id"]: structure(t, Task) for t in json.loads((REAL / "tasks.json").read_text())}
    cards = cards_for(arena, subs, tasks, [s.id for s in subs])
    assert all(recompute(card) == card["overall_score"] for card in cards)
    left_out = [d for card in cards for d in card["dimensions"] if d["score"] is None]
    assumed = [p for card in cards for d in card["dimensions"] for p in d["parts"] if p["filled"] == "count_as_one"]
    if profile == "robust":  # efficiency is left out (weight 0); nothing is assumed
        assert left_out and not assumed and all(d["weight"] == 0.0 and d["filled"] == "reweight" for d in left_out)
    else:  # the spec's default: the iteration count is assumed, and the card says so
        assert assumed and not left_out


def test_the_card_command(tmp_path: Path) -> None:
    def card(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "arena_core", "card", *args], cwd=tmp_path, capture_output=True,
                              text=True)

    shown = json.loads(card("frontend-001/000", "--example", "--format", "json").stdout)
    assert shown["submission_id"] == "frontend-001/000" and recompute(shown) == shown["overall_score"]
    assert shown["provenance"]["profile"] == "default"
    text = card("frontend-001/000", "--example").stdout
    assert text.startswith("Score card: frontend-001/000 on frontend-001") and "Difficulty" in text
    missing = card("frontend-001/00", "--example")
    assert missing.returncode == 2 and "no submission 'frontend-001/00' in the input; did you mean" in missing.stderr
