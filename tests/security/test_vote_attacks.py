"""Attacks on the votes' input paths: a votes file (names a terminal would obey, lines too long,
bytes that are not text, floods of bad votes, style figures that are not numbers) and the
service's vote endpoints (bodies too big or not JSON, guessed battle tokens)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena_core.cli import main

GOOD = {"id": "v1", "task_id": "frontend-001", "a": "frontend-001/000", "b": "frontend-001/001", "winner": "a",
        "voter": "ana"}  # fmt: skip


def _votes(tmp_path: Path, *lines: bytes) -> Path:
    path = tmp_path / "votes.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _arena_votes(path: Path, *more: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["votes", "--example", "--votes", str(path), "--resamples", "20", *more])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "name", ["\x1b[2Jmallory", "ana\u202egnp.exe", "bo\x00b", "x" * 1001], ids=["esc", "bidi", "nul", "long"]
)
def test_a_voter_name_a_terminal_would_obey_is_refused_by_line_and_never_printed(tmp_path: Path, name: str) -> None:
    path = _votes(tmp_path, json.dumps(GOOD).encode(), json.dumps({**GOOD, "id": "v2", "voter": name}).encode())
    assert (
        name.encode("utf-8", "surrogatepass") in path.read_bytes() or "\\u" in path.read_text()
    )  # the attack is in the file
    code, out = _arena_votes(path)
    assert code == 2 and "votes.jsonl:2: voter: expected a non-empty string of at most 1000 printable characters" in out
    assert "\x1b" not in out and "\u202e" not in out and "\x00" not in out


def test_a_line_too_long_and_bytes_that_are_not_text_are_named_not_read(tmp_path: Path) -> None:
    path = _votes(
        tmp_path, json.dumps(GOOD).encode(), b'{"id": "' + b"x" * 3_000_000 + b'"}', b"\xff\xfe\x00 not utf-8"
    )
    code, out = _arena_votes(path)
    assert code == 2 and "votes.jsonl:2:" in out and "votes.jsonl:3:" in out
    assert len(out) < 5_000  # the line is named, not echoed


def test_a_flood_of_votes_on_runs_that_do_not_exist_is_one_bounded_error(tmp_path: Path) -> None:
    lines = [json.dumps({**GOOD, "id": f"v{n}", "a": f"ghost-{n}"}).encode() for n in range(50_000)]
    code, out = _arena_votes(_votes(tmp_path, *lines))
    assert code == 2 and "vote 'v0': a: expected a run of task 'frontend-001', got 'ghost-0', no run" in out
    assert "... and 49980 more" in out and out.count("\n") < 30


def test_a_style_figure_that_is_not_a_number_names_the_run(tmp_path: Path) -> None:
    runs = [json.loads(line) for line in (Path(__file__).parents[2] / "arena_core" / "examples" /
                                          "submissions.jsonl").read_text().splitlines()]  # fmt: skip
    runs[0]["meta"] = {"length": "very long"}
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    path = _votes(tmp_path, json.dumps(GOOD).encode())
    result = CliRunner().invoke(main, ["votes", str(tmp_path / "runs.jsonl"), "--votes", str(path), "--style",
                                       "meta.length", "--resamples", "20"])  # fmt: skip
    assert result.exit_code == 2 and "submission 'frontend-001/000': meta.length: expected a number" in result.output


def test_the_vote_endpoints_refuse_big_or_broken_bodies_and_throttle_guessed_battles(tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from fastapi.testclient import TestClient

    from arena_core import Arena
    from arena_core.model.errors import ArenaError
    from arena_core.service.app import create_app
    from arena_core.service.tokens import TokenStore
    from arena_core.store import SQLiteStore

    try:
        arena = Arena({"command_runner": "sandbox", "workspace_root": str(tmp_path)}, autoload=False)
    except ArenaError as exc:
        pytest.skip(f"the sandbox cannot run here: {exc}")
    tokens = TokenStore(tmp_path / "a.db")
    client = TestClient(create_app(arena, SQLiteStore(tmp_path / "a.db"), tokens, body_limit=4096, vote_rate=0.01))
    voter = {"Authorization": f"Bearer {tokens.create('voter')[1]}"}
    big = client.post("/votes", content=b'{"battle": "' + b"x" * 10_000 + b'"}', headers=voter)
    assert big.status_code == 413
    assert client.post("/votes", content=b"\xff{not json", headers=voter).status_code in (400, 422)
    guessed = [client.post("/votes", json={"battle": secrets.token_urlsafe(18), "winner": "a"}, headers=voter).status_code
               for _ in range(15)]  # fmt: skip
    assert guessed[:8] == [404] * 8 and 429 in guessed[8:]  # guessing tokens costs the voter's vote rate
