"""``openhands``: OpenHands evaluation ``output.jsonl`` (one ``EvalOutput`` per line) and the
issue resolver's ``output.jsonl`` (``ResolverOutput``), with verdicts from
``test_result.report`` (after ``eval_infer.py``), the resolver's ``success``, or SWE-bench
reports given beside them.

Also the Software Agent SDK's persisted conversations (``base_state.json`` and ``events/``:
``openhands_conversations.py``). Two generations of ``output.jsonl``: V0 (the ``openhands-ai`` evaluation harness: ``metadata.llm_config``, history
actions as strings) and V1 (the Software Agent SDK's benchmarks: ``metadata.llm``, history
events with a ``kind``, actions as tables). In V1's critic mode every attempt is kept in
``output.critic_attempt_N.jsonl`` and the chosen one in ``output.jsonl``: a run is the chosen
attempt, its cost and tokens what all its attempts spent.

OpenHands writes ``accumulated_cost`` 0 when its price table does not know the model: 0 is
read as "not recorded". The mapping is in docs/importers/openhands.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from attrs import frozen

from arena_core.importing.runs import (
    ImportedRun,
    amount,
    count,
    files_under,
    new_files_in_patch,
    peek,
    present,
    problem_date,
    regular_files,
    repository_of,
    run_times,
    seconds_between,
    value,
    verdict_task,
)
from arena_core.io.decoding import InputError, bounded_lines, decode_line, line_too_long, loads
from arena_plugins.importers.openhands_conversations import FINISH_V1, conversation_run, is_conversation
from arena_plugins.importers.swebench_reports import Verdicts, is_report

__all__ = ["OpenHands", "is_output", "output_runs"]

HARNESS = "openhands"
#: V0 history actions that are not tool calls: messages, the system prompt, memory recall, the end.
NOT_TOOL_CALLS = {"message", "system", "recall", "finish"}
#: A critic attempt's file: ``output.critic_attempt_N.jsonl``.
_ATTEMPT = re.compile(r"\.critic_attempt_(\d+)\.jsonl$")
#: OpenHands' error when a run is stopped at ``max_iterations`` ("Agent reached maximum iteration").
_AT_LIMIT = re.compile(r"maximum iteration", re.IGNORECASE)


class OpenHands:
    """OpenHands evaluation and resolver outputs: one submission per line."""

    name = HARNESS
    description = "OpenHands evaluation output.jsonl (EvalOutput) and resolver output.jsonl"
    unrecorded = ()

    def detect(self, path: Path) -> bool:
        if path.is_dir():
            return any(self.detect_file(p) for p in regular_files(path))
        return self.detect_file(path)

    def detect_file(self, path: Path) -> bool:
        """An evaluation's or a resolver's output, or a conversation's ``base_state.json``,
        makes a folder OpenHands'."""
        return is_output(path) or (path.name == "base_state.json" and is_conversation(path.parent))

    def read(self, paths: Sequence[Path]) -> Iterator[ImportedRun | InputError]:
        for folder in sorted({f for p in paths for f in _conversations(p)}):
            yield from conversation_run(folder)
        files = list(files_under(paths, lambda p: is_output(p) or is_report(p)))
        if not files:
            return
        verdicts = Verdicts()
        yield from verdicts.read_reports(files)
        attempts = [p for p in files if _ATTEMPT.search(p.name)]
        attempted = set(attempts)  # asked of every file: asking the list made this quadratic
        spent: dict[Path, dict[str, _Spend]] = {}
        last: dict[Path, dict[str, tuple[int, Path, int]]] = {}
        for path in attempts:
            yield from _attempt_spend(path, spent.setdefault(path.parent, {}), last.setdefault(path.parent, {}))
        outputs = [p for p in files if not is_report(p) and p not in attempted]
        with_output = {p.parent for p in outputs}
        for path in outputs:
            yield from output_runs(path, verdicts, spent.get(path.parent, {}))
        for folder, chosen in last.items():  # attempts without an output.jsonl: the last of each
            if folder not in with_output:
                for _, path, number in sorted(chosen.values(), key=lambda c: (str(c[1]), c[2])):
                    yield from output_runs(path, verdicts, spent[folder], only=number)


def _conversations(path: Path) -> list[Path]:
    """The SDK conversation folders at or under ``path`` (``base_state.json`` given: its folder)."""
    if path.name == "base_state.json":
        path = path.parent
    if is_conversation(path):
        return [path]
    if not path.is_dir():
        return []
    return [p.parent for p in path.rglob("base_state.json") if is_conversation(p.parent) and not p.parent.is_symlink()]


def is_output(path: Path) -> bool:
    """JSON Lines whose first record starts like an ``EvalOutput`` or a ``ResolverOutput``."""
    if path.suffix != ".jsonl":
        return False
    head = peek(path, 1 << 16)
    return b'"instruction"' in head and (head.lstrip().startswith((b'{"instance_id"', b'{"issue"')))


def output_runs(
    path: Path, verdicts: Verdicts, spent: Mapping[str, _Spend] | None = None, only: int | None = None
) -> Iterator[ImportedRun | InputError]:
    """One run per line of ``path`` (only line ``only``, when given), graded by its own report,
    else by ``verdicts`` (a run neither grades is ``not_graded``), its cost and tokens those of
    all its critic attempts when ``spent`` has them; a bad line is yielded as its error and the
    rest read."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        yield InputError(f"{path}: cannot read: {exc.strerror or exc}")
        return
    with handle:
        for number, raw in bounded_lines(handle):
            if only is not None and number != only:
                continue
            where = f"{path}:{number}"
            if raw is None:
                yield line_too_long(where)
                continue
            if not raw.strip():
                continue
            try:
                run = _line(_decoded(raw, where, path, number), where, path, verdicts)
                yield _over_attempts(run, spent) if spent else run
            except InputError as exc:
                yield exc


def _decoded(raw: bytes, where: str, path: Path, number: int) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return loads(decode_line(raw, where), path, number)


def _line(line: Any, where: str, path: Path, verdicts: Verdicts) -> ImportedRun:
    if not isinstance(line, Mapping):
        raise InputError(f"{where}: expected an OpenHands output record (a table)")
    flags: list[str] = []
    instance_id = value(line, "instance_id", where, str)
    repository = repository_of(instance_id)
    if instance_id is None:  # the resolver's output: an issue of a repository
        owner = value(line, "issue.owner", where, str, required=True)
        repo = value(line, "issue.repo", where, str, required=True)
        number = value(line, "issue.number", where, int, required=True)
        instance_id, repository = f"{owner}/{repo}#{number}", f"{owner}/{repo}"
    submission: dict[str, Any] = {"id": instance_id, "task_id": instance_id}
    agent = value(line, "metadata.agent_class", where, str)
    submission["tool"] = f"{HARNESS}/{agent}" if agent else HARNESS
    v1 = isinstance(line.get("metadata"), Mapping) and "llm" in line["metadata"]
    model = value(line, "metadata.llm.model" if v1 else "metadata.llm_config.model", where, str)
    if model:
        submission["model"] = model
    submission.update(_tokens(line, where, flags))
    if v1 and "total_tokens" not in submission and not line.get("error"):  # V1 always writes its metrics
        flags.append("usage_missing")
    cost = amount(line, "metrics.accumulated_cost", where)
    if cost:
        submission["estimated_cost"] = cost
    elif cost == 0:
        flags.append("cost_reported_as_zero")
    calls = value(line, "metrics.token_usages", where, list) or value(line, "metrics.costs", where, list)
    if calls:
        submission["iterations"] = len(calls)
    history = value(line, "history", where, list) or []
    events = [e for e in history if isinstance(e, Mapping)]
    v1 = v1 or any("kind" in e for e in events)
    submission["tool_calls"] = sum(1 for e in events if _is_tool_call(e))
    stamps = [e["timestamp"] for e in events if isinstance(e.get("timestamp"), str)]
    if len(stamps) >= 2:
        ordered = sorted(stamps, key=lambda s: _when(s, where))
        submission["execution_time"] = seconds_between(
            {"first": ordered[0], "last": ordered[-1]}, "first", "last", where
        )
        submission.update(run_times({"first": ordered[0], "last": ordered[-1]}, "first", "last", where))
    patch = value(line, "test_result.git_patch", where, str) or value(line, "git_patch", where, str) or ""
    submission["files_created"] = new_files_in_patch(patch)
    resolved = value(line, "test_result.report.resolved", where, bool)
    if resolved is None:
        resolved = value(line, "success", where, bool)
    error = value(line, "error", where, str)
    if error:
        flags.append("agent_error")
    limit = value(line, "metadata.max_iterations", where, int)
    if (error and _AT_LIMIT.search(error)) or (limit and calls and len(calls) >= limit):
        flags.append("step_limit")
    meta = {
        "source": str(path),
        "harness": HARNESS,
        "format_version": "openhands-v1" if v1 else "openhands-v0",
        "attempt": value(line, "attempt", where, int),
        "harness_version": value(line, "metadata.git_commit", where, str),
        "dataset": value(line, "metadata.dataset", where, str),
        "repo": repository,
        "max_iterations": limit,
        "error": error,
        "flags": flags,
    }
    submission["meta"] = present(meta)
    if resolved is not None:
        submission["success"] = resolved
    else:
        verdicts.apply(instance_id, submission)
    published = problem_date(line.get("instance"))  # the dataset's row, as the evaluation output keeps it
    return ImportedRun(where, submission, verdict_task(instance_id, "OpenHands", created_at=published))


def _when(stamp: str, where: str) -> datetime:
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:
        raise InputError(f"{where}: history: expected ISO 8601 timestamps, got {stamp!r}") from None


def _is_tool_call(event: Mapping[str, Any]) -> bool:
    """An agent's action that called a tool: V0's action names other than messages and the end,
    V1's ``ActionEvent`` other than the finish tool."""
    if event.get("source") != "agent" or not event.get("action"):
        return False
    action = event["action"]
    if isinstance(action, Mapping):
        return action.get("kind") != FINISH_V1
    return isinstance(action, str) and action not in NOT_TOOL_CALLS


def _tokens(line: Mapping[str, Any], where: str, flags: list[str]) -> dict[str, int]:
    """Total tokens and their breakdown from ``accumulated_token_usage`` (prompt tokens hold the
    cached ones, as litellm counts them)."""
    usage = "metrics.accumulated_token_usage"
    prompt, completion = count(line, f"{usage}.prompt_tokens", where), count(line, f"{usage}.completion_tokens", where)
    if not prompt and not completion:
        return {}
    found = {"total_tokens": (prompt or 0) + (completion or 0)}
    if prompt is None or completion is None:
        return found
    read = count(line, f"{usage}.cache_read_tokens", where) or 0
    written = count(line, f"{usage}.cache_write_tokens", where) or 0
    if read + written > prompt:
        flags.append("cache_tokens_exceed_prompt")  # no breakdown rather than an impossible one
        return found
    return found | {
        "input_tokens": prompt,
        "output_tokens": completion,
        "cache_read_tokens": read,
        "cache_write_tokens": written,
    }


@frozen
class _Spend:
    """What the critic attempts of one instance spent together."""

    attempts: int
    cost: float | None
    tokens: dict[str, int]


def _attempt_spend(
    path: Path, spent: dict[str, _Spend], last: dict[str, tuple[int, Path, int]]
) -> Iterator[InputError]:
    """Add one attempt file's costs and tokens to ``spent`` by instance, and note in ``last``
    the line of each instance's latest attempt; a bad line is yielded as its error."""
    found = _ATTEMPT.search(path.name)
    attempt = int(found.group(1)) if found else 0
    for run in output_runs(path, Verdicts()):
        if isinstance(run, InputError):
            yield run
            continue
        ident, line = run.submission["id"], int(run.where.rsplit(":", 1)[1])
        before = spent.get(ident, _Spend(0, 0.0, {}))
        cost = run.submission.get("estimated_cost")
        tokens = {k: before.tokens.get(k, 0) + v for k, v in run.submission.items() if k.endswith("_tokens")}
        spent[ident] = _Spend(
            before.attempts + 1,
            None if cost is None or before.cost is None else before.cost + cost,
            tokens if before.attempts == 0 or before.tokens.keys() == tokens.keys() else {},
        )
        if attempt >= last.get(ident, (-1, path, 0))[0]:
            last[ident] = (attempt, path, line)


def _over_attempts(run: ImportedRun, spent: Mapping[str, _Spend]) -> ImportedRun:
    """The chosen attempt with the cost and tokens of all its instance's critic attempts."""
    spend = spent.get(run.submission["id"])
    if spend is None:
        return run
    submission = {k: v for k, v in run.submission.items() if not k.endswith("_tokens") and k != "estimated_cost"}
    submission.update(spend.tokens)
    if spend.cost:
        submission["estimated_cost"] = spend.cost
    submission["meta"] = {**run.submission["meta"], "critic_attempts": spend.attempts}
    return ImportedRun(run.where, submission, run.task)
