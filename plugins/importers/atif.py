"""ATIF (Agent Trajectory Interchange Format) trajectories, as Harbor writes them: what a run's
trajectory says of its tool calls, model calls, tokens, cost and time.

Read as ATIF v1.0 to v1.8 define them: a trajectory may continue in another file of the same
folder (``continued_trajectory_ref``, v1.5 on), whose steps copied from before for context
(``is_copied_context``) are not counted again; it may embed its subagents' trajectories
(``subagent_trajectories``), whose tool calls and model calls are the run's too, and whose tokens
and cost the root's ``final_metrics`` already include (ATIF's ``total_cost_usd`` is "including
cost for subagents", and Harbor's converters fold the subagents' tokens in likewise); an agent step's
``llm_call_count`` (v1.7 on) says how many model calls it stands for (0: a dispatch without a
model). ``session_id`` is optional. A later 1.x version is read and flagged; a 2.x is refused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena_core.importing.runs import amount, count, load_json, seconds_between, unlinked_file, value
from arena_core.io.decoding import InputError

__all__ = ["NEWEST", "continuation_of", "trajectory_figures"]

#: The newest ATIF version this reader knows.
NEWEST = (1, 8)
_VERSION = re.compile(r"^ATIF-v(\d+)\.(\d+)$")
#: The most continuation files one trajectory may chain (a cycle or a runaway stops here).
MAX_SEGMENTS = 100


def trajectory_figures(path: str | Path) -> tuple[dict[str, Any], list[str], str | None]:
    """(figures, flags, version) of the trajectory at ``path`` and its continuations."""
    figures: dict[str, Any] = {"tool_calls": 0, "iterations": 0}
    totals = {"prompt": 0, "completion": 0, "cached": 0, "cost": 0.0}
    measured = {"tokens": True, "cost": True}
    flags: list[str] = []
    stamps: list[str] = []
    seen: set[str] = set()
    current: str | None = os.fspath(path)  # paths as text: a trial's few files are joined, not parsed
    version = None
    while current is not None:
        if current in seen or len(seen) >= MAX_SEGMENTS:
            raise InputError(f"{current}: continued_trajectory_ref: a chain of continuations that does not end")
        seen.add(current)
        data = load_json(current)
        where = current
        found = _version(data, where, flags)  # every segment: a continuation may be newer
        version = version or found
        _add(data, where, figures, totals, measured, stamps, flags)
        current = _continuation(data, current, where)
    if measured["tokens"]:
        figures["total_tokens"] = totals["prompt"] + totals["completion"]
        figures.update(input_tokens=totals["prompt"], output_tokens=totals["completion"],
                       cache_read_tokens=totals["cached"])  # fmt: skip
    if measured["cost"] and totals["cost"]:
        figures["estimated_cost"] = totals["cost"]
    if len(stamps) >= 2:
        figures["execution_time"] = seconds_between({"a": min(stamps), "b": max(stamps)}, "a", "b", str(path))
    if figures["iterations"] == 0:
        del figures["iterations"]
    return figures, flags, version


def _version(data: Any, where: str, flags: list[str]) -> str | None:
    given = value(data, "schema_version", where, str)
    found = _VERSION.match(given or "")
    if given is None or found is None:
        raise InputError(f"{where}: schema_version: expected ATIF-vMAJOR.MINOR, got {given!r}")
    major, minor = int(found[1]), int(found[2])
    if major > NEWEST[0]:
        raise InputError(
            f"{where}: schema_version: {given} is newer than the newest ATIF this importer reads "
            f"(ATIF-v{NEWEST[0]}.{NEWEST[1]}): update arena-core"
        )
    if (major, minor) > NEWEST:
        flags.append("format_newer_than_known")
    return str(given)


def _add(
    data: Any,
    where: str,
    figures: dict[str, Any],
    totals: dict[str, Any] | None,
    measured: dict[str, bool],
    stamps: list[str],
    flags: list[str],
) -> None:
    """Add one trajectory's steps (and, recursively, its embedded subagents' steps) to the
    running figures, and its totals when it is a root (``totals`` given)."""
    steps = value(data, "steps", where, list, required=True)
    for index, step in enumerate(steps):
        # Each step's fields are looked up directly (a trajectory has hundreds of steps);
        # ``value`` and ``count`` are asked only about a step that is not what ATIF writes, for
        # the error naming its field.
        get = step.get if type(step) is dict else None
        copied, calls, source, stamp, models = (
            (get("is_copied_context"), get("tool_calls"), get("source"), get("timestamp"), get("llm_call_count"))
            if get is not None
            else (None,) * 5
        )
        if (
            get is None
            or not (copied is None or type(copied) is bool)
            or (
                not copied
                and not (
                    (calls is None or type(calls) is list)
                    and (source is None or type(source) is str)
                    and (stamp is None or type(stamp) is str)
                    and (source != "agent" or models is None or (type(models) is int and models >= 0))
                )
            )
        ):
            copied, calls, source, stamp, models = _checked_step(step, f"{where}: steps.{index}")
        if copied:
            continue  # already counted in the segment it was copied from
        figures["tool_calls"] += len(calls or ())
        if source == "agent":
            figures["iterations"] += 1 if models is None else models
        if stamp:
            stamps.append(stamp)
    for index, sub in enumerate(value(data, "subagent_trajectories", where, list) or []):
        _add(sub, f"{where}: subagent_trajectories.{index}", figures, None, measured, stamps, flags)
    if totals is None:
        return  # a subagent: its usage is in its root's final_metrics
    prompt = count(data, "final_metrics.total_prompt_tokens", where)
    completion = count(data, "final_metrics.total_completion_tokens", where)
    if prompt is None or completion is None:
        measured["tokens"] = False
    else:
        totals["prompt"] += prompt
        totals["completion"] += completion
        totals["cached"] += count(data, "final_metrics.total_cached_tokens", where) or 0
    cost = amount(data, "final_metrics.total_cost_usd", where)
    if cost is None:
        measured["cost"] = False
    else:
        totals["cost"] += cost


def _checked_step(step: Any, at: str) -> tuple[Any, Any, Any, Any, Any]:
    """A step's fields checked one by one, in the order they are used: raises for the first that
    is not what ATIF writes (a copied step's others are not read)."""
    if not isinstance(step, Mapping):
        raise InputError(f"{at}: expected a step (a table)")
    if value(step, "is_copied_context", at, bool):
        return True, None, None, None, None
    calls = value(step, "tool_calls", at, list)
    source = value(step, "source", at, str)
    models = count(step, "llm_call_count", at) if source == "agent" else None
    return False, calls, source, value(step, "timestamp", at, str), models


def continuation_of(path: Path) -> Path | None:
    """The file the trajectory at ``path`` continues in, if any (a segment, not a run)."""
    found = _continuation(load_json(path), os.fspath(path), str(path))
    return None if found is None else Path(found)


def _continuation(data: Any, path: str, where: str) -> str | None:
    """The file a trajectory continues in: a file name in the same folder, never a path."""
    ref = value(data, "continued_trajectory_ref", where, str)
    if not ref:
        return None
    name = Path(ref).name
    if name != ref or name in ("", ".", ".."):
        raise InputError(f"{where}: continued_trajectory_ref: expected a file name in the same folder, got {ref!r}")
    folder = os.path.dirname(path)
    found = os.path.join(folder, name)
    if not unlinked_file(found, folder):  # a regular file, not a link to one
        raise InputError(f"{where}: continued_trajectory_ref: {ref!r} is not a file beside it")
    return found
