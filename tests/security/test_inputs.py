"""Hostile input files and what the outputs make of hostile values: each attack is shown to be
what it claims (deep, compressed, aliased, a FIFO, a link) before the test asserts that the
command ends with one clear line, in bounded memory, or writes something harmless."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.report.html import slug
from arena_core.workspace.quota import quotas_enforced

RUN = {"task_id": "t", "total_tokens": 10, "tool_calls": 1}
TASKS = [{"id": "t"}]


def _arena(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})


def _peak_kib(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run ``arena ARGS`` in a child and measure its peak resident memory (KiB)."""
    script = textwrap.dedent(f"""
        import resource, subprocess, sys
        done = subprocess.run([sys.executable, "-m", "arena_core", *{list(args)!r}], capture_output=True, text=True)
        sys.stdout.write(done.stdout); sys.stderr.write(done.stderr)
        print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
        sys.exit(done.returncode)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})
    *lines, peak = done.stderr.splitlines()
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, "\n".join(lines) + "\n"), int(peak)


def _tasks(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS))


def _one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("command", ["score", "leaderboard"])
def test_a_line_nested_50000_deep_exits_with_one_line(tmp_path: Path, command: str) -> None:
    _tasks(tmp_path)
    deep = '{"id": "deep", "task_id": "t", "total_tokens": 1, "tool_calls": 1, "meta": ' + "[" * 50_000 + "]" * 50_000 + "}"
    (tmp_path / "runs.jsonl").write_text(json.dumps({"id": "ok", **RUN}) + "\n" + deep + "\n")
    assert deep.count("[") == 50_000
    line = _one_line_error(_arena(tmp_path, command, "runs.jsonl", "--tasks", "tasks.json"))
    assert "runs.jsonl:2" in line and "nested" in line


def test_an_eval_archive_that_expands_past_the_bound_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "bomb.eval", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "eval": {"task": "t"}, "status": "success"}))
        with archive.open("samples/1_epoch_1.json", "w") as member:  # 300 MiB of zeros: about 300 KB stored
            for _ in range(300):
                member.write(b"0" * (1 << 20))
    assert (tmp_path / "bomb.eval").stat().st_size < 2_000_000
    done, peak = _peak_kib(tmp_path, "import", "inspect", "bomb.eval", "-o", "runs.jsonl")
    assert "expands past 268,435,456 bytes" in _one_line_error(done)
    assert peak < 1536 * 1024 and not (tmp_path / "runs.jsonl").exists()


def _zstd_archive(path: Path, members: dict[str, tuple[bytes, int]]) -> None:
    """A zip whose members are Zstandard frames (method 93, as Inspect writes them), each with
    the uncompressed size its header declares (true or not). Python's zipfile cannot write the
    method: each member is stored, then its headers are patched."""
    import struct

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, (frame, _) in members.items():
            archive.writestr(name, frame)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    central = data.rfind(b"PK\x05\x06")
    start = struct.unpack_from("<I", data, central + 16)[0]
    for info in infos:
        declared = members[info.filename][1]
        struct.pack_into("<H", data, info.header_offset + 8, 93)
        struct.pack_into("<I", data, info.header_offset + 22, declared)
        entry = data.find(b"PK\x01\x02" , start)
        while struct.unpack_from("<I", data, entry + 42)[0] != info.header_offset:
            entry = data.find(b"PK\x01\x02", entry + 4)
        struct.pack_into("<H", data, entry + 10, 93)
        struct.pack_into("<I", data, entry + 24, declared)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("declared", ["honest", "lying"])
def test_an_eval_archive_of_many_members_each_under_the_bound_is_refused_as_a_whole(tmp_path: Path,
                                                                                   declared: str) -> None:
    """Thirty zstd members of 255 MiB each (about 250 KB stored): each under the member bound,
    7.5 GB in all. Their headers declare their size, or 1 KB (lying)."""
    zstandard = pytest.importorskip("zstandard")
    size = 255 << 20
    frame = zstandard.ZstdCompressor(level=3).compress(b" " * size)  # JSON white space: expands, parses to nothing
    header = zstandard.ZstdCompressor().compress(json.dumps({"version": 2, "eval": {"task": "t", "eval_id": "e"},
                                                             "status": "success"}).encode())
    members = {"header.json": (header, 100)}
    members |= {f"samples/{i}_epoch_1.json": (frame, size if declared == "honest" else 1000) for i in range(30)}
    _zstd_archive(tmp_path / "bomb.eval", members)
    assert (tmp_path / "bomb.eval").stat().st_size < 1_000_000
    with zipfile.ZipFile(tmp_path / "bomb.eval") as archive:  # the archive is what it claims, member by member
        assert {i.compress_type for i in archive.infolist()} == {93} and len(archive.infolist()) == 31
    assert len(zstandard.ZstdDecompressor().decompress(frame, max_output_size=size)) == size
    done, peak = _peak_kib(tmp_path, "import", "inspect", "bomb.eval", "-o", "runs.jsonl")
    error = done.stderr
    assert done.returncode == 2 and "bomb.eval: expands past 268,435,456 bytes" in error, error[-2000:]
    assert peak < 1536 * 1024 and not (tmp_path / "runs.jsonl").exists()


def test_a_parquet_column_that_decompresses_to_gigabytes_is_refused(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    tools = pa.array(["x" * 1_000_000] * 300, type=pa.large_string())  # 300 MB of one repeated string
    table = pa.table({"id": [f"r{i}" for i in range(300)], "task_id": ["t"] * 300, "total_tokens": [1] * 300,
                      "tool_calls": [1] * 300, "tool": tools})
    pq.write_table(table, tmp_path / "bomb.parquet", compression="zstd", use_dictionary=False)
    del table, tools
    assert (tmp_path / "bomb.parquet").stat().st_size < 5_000_000
    _tasks(tmp_path)
    done, peak = _peak_kib(tmp_path, "score", "bomb.parquet", "--tasks", "tasks.json")
    assert "decompression bomb" in _one_line_error(done)
    assert peak < 1536 * 1024


def test_a_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 9):
        previous, name = chr(96 + i), chr(97 + i)
        levels.append(f"{name}: &{name} [{', '.join('*' + previous for _ in range(9))}]")
    (tmp_path / "polyglot_leaderboard.yml").write_text(
        "- dirname: x\n  pass_rate_1: 1\n  bomb:\n" + textwrap.indent("\n".join(levels), "    ") + "\n")
    done, peak = _peak_kib(tmp_path, "import", "aider", "polyglot_leaderboard.yml", "-o", "runs.jsonl")
    assert "aliases" in _one_line_error(done) and peak < 1536 * 1024


def test_a_fifo_named_like_a_results_file_does_not_stall_detection(tmp_path: Path) -> None:
    run = tmp_path / "job" / "trial"
    run.mkdir(parents=True)
    os.mkfifo(run / "result.json")
    os.mkfifo(tmp_path / "job" / "results.json")
    done = _arena(tmp_path, "leaderboard", "job", timeout=60)  # a blocked open would hang here
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_a_link_leaving_the_run_folder_is_not_imported(tmp_path: Path) -> None:
    formats = Path(__file__).parent.parent / "data" / "formats" / "harbor-terminal-bench"
    run = tmp_path / "run"
    (run / "fix-git.1-of-1").mkdir(parents=True)
    secret = tmp_path / "secret" / "results.json"
    secret.parent.mkdir()
    secret.write_text((formats / "tb.trial.droid-gpt-5.fix-git.results.json").read_text().replace("fix-git", "SECRET-TASK"))
    secret.chmod(0o600)
    (run / "fix-git.1-of-1" / "results.json").symlink_to(secret)
    (run / "hello-world.1-of-1").mkdir()
    (run / "hello-world.1-of-1" / "results.json").write_text(
        (formats / "tb.trial.droid-gpt-5.hello-world.results.json").read_text())
    assert json.loads((run / "fix-git.1-of-1" / "results.json").read_text())  # the link resolves: it would be read
    done = _arena(tmp_path, "import", "terminal-bench", "run", "-o", "runs.jsonl")
    assert done.returncode == 0, done.stderr
    imported = (tmp_path / "runs.jsonl").read_text()
    assert "hello-world" in imported and "SECRET-TASK" not in imported


def test_a_multi_step_trial_reads_only_its_own_step_folders(tmp_path: Path) -> None:
    """A step name that climbs out of the trial, or a step folder linked to another trial's
    agent, would count another run's tool calls as this trial's."""
    from arena_core import Arena
    from arena_core.importing.collect import ImportSession

    harbor = Path(__file__).parent.parent / "data" / "formats" / "harbor-current"
    job = tmp_path / "job"
    shutil.copytree(harbor / "multi-step__a1", job / "multi-step__a1")
    shutil.copytree(harbor / "continued__e1", job / "other")
    trial = job / "multi-step__a1"
    importer = Arena(autoload=False).components.importers["harbor"]

    def runs() -> dict[str, dict]:
        return {r.submission["id"]: r.submission for r in ImportSession(importer, [job]).runs()}

    assert runs()["multi-step__a1"]["tool_calls"] == 3
    shutil.rmtree(trial / "steps" / "fix" / "agent")
    (trial / "steps" / "fix" / "agent").symlink_to(job / "other" / "agent")  # the other trial's 5 tool calls
    assert (trial / "steps" / "fix" / "agent" / "trajectory.json").is_file()  # the link resolves: it would be read
    linked = runs()["multi-step__a1"]
    assert linked["tool_calls"] == 1 and linked["iterations"] == 2  # the setup step's own trajectory only
    result = json.loads((trial / "result.json").read_text())
    result["step_results"][1]["step_name"] = "../../other"
    (trial / "result.json").write_text(json.dumps(result))
    assert (trial / "steps" / result["step_results"][1]["step_name"] / "agent" / "trajectory.json").is_file()
    session = ImportSession(importer, [job], skip_bad=True)
    found = {r.submission["id"] for r in session.runs()}
    assert "multi-step__a1" not in found and "continued__e1" in found  # refused alone: the rest of the job is read
    assert "step_results.step_name: expected a step's folder name, got '../../other'" in " ".join(session.skipped)



def test_a_nul_byte_in_a_name_a_trial_gives_is_refused_alone(tmp_path: Path) -> None:
    """A step name or a trajectory's continuation holding a NUL byte names no file: the trial
    is refused, naming the field, and the rest of the job is read (the step's name once reached
    the file system and raised out of the import)."""
    from arena_core import Arena
    from arena_core.importing.collect import ImportSession

    harbor = Path(__file__).parent.parent / "data" / "formats" / "harbor-current"
    job = tmp_path / "job"
    shutil.copytree(harbor / "multi-step__a1", job / "multi-step__a1")
    for name in ("continued__e1", "continued__e2"):
        shutil.copytree(harbor / "continued__e1", job / name)
    result = json.loads((job / "continued__e2" / "result.json").read_text())
    (job / "continued__e2" / "result.json").write_text(json.dumps({**result, "trial_name": "continued__e2"}))
    importer = Arena(autoload=False).components.importers["harbor"]

    def read() -> tuple[set[str], str]:
        session = ImportSession(importer, [job], skip_bad=True)
        return {str(r.submission["id"]) for r in session.runs()}, " ".join(session.skipped)

    found, skipped = read()
    assert found == {"multi-step__a1", "continued__e1", "continued__e2"} and not skipped
    result = json.loads((job / "multi-step__a1" / "result.json").read_text())
    result["step_results"][1]["step_name"] = "fi\x00x"
    (job / "multi-step__a1" / "result.json").write_text(json.dumps(result))
    trajectory = job / "continued__e2" / "agent" / "trajectory.json"
    data = json.loads(trajectory.read_text())
    assert data["continued_trajectory_ref"] == "trajectory.cont-1.json"  # the attack reaches the link check
    trajectory.write_text(json.dumps({**data, "continued_trajectory_ref": "trajectory\x00.json"}))
    found, skipped = read()
    assert found == {"continued__e1"}
    assert "step_results.step_name: expected a step's folder name, got 'fi\\x00x'" in skipped
    assert "continued_trajectory_ref: 'trajectory\\x00.json' is not a file beside it" in skipped

def test_deep_meta_is_one_line_in_ingest(tmp_path: Path) -> None:
    _tasks(tmp_path)
    meta: dict = {}
    for _ in range(600):
        meta = {"k": meta}
    (tmp_path / "runs.jsonl").write_text(json.dumps({"id": "deep", **RUN, "meta": meta}) + "\n")
    line = _one_line_error(_arena(tmp_path, "ingest", "runs.jsonl", "--tasks", "tasks.json", "--store", "a.db"))
    assert "runs.jsonl:1" in line and "meta" in line


def test_a_bad_record_in_a_one_line_json_array_is_named_by_position_and_id(tmp_path: Path) -> None:
    _tasks(tmp_path)
    records = [{"id": "fine", **RUN}, {"id": "huge", **RUN, "iterations": 0}]
    text = json.dumps(records, separators=(",", ":")).replace('"iterations":0', '"iterations":' + "9" * 5000)
    (tmp_path / "runs.json").write_text(text)
    assert text.count("\n") == 0
    line = _one_line_error(_arena(tmp_path, "score", "runs.json", "--tasks", "tasks.json"))
    assert "runs.json: record 2 (id 'huge'): iterations: expected a number of at most 4,300 digits" in line


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80))
def test_card_file_names_are_injective_and_short(a: str, b: str) -> None:
    assert (slug(a) == slug(b)) == (a == b)
    assert len(slug(a * 50).encode()) <= 200 and "/" not in slug(a) and not slug(a).startswith(".")


def test_reports_keep_colliding_and_long_ids_apart(tmp_path: Path) -> None:
    _tasks(tmp_path)
    ids = ["a/b", "a_2Fb", "x" * 500]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps({"id": i, **RUN}) + "\n" for i in ids))
    done = _arena(tmp_path, "report", "runs.jsonl", "--tasks", "tasks.json", "-o", "site")
    assert done.returncode == 0, done.stderr
    cards = sorted((tmp_path / "site" / "cards").iterdir())
    assert len(cards) == 3
    titles = {c.read_text().split("<title>")[1].split("</title>")[0] for c in cards}
    assert titles == {f"Score card {i}" for i in ids}


def test_csv_cells_cannot_carry_formulas(tmp_path: Path) -> None:
    _tasks(tmp_path)
    hostile = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)"]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps({"id": i, **RUN, "tool": i}) + "\n" for i in hostile))
    done = _arena(tmp_path, "score", "runs.jsonl", "--tasks", "tasks.json", "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [r["submission_id"] for r in rows] == ["'" + i for i in hostile]
    assert all(r["tool"].startswith("'") for r in rows) and float(rows[0]["overall_score"]) >= 0


def test_control_characters_are_escaped_in_cards() -> None:
    """Names are refused with control characters when read, and checkers' reasons are escaped
    where they are made (tests/security/test_fails_alone.py); a card escapes whatever reaches it."""
    from arena_core.report.card import render_card

    card = {"submission_id": "r\nOverall 100.00", "task_id": "t", "tool": "evil\x1b[2J", "model": None,
            "overall_score": 1.0, "rank": 1, "coverage": 1.0, "baseline": {"submission_count": 0, "defaulted": []},
            "figures": {}, "weight_profile": "default", "dimensions": [], "unadjusted": 1.0, "difficulty": None,
            "criteria": [{"type": "t", "status": "failed", "credit": 0, "reason": "x\r\nCriterion t: passed"}]}
    text = render_card(card)
    assert "\x1b" not in text and "\r" not in text
    assert [line for line in text.splitlines() if line.startswith(("Overall 100", "Criterion t: passed"))] == []
    assert "evil\\x1b[2J" in text and "r\\nOverall 100.00" in text


def test_a_full_disk_under_the_store_says_so(tmp_path: Path) -> None:
    if not quotas_enforced():
        pytest.skip("a small file system needs a tmpfs mount, which needs root here")
    from arena_core.workspace.quota import bounded_directory

    _tasks(tmp_path)
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps({"id": f"r{i}", **RUN, "meta": {"pad": "x" * 4000}}) + "\n"
                                                 for i in range(400)))
    with bounded_directory("arena-full-", 64 << 10, 64) as small:
        done = _arena(tmp_path, "ingest", "runs.jsonl", "--tasks", "tasks.json", "--store", str(small / "a.db"))
    line = _one_line_error(done)
    assert "disk is full" in line and "rollback" not in line


def test_a_hostile_models_file_is_one_line_and_never_blocks(tmp_path: Path) -> None:
    """``--models FILE`` is read as every input file is: a FIFO named like a models file is refused
    without waiting for a writer (the command would hang; the timeout would fail the test), a
    JSON object nested 50,000 deep and bytes that are not UTF-8 are each one line naming the file."""
    _tasks(tmp_path)
    (tmp_path / "runs.jsonl").write_text(json.dumps({"id": "ok", **RUN}) + "\n")
    board = ["leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--window", "after-cutoff", "--models"]
    os.mkfifo(tmp_path / "models.csv")
    assert (tmp_path / "models.csv").is_fifo()
    line = _one_line_error(_arena(tmp_path, *board, "models.csv", timeout=60))
    assert "models.csv: not a regular file" in line
    deep = '{"m": ' + "[" * 50_000 + "]" * 50_000 + "}"
    (tmp_path / "models.json").write_text(deep)
    assert deep.count("[") == 50_000
    line = _one_line_error(_arena(tmp_path, *board, "models.json"))
    assert "models.json" in line and "nested" in line
    (tmp_path / "models.toml").write_bytes(b'[models."m"]\nrelease_date = "2024-01-01"\n# \xff\xfe\n')
    line = _one_line_error(_arena(tmp_path, *board, "models.toml"))
    assert "models.toml:3: not UTF-8 text" in line
