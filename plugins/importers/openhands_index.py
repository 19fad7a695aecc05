"""``openhands-index``: the OpenHands Index's published results (the repository
``OpenHands/openhands-index-results``): per agent and model a folder with ``metadata.json``,
``scores.json`` (the published score of each benchmark) and ``instance_results/BENCHMARK.json``
(each instance's ``resolved`` and ``cost``), for OpenHands and the other agents it runs
(Claude Code, Codex, Gemini CLI under ``alternative_agents/``).

One run per instance per benchmark: task ``BENCHMARK/INSTANCE`` (``meta.benchmark``, on the
task and the run, so ``--where meta.benchmark=swe-bench`` is one benchmark's board), tool
the agent and its version, the model, the cost, the verdict. The Index scores a benchmark over
all of its instances, an instance it has no outcome for counting as unresolved: ``resolved:
null`` is read as unresolved and flagged ``verdict_missing``, and an instance that other folders
of the same import list but this one does not is added as an unresolved run flagged
``missing_from_results``. Each run keeps its benchmark's published score, and the runs of a
benchmark whose instances do not give that score back are flagged ``published_score_disagrees``.
The mapping is in docs/importers/openhands-index.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena_core.importing.runs import ImportedRun, amount, load_json, present, regular_files, value, verdict_task
from arena_core.io.decoding import InputError

__all__ = ["OpenHandsIndex"]

HARNESS = "openhands-index"
#: Benchmarks whose published metric is not the share of all instances resolved: SWE-bench
#: Multimodal's ``solveable_accuracy`` is over the instances its maintainers deem solvable, a
#: list the results do not carry.
OTHER_METRICS = frozenset({"solveable_accuracy"})


class OpenHandsIndex:
    """The OpenHands Index's results folders: one run per instance per benchmark."""

    name = HARNESS
    description = "OpenHands Index results (metadata.json, scores.json, instance_results/*.json per agent and model)"
    unrecorded = ("total_tokens", "tool_calls", "iterations", "execution_time", "files_created")

    def detect(self, path: Path) -> bool:
        if path.is_dir():
            return any(self.detect_file(p) for p in regular_files(path))
        return False

    def detect_file(self, path: Path) -> bool:
        """A results folder's ``scores.json`` (beside its metadata and instance results) makes
        the folder above it the Index's."""
        return path.name == "scores.json" and _is_folder(path.parent)

    def read(self, paths: Sequence[Path]) -> Iterator[ImportedRun | InputError]:
        folders = sorted({f for p in paths for f in _folders(p)})
        if not folders:
            yield InputError(
                f"{paths[0]}: no OpenHands Index results folder (metadata.json, scores.json, instance_results/)"
            )
            return
        read: list[tuple[Path, dict[str, Any], dict[str, Any]]] = []
        for folder in folders:
            try:
                read.append((folder, *_folder(folder)))
            except InputError as exc:
                yield exc
        everyone: dict[str, set[str]] = {}  # benchmark -> every instance some folder lists
        for _, _, results in read:
            for benchmark, outcomes in results.items():
                everyone.setdefault(benchmark, set()).update(outcomes)
        for folder, about, results in read:
            for benchmark, outcomes in results.items():
                yield from _runs(folder, about, benchmark, outcomes, sorted(everyone[benchmark]))


def _is_folder(path: Path) -> bool:
    return (
        (path / "metadata.json").is_file() and (path / "scores.json").is_file() and (path / "instance_results").is_dir()
    )


def _folders(path: Path) -> list[Path]:
    if _is_folder(path):
        return [path]
    if path.is_dir():
        return [p.parent for p in path.rglob("scores.json") if _is_folder(p.parent) and not p.parent.is_symlink()]
    return []


def _folder(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what the folder says of its agent, model and scores; benchmark -> instance -> outcome)."""
    where = str(folder / "metadata.json")
    metadata = load_json(folder / "metadata.json")
    about: dict[str, Any] = {
        "agent": value(metadata, "agent_name", where, str, required=True),
        "version": value(metadata, "agent_version", where, str),
        "model": value(metadata, "model", where, str, required=True),
        "release_date": value(metadata, "release_date", where, str),
        "openness": value(metadata, "openness", where, str),
        "scores": {},
    }
    where = str(folder / "scores.json")
    scores = load_json(folder / "scores.json")
    if not isinstance(scores, list):
        raise InputError(f"{where}: expected a list of benchmark scores")
    for index, entry in enumerate(scores):
        at = f"{where}: {index}"
        benchmark = value(entry, "benchmark", at, str, required=True)
        about["scores"][benchmark] = {
            "score": amount(entry, "score", at),
            "metric": value(entry, "metric", at, str),
            "agent_version": value(entry, "agent_version", at, str),
            "cost_per_instance": amount(entry, "cost_per_instance", at),
        }
    results: dict[str, Any] = {}
    for path in sorted((folder / "instance_results").glob("*.json")):
        if path.is_symlink() or not path.is_file():
            continue
        outcomes = load_json(path)
        if not isinstance(outcomes, Mapping):
            raise InputError(f"{path}: expected a table of instance ids to outcomes")
        for instance, outcome in outcomes.items():
            at = f"{path}: {instance}"
            if not isinstance(outcome, Mapping):
                raise InputError(f"{at}: expected a table with resolved and cost")
            resolved = outcome.get("resolved")
            if resolved is not None and not isinstance(resolved, bool):
                raise InputError(f"{at}: resolved: expected true, false or null, got {resolved!r}")
            amount(outcome, "cost", at)  # a cost that is not a number is named here
        results[path.stem] = outcomes
    return about, results


def _runs(
    folder: Path, about: dict[str, Any], benchmark: str, outcomes: Mapping[str, Any], instances: list[str]
) -> Iterator[ImportedRun]:
    where = str(folder / "instance_results" / f"{benchmark}.json")
    published = about["scores"].get(benchmark, {})
    version = published.get("agent_version") or about["version"]
    tool = f"{about['agent']} {version}" if version else about["agent"]
    resolved = sum(1 for o in outcomes.values() if o.get("resolved") is True)
    score, metric = published.get("score"), published.get("metric")
    disagrees = (
        score is not None
        and metric not in OTHER_METRICS
        and not math.isclose(round(100 * resolved / len(instances), 1), score, abs_tol=0.051)
    )
    for instance in instances:
        outcome = outcomes.get(instance)
        flags = []
        if outcome is None:
            flags.append("missing_from_results")
        elif outcome.get("resolved") is None:
            flags.append("verdict_missing")
        if disagrees:
            flags.append("published_score_disagrees")
        submission: dict[str, Any] = {
            "id": f"{about['agent']}/{about['model']}/{benchmark}/{instance}",
            "task_id": f"{benchmark}/{instance}",
            "tool": tool,
            "model": about["model"],
            "success": bool(outcome and outcome.get("resolved") is True),
        }
        cost = amount(outcome, "cost", where) if outcome else None
        if cost is not None:
            submission["estimated_cost"] = cost
        submission["meta"] = present(
            {
                "source": where,
                "harness": HARNESS,
                "benchmark": benchmark,
                "agent_version": version,
                "model_release_date": about["release_date"],
                "openness": about["openness"],
                "published_score": score,
                "published_metric": metric,
                "flags": flags,
            }
        )
        task = verdict_task(submission["task_id"], "The OpenHands Index", meta={"benchmark": benchmark})
        yield ImportedRun(where, submission, task)
