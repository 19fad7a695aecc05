"""``arena example``: the bundled arena written out as files, to try every command on."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import click
import tomli_w

from arena_core import examples
from arena_core.cli.app import State, command, main
from arena_core.io.output import atomic_output
from arena_core.io.readers import read_submissions, read_tasks
from arena_core.model.errors import ArenaError
from arena_core.model.serde import to_dict

#: What ``arena example`` writes, in this order.
FILES = ("runs.jsonl", "runs.csv", "tasks.json", "tasks.toml", "votes.jsonl")


@main.command()
@click.option(
    "-d",
    "--directory",
    type=click.Path(path_type=Path, file_okay=False),
    default=".",
    show_default=True,
    help="Where to write the files.",
)
@click.option("--force", is_flag=True, help="Overwrite files that exist.")
@command
def example(state: State, directory: Path, force: bool) -> None:
    """Write the bundled example arena as runs.jsonl, runs.csv, tasks.json, tasks.toml and votes.jsonl.

    The same 180 submissions and 12 tasks that --example scores, as files to read, edit and
    feed to every command, and 1,200 people's votes between the runs (arena votes).

    \b
    Examples:
      arena example
      arena leaderboard runs.jsonl --tasks tasks.toml --by model
    """
    targets = [directory / name for name in FILES]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not force:
        raise ArenaError(f"{', '.join(existing)}: already there (use --force to overwrite)")
    directory.mkdir(parents=True, exist_ok=True)
    runs = [to_dict(s) for s in read_submissions(examples.SUBMISSIONS)]
    tasks = [to_dict(t) for t in read_tasks(examples.TASKS).values()]
    with atomic_output(targets[0]) as out:
        out.writelines(json.dumps(r) + "\n" for r in runs)
    columns = list(dict.fromkeys(k for r in runs for k in r if k != "meta"))
    with atomic_output(targets[1]) as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for r in runs:
            writer.writerow([";".join(v) if isinstance(v := r.get(c, ""), list) else v for c in columns])
    with atomic_output(targets[2]) as out:
        json.dump(tasks, out, indent=2)
        out.write("\n")
    with atomic_output(targets[3]) as out:
        out.write(tomli_w.dumps({"tasks": tasks}))
    with atomic_output(targets[4]) as out:
        out.write(examples.VOTES.read_text())
    click.echo(f"Wrote {', '.join(str(t) for t in targets)}: {len(runs)} submissions, {len(tasks)} tasks")
