"""OpenHands Software Agent SDK conversations as the SDK persists them: a folder with
``base_state.json`` (the conversation's state: its id, agent, execution status and ``stats``)
and ``events/event-NNNNN-<uuid>.json`` (one event per file, in order).

The usage of every model call is in ``base_state.json``, under ``stats.usage_to_metrics``: per
LLM of the conversation (``usage_id``: the agent's, a condenser's, ...) its ``token_usages``,
one per call, each naming the ``response_id`` that the agent's action events carry as
``llm_response_id``, and its ``accumulated_cost``. Prompt tokens include the cached ones (read
and written). Tool calls are the action events but the finish tool's; the time runs from the first event to the last
(the SDK writes naive local timestamps: a duration is exact, the times are kept as written).

A conversation records no task and no outcome: it is imported without either, flagged
``not_graded``, so no board ranks it until something grades it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena_core.importing.runs import ImportedRun, amount, count, load_json, present, run_times, seconds_between, value
from arena_core.io.decoding import InputError

__all__ = ["FINISH_V1", "conversation_run", "is_conversation"]

HARNESS = "openhands"
FORMAT = "openhands-sdk-conversation"
#: The SDK's action of the finish tool, which ends the run rather than acting: not a tool call.
FINISH_V1 = "FinishAction"
#: The SDK's event file name (``openhands.sdk.conversation.persistence_const.EVENT_NAME_RE``).
EVENT_NAME = re.compile(r"^event-(?P<index>\d{5,})-(?P<event_id>[0-9a-fA-F\-]{8,})\.json$")
#: Execution states in which the conversation did not end by itself.
NOT_FINISHED = {"error": "agent_error", "stuck": "stuck", "paused": "not_finished", "running": "not_finished",
                "idle": "not_finished", "waiting_for_confirmation": "not_finished"}  # fmt: skip


def is_conversation(folder: Path) -> bool:
    """A folder holding ``base_state.json`` and an ``events`` folder: a persisted conversation."""
    return (folder / "base_state.json").is_file() and (folder / "events").is_dir()


def conversation_run(folder: Path) -> Iterator[ImportedRun | InputError]:
    try:
        yield _run(folder)
    except InputError as exc:
        yield exc


def _run(folder: Path) -> ImportedRun:
    where = str(folder / "base_state.json")
    state = load_json(folder / "base_state.json")
    ident = value(state, "id", where, str, required=True)
    submission: dict[str, Any] = {"id": ident, "tool": HARNESS, "success": False}
    model = value(state, "agent.llm.model", where, str)
    if model:
        submission["model"] = model
    flags = ["not_graded"]
    status = value(state, "execution_status", where, str)
    if status in NOT_FINISHED:
        flags.append(NOT_FINISHED[status])
    metrics = value(state, "stats.usage_to_metrics", where, dict) or {}
    usages, cost, priced = [], 0.0, True
    for usage_id, spent in metrics.items():
        at = f"{where}: stats.usage_to_metrics.{usage_id}"
        for index, usage in enumerate(value(spent, "token_usages", at, list) or []):
            usages.append(_usage(usage, f"{at}.token_usages.{index}"))
        found = amount(spent, "accumulated_cost", at, zero_is_missing=True)
        priced = priced and found is not None
        cost += found or 0.0
    if usages:
        prompt, completion = sum(u[0] for u in usages), sum(u[1] for u in usages)
        submission.update(total_tokens=prompt + completion, input_tokens=prompt, output_tokens=completion,
                          cache_read_tokens=sum(u[2] for u in usages), cache_write_tokens=sum(u[3] for u in usages))  # fmt: skip
    elif status == "finished":
        flags.append("usage_missing")
    if usages and priced and not math.isclose(cost, 0.0):
        submission["estimated_cost"] = cost
    events = _events(folder)
    actions = [e for e in events if e.get("kind") == "ActionEvent"]
    submission["tool_calls"] = sum(1 for e in actions if (e.get("action") or {}).get("kind") != FINISH_V1)
    agent_usage = value(state, "agent.llm.usage_id", where, str) or "agent"
    calls = value(metrics.get(agent_usage) or {}, "token_usages", where, list)
    responses = {e.get("llm_response_id") for e in actions if e.get("llm_response_id")}
    submission["iterations"] = len(calls) if calls else len(responses)
    stamps = {"first": events[0].get("timestamp"), "last": events[-1].get("timestamp")} if events else {}
    seconds = seconds_between(stamps, "first", "last", str(folder / "events")) if len(events) > 1 else None
    if seconds is not None:
        submission["execution_time"] = seconds
        submission.update(run_times(stamps, "first", "last", str(folder / "events")))
    submission["meta"] = present(
        {
            "source": str(folder),
            "harness": HARNESS,
            "format_version": FORMAT,
            "execution_status": status,
            "events": len(events),
            "flags": flags,
        }
    )
    return ImportedRun(str(folder), submission)


def _usage(usage: Any, where: str) -> tuple[int, int, int, int]:
    prompt, completion = count(usage, "prompt_tokens", where), count(usage, "completion_tokens", where)
    if prompt is None or completion is None:
        raise InputError(f"{where}: prompt_tokens, completion_tokens: expected whole numbers of tokens")
    return (
        prompt,
        completion,
        count(usage, "cache_read_tokens", where) or 0,
        count(usage, "cache_write_tokens", where) or 0,
    )


def _events(folder: Path) -> list[dict[str, Any]]:
    """The conversation's events in the SDK's order (the index in each file's name); a file
    named otherwise is not an event, and a link is never followed."""
    named = []
    for path in (folder / "events").iterdir():
        found = EVENT_NAME.match(path.name)
        if found and not path.is_symlink() and path.is_file():
            named.append((int(found["index"]), path))
    events = []
    for _, path in sorted(named):
        event = load_json(path)
        if not isinstance(event, dict):
            raise InputError(f"{path}: expected an event (a table)")
        value(event, "kind", str(path), str, required=True)
        events.append(event)
    return events
