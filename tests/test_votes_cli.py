"""Votes where runs are read: ``arena votes``, ``--votes`` on the scoring commands, the
``community`` metric and its ``[missing] votes`` rule, and every bad vote named."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena_core.cli import main


def _example_votes(path: Path, count: int = 1500, seed: int = 3) -> list[dict]:
    """Votes on the example's runs: voters prefer the runs that succeeded, and aider's."""
    rng = random.Random(seed)
    runs = [
        json.loads(line)
        for line in (Path(__file__).parents[1] / "arena_core" / "examples" / "submissions.jsonl")
        .read_text()
        .splitlines()
    ]
    by_task: dict[str, list[dict]] = {}
    for run in runs:
        by_task.setdefault(run["task_id"], []).append(run)
    pairs = [pair for group in by_task.values() for pair in itertools.combinations(group, 2)]
    votes = []
    for n in range(count):
        a, b = rng.choice(pairs)
        edge = (a["success"] - b["success"]) + 0.5 * (a["tool"].startswith("aider") - b["tool"].startswith("aider"))
        winner = "a" if rng.random() < 1 / (1 + 2.718 ** (-1.5 * edge)) else "b"
        votes.append({"id": f"v{n}", "task_id": a["task_id"], "a": a["id"], "b": b["id"], "winner": winner,
                      "voter": f"voter-{n % 40}"})  # fmt: skip
    path.write_text("".join(json.dumps(v) + "\n" for v in votes))
    return votes


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_arena_votes_rates_the_groups_the_voters_prefer(tmp_path: Path) -> None:
    _example_votes(tmp_path / "votes.jsonl")
    code, out = _run("votes", "--example", "--votes", str(tmp_path / "votes.jsonl"), "--resamples", "100",
                     "--format", "json")  # fmt: skip
    assert code == 0, out
    board = json.loads(out)
    rows = {r["group"]: r for r in board["rows"]}
    assert board["rows"][0]["group"] == "aider/diff"
    assert all(r["ci_low"] <= r["rating"] <= r["ci_high"] for r in rows.values())
    assert abs(sum(r["rating"] for r in rows.values()) / len(rows) - 1000) < 1e-6
    hygiene = board["hygiene"]
    assert hygiene["repeated"] > 0  # the same voter drew the same pair again: one vote counts
    left_out = hygiene["repeated"] + hygiene["same_group"] + hygiene["near_duplicates"] + hygiene["removed"]
    assert board["used"] + left_out == 1500


def test_arena_votes_with_style_prints_controlled_and_uncontrolled_ratings(tmp_path: Path) -> None:
    _example_votes(tmp_path / "votes.jsonl")
    code, out = _run("votes", "--example", "--votes", str(tmp_path / "votes.jsonl"), "--resamples", "50",
                     "--style", "total_tokens,files_created", "--by", "model")  # fmt: skip
    assert code == 0, out
    assert "Uncontrolled" in out and "Style figure" in out and "files_created" in out
    assert "votes rated" in out


def test_a_vote_on_a_run_not_given_or_of_another_task_is_named(tmp_path: Path) -> None:
    votes = _example_votes(tmp_path / "votes.jsonl", count=20)
    votes[3]["a"] = "no-such-run"
    votes[5]["task_id"] = "backend-001"
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(v) + "\n" for v in votes))
    code, out = _run("votes", "--example", "--votes", str(tmp_path / "bad.jsonl"))
    assert code == 2
    assert "vote 'v3': a: expected a run of task" in out and "'no-such-run', no run" in out
    assert "vote 'v5': a: expected a run of task 'backend-001'" in out
    assert "Traceback" not in out


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ({"winner": "left"}, "winner: expected one of a, b, tie, both_bad, got 'left'"),
        ({"b": "frontend-001/000"}, "b: expected a run other than a"),
        ({"voter": ""}, "voter: expected who voted"),
        ({"at": "yesterday"}, "at: expected an ISO 8601 time"),
    ],
)
def test_a_bad_vote_line_is_named_by_file_line_and_field(tmp_path: Path, line: dict, expected: str) -> None:
    good = {"id": "v1", "task_id": "frontend-001", "a": "frontend-001/000", "b": "frontend-001/001", "winner": "a",
            "voter": "ana"}  # fmt: skip
    (tmp_path / "votes.jsonl").write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "v2", **line}) + "\n")
    code, out = _run("votes", "--example", "--votes", str(tmp_path / "votes.jsonl"))
    assert code == 2 and f"votes.jsonl:2: {expected}" in out, out


def test_a_vote_id_used_twice_is_refused(tmp_path: Path) -> None:
    good = {"id": "v1", "task_id": "frontend-001", "a": "frontend-001/000", "b": "frontend-001/001", "winner": "a",
            "voter": "ana"}  # fmt: skip
    (tmp_path / "votes.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    code, out = _run("votes", "--example", "--votes", str(tmp_path / "votes.jsonl"))
    assert code == 2 and "votes.jsonl:2: id: 'v1' is the id of the vote at line 1 already" in out


def _profile(tmp_path: Path, policy: str | None) -> Path:
    text = "[weights.default]\nefficiency = 0.3\nspeed = 0.2\ncost = 0.2\ncorrectness = 0.2\ncommunity = 0.1\n"
    text += "".join(f"[weights.{c}]\ncorrectness = 0.6\ncommunity = 0.4\n" for c in
                    ("frontend_development", "backend_development", "data_analysis", "debugging", "refactoring"))  # fmt: skip
    if policy:
        text += f'[missing]\nvotes = "{policy}"\n'
    (tmp_path / "community.toml").write_text(text)
    return tmp_path / "community.toml"


def test_the_community_metric_scores_a_runs_share_of_its_votes(tmp_path: Path) -> None:
    votes = _example_votes(tmp_path / "votes.jsonl", count=150, seed=1)
    first = votes[0]  # its voter changes their mind, seeing the runs the other way round
    votes.append({**first, "id": "again", "a": first["b"], "b": first["a"], "winner": "tie"})
    (tmp_path / "votes.jsonl").write_text("".join(json.dumps(v) + "\n" for v in votes))
    profile = _profile(tmp_path, "neutral")
    code, out = _run("-p", str(profile), "score", "--example", "--votes", str(tmp_path / "votes.jsonl"),
                     "--format", "json")  # fmt: skip
    assert code == 0, out
    scored = {e["submission_id"]: e for e in json.loads(out)}
    last = {(v["voter"], frozenset((v["a"], v["b"]))): v for v in votes}  # a voter's last vote on a pair
    assert len(last) < len(votes)
    tally: dict[str, list[float]] = {}
    for v in last.values():
        earned = {"a": 1.0, "b": 0.0, "tie": 0.5}[v["winner"]]
        tally.setdefault(v["a"], []).append(earned)
        tally.setdefault(v["b"], []).append(1 - earned)
    for run_id, evaluation in scored.items():
        if run_id in tally:
            share = 100 * sum(tally[run_id]) / len(tally[run_id])
            assert evaluation["community_score"] == pytest.approx(share, abs=0.005)
        else:  # nobody voted on it: 50 by missing.votes = "neutral", and the evaluation says so
            assert evaluation["community_score"] == 50.0
            assert evaluation["filled"]["community"] == "neutral"
    assert any(run_id not in tally for run_id in scored)


def test_runs_nobody_voted_on_are_refused_by_default_naming_the_setting(tmp_path: Path) -> None:
    _example_votes(tmp_path / "votes.jsonl", count=40)
    code, out = _run(
        "-p", str(_profile(tmp_path, None)), "score", "--example", "--votes", str(tmp_path / "votes.jsonl")
    )
    assert code == 2 and "votes: expected votes" in out and "missing.votes" in out


def test_reweight_leaves_the_community_score_out_of_runs_nobody_voted_on(tmp_path: Path) -> None:
    _example_votes(tmp_path / "votes.jsonl", count=40)
    code, out = _run("-p", str(_profile(tmp_path, "reweight")), "score", "--example", "--votes",
                     str(tmp_path / "votes.jsonl"), "--format", "json")  # fmt: skip
    assert code == 0, out
    unvoted = [e for e in json.loads(out) if "community_score" not in e]
    assert unvoted and all(e["filled"]["community"] == "reweight" for e in unvoted)


def test_votes_ingested_into_a_store_rate_as_the_files_do(tmp_path: Path) -> None:
    votes = _example_votes(tmp_path / "votes.jsonl", count=600)
    db = str(tmp_path / "arena.db")
    code, out = _run("ingest", "--example", "--store", db, "--votes", str(tmp_path / "votes.jsonl"))
    assert code == 0 and "Stored 600 votes" in out, out
    code, out = _run("ingest", "--votes", str(tmp_path / "votes.jsonl"), "--store", db)
    assert code == 0 and "Stored 0 votes (600 stored already, skipped)" in out, out
    changed = [{**votes[0], "winner": "tie" if votes[0]["winner"] != "tie" else "a"},
               {**votes[1], "id": "new-one"}]  # fmt: skip
    (tmp_path / "changed.jsonl").write_text("".join(json.dumps(v) + "\n" for v in reversed(changed)))
    code, out = _run("ingest", "--votes", str(tmp_path / "changed.jsonl"), "--store", db)
    assert code == 2 and "id 'v0' is stored already for another vote; nothing stored" in out, out
    (tmp_path / "stray.jsonl").write_text(json.dumps({**votes[2], "id": "stray", "b": "nowhere"}) + "\n")
    code, out = _run("ingest", "--votes", str(tmp_path / "stray.jsonl"), "--store", db)
    assert code == 2 and "vote 'stray': b: expected a run of task" in out, out
    stored = json.loads(_run("votes", "--store", db, "--resamples", "50", "--format", "json")[1])
    given = json.loads(_run("votes", "--example", "--votes", str(tmp_path / "votes.jsonl"), "--resamples", "50",
                            "--format", "json")[1])  # fmt: skip
    assert stored == given and stored["used"] > 0  # new-one was never stored: all or nothing


def test_the_bundled_votes_are_the_generators_and_their_zealot_is_flagged() -> None:
    from arena_core import examples
    from arena_core.examples.votes import generate_votes

    runs = [json.loads(line) for line in examples.SUBMISSIONS.read_text().splitlines()]
    assert examples.VOTES.read_text() == "".join(json.dumps(v) + "\n" for v in generate_votes(runs))
    code, out = _run("votes", "--example", "--resamples", "50", "--format", "json")
    assert code == 0, out
    flagged = [c for c in json.loads(out)["hygiene"]["voters"] if c["flagged"]]
    assert [(c["voter"], c["rule"]) for c in flagged] == [("v-zealot", "backs swe-agent")]
