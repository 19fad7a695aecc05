"""``arena import``'s writing: runs encoded once and written by blocks, to a file that appears
only when the whole import succeeded, or to standard output."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena_core import Arena
from arena_core.cli import main
from arena_core.importing.collect import ImportSession
from arena_core.model.serde import to_dict

CURRENT = Path(__file__).parent / "data" / "formats" / "mini-swe-agent-current"
NAMES = ("format-error", "responses", "step-limit", "toolcall")


@pytest.fixture
def trajectories(tmp_path: Path) -> Path:
    """The sample trajectories under new names, with text outside ASCII in a model turn."""
    folder = tmp_path / "trajs"
    folder.mkdir()
    for copy in range(3):
        for name in NAMES:
            data = json.loads((CURRENT / f"{name}.traj.json").read_text())
            data["instance_id"] = f"{name}-{copy}"
            turn = next(m for m in data["messages"] if m.get("role") == "assistant" or m.get("object") == "response")
            turn["content"] = f"café → ✓ {copy} 日本語 {turn.get('content') or ''}"
            (folder / f"{name}-{copy}.traj.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return folder


def _lines() -> type:
    """The import command's line writer (the command shadows its module's name in the package)."""
    return sys.modules["arena_core.cli.importing"]._Lines  # type: ignore[no-any-return]


def _import(*args: str) -> tuple[int, bytes, str]:
    done = CliRunner().invoke(main, ["import", "mini-swe-agent", *args], catch_exceptions=False)
    return done.exit_code, done.stdout_bytes, done.stderr


def test_the_runs_are_the_session_s_submissions_whatever_the_blocks(trajectories: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Each line is the run the importer read, structured as a submission with its verdict; the
    file is the same bytes written in one block, a block a run, or to standard output."""
    arena = Arena(autoload=False)
    expected = []
    for run in ImportSession(arena.components.importers["mini-swe-agent"], [trajectories]).runs():
        submission = arena.structure_submission({k: v for k, v in run.submission.items() if v is not None})
        expected.append({**to_dict(submission), "success": submission.success})
    whole = tmp_path / "whole.jsonl"
    code, _, err = _import(str(trajectories), "-o", str(whole))
    assert code == 0, err
    assert f"Imported {len(expected)} mini-swe-agent runs" in err and len(expected) == 12
    lines = whole.read_bytes().splitlines()
    assert [json.loads(line) for line in lines] == expected
    assert sum("café → ✓" in json.loads(line)["meta"]["trajectory"] for line in lines) == 12
    monkeypatch.setattr(_lines(), "BLOCK", 1)  # every run its own block
    apart = tmp_path / "apart.jsonl"
    assert _import(str(trajectories), "-o", str(apart))[0] == 0
    assert apart.read_bytes() == whole.read_bytes()
    code, shown, _ = _import(str(trajectories))
    assert code == 0 and shown == whole.read_bytes()


def test_a_bad_run_leaves_no_file_even_after_blocks_were_written(trajectories: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The last trajectory in name order is broken: the blocks of the runs before it were
    written, yet neither the output nor its temporary file is left, and the error names it."""
    broken = trajectories / "zz-last.traj.json"
    shutil.copy(CURRENT / "toolcall.traj.json", broken)
    data = json.loads(broken.read_text())
    data["instance_id"] = "zz-last"
    data["messages"] = "not a list"
    broken.write_text(json.dumps(data))
    monkeypatch.setattr(_lines(), "BLOCK", 1)
    written = []
    from arena_core.io import writers

    real = writers._write_behind

    def spied(blocks, buffer):  # type: ignore[no-untyped-def]
        def counted():  # type: ignore[no-untyped-def]
            for block in blocks:
                written.append(block)
                yield block

        real(counted(), buffer)

    monkeypatch.setattr(writers, "_write_behind", spied)
    out = tmp_path / "out" / "runs.jsonl"
    out.parent.mkdir()
    code, _, err = _import(str(trajectories), "-o", str(out))
    assert len(written) == 12  # the good runs went out before the bad one was read
    assert code != 0 and "zz-last.traj.json: messages: expected a list" in err
    assert list(out.parent.iterdir()) == []
