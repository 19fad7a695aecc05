"""``aider``: Aider's benchmark results, per exercise (``.aider.results.json``, written by
``benchmark/benchmark.py``) and per run (the leaderboard YAML files, one entry per run of a
benchmark).

A leaderboard entry is one submission for the benchmark as a task (``aider-polyglot``,
``aider-edit``, ``aider-refactor``): correctness is the final pass rate, time is seconds per case
times cases, ``total_cost`` 0 means "not recorded". Tokens are published for few runs; tool calls
and created files never (aider edits through text formats). The mapping is in
docs/importers/aider.md.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from arena_core.importing.runs import (
    ImportedRun,
    amount,
    count,
    files_under,
    load_json,
    peek,
    present,
    regular_files,
    value,
    verdict_task,
)
from arena_core.io.decoding import InputError, read_text
from arena_core.model.yamlsafe import load_yaml

__all__ = ["Aider", "BENCHMARKS"]

HARNESS = "aider"
#: Leaderboard file stem -> (task id, exercises in the benchmark, tries per exercise).
BENCHMARKS = {
    "polyglot_leaderboard": ("aider-polyglot", 225, 2),
    "edit_leaderboard": ("aider-edit", 133, 2),
    "refactor_leaderboard": ("aider-refactor", 89, 1),
}
#: Leaderboard keys kept under ``meta`` as they are, when present.
KEPT = (
    "num_malformed_responses",
    "test_timeouts",
    "reasoning_effort",
    "thinking_tokens",
    "editor_model",
    "editor_edit_format",
)
RESULTS = ".aider.results.json"


class Aider:
    """Aider benchmark runs: leaderboard entries, or one submission per exercise result."""

    name = HARNESS
    description = "Aider benchmark .aider.results.json files and leaderboard YAML files"
    unrecorded = ("tool_calls", "files_created")

    def detect(self, path: Path) -> bool:
        if path.is_dir():
            return any(self.detect_file(p) for p in regular_files(path))
        return self.detect_file(path)

    def detect_file(self, path: Path) -> bool:
        """A benchmark's results or a leaderboard's YAML makes a folder Aider's, at any depth, as
        ``read`` finds them (a leaderboard was once looked for only at the top)."""
        return path.name == RESULTS or _is_leaderboard(path)

    def read(self, paths: Sequence[Path]) -> Iterator[ImportedRun | InputError]:
        for path in files_under(paths, lambda p: p.name == RESULTS or _is_leaderboard(p)):
            try:
                if path.suffix in (".yml", ".yaml"):
                    runs = list(_leaderboard(path))
                else:
                    runs = [_exercise(path)]
            except InputError as exc:
                yield exc
                continue
            yield from runs


def _is_leaderboard(path: Path) -> bool:
    if path.suffix not in (".yml", ".yaml"):
        return False
    head = peek(path, 2048)
    return b"dirname:" in head and b"pass_rate_1" in head


def _leaderboard(path: Path) -> Iterator[ImportedRun]:
    try:
        entries = load_yaml(read_text(path))  # a safe loader, bounded
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise InputError(f"{path}{line}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(entries, list):
        raise InputError(f"{path}: expected a list of leaderboard entries")
    stem = path.stem
    task_id, size, tries = BENCHMARKS.get(stem, (f"aider-{stem.removesuffix('_leaderboard')}", None, None))
    for index, entry in enumerate(entries, start=1):
        yield _entry(entry, f"{path}: entry {index}", path, task_id, size, tries)


def _entry(entry: Any, where: str, path: Path, task_id: str, size: int | None, tries: int | None) -> ImportedRun:
    if not isinstance(entry, Mapping):
        raise InputError(f"{where}: expected a table of run results")
    dirname = value(entry, "dirname", where, str, required=True)
    where = f"{path}: {dirname}"
    cases = count(entry, "test_cases", where)
    if not cases:
        raise InputError(f"{where}: test_cases: expected a whole number above 0, got {entry.get('test_cases')!r}")
    first = amount(entry, "pass_rate_1", where)
    second = amount(entry, "pass_rate_2", where)
    final = second if second is not None else first
    if final is None or final > 100:
        raise InputError(f"{where}: pass_rate_1: expected a percentage from 0 to 100, got {final!r}")
    edit_format = value(entry, "edit_format", where, str, required=True)
    submission: dict[str, Any] = {
        "id": f"{task_id}/{dirname}",
        "task_id": task_id,
        "tool": f"{HARNESS}/{edit_format}",
        "model": str(value(entry, "model", where, (str, int, float), required=True)),
        "correctness": round(final / 100, 6),  # a percentage with at most 4 decimals, without float noise
        "success": final > 0,
    }
    seconds = amount(entry, "seconds_per_case", where)
    if seconds is not None:
        submission["execution_time"] = round(seconds * cases, 4)
    cost = amount(entry, "total_cost", where)
    if cost:
        submission["estimated_cost"] = cost
    prompt, completion = count(entry, "prompt_tokens", where), count(entry, "completion_tokens", where)
    if prompt is not None and completion is not None:
        submission.update(total_tokens=prompt + completion, input_tokens=prompt, output_tokens=completion)
    date = entry.get("date")
    started = _started(dirname) or (date.isoformat() if isinstance(date, datetime.date) else None)
    if started is not None:
        submission["started_at"] = started
    flags = []
    if size is not None and cases < size:
        flags.append("partial_run")
    if size is not None and cases > size:
        flags.append("test_cases_exceed_benchmark_size")
    meta: dict[str, Any] = {
        "source": str(path),
        "harness": HARNESS,
        "aider_version": str(entry.get("versions")) if entry.get("versions") is not None else None,
        "cost_missing": "total_cost" not in entry,
        "cost_reported_as_zero": cost == 0,
        "date": date.isoformat() if isinstance(date, datetime.date) else date,
        "dirname": dirname,
        "edit_format": edit_format,
        "flags": flags,
        "pass_rate_1": first,
        "pass_rate_2": second,
        "seconds_per_case": seconds,
        "test_cases": cases,
    }
    if tries == 2 and second is not None and first is not None:
        solved_first = count(entry, "pass_num_1", where)
        if solved_first is None:
            solved_first = round(first * cases / 100)
        meta["mean_tries_per_case"] = round(1 + (cases - solved_first) / cases, 4)
    meta.update({key: entry[key] for key in KEPT if key in entry})
    submission["meta"] = meta
    return ImportedRun(
        where, submission, verdict_task(task_id, "Aider's benchmark", meta={"cases": size} if size else None)
    )


def _started(dirname: str) -> str | None:
    """When a run started, from the name aider gives its run folder (``2025-02-25-20-23-07--name``,
    the runner's clock, zone unrecorded), or ``None`` for a folder named otherwise."""
    try:
        return datetime.datetime.strptime(dirname[:19], "%Y-%m-%d-%H-%M-%S").isoformat()
    except ValueError:
        return None


def _exercise(path: Path) -> ImportedRun:
    where = str(path)
    data = load_json(path)
    if isinstance(data, Mapping) and "exception" in data and "tests_outcomes" not in data:
        raise InputError(f"{where}: the benchmark failed on this exercise (an exception was recorded, no outcome)")
    testcase = value(data, "testcase", where, str, required=True)
    outcomes = value(data, "tests_outcomes", where, list, required=True)
    if not outcomes or not all(isinstance(o, bool) for o in outcomes):
        raise InputError(f"{where}: tests_outcomes: expected a list of true or false per try, got {outcomes!r}")
    # <run>/<language>/exercises/practice/<exercise>/.aider.results.json
    parts = path.parent.parts
    language = parts[-4] if len(parts) >= 4 and parts[-3:-1] == ("exercises", "practice") else None
    run = parts[-5] if language and len(parts) >= 5 else path.parent.parent.name
    task_id = f"{language}/{testcase}" if language else testcase
    edit_format = value(data, "edit_format", where, str, required=True)
    submission: dict[str, Any] = {
        "id": f"{run}/{task_id}",
        "task_id": task_id,
        "tool": f"{HARNESS}/{edit_format}",
        "model": value(data, "model", where, str, required=True),
        "success": outcomes[-1],
        "correctness": 1.0 if outcomes[-1] else 0.0,
    }
    prompt, completion = count(data, "prompt_tokens", where), count(data, "completion_tokens", where)
    if prompt is not None and completion is not None and prompt + completion > 0:
        submission.update(total_tokens=prompt + completion, input_tokens=prompt, output_tokens=completion)
    started = _started(run)
    if started is not None:
        submission["started_at"] = started
    hashes = value(data, "chat_hashes", where, list)
    if hashes:
        submission["iterations"] = len(hashes)
    seconds = amount(data, "duration", where)
    if seconds is not None:
        submission["execution_time"] = seconds
    cost = amount(data, "cost", where, zero_is_missing=True)
    if cost is not None:
        submission["estimated_cost"] = cost
    meta = {
        "source": where,
        "harness": HARNESS,
        "harness_version": value(data, "commit_hash", where, str),
        "tries": len(outcomes),
        "editor_model": value(data, "editor_model", where, str),
        "flags": [],
    }
    submission["meta"] = present(meta)
    category = {"meta": {"language": language}} if language else {}
    return ImportedRun(where, submission, verdict_task(task_id, "Aider's benchmark", **category))
