"""``harbor``: Harbor trial directories (``result.json``, ``TrialResult``) with the agent's ATIF
trajectory (``agent/trajectory.json``), and ATIF trajectories on their own.

A trial's verdict, time, tokens and cost come from its ``result.json`` (a multi-step trial's from
its steps); the trajectory adds the tool calls and model calls, and the tokens and cost when the
result has none. When both report
tokens or cost and they differ, the result's figure is kept and the run flagged. An ATIF file
alone has no task and no outcome: it is imported with neither (and flagged ``not_graded``).
The mapping is in docs/importers/harbor.md.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from arena_core.importing.heads import head_or_whole
from arena_core.importing.runs import (
    ImportedRun,
    amount,
    count,
    decode_json,
    files_under,
    load_json,
    peek,
    present,
    regular_files,
    run_times,
    seconds_between,
    unlinked_file,
    value,
    verdict_task,
)
from arena_core.io.decoding import InputError
from arena_plugins.importers.atif import continuation_of, trajectory_figures
from arena_plugins.importers.harbor_jobs import JobNotes
from arena_plugins.importers.harbor_rewards import reward_of, step_rewards

__all__ = ["AGENT_FAILURES", "Harbor"]

HARNESS = "harbor"
#: Exceptions that Harbor (0.25, ``harbor.models.trial.error_policy``) counts as the agent's own
#: doing, with a valid reward: it ran out of budget or refused. Any other recorded exception (a
#: sandbox that did not start, a model provider's outage, the verifier, a cancellation) makes the
#: reward invalid: a harness error.
AGENT_FAILURES = frozenset(
    {
        "AgentTimeoutError",
        "ContextWindowExceededError",
        "OutputTokenExceededError",
        "ContextLengthExceededError",
        "OutputLengthExceededError",
        "AgentSafetyRefusalError",
        "ContentPolicyViolationError",
    }
)


class Harbor:
    """Harbor trials: one submission per ``result.json`` (or per lone ATIF trajectory)."""

    name = HARNESS
    description = "Harbor trial directories (result.json + agent/trajectory.json) and ATIF trajectories"
    unrecorded = ("files_created",)

    def __init__(self, reward_key: str | None = None, reward_aggregate: str = "mean") -> None:
        #: Which key of a reward table is the correctness, and how keys combine without one
        #: (``[plugins.importers]`` ``harbor_reward_key``, ``harbor_reward_aggregate``).
        self.reward_key = reward_key
        self.reward_aggregate = reward_aggregate

    def detect(self, path: Path) -> bool:
        if path.is_dir():
            return any(self.detect_file(p) for p in regular_files(path))
        return _is_result(path) or _is_atif(path)

    def detect_file(self, path: Path) -> bool:
        """A trial's ``result.json`` or an ATIF ``trajectory.json`` makes a folder Harbor's."""
        return _is_result(path) or (path.name == "trajectory.json" and _is_atif(path))

    def read(self, paths: Sequence[Path]) -> Iterator[ImportedRun | InputError]:
        named = {p for p in paths if not p.is_dir()}
        files = list(files_under(paths, lambda p: p.suffix == ".json"))
        usages: dict[Path, dict[str, float] | InputError] = {}
        kinds = _kinds(files, named, usages)
        by_kind: dict[str | None, list[Path]] = {"trial": [], "job": [], "analysis": [], "atif": [], None: []}
        for path in files:
            by_kind[kinds[path]].append(path)
        results = by_kind["trial"]
        notes = JobNotes()
        yield from notes.read(by_kind["job"], by_kind["analysis"], results, partial(_noted_usage, usages))
        trials = {os.path.dirname(p) for p in results}
        lone = [p for p in by_kind["atif"] if _trial_of(p) not in trials]
        segments: set[Path] = set()
        for path in lone:  # a file another one continues in is part of that run, not a run
            try:
                if (found := continuation_of(path)) is not None:
                    segments.add(found)
            except InputError:
                pass  # reported when the file itself is read below
        for path in results + [p for p in lone if p not in segments]:
            try:
                if kinds[path] == "trial":
                    yield notes.apply(path, _trial(path, self.reward_key, self.reward_aggregate))
                else:
                    yield _lone_trajectory(path)
            except InputError as exc:
                yield exc


def _kinds(
    files: list[Path], named: set[Path], usages: dict[Path, dict[str, float] | InputError]
) -> dict[Path, str | None]:
    """What each file is (:func:`_result_kind`, :func:`_kind`), from one read of its head (a
    trial's ``result.json`` read on to its end); a file given by name is read as what its name
    says (its reader says what is wrong). A file in the agent folder of a trial found here is not read:
    the trial reads its trajectory, and nothing else there is a run."""
    kinds: dict[Path, str | None] = {}
    for path in files:
        if path.name == "result.json":
            kinds[path] = _result_kind(path, usages)
            if kinds[path] is None and path in named:
                kinds[path] = "trial"
        elif path.name == "analysis.json":
            kinds[path] = _kind(path)
    trials = {os.path.dirname(p) for p, k in kinds.items() if k == "trial"}
    for path in files:
        if path not in kinds:
            kinds[path] = None if _trial_of(path) in trials else _kind(path)
    for path in named:
        if kinds.get(path) is None:
            kinds[path] = "trial" if path.name == "result.json" else "atif"
    return kinds


#: The bytes of a file's head that tell what it is.
_HEAD = 4096


def _kind(path: Path) -> str | None:
    """What a file other than a ``result.json`` (:func:`_result_kind`) is, from one read of its
    head: a job's ``analysis.json``, an ATIF trajectory (``atif``), or neither."""
    if path.suffix != ".json":
        return None
    head = peek(path, _HEAD)
    if path.name == "analysis.json" and b'"results"' in head and b'"checks"' in head:
        return "analysis"
    return "atif" if b'"ATIF-' in head else None


def _result_kind(path: Path, usages: dict[Path, dict[str, float] | InputError]) -> str | None:
    """What a ``result.json`` is, told by its head: a trial's (``trial``), a job's (``job``) or
    neither. A trial's is read whole from the same open (a few KB), and its tokens and cost are
    noted in ``usages`` for its job's totals: the job's check read and decoded every trial's file
    again (3,000 trials beside their job's file: 2.74x -> 2.64x reading and decoding them once).
    Any other file is read no further than its head."""
    try:
        data, trial = head_or_whole(path, _HEAD, _names_a_trial)
        if not trial:
            return "job" if b'"n_total_trials"' in data else None
        usages[path] = _trial_usage(decode_json(data, path), str(path))
    except InputError as exc:
        usages[path] = exc  # the job's check raises it, as reading the file there did
    return "trial"


def _names_a_trial(head: bytes) -> bool:
    return b'"trial_name"' in head


def _trial_of(trajectory: Path) -> str | None:
    """The trial folder whose agent wrote ``trajectory``: ``TRIAL/agent/FILE``, or a multi-step
    trial's ``TRIAL/steps/STEP/agent/FILE`` (Harbor moves each step's agent logs there). Paths
    as text: a folder of 10,000 trials asks this of every file in it."""
    agent = os.path.dirname(trajectory)
    if os.path.basename(agent) != "agent":
        return None
    step = os.path.dirname(agent)
    steps = os.path.dirname(step)
    return os.path.dirname(steps) if os.path.basename(steps) == "steps" else step


def _is_result(path: Path) -> bool:
    return path.name == "result.json" and _names_a_trial(peek(path))


def _is_atif(path: Path) -> bool:
    return path.suffix == ".json" and b'"ATIF-' in peek(path)


def _trial(path: Path, reward_key: str | None, aggregate: str) -> ImportedRun:
    where = str(path)
    data = load_json(path)
    task_id = value(data, "task_name", where, str, required=True)
    ident = value(data, "trial_name", where, str, required=True)
    flags: list[str] = []
    submission: dict[str, Any] = {"id": ident, "task_id": task_id}
    agent = value(data, "agent_info.name", where, str)
    if agent:
        submission["tool"] = agent
    model = value(data, "agent_info.model_info.name", where, str)
    if model:
        submission["model"] = model
    steps = [st for st in value(data, "step_results", where, list) or [] if isinstance(st, Mapping)]
    reward, rewards = reward_of(data, steps, where, flags, reward_key, aggregate)
    if reward is not None:
        submission["correctness"] = reward
    exceptions = [e for e in [data.get("exception_info"), *(st.get("exception_info") for st in steps)] if e]
    failed = [value(e, "exception_type", where, str, required=True) for e in exceptions]
    harness = [f for f in failed if f not in AGENT_FAILURES]
    if harness:
        flags.append("harness_error")  # Harbor itself calls the reward invalid and retries or drops it
    elif failed:
        flags.append("agent_failure")
    submission["success"] = reward == 1 and not failed
    submission.update(_usage(data, steps, where))
    if "total_tokens" not in submission and not failed:  # Harbor records usage for every trial that ran
        flags.append("usage_missing")
    seconds = seconds_between(data, "agent_execution.started_at", "agent_execution.finished_at", where)
    if seconds is None and steps:
        spans = [
            seconds_between(st, "agent_execution.started_at", "agent_execution.finished_at", where) for st in steps
        ]
        seconds = sum(x for x in spans if x is not None) if any(x is not None for x in spans) else None
    if seconds is None:
        seconds = seconds_between(data, "started_at", "finished_at", where)
    if seconds is not None:
        submission["execution_time"] = seconds
    submission.update(run_times(data, "started_at", "finished_at", where))
    provider = value(data, "agent_info.model_info.provider", where, str)
    if provider and provider.strip():
        submission["provider"] = provider
    figures, more, version = _trajectories(path, steps, where)
    flags += more
    for key, figure in figures.items():
        if key not in submission:
            submission[key] = figure
        elif key in ("total_tokens", "estimated_cost") and not math.isclose(submission[key], figure):
            flags.append(f"{key}_disagrees_with_trajectory")
    meta = {
        "source": where,
        "harness": HARNESS,
        "agent_version": value(data, "agent_info.version", where, str),
        "dataset": value(data, "source", where, str),
        "exception": failed[0] if failed else None,
        "exception_message": value(exceptions[0], "exception_message", where, str) if exceptions else None,
        "reward": reward,
        "rewards": rewards if rewards and set(rewards) != {"reward"} else None,
        "steps": len(steps) or None,
        "step_rewards": step_rewards(steps, where, reward_key, aggregate),
        "format_version": version,
        "flags": flags,
    }
    submission["meta"] = present(meta)
    return ImportedRun(where, submission, verdict_task(task_id, "Harbor"))


def _trajectories(path: Path, steps: list[Mapping[str, Any]], where: str) -> tuple[dict[str, Any], list[str], Any]:
    """(figures, flags, version) of the trial's trajectories: ``agent/trajectory.json``, or a
    multi-step trial's one per step (``steps/NAME/agent/trajectory.json``), summed. A file is
    read only where it really lies (never through a link); a step without one adds nothing."""
    trial = os.path.dirname(path)  # paths as text: joined, not parsed (a trial's are a few)
    if not steps:
        files = [os.path.join(trial, "agent", "trajectory.json")]
    else:
        names = [value(st, "step_name", f"{where}: step_results", str, required=True) for st in steps]
        for name in names:
            if Path(name).name != name or name in (".", "..") or "\0" in name:
                raise InputError(f"{where}: step_results.step_name: expected a step's folder name, got {name!r}")
        files = [os.path.join(trial, "steps", name, "agent", "trajectory.json") for name in names]
    read = [trajectory_figures(f) for f in files if unlinked_file(f, trial)]
    found: dict[str, Any] = {}
    flags: list[str] = []
    for figures, more, _ in read:
        flags += [f for f in more if f not in flags]
        for key, figure in figures.items():
            found[key] = found.get(key, 0) + figure
    if len(read) > 1:
        found.pop("execution_time", None)  # the steps' spans leave out the gaps between them
        for key in ("total_tokens", "input_tokens", "output_tokens", "cache_read_tokens", "estimated_cost"):
            if any(key not in figures for figures, _, _ in read):
                found.pop(key, None)  # a step did not record it: the sum would be short
    return found, flags, read[-1][2] if read else None


def _lone_trajectory(path: Path) -> ImportedRun:
    where = str(path)
    data = load_json(path)
    figures, flags, version = trajectory_figures(path)
    ident = value(data, "session_id", where, str) or value(data, "trajectory_id", where, str) or path.stem
    submission: dict[str, Any] = {"id": ident, "success": False, **figures}
    agent = value(data, "agent.name", where, str)
    if agent:
        submission["tool"] = agent
    model = value(data, "agent.model_name", where, str)
    if model:
        submission["model"] = model
    meta = {
        "source": where,
        "harness": HARNESS,
        "format_version": version,
        "agent_version": value(data, "agent.version", where, str),
        "flags": ["not_graded", *flags],
    }
    submission["meta"] = present(meta)
    return ImportedRun(where, submission)


def _noted_usage(usages: Mapping[Path, dict[str, float] | InputError], path: Path) -> dict[str, float]:
    """A trial's tokens and cost for its job's totals, as noted when its kind was told; read now
    for a file given by name as a trial whose head does not say so."""
    found = usages.get(path)
    if found is None:
        return _trial_usage(load_json(path), str(path))
    if isinstance(found, InputError):
        raise found
    return found


def _trial_usage(data: Any, where: str) -> dict[str, float]:
    """A trial's tokens and cost under the names of a job's totals, for checking them."""
    steps = [st for st in value(data, "step_results", where, list) or [] if isinstance(st, Mapping)]
    found = _usage(data, steps, where)
    names = {
        "input_tokens": "n_input_tokens",
        "cache_read_tokens": "n_cache_tokens",
        "output_tokens": "n_output_tokens",
        "estimated_cost": "cost_usd",
    }
    return {names[k]: v for k, v in found.items() if k in names}


def _usage(data: Mapping[str, Any], steps: list[Mapping[str, Any]], where: str) -> dict[str, Any]:
    """Tokens and cost from the trial's ``agent_result``, or summed over its steps' (a multi-step
    trial records them per step). Harbor's input tokens hold the cached ones."""
    contexts = [("agent_result", data)] if data.get("agent_result") else [("agent_result", st) for st in steps]
    found: dict[str, Any] = {}
    parts = {
        "n_input_tokens": "input_tokens",
        "n_cache_tokens": "cache_read_tokens",
        "n_output_tokens": "output_tokens",
    }
    sums: dict[str, int] = {}
    costs = []
    for key, holder in contexts:
        if not holder.get(key):
            continue
        for part, name in parts.items():
            n = count(holder, f"{key}.{part}", where)
            if n is not None:
                sums[name] = sums.get(name, 0) + n
        costs.append(amount(holder, f"{key}.cost_usd", where, zero_is_missing=True))
    if "input_tokens" in sums or "output_tokens" in sums:
        found["total_tokens"] = sums.get("input_tokens", 0) + sums.get("output_tokens", 0)
    if "input_tokens" in sums and "output_tokens" in sums:
        found.update(sums)
        found.setdefault("cache_read_tokens", 0)
    if costs and all(c is not None for c in costs):
        found["estimated_cost"] = math.fsum(c for c in costs if c is not None)
    return found
