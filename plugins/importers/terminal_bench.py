"""``terminal-bench``: the legacy Terminal-Bench harness (``tb run``, terminal-bench-core 0.1.x).

Reads a run's ``results.json`` (``BenchmarkResults``: every trial, with ``n_resolved`` and
``accuracy``) and the ``run_metadata.json`` beside it, or trial ``results.json`` files
(``TrialResults``) on their own. A run's own file is authoritative: it lists trials that have no
folder, and the trial files under it are not read again. The mapping is in
docs/importers/terminal-bench.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena_core.importing.runs import (
    ImportedRun,
    count,
    files_under,
    load_json,
    peek,
    present,
    regular_files,
    run_times,
    seconds_between,
    value,
    verdict_task,
)
from arena_core.io.decoding import InputError

__all__ = ["TerminalBench"]

HARNESS = "terminal-bench"
#: The ``results`` key of a run's file (not ``parser_results``, nor an escaped quote in a string).
_RUN_RESULTS = re.compile(rb'(?<![_\\])"results"\s*:\s*\[')


class TerminalBench:
    """Terminal-Bench trials: one submission each, resolved as the verdict."""

    name = HARNESS
    description = "Terminal-Bench (tb run) run and trial results.json, with run_metadata.json"
    unrecorded = ("tool_calls", "estimated_cost", "files_created")

    def detect(self, path: Path) -> bool:
        if path.is_dir():
            return any(self.detect_file(p) for p in regular_files(path))
        return _is_results(path) or (path.name.endswith("run_metadata.json") and b'"dataset_name"' in peek(path))

    def detect_file(self, path: Path) -> bool:
        """A run's or a trial's ``results.json`` makes a folder Terminal-Bench's."""
        return _is_results(path)

    def read(self, paths: Sequence[Path]) -> Iterator[ImportedRun | InputError]:
        runs: list[Path] = []
        trials: list[Path] = []
        seen: set[Path] = set()  # a set, not the lists: asking a list made 8,000 trials take 7.2 s
        for path in files_under(paths, _is_results):
            if path.name.endswith("run_metadata.json"):  # named for its run: read the run's results
                path = path.with_name(path.name.removesuffix("run_metadata.json") + "results.json")
            if path not in seen:
                seen.add(path)
                (runs if _is_run(path) else trials).append(path)
        for run in runs:
            yield from _run(run)
        folders = {run.parent for run in runs}
        for trial in trials:
            if any(folder in folders for folder in trial.parents):
                continue  # the run's own results.json already has it
            try:
                yield _trial(load_json(trial), str(trial), None, trial)
            except InputError as exc:
                yield exc


#: A Terminal-Bench leaderboard submission's folder: ``<YYYYMMDD>_<agent>_<model>``
#: (``20250924_droid_gpt-5``), the agent's name without an underscore.
_SUBMISSION_FOLDER = re.compile(r"^\d{8}_[^_]+_(?P<model>.+)$")


def _model_of_folder(source: Path) -> str | None:
    """The model the submission folder holding ``source`` is named for, where the run's metadata
    leaves it null (agent-harness submissions do)."""
    for folder in source.parents:
        found = _SUBMISSION_FOLDER.match(folder.name)
        if found:
            return found.group("model")
    return None


def _is_results(path: Path) -> bool:
    """A trial's or a run's ``results.json`` (the name may carry a prefix, as in copies)."""
    return path.name.endswith("results.json") and b'"is_resolved"' in peek(path)


def _is_run(path: Path) -> bool:
    """A run's ``results.json`` (``BenchmarkResults``), told from a trial's by its ``results``
    list, the second key the harness writes (a trial has ``parser_results`` instead)."""
    return _RUN_RESULTS.search(peek(path)) is not None


def _metadata_of(results: Path) -> Path:
    """The ``run_metadata.json`` beside a run's ``results.json`` (with the same prefix, if any)."""
    return results.with_name(results.name.removesuffix("results.json") + "run_metadata.json")


def _run(path: Path) -> Iterator[ImportedRun | InputError]:
    try:
        data = load_json(path)
        metadata_path = _metadata_of(path)
        metadata = load_json(metadata_path) if metadata_path.exists() else None
        trials = value(data, "results", str(path), list, required=True)
    except InputError as exc:
        yield exc
        return
    imported = []
    for index, trial in enumerate(trials, start=1):
        try:
            imported.append(_trial(trial, f"{path}: trial {index}", metadata, path))
        except InputError as exc:
            yield exc
            return
    resolved = sum(1 for run in imported if run.submission["success"])
    flags = []
    published = data.get("n_resolved")
    if published is not None and published != resolved:
        flags.append("run_totals_disagree")
    accuracy = data.get("accuracy")
    if isinstance(accuracy, (int, float)) and imported and abs(accuracy - resolved / len(imported)) > 1e-9:
        flags.append("run_totals_disagree")
    for run in imported:
        if flags:
            meta = dict(run.submission["meta"])
            meta["flags"] = sorted({*meta["flags"], *flags})
            meta["run_n_resolved"] = published
            run = ImportedRun(run.where, {**run.submission, "meta": meta}, run.task)
        yield run


def _trial(trial: Any, where: str, metadata: Any, source: Path) -> ImportedRun:
    if not isinstance(trial, Mapping):
        raise InputError(f"{where}: expected a table of trial results")
    task_id = value(trial, "task_id", where, str, required=True)
    ident = value(trial, "id", where, str) or value(trial, "uuid", where, str)
    ident = ident or value(trial, "trial_name", where, str, required=True)
    verdict = value(trial, "is_resolved", where, bool)
    flags = []
    if verdict is None:
        flags.append("verdict_missing")  # a harness error: unresolved, as the run's accuracy counts it
    submission: dict[str, Any] = {"id": ident, "task_id": task_id, "success": verdict is True}
    tested = value(trial, "parser_results", where, dict)
    if tested:
        submission["tests_passed"] = sum(1 for outcome in tested.values() if outcome == "passed")
        submission["tests_total"] = len(tested)
    tokens = [count(trial, key, where) for key in ("total_input_tokens", "total_output_tokens")]
    if any(tokens):  # 0 (or null) in both is what agents that report nothing write
        submission["total_tokens"] = sum(t or 0 for t in tokens)
    seconds = seconds_between(trial, "agent_started_at", "agent_ended_at", where)
    if seconds is not None:
        submission["execution_time"] = seconds
    submission.update(run_times(trial, "trial_started_at", "trial_ended_at", where))
    meta: dict[str, Any] = {
        "source": str(source),
        "harness": HARNESS,
        "trial_name": trial.get("trial_name"),
        "failure_mode": trial.get("failure_mode"),
        "flags": flags,
    }
    if metadata is not None:
        run_where = str(_metadata_of(source))
        agent = value(metadata, "agent_name", run_where, str)
        model = value(metadata, "model_name", run_where, str)
        if agent:
            submission["tool"] = agent
        if model:
            submission["model"] = model
        meta["run_id"] = metadata.get("run_id")
        meta["harness_version"] = metadata.get("commit_hash")
        dataset = value(metadata, "dataset_name", run_where, str)
        if dataset:
            meta["dataset"] = f"{dataset}@{metadata.get('dataset_version')}"
    if not submission.get("model") and (named := _model_of_folder(source)) is not None:
        submission["model"] = named
        flags.append("model_from_name")
    submission["meta"] = present(meta)
    return ImportedRun(where, submission, verdict_task(task_id, "Terminal-Bench"))
