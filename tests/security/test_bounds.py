"""Bombs past the per-item bounds, links out of the input, and inputs that crashed a command.

Each input is first shown to be what it claims (the file is small and expands to gigabytes, the
link reaches a file outside, the line is as long as said), then the command is shown to end
with one clear error, in bounded memory, or to read only what it should.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena_core.model.errors import ValidationError

TASKS = [{"id": "t"}]
GIB = 1 << 20  # in KiB, as the peak is measured


def _arena(cwd: Path, *args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1", **(env or {})})


def _peak_kib(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """``arena ARGS`` in a child, and its peak resident memory (KiB, with its own children)."""
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


@pytest.mark.parametrize("streamed", [False, True])
def test_a_parquet_dictionary_of_one_long_string_is_refused_before_it_is_decoded(tmp_path: Path,
                                                                                streamed: bool) -> None:
    """A dictionary page holding one 64 KiB string, and a row of indices to it per run: a few
    hundred kilobytes stored, tens of gigabytes decoded, under the footer's claim of expansion."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    runs = 600_000 if streamed else 20_000
    provider = pa.DictionaryArray.from_arrays(pa.array([0] * runs, pa.int32()), pa.array(["x" * (1 << 16)]))
    table = pa.table({"id": [f"r{i}" for i in range(runs)], "task_id": ["t"] * runs, "total_tokens": [1] * runs,
                      "tool_calls": [1] * runs, "provider": provider})
    pq.write_table(table, tmp_path / "bomb.parquet", compression="zstd")
    stored = (tmp_path / "bomb.parquet").stat().st_size
    handle = pq.ParquetFile(tmp_path / "bomb.parquet", read_dictionary=["provider"])
    decoded = pc.sum(pc.take(pc.binary_length(handle.read(columns=["provider"])["provider"].chunk(0).dictionary),
                             pa.array([0] * runs))).as_py()
    assert stored < 1_000_000 and decoded == runs << 16  # what it would decode to: 1.3 or 39 GB
    expanded = sum(handle.metadata.row_group(i).total_byte_size for i in range(handle.metadata.num_row_groups))
    assert expanded < 256 << 20  # and its footer claims less than the bound of expansion: the footer's check passes
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS))
    done, peak = _peak_kib(tmp_path, "score", "bomb.parquet", "--tasks", "tasks.json")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "bomb.parquet: its text decodes to" in done.stderr and "refused as a decompression bomb" in done.stderr
    if streamed:
        assert "streaming 600,000 runs" in done.stderr  # the streamed path read it
    assert peak < 1.5 * GIB


def test_an_openhands_line_past_the_line_bound_fails_alone(tmp_path: Path) -> None:
    sample = Path(__file__).parent.parent / "data" / "formats" / "openhands-eval-output"
    line = (sample / "multi_swe_bench.output.first-line.jsonl").read_bytes().rstrip(b"\n")
    record = json.loads(line)
    huge = dict(record, instance_id="hostile__x-1", history=["y" * (1 << 20)] * 70)  # a 70 MiB line
    with open(tmp_path / "output.jsonl", "wb") as out:
        out.write(line + b"\n")
        out.write(json.dumps(huge).encode() + b"\n")
        out.write(line.replace(record["instance_id"].encode(), b"honest__y-2") + b"\n")
    assert (tmp_path / "output.jsonl").stat().st_size > 64 << 20  # the line is past the bound
    done, peak = _peak_kib(tmp_path, "import", "openhands", "output.jsonl", "-o", "runs.jsonl", "--skip-bad")
    assert "output.jsonl:2: the line is longer than 67,108,864 bytes" in done.stderr, done.stderr[-2000:]
    imported = [json.loads(x)["id"] for x in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert len(imported) == 2 and not any("hostile" in i for i in imported)  # the others were read
    assert peak < 1.5 * GIB


def test_a_run_line_past_the_line_bound_is_named_and_not_held(tmp_path: Path) -> None:
    """A 70 MiB line in a runs file is named by its line number, the lines after it keep theirs,
    and it is never given to Arrow's JSON reader, which grew its blocks to 1.7 GB to hold it:
    a file with a line past LONGEST_TABLE_LINE goes to the record reader."""
    honest = {"task_id": "t1", "tool": "aider", "total_tokens": 1000, "tool_calls": 3, "iterations": 1,
              "execution_time": 10.0, "estimated_cost": 0.01, "success": True}  # fmt: skip
    with open(tmp_path / "runs.jsonl", "wb") as out:
        out.write(json.dumps({"id": "a", **honest}).encode() + b"\n")
        out.write(json.dumps({"id": "hostile", **honest, "meta": {"pad": "y" * (70 << 20)}}).encode() + b"\n")
        out.write(b"\n" + json.dumps({"id": "b", **honest}).encode() + b"\n{not json\n")
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "t1", "category": "debugging", "difficulty": "beginner"}]))
    assert (tmp_path / "runs.jsonl").stat().st_size > 64 << 20  # the line is past the bound
    done, peak = _peak_kib(tmp_path, "score", "runs.jsonl", "--tasks", "tasks.json", "-o", "out.jsonl")
    assert done.returncode == 2
    assert "runs.jsonl:2: the line is longer than 67,108,864 bytes" in done.stderr, done.stderr[-2000:]
    assert "runs.jsonl:5: " in done.stderr  # the line numbers after it are the file's
    assert not (tmp_path / "out.jsonl").exists()
    assert peak < 1 * GIB


@pytest.mark.parametrize("first", ["null", "[1, 2]", "5", "true", '"text"'])
def test_a_json_lines_file_whose_first_line_is_not_an_object_is_refused_not_crashed(tmp_path: Path,
                                                                                     first: str) -> None:
    (tmp_path / "runs.jsonl").write_text(f'{first}\n{{"id": "a", "task_id": "t", "total_tokens": 1, "tool_calls": 1}}\n')
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS))
    for command in ("score", "leaderboard"):
        done = _arena(tmp_path, command, "runs.jsonl", "--tasks", "tasks.json")
        assert done.returncode == 2, (done.returncode, done.stderr)  # not -11: no segmentation fault
        assert "runs.jsonl:1: submission: (record): expected a submission record (a mapping)" in done.stderr


def test_a_yaml_price_table_alias_bomb_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    levels += [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
               f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]" for i in range(8)]
    (tmp_path / "prices.yaml").write_text("\n".join(levels) + "\n")
    assert (tmp_path / "prices.yaml").stat().st_size < 1000 and 9 ** 9 > 387_000_000  # 387 million strings
    (tmp_path / "arena.toml").write_text('cost_source = "priced"\nprice_tables = ["prices.yaml"]\nprice_source = ""\n')
    (tmp_path / "runs.jsonl").write_text(json.dumps({"id": "a", "task_id": "t", "total_tokens": 1, "tool_calls": 1,
                                                     "model": "m", "input_tokens": 1, "output_tokens": 0}) + "\n")
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS))
    done, peak = _peak_kib(tmp_path, "score", "runs.jsonl", "--tasks", "tasks.json")
    assert done.returncode == 2 and "price table prices.yaml: not valid YAML" in done.stderr
    assert "aliases expand to more than 1,000,000 nodes" in done.stderr and len(done.stderr) < 2000
    assert peak < 0.5 * GIB


def test_an_error_shows_a_bounded_part_of_a_huge_value() -> None:
    nested: list = ["lol"] * 9
    for _ in range(8):
        nested = [nested] * 9  # 387 million strings reachable, held as nine lists a level
    error = ValidationError("price table p.yaml", "models", "a table of model name to its prices", nested)
    assert len(str(error)) < 400 and "..." in str(error)
    assert len(json.dumps(error.as_dict())) < 1200


def test_price_table_names_that_differ_only_in_case_are_refused(tmp_path: Path) -> None:
    from arena_core.pricing.tables import PriceTable

    (tmp_path / "p.toml").write_text('[gpt-4o]\ninput = 2.5\noutput = 10\n["GPT-4o"]\ninput = 0.01\noutput = 0.01\n')
    with pytest.raises(ValidationError, match=r"GPT-4o: expected a model name used once, ignoring case .*'gpt-4o'"):
        PriceTable(tmp_path / "p.toml")


def test_a_local_url_goes_through_the_checks_a_path_does(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pytest.importorskip("fsspec")
    import fsspec
    import pyarrow.parquet as pq

    secret = tmp_path / "secret.parquet"
    pq.write_table(pa.table({"id": ["s"], "task_id": ["t"], "total_tokens": [1], "tool_calls": [1]}), secret)
    secret.chmod(0o600)
    (tmp_path / "runs").mkdir()
    os.symlink(secret, tmp_path / "runs" / "part.parquet")
    filesystem, path = fsspec.core.url_to_fs(f"local://{tmp_path}/runs")
    assert filesystem.find(path) and filesystem.cat_file(filesystem.find(path)[0])[:4] == b"PAR1"  # fsspec follows it
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS))
    for given in (str(tmp_path / "runs"), f"file://{tmp_path}/runs", f"local://{tmp_path}/runs"):
        done = _arena(tmp_path, "leaderboard", given, "--tasks", "tasks.json")
        assert done.returncode == 2 and "part.parquet: a link" in done.stderr, (given, done.stderr)


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_a_harbor_trajectory_link_out_of_the_job_is_not_followed(tmp_path: Path, linked: str) -> None:
    import shutil

    sample = Path(__file__).parent.parent / "data" / "formats" / "harbor-current" / "sandbox-timeout__c1"
    outside = tmp_path / "outside"
    (outside / "agent").mkdir(parents=True)
    trajectory = {"schema_version": "ATIF-v1.2", "session_id": "s", "agent": {"name": "x", "version": "1"},
                  "steps": [{"step_id": i, "source": "agent", "message": "m", "tool_calls": [
                      {"tool_call_id": str(i), "function_name": "bash", "arguments": {}}]} for i in range(1, 40)],
                  "final_metrics": {"total_prompt_tokens": 777_000, "total_completion_tokens": 1}}
    (outside / "agent" / "trajectory.json").write_text(json.dumps(trajectory))
    job = tmp_path / "job"
    shutil.copytree(sample, job / "trial__1")
    trial = job / "trial__1"
    shutil.rmtree(trial / "agent", ignore_errors=True)
    if linked == "file":
        (trial / "agent").mkdir()
        os.symlink(outside / "agent" / "trajectory.json", trial / "agent" / "trajectory.json")
    else:
        os.symlink(outside / "agent", trial / "agent")
    assert json.loads((trial / "agent" / "trajectory.json").read_text())["final_metrics"]["total_prompt_tokens"] == 777_000
    done = _arena(tmp_path, "import", "harbor", "job", "-o", "runs.jsonl")
    assert done.returncode == 0, done.stderr
    [run] = [json.loads(x) for x in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert run.get("tool_calls") != 39  # nothing of it was read
    shutil.rmtree(trial / "agent") if linked == "file" else (trial / "agent").unlink()
    shutil.copytree(outside / "agent", trial / "agent")  # the same file, really in the trial: read
    assert _arena(tmp_path, "import", "harbor", "job", "-o", "runs.jsonl").returncode == 0
    [run] = [json.loads(x) for x in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert run["tool_calls"] == 39


def test_a_parquet_column_named_like_the_row_number_is_refused_clearly(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": [f"r{i}" for i in range(6)], "task_id": ["t"] * 6, "total_tokens": [1] * 6,
                             "tool_calls": [1] * 6, "__row": ["x"] * 6}), tmp_path / "runs.parquet")
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS))
    (tmp_path / "arena.toml").write_text("partition_rows = 2\n")  # streamed
    done = _arena(tmp_path, "score", "runs.parquet", "--tasks", "tasks.json")
    assert done.returncode == 2 and "runs.parquet: column '__row'" in done.stderr and "Traceback" not in done.stderr


def test_a_report_by_model_with_runs_that_name_no_model(tmp_path: Path) -> None:
    runs = [{"id": f"r{i}", "task_id": f"t{i % 3}", "total_tokens": 100 + i, "tool_calls": 3, "tool": "a",
             **({} if i == 0 else {"model": f"m{i % 2}"})} for i in range(12)]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": f"t{i}"} for i in range(3)]))
    done = _arena(tmp_path, "report", "runs.jsonl", "--tasks", "tasks.json", "--by", "model", "-o", "site")
    assert done.returncode == 0, done.stderr
    assert "(unknown model: r0)" in (tmp_path / "site" / "index.html").read_text()


def test_a_hostile_meta_beside_good_ones_is_named_after_the_table_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose runs carry metas goes to Arrow's table (which takes a null meta for an
    absent one), then to the pass that reads the metas from the lines: a run whose meta is
    null beside good runs is seen there (the pass gives up) and named by its line and field by
    the record reader, as before the table path read metas; nothing is printed."""
    pytest.importorskip("pyarrow")
    from clirun import run_arena

    from arena_core.cli import inputs
    from arena_core.examples import SUBMISSIONS, TASKS as EXAMPLE_TASKS

    runs = [json.loads(line) for line in Path(SUBMISSIONS).read_text().splitlines() if line.strip()]
    lines = [json.dumps({**run, "meta": {"run": run["id"]}}) for run in runs]
    lines[5] = json.dumps({**runs[5], "meta": None})
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    gave: list[object] = []
    reader = inputs.line_metas
    monkeypatch.setattr(inputs, "line_metas", lambda *a, **k: gave.append(reader(*a, **k)) or gave[-1])
    done = run_arena("tasks", str(path), "--tasks", str(EXAMPLE_TASKS), "-q", cwd=tmp_path)
    assert gave == [None]  # the table was read, and the metas' pass met the hostile line
    assert done.returncode == 2 and done.stdout == ""
    assert "runs.jsonl:6: submission 'frontend-001/005': meta" in done.stderr, done.stderr
    lines[5] = json.dumps({**runs[5], "meta": {"run": runs[5]["id"]}})
    path.write_text("\n".join(lines) + "\n")
    assert run_arena("tasks", str(path), "--tasks", str(EXAMPLE_TASKS), "-q", cwd=tmp_path).returncode == 0
    assert gave[-1] is not None and len(gave[-1]) == len(runs)  # the good file's metas from the lines
