"""Malformed input, generated: every bad record, task file or configuration ends in one error line.

For each generated case the CLI must exit with status 2, print exactly one line on stderr that
starts ``Error:`` and names the offending field, write no output file and leave the store as it
was. The cases are seeded (Hypothesis, ``derandomize``), so a failure reproduces.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_core.cli import main

SETTINGS = settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

TASKS = [
    {"id": "t1", "category": "debugging", "difficulty": "beginner", "success_criteria": [{"type": "no_errors"}]},
    {"id": "t2", "category": "refactoring", "success_criteria": [{"type": "tests_pass"}]},
]


def _good(i: int) -> dict[str, Any]:
    return {
        "id": f"run-{i}",
        "task_id": f"t{i % 2 + 1}",
        "tool": ["aider", "claude-code", "openhands"][i % 3],
        "model": "m",
        "total_tokens": 4000 + 700 * i,
        "tool_calls": 5 + i,
        "iterations": 1 + i % 3,
        "execution_time": 100.0 + 20 * i,
        "estimated_cost": 0.02 + 0.01 * i,
        "tests_passed": i % 4,
        "tests_total": 4,
    }


GOOD = [_good(i) for i in range(12)]

#: (field, bad value, representable in CSV) -- each is invalid for that field.
NUMERIC = ["total_tokens", "tool_calls", "execution_time", "estimated_cost", "iterations", "tests_total"]
BAD_NUMBERS = [-1, -0.5, float("nan"), float("inf"), float("-inf"), 10**400, 1e300, "12", [1], {"a": 1}, True, None]
NAMES = ["id", "tool", "model", "task_id"]
BAD_NAMES = ["", "   ", "a\x00b", "\x1b[31mred", "line\nbreak", "rtl\u202eevil", "a\ud800", "x" * 1001, 5, ["a"], {}]


def _numeric_case() -> st.SearchStrategy[tuple[str, Any]]:
    return st.tuples(st.sampled_from(NUMERIC), st.sampled_from(BAD_NUMBERS)).filter(
        lambda c: not (c[1] is None)  # a missing figure is a policy question, tested below
    )


def _name_case() -> st.SearchStrategy[tuple[str, Any]]:
    return st.tuples(st.sampled_from(NAMES), st.sampled_from(BAD_NAMES))


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    # json.dumps writes NaN/Infinity literals and lone surrogates as escapes, as real files do.
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8", errors="surrogatepass")


def _write_json_array(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps(records, indent=1), encoding="utf-8", errors="surrogatepass")


def _run(tmp: Path, *args: str) -> Any:
    runner = CliRunner()
    return runner.invoke(main, list(args), catch_exceptions=False, env={"ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})


def _assert_one_error(result: Any, *named: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("Error: "), lines
    for name in named:
        assert name in lines[0], (name, lines[0])
    assert "Traceback" not in result.stderr


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS))
    return tmp_path


def _stored_submissions(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as c:
        return int(c.execute("SELECT COUNT(*) FROM submissions").fetchone()[0])


@SETTINGS
@given(
    case=st.one_of(_numeric_case(), _name_case()),
    row=st.integers(0, len(GOOD) - 1),
    fmt=st.sampled_from(["jsonl", "json"]),
)
def test_a_bad_field_in_json_is_one_line_naming_it_and_nothing_is_written(
    workdir: Path, case: tuple[str, Any], row: int, fmt: str
) -> None:
    field, value = case
    records = [dict(r) for r in GOOD]
    records[row][field] = value
    source = workdir / f"runs.{fmt}"
    (_write_jsonl if fmt == "jsonl" else _write_json_array)(source, records)
    out = workdir / "out.jsonl"
    _assert_one_error(
        _run(workdir, "score", str(source), "--tasks", "tasks.json", "-o", str(out)), f"{field}: expected"
    )
    assert not out.exists() and not list(workdir.glob(".out.jsonl.*"))
    db = workdir / "arena.db"
    _assert_one_error(_run(workdir, "ingest", str(source), "--tasks", "tasks.json", "--store", str(db)), field)
    assert _stored_submissions(db) == 0


CSV_BAD = [
    ("total_tokens", "-1"),
    ("tool_calls", "nan"),
    ("execution_time", "inf"),
    ("estimated_cost", "1e400"),
    ("iterations", "0"),
    ("total_tokens", "1" + "0" * 30),
    ("tool", "\x1b[2J"),
    ("model", "   "),
    ("id", "a\u202eb"),
    ("total_tokens", "twelve"),
    ("success", "maybe"),
]


@SETTINGS
@given(case=st.sampled_from(CSV_BAD), row=st.integers(0, len(GOOD) - 1))
def test_a_bad_cell_in_csv_is_one_line_naming_its_column(workdir: Path, case: tuple[str, str], row: int) -> None:
    field, cell = case
    columns = [
        "id",
        "task_id",
        "tool",
        "model",
        "total_tokens",
        "tool_calls",
        "iterations",
        "execution_time",
        "estimated_cost",
        "success",
    ]
    lines = [",".join(columns)]
    for i, r in enumerate(GOOD):
        cells = {**{c: str(r.get(c, "")) for c in columns}, "success": "true"}
        if i == row:
            cells[field] = cell
        lines.append(",".join(cells[c] for c in columns))
    (workdir / "runs.csv").write_text("\n".join(lines) + "\n")
    result = _run(workdir, "score", "runs.csv", "--tasks", "tasks.json", "-o", "out.csv", "--format", "csv")
    _assert_one_error(result, f"runs.csv:{row + 2}:", field)
    assert not (workdir / "out.csv").exists()


TASK_BAD = [
    ({"category": ""}, "category"),
    ({"category": "\x1b[1m"}, "category"),
    ({"id": "  "}, "id"),
    ({"success_criteria": [{"type": "no_errors", "weight": "1"}]}, "success_criteria.0.weight"),
    ({"success_criteria": [{"type": "no_errors", "description": ["a"]}]}, "success_criteria.0.description"),
    ({"success_criteria": [{"type": "code_compiles", "paths": 5}]}, "success_criteria.0.paths"),
    ({"success_criteria": [{"type": "code_compiles", "command": "make"}]}, "success_criteria.0.command"),
    (
        {"success_criteria": [{"type": "command_succeeds", "command": ["make"], "timeout": -1}]},
        "success_criteria.0.timeout",
    ),
    ({"success_criteria": [{"type": "file_exists", "file_path": "a", "pathh": "b"}]}, "success_criteria.0.pathh"),
    ({"success_criteria": [{"type": "file_contains", "file_path": "a", "pattern": "("}]}, "success_criteria.0.pattern"),
    ({"success_criteria": [{"type": "min_functionality", "min_pass_rate": 7}]}, "success_criteria.0.min_pass_rate"),
    ({"success_criteria": [{"type": "no_such_check"}]}, "success_criteria.0.type"),
    ({"difficulty": 3}, "difficulty"),
]


@pytest.mark.parametrize(("change", "field"), TASK_BAD, ids=[f for _, f in TASK_BAD])
def test_a_bad_task_is_refused_when_loaded_naming_file_task_and_field(workdir: Path, change: dict, field: str) -> None:
    tasks = [dict(TASKS[0]), {**TASKS[1], **change}]
    (workdir / "bad-tasks.json").write_text(json.dumps(tasks))
    _write_jsonl(workdir / "runs.jsonl", GOOD)
    result = _run(workdir, "score", "runs.jsonl", "--tasks", "bad-tasks.json", "-o", "out.jsonl")
    _assert_one_error(result, "bad-tasks.json: task 2:", field)
    assert not (workdir / "out.jsonl").exists()


CONFIG_BAD = [
    ("confidence_interval = 3\n", "confidence_interval"),
    ("min_submissions_per_tool = -2\n", "min_submissions_per_tool"),
    ('[missing]\ntotal_tokens = "ignore"\n', "missing.total_tokens"),
    ('[metrics]\nspeed = "sped"\n', "speed"),
    ('colour = "red"\n', "colour"),
    ('[weights.default]\nefficiency = "x"\n', "weights.default"),
    ("= broken\n", "arena.toml"),
    ('confidence_interval = "sp\udcffec"\n', "arena.toml:1: not UTF-8"),
]


@pytest.mark.parametrize(("text", "field"), CONFIG_BAD, ids=[f for _, f in CONFIG_BAD])
def test_a_bad_configuration_is_one_line_naming_the_key(workdir: Path, text: str, field: str) -> None:
    (workdir / "arena.toml").write_text(text, errors="surrogateescape")  # \udcff: the byte 0xff
    _assert_one_error(_run(workdir, "leaderboard", "--example"), "arena.toml", field)


def test_the_reported_causes_each_give_one_line_naming_the_field(workdir: Path) -> None:
    """The causes of tracebacks and unnamed fields found by fuzzing the CLI, one by one."""
    good = json.dumps(GOOD[0])
    cases: dict[str, tuple[bytes, str, str]] = {
        "non-utf8.jsonl": (good.encode() + b"\n" + b'{"id": "x\xff"}\n', "non-utf8.jsonl:2:", "UTF-8"),
        "non-utf8.csv": (b"id,task_id\nx\xff,t1\n", "non-utf8.csv:2:", "UTF-8"),
        "deep.jsonl": (b'{"id": "d", "meta": ' + b"[" * 5000 + b"]" * 5000 + b"}\n", "deep.jsonl:1:", "meta"),
        "digits.jsonl": (b'{"id": "d", "total_tokens": 1' + b"0" * 5000 + b"}\n", "digits.jsonl:1:", "total_tokens"),
        "huge.jsonl": (
            json.dumps({**GOOD[0], "total_tokens": 10**400}).encode() + b"\n",
            "huge.jsonl:1:",
            "total_tokens",
        ),
        "overflow.jsonl": (
            json.dumps({**GOOD[0], "execution_time": 1e308}).encode() + b"\n",
            "overflow.jsonl:1:",
            "execution_time",
        ),
        "surrogate.jsonl": (b'{"id": "a\\ud800", "task_id": "t1"}\n', "surrogate.jsonl:1:", "id"),
        "bigcell.csv": (b"id,task_id\n" + b"a" * 200_000 + b",t1\n", "bigcell.csv:2:", "id"),
        "array-line.jsonl": (b"[1, 2]\n" + good.encode() + b"\n", "array-line.jsonl:1:", "(record)"),
        "no-id.jsonl": (
            json.dumps({k: v for k, v in GOOD[0].items() if k != "id"}).encode() + b"\n",
            "no-id.jsonl:1: submission (no id)",
            "id",
        ),
        "dupes.jsonl": ((good + "\n" + good + "\n").encode(), "dupes.jsonl:2:", "id: expected an id used once"),
        "dupcol.csv": (b"id,task_id,id\na,t1,b\n", "dupcol.csv:1:", "'id' appears twice"),
        "unknown-task.jsonl": (
            json.dumps({**GOOD[0], "task_id": "nope"}).encode() + b"\n",
            "unknown-task.jsonl:1:",
            "task_id",
        ),
    }
    for name, (content, where, field) in cases.items():
        (workdir / name).write_bytes(content)
        result = _run(workdir, "score", name, "--tasks", "tasks.json", "-o", "out.jsonl")
        _assert_one_error(result, where, field)
        assert not (workdir / "out.jsonl").exists(), name


def test_every_bad_record_of_a_file_is_reported_at_once(workdir: Path) -> None:
    records = [dict(r) for r in GOOD]
    for i in (1, 4, 9):
        records[i]["tool_calls"] = -i
    records[6]["id"] = ""
    _write_jsonl(workdir / "runs.jsonl", records)
    result = _run(workdir, "score", "runs.jsonl", "--tasks", "tasks.json")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("Error: ")
    located = [line.removeprefix("Error: ").split(": ", 1)[0] for line in lines]
    assert located == ["runs.jsonl:2", "runs.jsonl:5", "runs.jsonl:7", "runs.jsonl:10"]
    many = [{**GOOD[0], "id": f"r{i}", "tool_calls": -1} for i in range(50)]
    _write_jsonl(workdir / "many.jsonl", many)
    lines = _run(workdir, "score", "many.jsonl", "--tasks", "tasks.json").stderr.splitlines()
    assert len(lines) == 21 and lines[-1] == "... and 30 more bad records"


def test_missing_telemetry_names_every_field_and_the_fix(workdir: Path) -> None:
    records = [
        {k: v for k, v in r.items() if k not in ("tool_calls", "total_tokens" if i % 2 else "")}
        for i, r in enumerate(GOOD)
    ]
    _write_jsonl(workdir / "runs.jsonl", records)
    result = _run(workdir, "score", "runs.jsonl", "--tasks", "tasks.json")
    _assert_one_error(
        result,
        "runs.jsonl:1:",
        "total_tokens, tool_calls",
        "missing in 6 of 12",
        "missing in 12 of 12",
        '-p gated', '[missing] total_tokens = "comparable", tool_calls = "comparable"',
    )
    (workdir / "arena.toml").write_text('[missing]\ntotal_tokens = "reweight"\ntool_calls = "reweight"\n')
    assert _run(workdir, "score", "runs.jsonl", "--tasks", "tasks.json").exit_code == 0


def test_terminal_output_escapes_what_a_record_could_use_against_it(workdir: Path) -> None:
    """Names are refused at load, but text that reaches a table some other way is escaped."""
    from arena_core.io.table import printable, render

    assert printable("a\x1b[2Jb\u202ec\ud800") == "a\\x1b[2Jb\\u202ec\\ud800"
    table = render(["Tool"], [["\x1b[31mred"]])
    assert "\x1b" not in table and "\\x1b[31mred" in table


def test_the_python_api_refuses_an_id_used_twice_in_a_batch() -> None:
    from arena_core import Arena, ValidationError

    arena = Arena(autoload=False)
    tasks = {t["id"]: t for t in TASKS}
    records = [*GOOD, {**GOOD[3], "total_tokens": 1}]
    with pytest.raises(
        ValidationError, match=r"submission 'run-3': id: expected an id used once in the batch \(rows 4 and 13\)"
    ):
        arena.evaluate_many(records, tasks)
    columns = {"id": [r["id"] for r in records], "task_id": [r["task_id"] for r in records]}
    with pytest.raises(ValidationError, match="rows 4 and 13"):
        arena.evaluate_many(columns, tasks)


def test_validation_errors_carry_a_stable_code_and_a_json_body() -> None:
    """What a service needs to answer 400: a code per kind of problem, ``got=None`` and
    ``missing=True`` for an absent field, and ``as_dict()`` that JSON can always encode."""
    from arena_core import Arena, Submission, ValidationError, structure

    with pytest.raises(ValidationError) as missing:
        structure({"task_id": "t1"}, Submission)
    assert missing.value.record == "submission (no id)" and missing.value.field == "id"
    assert missing.value.got is None and missing.value.missing and missing.value.code == "missing_field"
    with pytest.raises(ValidationError) as invalid:
        structure({"id": "a", "total_tokens": float("nan")}, Submission)
    body = invalid.value.as_dict()
    assert body["code"] == "invalid_value" and body["field"] == "total_tokens" and body["missing"] is False
    assert body["got"] == "nan" and json.loads(json.dumps(body)) == body  # NaN is no JSON: shown as its repr
    arena = Arena(autoload=False)
    tasks = {t["id"]: t for t in TASKS}
    with pytest.raises(ValidationError) as twice:
        arena.evaluate_many([GOOD[0], GOOD[0]], tasks)
    assert twice.value.code == "duplicate_id"
    with pytest.raises(ValidationError) as holes:
        arena.evaluate_many([{k: v for k, v in GOOD[0].items() if k != "tool_calls"}], tasks)
    assert holes.value.code == "missing_telemetry" and holes.value.as_dict()["field"] == "tool_calls"


def test_running_out_of_memory_is_one_line_saying_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """A statistic too large for the machine (NumPy's allocation error, raised where the board is
    made) ends in one line naming the command and the allocation, and what to do; no traceback."""
    import numpy as np
    from click.testing import CliRunner

    from arena_core.arena import boards
    from arena_core.cli import main

    def too_large(*args: object, **kwargs: object) -> None:
        np.empty((2_000, 100_000, 2_000_000), dtype=np.float64)  # petabytes: refused at once

    monkeypatch.setattr(boards, "leaderboard", too_large)
    result = CliRunner().invoke(main, ["leaderboard", "--example"])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: arena leaderboard ran out of memory (Unable to allocate") and "PiB for an array" in line
    assert "Parquet shards" in line and "--where" in line and "Traceback" not in result.output


def test_a_whole_file_is_read_past_the_size_its_fstat_gave(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """read_text reads a file in one read sized by its fstat; a file that grew since, or one
    whose size the system reports as 0 (procfs), is read to its end all the same, and its
    bytes that are not UTF-8 are still named by line."""
    import os

    from arena_core.io.decoding import InputError, read_text

    text = "".join(f"line {i}: {'x' * 60}\n" for i in range(50_000))  # 3.4 MB: several reads past the first
    (tmp_path / "grown.json").write_text(text)
    real = os.fstat

    def reports_no_size(fd: int) -> os.stat_result:
        found = real(fd)
        return os.stat_result((found.st_mode, found.st_ino, found.st_dev, found.st_nlink, found.st_uid,
                               found.st_gid, 0, found.st_atime, found.st_mtime, found.st_ctime))  # fmt: skip

    monkeypatch.setattr(os, "fstat", reports_no_size)
    assert read_text(tmp_path / "grown.json") == text
    (tmp_path / "bad.json").write_bytes(text.encode()[:700] + b"\xff" + b"\n")
    with pytest.raises(InputError, match=r"bad.json:11: not UTF-8 text"):
        read_text(tmp_path / "bad.json")


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"", r"x\.json: the file is empty"),
        (b" \n\t\n", r"x\.json: the file is empty"),
        (b'{"a": 1,\n "b": "\xff"}\n', r"x\.json:2: not UTF-8 text \(byte 0xff\)"),
        (b'{"a": 1,\n "b": }\n', r"x\.json:2: invalid JSON"),
        (b'{"a": 1, "b": ' + b"[" * 5000 + b"]" * 5000 + b"}", r"x\.json:1: b: expected JSON nested less than"),
    ],
    ids=["empty", "blank", "not-utf-8", "invalid", "deep"],
)
def test_an_importer_s_json_file_that_orjson_refuses_gets_the_text_path_s_error(
    tmp_path: Path, content: bytes, error: str
) -> None:
    """``load_json`` hands a file's bytes to orjson; a file orjson refuses is decoded as text for
    the error a reader of text gives (its line, what is wrong), and what both take decodes the
    same: strict JSON by orjson, the rest (``NaN``, a lone surrogate) by the standard library."""
    import math

    from arena_core.importing.runs import load_json
    from arena_core.io.decoding import InputError

    (tmp_path / "x.json").write_bytes(content)
    with pytest.raises(InputError, match=error):
        load_json(tmp_path / "x.json")
    (tmp_path / "y.json").write_bytes(b'{"n": NaN, "s": "\\ud800", "t": "\xc3\xa9"}')
    found = load_json(tmp_path / "y.json")
    assert math.isnan(found["n"]) and found["s"] == "\ud800" and found["t"] == "é"
