"""``mini-swe-agent``: trajectory files (``*.traj.json``: format ``mini-swe-agent-1`` from 1.x,
``mini-swe-agent-1.1`` from 2.x), with their verdicts from SWE-bench reports given beside them
(joined on ``instance_id``).

A model turn is a chat message of role ``assistant`` or, from 2.x with the Responses API, a
response (``object: response``, no role). 2.x lists the commands a turn ran in
``extra.actions`` (native tool calls can run several per turn) and stamps every message with
``extra.timestamp``; 1.x ran one command per turn from a bash block and kept the provider's
``created`` time.

A trajectory has no outcome of its own (``exit_status: Submitted`` only means the agent
stopped): without a report that grades it, the run is flagged ``not_graded`` and counted
unresolved. The mapping is in docs/importers/mini-swe-agent.md.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena_core.importing.runs import (
    ImportedRun,
    amount,
    count,
    files_under,
    load_json,
    new_files_in_patch,
    peek,
    present,
    regular_files,
    repository_of,
    trajectory_text,
    value,
    verdict_task,
)
from arena_core.io.decoding import InputError
from arena_plugins.importers.swebench_reports import Verdicts, is_report

__all__ = ["MiniSweAgent", "graded_trajectory", "is_trajectory", "trajectory_run"]

HARNESS = "mini-swe-agent"
#: The trajectory formats read, oldest first: 1.x writes ``mini-swe-agent-1``, 2.x ``mini-swe-agent-1.1``.
FORMATS = ("mini-swe-agent-1", "mini-swe-agent-1.1")
#: 1.x: one command per assistant turn, in a fenced bash block: mini-swe-agent's action regex is
#: ``r"```bash\s*\n(.*?)\n```"`` (DOTALL). Whether it matches is whether the first ``bash`` fence
#: whose blank run holds a line break (this pattern, ending at the first break) is followed by a
#: closing fence on a later line: a later opening fence could only close later. Asked this way
#: the answer costs a substring search, not a lazy match over the whole reply.
_ACTION_OPENING = re.compile(r"```bash[^\S\n]*\n")


class MiniSweAgent:
    """mini-swe-agent trajectories, graded by SWE-bench reports when given."""

    name = HARNESS
    description = "mini-swe-agent trajectories (*.traj.json), with SWE-bench reports for verdicts"
    unrecorded = ()

    def detect(self, path: Path) -> bool:
        if path.is_dir():
            return any(self.detect_file(p) for p in regular_files(path))
        return is_trajectory(path)

    def detect_file(self, path: Path) -> bool:
        """A trajectory makes a folder mini-swe-agent's."""
        return is_trajectory(path)

    def read(self, paths: Sequence[Path]) -> Iterator[ImportedRun | InputError]:
        files = list(files_under(paths, lambda p: is_trajectory(p) or is_report(p)))
        # each file's head read once, not once a pass; a *.traj.json is a trajectory by its name,
        # and is not opened to ask whether it is a report
        reports = [p for p in files if not p.name.endswith(".traj.json") and is_report(p)]
        verdicts = Verdicts()
        yield from verdicts.read_reports(reports)
        chosen = set(reports)
        for path in files:
            if path not in chosen:
                yield graded_trajectory(path, verdicts)


def is_trajectory(path: Path) -> bool:
    """A ``*.traj.json`` file, or JSON whose ``info`` names a ``mini_version`` early on."""
    if path.name.endswith(".traj.json"):
        return True
    return path.suffix == ".json" and b'"mini_version"' in peek(path, 1 << 16)


def trajectory_run(path: Path) -> ImportedRun:
    """One trajectory as a submission, without a verdict (``success`` unset)."""
    where = str(path)
    data = load_json(path)
    info = value(data, "info", where, dict, required=True)
    instance_id = value(data, "instance_id", where, str)
    submission: dict[str, Any] = {"id": instance_id or path.name.removesuffix(".json").removesuffix(".traj")}
    if instance_id:
        submission["task_id"] = instance_id
    submission["tool"] = HARNESS
    model = value(info, "config.model.model_name", where, str)
    if model:
        submission["model"] = model
    calls = count(info, "model_stats.api_calls", where)
    if calls:
        submission["iterations"] = calls
    cost = amount(info, "model_stats.instance_cost", where, zero_is_missing=True)
    if cost is not None:
        submission["estimated_cost"] = cost
    version = value(data, "trajectory_format", where, str)
    if version is not None and version not in FORMATS:
        raise InputError(
            f"{where}: trajectory_format: {version!r} is not a format this importer reads "
            f"({', '.join(FORMATS)}; the newest is {FORMATS[-1]!r}): update arena-core"
        )
    messages = value(data, "messages", where, list, required=True)
    flags: list[str] = []
    turns = [m for m in messages if type(m) is dict and (m.get("role") == "assistant" or m.get("object") == "response")]
    submission["tool_calls"] = sum(_commands(turn, f"{where}: messages") for turn in turns)
    # A reply the harness could not parse is kept as a ``user`` message (``interrupt_type:
    # FormatError``) carrying the billed response: its tokens were spent like any turn's.
    refused = [
        m
        for m in messages
        if type(m) is dict and type(x := m.get("extra")) is dict and x.get("interrupt_type") == "FormatError"
    ]
    usages = [_usage(turn, f"{where}: messages") for turn in turns]
    usages += [u for m in refused if (u := _usage(m, f"{where}: messages")) is not None]
    if usages and all(u is not None for u in usages):
        submission["total_tokens"] = sum(u["total"] for u in usages if u is not None)
        if all(u is not None and "input" in u for u in usages):
            submission.update(_breakdown([u for u in usages if u is not None]))
    elif any(u is not None for u in usages):
        flags.append("token_usage_incomplete")
    stamps = _stamps(messages, f"{where}: messages")
    if len(stamps) >= 2:
        submission["execution_time"] = float(max(stamps) - min(stamps))
    if stamps:  # Unix times
        submission["started_at"] = datetime.datetime.fromtimestamp(min(stamps), datetime.UTC).isoformat()
        submission["finished_at"] = datetime.datetime.fromtimestamp(max(stamps), datetime.UTC).isoformat()
    patch = value(info, "submission", where, str) or ""
    submission["files_created"] = new_files_in_patch(patch)
    exit_status = value(info, "exit_status", where, str)
    limit = amount(info, "config.agent.step_limit", where, zero_is_missing=True)  # 0: no limit
    if exit_status == "LimitsExceeded" or (limit is not None and calls is not None and calls >= limit):
        flags.append("step_limit")  # stopped by the harness's step or cost limit, not by the agent
    meta = {
        "source": where,
        "harness": HARNESS,
        "repo": repository_of(instance_id),
        "harness_version": value(info, "mini_version", where, str),
        "format_version": version,
        "exit_status": exit_status,
        "step_limit": int(limit) if limit is not None else None,
        "format_errors": len(refused) or None,
        "agent_type": value(info, "config.agent_type", where, str),
        "flags": flags + ([] if patch.strip() else ["empty_patch"]),
        "final_answer": patch or None,  # what a judge criterion is shown of the run
        "trajectory": trajectory_text(messages),
    }
    submission["meta"] = present(meta)
    task = verdict_task(instance_id, "SWE-bench") if instance_id else None
    return ImportedRun(where, submission, task)


def graded_trajectory(path: Path, verdicts: Verdicts) -> ImportedRun | InputError:
    """One trajectory with its verdict from ``verdicts`` (``not_graded`` when none has it)."""
    try:
        run = trajectory_run(path)
    except InputError as exc:
        return exc
    submission = {**run.submission, "meta": dict(run.submission["meta"])}
    verdicts.apply(str(submission.get("task_id") or submission["id"]), submission)
    return ImportedRun(run.where, submission, run.task)


def _dig(data: Any, *keys: str) -> Any:
    """The value under ``keys`` in nested JSON tables, ``None`` when absent: a direct lookup for
    the fields read once per message (``value`` checks a found value's type; callers hand it
    only the values that are not what they expect, for its error)."""
    for key in keys:
        if type(data) is not dict:
            return None
        data = data.get(key)
    return data


def _commands(turn: Mapping[str, Any], where: str) -> int:
    """The commands a model turn ran: its ``extra.actions`` (2.x), else its bash block (1.x)."""
    extra = turn.get("extra")
    actions = extra.get("actions") if type(extra) is dict else None
    if actions is not None and type(actions) is not list:
        actions = value(turn, "extra.actions", where, list)
    if actions is not None:
        return len(actions)
    content = str(turn.get("content") or "")
    start = content.find("```bash")  # no opening begins before: found by a substring search
    opening = _ACTION_OPENING.search(content, start) if start != -1 else None
    return 1 if opening is not None and content.find("\n```", opening.end()) != -1 else 0


def _usage(turn: Mapping[str, Any], where: str) -> dict[str, int] | None:
    """A turn's tokens: the provider's usage under ``extra.response`` (chat completions), or a
    Responses-API turn's own ``usage``; ``None`` without one. Either shape is read wherever it
    sits (a refused Responses-API reply keeps its response under ``extra.response``)."""
    extra = turn.get("extra")  # the lookups of _dig, written out: this runs for every turn
    response = extra.get("response") if type(extra) is dict else None
    usage = response.get("usage") if type(response) is dict else None
    if usage is not None and type(usage) is not dict:
        usage = value(turn, "extra.response.usage", where, dict)
    if usage is None and turn.get("object") == "response":
        usage = value(turn, "usage", where, dict)
    if usage is None:
        return None
    responses = "input_tokens" in usage  # the Responses API: prompt = input, completion = output
    given, made, total = (
        usage.get("input_tokens" if responses else "prompt_tokens"),
        usage.get("output_tokens" if responses else "completion_tokens"),
        usage.get("total_tokens"),
    )
    details = usage.get("input_tokens_details" if responses else "prompt_tokens_details")
    cached = details.get("cached_tokens") if type(details) is dict else None
    written = None if responses else usage.get("cache_creation_input_tokens")
    for found in (given, made, total, cached, written):
        if found is not None and (type(found) is not int or found < 0):
            return _checked_usage(usage, where)  # for the error
    return _turn_tokens(given, made, total, cached or 0, written or 0)  # plain counts: nothing to check


def _checked_usage(usage: Mapping[str, Any], where: str) -> dict[str, int] | None:
    """A turn's tokens read with each count's checks, for the error a count that is not one gets."""
    if "input_tokens" in usage:
        given, made = count(usage, "input_tokens", where), count(usage, "output_tokens", where)
        cached = count(usage, "input_tokens_details.cached_tokens", where) or 0
        written = 0
    else:  # chat completions: prompt tokens include the cached ones
        given, made = count(usage, "prompt_tokens", where), count(usage, "completion_tokens", where)
        cached = count(usage, "prompt_tokens_details.cached_tokens", where) or 0
        written = count(usage, "cache_creation_input_tokens", where) or 0
    return _turn_tokens(given, made, count(usage, "total_tokens", where), cached, written)


def _turn_tokens(
    given: int | None, made: int | None, total: int | None, cached: int, written: int
) -> dict[str, int] | None:
    """A turn's token counts as :func:`_usage` gives them."""
    if given is None or made is None:
        return {"total": total} if total is not None else None
    return {
        "total": total if total is not None else given + made,
        "input": given,
        "output": made,
        "cache_read": cached,
        "cache_write": written,
    }


def _breakdown(usages: list[dict[str, int]]) -> dict[str, int]:
    return {
        "input_tokens": sum(u["input"] for u in usages),
        "output_tokens": sum(u["output"] for u in usages),
        "cache_read_tokens": sum(u["cache_read"] for u in usages),
        "cache_write_tokens": sum(u["cache_write"] for u in usages),
    }


def _stamps(messages: list[Any], where: str) -> list[float]:
    """When the messages were written: their ``extra.timestamp`` (2.x stamps every message it
    makes itself), else, in a 1.x trajectory that has none, the model's ``created`` times. The
    two are never mixed: ``created`` is the provider's clock in whole seconds, and a 2.x
    format-error message carries one without a timestamp. One pass over the messages; the
    ``created`` times are checked only when they are used."""
    stamps: list[float] = []
    created: list[Mapping[str, Any]] = []
    for message in messages:
        extra = message.get("extra") if type(message) is dict else None
        if type(extra) is not dict:
            continue
        if extra.get("timestamp") is not None:
            stamps.append(_time(message, extra["timestamp"], "extra.timestamp", where))
        elif not stamps and _dig(extra, "response", "created") is not None:
            created.append(message)
    if stamps:
        return stamps
    return [_time(m, m["extra"]["response"]["created"], "extra.response.created", where) for m in created]


def _time(message: Mapping[str, Any], stamp: Any, key: str, where: str) -> float:
    if not (type(stamp) is int or (type(stamp) is float and math.isfinite(stamp))):
        stamp = value(message, key, where, (int, float))  # what is wrong with it
    return float(stamp)
