"""``arena import``: a harness's output written as arena-core's submissions and tasks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import orjson

from arena_core.cli.app import State, command, main
from arena_core.importing.collect import ImportSession
from arena_core.io.output import atomic_output
from arena_core.io.writers import write_blocks
from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.records import Task
from arena_core.model.serde import structure, to_dict


@main.command(name="import")
@click.argument("fmt", metavar="FORMAT")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the submissions here (JSON Lines) instead of stdout; the file appears only when the import succeeded.",
)
@click.option(
    "--tasks-out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the tasks the runs name here (JSON), each judged by the harness's verdict.",
)
@click.option(
    "--verdicts-out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the judges' verdicts the output records (JSON Lines, the recorded judge's format).",
)
@click.option(
    "--labels-out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the people's labels the output records (JSON Lines, what --labels reads).",
)
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Import what can be read and report the sources that cannot (default: refuse the whole import).",
)
@click.option("--tool", help="The tool of the runs whose harness does not record one (a recorded tool is kept).")
@click.option("--model", help="The model of the runs whose harness does not record one (a recorded model is kept).")
@command
def import_(
    state: State,
    fmt: str,
    paths: tuple[Path, ...],
    output: Path | None,
    tasks_out: Path | None,
    verdicts_out: Path | None,
    labels_out: Path | None,
    skip_bad: bool,
    tool: str | None,
    model: str | None,
) -> None:
    """Read a harness's output (files or directories) as submissions and tasks.

    FORMAT is an importer's name (`arena plugins` lists them): inspect, harbor, terminal-bench,
    swebench, openhands, mini-swe-agent, aider, or one a plugin adds. Every command that reads
    submissions also takes --from FORMAT, or detects the format, so this step is optional.

    \b
    Examples:
      arena import terminal-bench runs/2025-09-24 -o runs.jsonl --tasks-out tasks.json
      arena import swebench report.json trajs/ -o runs.jsonl
      arena import devai judgment/ -o runs.jsonl --tasks-out tasks.json --verdicts-out verdicts.jsonl --labels-out labels.jsonl
      arena import terminal-bench runs/orchestrator-qwen --model qwen3-coder -o qwen.jsonl
      arena leaderboard --from inspect logs/ --by model
    """
    importer = state.arena.components.importers[fmt]
    session = ImportSession(importer, paths, skip_bad=skip_bad)
    judgements = {"verdicts": [], "labels": []}  # type: dict[str, list[Any]]
    named = {key: given for key, given in (("tool", tool), ("model", model)) if given is not None}
    written = _Lines(state, session, named, judgements)
    with atomic_output(output) as out:
        write_blocks(written.blocks(), out)  # raises at the end when a run was bad (unless skip_bad)
        tasks = []
        for task_id, task in session.tasks.items():
            try:
                tasks.append(structure(task, Task))
            except ValidationError as error:
                raise ArenaError(f"task {task_id!r} derived from the input: {error}") from None
        if tasks_out is not None:
            # The fields the format never records travel with its tasks, so that scoring the written
            # files leaves them out of the overall score as scoring the harness's own output does.
            unrecorded = list(getattr(importer, "unrecorded", ()))
            extra = {"meta": {"importer": fmt, "unrecorded": unrecorded}} if unrecorded else {}
            with atomic_output(tasks_out) as tasks_file:
                json.dump([_with(to_dict(t), extra) for t in tasks], tasks_file, indent=2)
                tasks_file.write("\n")
    for kind, path in (("verdicts", verdicts_out), ("labels", labels_out)):
        if path is not None:
            with atomic_output(path) as lines_file:
                for line in judgements[kind]:
                    lines_file.write(orjson.dumps(line).decode() + "\n")
    for skipped in session.skipped:
        click.echo(f"skipped: {skipped}", err=True)
    where = f" to {output}" if output else ""
    click.echo(
        f"Imported {written.count} {fmt} runs{where} ({len(session.tasks)} tasks); {len(session.skipped)} sources skipped",
        err=True,
    )


def _with(task: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    if "meta" in extra:
        task["meta"] = {**task.get("meta", {}), **extra["meta"]}
    return task


class _Lines:
    """The imported runs as blocks of JSON Lines, each run checked as a submission, with the
    verdicts and labels of the runs written noted in ``judgements``.

    The lines are encoded once, as bytes, and written by blocks while the next runs are read
    (:func:`~arena_core.io.writers.write_blocks`). A trajectory's run carries its text: decoding
    each line to write it as text, which the file then encoded again, made importing 3,000
    mini-swe-agent trajectories whose text is not all ASCII (a tick or a dash is enough) 0.99 s
    against 0.86 s now (medians of six, taking turns); on ASCII text it cost nothing measurable."""

    #: Bytes of lines a block gathers before it is written.
    BLOCK = 1 << 20

    def __init__(
        self, state: State, session: ImportSession, named: dict[str, str], judgements: dict[str, list[Any]]
    ) -> None:
        self.state, self.session, self.named, self.judgements = state, session, named, judgements
        self.count = 0

    def blocks(self) -> Iterator[bytes]:
        session, structured = self.session, self.state.arena.structure_submission
        lines: list[bytes] = []
        size = 0
        for run in session.runs():  # raises at the end when a run was bad (unless skip_bad)
            record = {**self.named, **{k: v for k, v in run.submission.items() if v is not None}}
            try:
                submission = structured(record)
            except ValidationError as error:
                session.bad(f"{run.where}: {error}")
                continue
            if session.problems:  # nothing will be written: the rest is only checked
                continue
            # the verdict is written even where it is the default (true): the file says what
            # the harness said, not what a reader would assume
            line = orjson.dumps(
                {**to_dict(submission), "success": submission.success}, option=orjson.OPT_APPEND_NEWLINE
            )
            lines.append(line)
            size += len(line)
            self.judgements["verdicts"] += run.verdicts
            self.judgements["labels"] += run.labels
            self.count += 1
            if size >= self.BLOCK:
                yield b"".join(lines)
                lines, size = [], 0
        if lines:
            yield b"".join(lines)
