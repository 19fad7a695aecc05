"""``inspect``: Inspect AI eval logs, ``.json`` and ``.eval`` (a zip of ``header.json`` and one
``samples/ID_epoch_N.json`` per sample).

One submission per sample and epoch. The primary scorer (the log's first) gives correctness,
read as Inspect's ``value_to_float`` reads it (``C`` 1, ``P`` 0.5, ``I`` and ``N`` 0, numbers as
they are); success is a score of 1 without a sample error. The mapping is in
docs/importers/inspect.md.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from arena_core.importing.runs import (
    ImportedRun,
    amount,
    count,
    files_under,
    is_regular,
    load_json,
    peek,
    present,
    problem_date,
    regular_files,
    run_times,
    seconds_between,
    trajectory_text,
    value,
    verdict_task,
)
from arena_core.io.decoding import InputError
from arena_plugins.importers.inspect_archive import ArchiveTooLarge, Expansion, member

__all__ = ["InspectLogs", "score_value"]

HARNESS = "inspect_ai"
#: The newest log schema (``EvalLog.version``) this importer knows: Inspect 0.3 releases write 2
#: (0.3.285 too), and some 2025 builds wrote 3 with the same shape.
SCHEMA_VERSION = 3

#: Inspect's score letters (``inspect_ai.scorer._metric``), and the words ``value_to_float`` reads.
LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0, "yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


class InspectLogs:
    """Inspect AI logs: one submission per sample and epoch."""

    name = "inspect"
    description = "Inspect AI eval logs (.json and .eval)"
    unrecorded = ("files_created",)

    def detect(self, path: Path) -> bool:
        if path.is_dir():
            return any(self.detect_file(p) for p in regular_files(path))
        return _is_log(path)

    def detect_file(self, path: Path) -> bool:
        """An eval log (``.eval``, or ``.json``) makes a folder Inspect's."""
        return path.suffix in (".eval", ".json") and _is_log(path)

    def read(self, paths: Sequence[Path]) -> Iterator[ImportedRun | InputError]:
        """A log's runs one sample at a time (an ``.eval`` archive is never held whole); a bad
        sample is yielded as its error and the others read; an archive that expands past its
        bound is read no further. A log found twice (the same ``eval_id``: an ``.eval`` and the
        ``.json`` that ``inspect log convert`` made of it) is read once, from the ``.eval``: the
        archives are read first, then the JSON logs, each in name order."""
        read: dict[str, Path] = {}
        found = list(files_under(paths, _is_log))
        for path in [*(p for p in found if p.suffix == ".eval"), *(p for p in found if p.suffix != ".eval")]:
            samples = _eval_zip(path) if path.suffix == ".eval" else _json_log(path)
            try:
                log = _Log.of(next(samples), path)
                if log.eval_id in read:  # one log twice: an .eval and its `inspect log convert` twin
                    continue
                read[log.eval_id] = path
                for where, sample in samples:
                    try:
                        yield _sample(log, sample, where)
                    except InputError as exc:
                        yield exc
            except InputError as exc:
                yield exc


def _is_log(path: Path) -> bool:
    if path.suffix == ".eval":
        return is_regular(path) and zipfile.is_zipfile(path)
    head = peek(path, 512)
    return path.suffix == ".json" and b'"version"' in head and b'"eval"' in head and b'"status"' in head


def _json_log(path: Path) -> Iterator[Any]:
    """The log's header, then ``(where, sample)`` of each sample."""
    data = load_json(path)
    yield data
    samples = value(data, "samples", str(path), list) or []
    yield from ((f"{path}: samples.{index}", sample) for index, sample in enumerate(samples))


def _eval_zip(path: Path) -> Iterator[Any]:
    """The archive's header, then ``(where, sample)`` of each sample member, read one at a time
    (a member that cannot be read comes as its error in place of the sample)."""
    try:
        with zipfile.ZipFile(path) as archive:
            expansion = Expansion(path, archive)
            yield member(archive, path, "header.json", expansion)
            names = sorted(n for n in archive.namelist() if n.startswith("samples/") and n.endswith(".json"))
            for name in names:
                where = f"{path}: {name}"
                try:
                    yield where, member(archive, path, name, expansion)
                except ArchiveTooLarge:
                    raise
                except InputError as exc:
                    yield where, exc
    except (zipfile.BadZipFile, EOFError) as exc:
        raise InputError(f"{path}: not a readable .eval archive: {exc}") from None


def score_value(raw: Any, where: str, field: str) -> float:
    """A score's value as a number, as Inspect's ``value_to_float`` reads it."""
    if isinstance(raw, bool):
        return 1.0 if raw else 0.0
    if isinstance(raw, (int, float)):
        return float(raw)
    if isinstance(raw, str):
        if raw.strip() in LETTERS:
            return LETTERS[raw.strip()]
        if raw.strip().lower() in LETTERS:
            return LETTERS[raw.strip().lower()]
        try:
            return float(raw)
        except ValueError:
            pass
    raise InputError(f"{where}: {field}: expected C, I, P, N or a number, got {raw!r}")


@frozen
class _Log:
    """What a log's header says of all its samples, read once per log."""

    path: Path
    eval_id: str
    task: str
    tool: str
    model: str | None
    scorers: list[str]
    harness_version: str | None
    status: str | None
    schema_version: int

    @classmethod
    def of(cls, header: Any, path: Path) -> _Log:
        where = str(path)
        steps = value(header, "plan.steps", where, list) or []
        solvers = [s.get("solver") for s in steps if isinstance(s, Mapping)]
        solver = value(header, "eval.solver", where, str) or "+".join(s for s in solvers if s)
        scorers = value(header, "eval.scorers", where, list) or []
        version = value(header, "version", where, int, required=True)
        if version > SCHEMA_VERSION:
            raise InputError(
                f"{where}: version: log schema {version} is newer than the newest this importer reads "
                f"({SCHEMA_VERSION}); convert it with Inspect (`inspect log convert`) or update arena-core"
            )
        return cls(
            path,
            eval_id=value(header, "eval.eval_id", where, str, required=True),
            task=value(header, "eval.task", where, str, required=True),
            tool=f"{HARNESS}/{solver}" if solver else HARNESS,
            model=value(header, "eval.model", where, str),
            scorers=[s["name"] for s in scorers if isinstance(s, Mapping) and isinstance(s.get("name"), str)],
            harness_version=value(header, "eval.packages.inspect_ai", where, str),
            status=value(header, "status", where, str),
            schema_version=version,
        )


def _sample(log: _Log, sample: Any, where: str) -> ImportedRun:
    if isinstance(sample, InputError):
        raise sample
    if not isinstance(sample, Mapping):
        raise InputError(f"{where}: expected a sample table")
    sample_id = value(sample, "id", where, (str, int), required=True)
    epoch = value(sample, "epoch", where, int) or 1
    flags: list[str] = []
    task_id = f"{log.task}/{sample_id}"
    submission: dict[str, Any] = {"id": f"{log.eval_id}/{sample_id}/{epoch}", "task_id": task_id, "tool": log.tool}
    if log.model:
        submission["model"] = log.model
        if "/" in log.model:  # Inspect names a model provider/model
            submission["provider"] = log.model.split("/", 1)[0]
    usage = value(sample, "model_usage", where, dict) or {}
    tokens = [count(used, "total_tokens", f"{where}: model_usage.{name}") for name, used in usage.items()]
    if usage and all(t is not None for t in tokens):
        submission["total_tokens"] = sum(t for t in tokens if t is not None)
    submission.update(_breakdown(usage, where))
    costs = [amount(used, "total_cost", f"{where}: model_usage.{name}") for name, used in usage.items()]
    if costs and all(c is not None for c in costs) and any(costs):
        submission["estimated_cost"] = sum(c for c in costs if c is not None)
    messages = value(sample, "messages", where, list) or []
    assistant = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "assistant"]
    submission["tool_calls"] = sum(len(m.get("tool_calls") or ()) for m in assistant)
    if assistant:
        submission["iterations"] = len(assistant)
    seconds = amount(sample, "total_time", where)
    if seconds is None:  # a sample written without total_time: its start and end
        seconds = seconds_between(sample, "started_at", "completed_at", where)
    if seconds is not None:
        submission["execution_time"] = seconds
    submission.update(run_times(sample, "started_at", "completed_at", where))
    scores = value(sample, "scores", where, dict) or {}
    primary = next((name for name in log.scorers if name in scores), next(iter(scores), None))
    error = sample.get("error")
    if primary is None:
        flags.append("not_graded")
        correct = None
    else:
        raw = value(scores, f"{primary}.value", where, (str, int, float, bool, dict))
        correct = _correctness(raw, where, f"scores.{primary}.value")
        if 0 <= correct <= 1:
            submission["correctness"] = correct
        else:
            flags.append("score_outside_0_1")
    if error:
        flags.append("sample_error")
    invalidated = sample.get("invalidation") is not None
    if invalidated:  # marked invalid after the run (a wrong scorer, a broken sandbox): not a verdict
        flags.append("invalidated")
        submission.pop("correctness", None)
    submission["success"] = correct == 1 and not error and not invalidated
    meta = {
        "source": str(log.path),
        "harness": HARNESS,
        "harness_version": log.harness_version,
        "log_status": log.status,
        "eval_id": log.eval_id,
        "sample_id": sample_id,
        "epoch": epoch,
        "format_version": f"inspect-log-v{log.schema_version}",
        "scorer": primary,
        "score": scores[primary].get("value") if primary else None,
        "working_time": value(sample, "working_time", where, (int, float)),
        "models_answered": sorted(usage) if set(usage) - {log.model} else None,
        "model_fallbacks": _fallbacks(sample, where),
        "invalidation_reason": value(sample, "invalidation.reason", where, str) if invalidated else None,
        "error": error.get("message") if isinstance(error, Mapping) else error if isinstance(error, str) else None,
        "flags": flags,
        "final_answer": value(sample, "output.completion", where, str) or None,  # what a judge is shown
        "trajectory": trajectory_text(messages),
    }
    submission["meta"] = present(meta)
    published = problem_date(sample.get("metadata"))  # the dataset's row, as Inspect's samples keep it
    return ImportedRun(
        where, submission, verdict_task(task_id, "Inspect AI", meta={"task": log.task}, created_at=published)
    )


def _correctness(raw: Any, where: str, field: str) -> float:
    """A score's value as correctness: a dict of checks (current scorers' ``{"tests": "C", "lint":
    "I"}``) gives the mean of its values, each read as ``value_to_float`` reads it."""
    if isinstance(raw, Mapping):
        if not raw:
            raise InputError(f"{where}: {field}: expected at least one check in the score's table")
        return math.fsum(score_value(v, where, f"{field}.{k}") for k, v in raw.items()) / len(raw)
    return score_value(raw, where, field)


def _breakdown(usage: Mapping[str, Any], where: str) -> dict[str, int]:
    """The token breakdown summed over the models a sample used. Inspect's ``input_tokens``
    leaves the cached tokens out for some providers and counts them for others; its
    ``total_tokens`` always holds them, so the input is the total less the output."""
    sums = {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
    }
    for name, used in usage.items():
        at = f"{where}: model_usage.{name}"
        output = count(used, "output_tokens", at)
        total = count(used, "total_tokens", at)
        read, written = count(used, "input_tokens_cache_read", at), count(used, "input_tokens_cache_write", at)
        fresh = count(used, "input_tokens", at)
        if output is None or (total is None and fresh is None):
            return {}  # a model without the figures: no breakdown rather than a partial one
        sums["input_tokens"] += total - output if total is not None else (fresh or 0) + (read or 0) + (written or 0)
        sums["output_tokens"] += output
        sums["cache_read_tokens"] += read or 0
        sums["cache_write_tokens"] += written or 0
        sums["reasoning_tokens"] += count(used, "reasoning_tokens", at) or 0
    if not sums["reasoning_tokens"]:
        del sums["reasoning_tokens"]  # none recorded (a model without reasoning, or not counted)
    return sums if usage else {}


def _fallbacks(sample: Mapping[str, Any], where: str) -> list[str] | None:
    """The models that answered in place of the one asked for (``model_fallbacks``)."""
    found = value(sample, "model_fallbacks", where, list) or []
    names = [f.get("fallback_model") for f in found if isinstance(f, Mapping)]
    return [n for n in names if isinstance(n, str)] or None
