"""``arena judge``: the judges of tasks' ``judge`` criteria asked, alone, their verdicts written
in the ``recorded`` format; and ``arena judge cache stats|clear``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import click
import orjson

from arena_core.cli.app import State, command, main, progress, quiet_option
from arena_core.cli.inputs import InputFiles, inputs, read_inputs
from arena_core.io.decoding import InputError, bounded_lines, open_binary
from arena_core.model.errors import ArenaError
from arena_core.model.records import Submission, Task
from arena_core.workspace.confined import Workspace, WorkspaceError
from arena_core.workspace.opening import open_workspace


class _RunsOrCache(click.Group):
    """``arena judge RUNS...`` runs the judges; ``arena judge cache ...`` manages their cache."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        if args and args[0] in self.commands:
            return super().resolve_command(ctx, args)
        return "run", self.commands["run"], args


@main.group(cls=_RunsOrCache)
def judge() -> None:
    """Ask the judges of the tasks' judge criteria, or manage their verdict cache.

    \b
    Examples:
      arena judge runs.jsonl --tasks tasks.json -o verdicts.jsonl
      arena judge runs.jsonl --tasks tasks.json --judge sonnet --concurrency 8 -o verdicts.jsonl
      arena judge cache stats
      arena judge cache clear
    """


@judge.command("run", hidden=True)
@inputs()
@click.option("--judge", "names", multiple=True, help="Only this judge of each panel (repeat for more).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The verdicts, one JSON line each, appended: those already there are not asked again.")  # fmt: skip
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="Runs judged at once.")
@quiet_option
@command
def run(state: State, inputs: InputFiles, names: tuple[str, ...], output: Path, concurrency: int, quiet: bool) -> None:
    """Ask each judge of each run's judge criteria, for every requirement, and write the verdicts
    ({"submission_id", "requirement", "verdict", "reason", "judge"}): the recorded format, which a
    recorded judge reads. Resumable: verdicts already in the output are not asked again."""
    subs, tasks = read_inputs(state, inputs)
    checker = state.arena.scorer.checkers().get("judge")
    if checker is None:
        raise ArenaError("no checker of judge criteria is registered (the built-in judges plugin is blocked)")
    done = _answered(output)
    jobs = [(s, tasks[s.task_id]) for s in subs if s.task_id in tasks and _judged(tasks[s.task_id])]
    if not jobs:
        raise ArenaError("no run's task has a judge criterion")
    lock, counts = threading.Lock(), {"asked": 0, "cached": 0, "cost": 0.0, "written": 0}
    settings = state.arena.scorer.workspace_settings()
    with output.open("a", encoding="utf-8") as out, progress(len(jobs), "judging", quiet) as step:

        def one(job: tuple[Submission, Task]) -> None:
            submission, task = job
            with _workspace(submission, settings) as workspace:
                for criterion in (c for c in task.success_criteria if c.type == "judge"):
                    for requirement, judge_name, answer in checker.answers(  # type: ignore[attr-defined]
                        submission, criterion, task, workspace, only=names, skip=done
                    ):
                        line = {"submission_id": submission.id, "requirement": requirement, "verdict": answer.get("verdict"),
                                "reason": answer.get("reason") or answer.get("error", ""), "judge": judge_name}  # fmt: skip
                        with lock:
                            out.write(orjson.dumps(line).decode() + "\n")
                            out.flush()
                            counts["written"] += 1
                            counts["cached" if answer.get("cached") else "asked"] += 1
                            counts["cost"] += 0.0 if answer.get("cached") else answer.get("cost") or 0.0
            with lock:
                step(1)

        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="arena-judge") as pool:
            for future in [pool.submit(one, job) for job in jobs]:
                future.result()
    click.echo(
        f"{counts['written']} verdicts written to {output} ({counts['asked']} asked, {counts['cached']} from the cache, "
        f"{len(done)} there already); judging cost ${counts['cost']:.4f}",
        err=True,
    )


@judge.group("cache")
def cache() -> None:
    """The judges' verdict cache (judge_cache in the configuration)."""


@cache.command("stats")
@command
def cache_stats(state: State) -> None:
    """How many verdicts the cache holds."""
    folder, found = _cache(state)
    click.echo(f"{folder}: {found.stats()['verdicts']} verdicts, {found.stats()['bytes']:,} bytes")


@cache.command("clear")
@command
def cache_clear(state: State) -> None:
    """Remove every cached verdict: the next scoring asks the judges again."""
    folder, found = _cache(state)
    click.echo(f"{folder}: {found.clear()} verdicts removed")


def _cache(state: State) -> tuple[str, Any]:
    checker = state.arena.scorer.checkers().get("judge")
    verdicts = getattr(checker, "cache", None)
    if verdicts is None or verdicts.folder is None:
        raise ArenaError("no verdict cache is configured (judge_cache is empty)")
    return str(verdicts.folder), verdicts


def _judged(task: Task) -> bool:
    return any(c.type == "judge" for c in task.success_criteria)


def _answered(output: Path) -> set[tuple[str, str, str]]:
    """(run, requirement, judge) of the verdicts the output holds already (not the unanswered)."""
    if not output.exists():
        return set()
    found = set()
    with open_binary(output) as handle:
        for number, raw in bounded_lines(handle):
            if raw is None or not raw.strip():
                continue
            try:
                line = orjson.loads(raw)
            except orjson.JSONDecodeError:
                raise InputError(f"{output}:{number}: not JSON: not a file of verdicts this command wrote") from None
            if isinstance(line, dict) and line.get("verdict") is not None:
                found.add((str(line.get("submission_id")), str(line.get("requirement")), str(line.get("judge"))))
    return found


@contextmanager
def _workspace(submission: Submission, settings: Any) -> Iterator[Workspace | None]:
    """The run's workspace, opened as scoring opens it; ``None`` without one, or when it cannot be
    (the evidence then says it is not available)."""
    with ExitStack() as stack:
        workspace = None
        if submission.workspace is not None:
            with suppress(WorkspaceError):
                workspace = stack.enter_context(
                    open_workspace(submission.workspace, submission.workspace_ref, settings, owner=submission.id)
                )
        yield workspace
