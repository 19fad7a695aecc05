"""``arena verify``: compute a JSON board again from its inputs and say whether it is the same.

A board printed as JSON records the command that made it (without its inputs) and digests of
what it read (:mod:`arena_core.cli.provenances`). Given the board and the inputs, the command
runs again in this process, with this invocation's ``--config``, ``--profile`` and
``--disable``, and the two documents are compared: the digests say whether the runs, the tasks,
the configuration or the version changed, and the rows say what moved.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import click

from arena_core.cli.app import State, command, main
from arena_core.io.decoding import loads, read_text
from arena_core.model.errors import ArenaError

__all__ = ["BOARD_COMMANDS", "verify"]

#: Provenance fields compared, and what a difference in each means.
_FIELDS = {
    "runs": "the runs read differ (digest)",
    "n_runs": "the number of runs read differs",
    "tasks": "the tasks read differ (digest)",
    "n_tasks": "the number of tasks read differs",
    "config_digest": "the configuration differs (digest)",
    "profile": "the profile differs",
    "arena_core": "the arena-core version differs",
    "window": "the window differs",
}
_SHOWN = 10
#: The commands that print a board with its provenance.
BOARD_COMMANDS = ("leaderboard", "tasks", "pareto", "predict", "contamination", "trend", "compare", "card")
#: Fields that say when a row was computed, not what it is: left out of the comparison.
_WHEN = frozenset({"evaluated_at"})


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("board", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("given", nargs=-1, type=click.UNPROCESSED, metavar="INPUTS...")
@command
def verify(state: State, board: Path, given: tuple[str, ...]) -> None:
    """Compute BOARD (a board printed with --format json) again from INPUTS and say whether it
    is identical: the same runs and tasks (by digest), configuration, arena-core version and
    rows. INPUTS are given as they were to the command that made it: the run files and
    --tasks, or --example, --store, --from, --labels, --votes. Exit status 1 when it differs.

    \b
    Examples:
      arena verify board.json runs.jsonl --tasks tasks.json
      arena -c arena.toml verify board.json --store arena.db
    """
    recorded = _read_board(board)
    recorded_command = recorded["provenance"]["command"]
    args = [*_group_options(state), *recorded_command, *given, "--format", "json"]
    again = _run(args)
    differences = list(_provenance_differences(recorded["provenance"], again["provenance"]))
    differences += [
        f"{path}: {_shown(then)} in the board, {_shown(now)} now"
        for path, then, now in _differences(_body(recorded), _body(again), "")
    ][:_SHOWN]
    shown = " ".join(recorded_command)
    if not differences:
        click.echo(f"identical: arena {shown} gives the same board from these inputs")
        return
    click.echo(f"differs: arena {shown} gives another board from these inputs")
    for line in differences:
        click.echo(f"  {line}")
    raise SystemExit(1)


def _read_board(path: Path) -> dict[str, Any]:
    document = loads(read_text(path), path)
    provenance = document.get("provenance") if isinstance(document, dict) else None
    if not isinstance(provenance, dict):
        raise ArenaError(f"{path}: provenance: expected a board printed with --format json (an object with provenance)")
    command_line = provenance.get("command")
    if not isinstance(command_line, list) or not command_line or not all(isinstance(a, str) for a in command_line):
        raise ArenaError(f"{path}: provenance.command: expected the command that made the board, a list of strings")
    if command_line[0] not in BOARD_COMMANDS:
        raise ArenaError(f"{path}: provenance.command: {command_line[0]!r} is not a command that prints a board")
    return dict(document)


def _group_options(state: State) -> list[str]:
    options = ["--config", str(state.config_path)] if state.config_path is not None else []
    options += ["--profile", state.profile] if state.profile else []
    return [*options, *(a for name in state.disable for a in ("--disable", name))]


def _run(args: list[str]) -> dict[str, Any]:
    """``arena ARGS`` in this process, its printed board parsed; what it said on standard error
    (the notes a board prints beside it) is shown only when it fails."""
    out, said = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(said):
            main.main(args=args, prog_name="arena", standalone_mode=False)
    except SystemExit as stop:  # the command's own error, printed to ``said``
        if stop.code:
            click.echo(said.getvalue(), err=True, nl=False)
            raise ArenaError(f"computing the board again failed: arena {' '.join(args)}") from None
    except click.ClickException as error:
        raise ArenaError(f"computing the board again failed: {error.format_message()}") from None
    document = json.loads(out.getvalue())
    return document if isinstance(document, dict) else {"provenance": {}, "rows": document}


def _provenance_differences(then: dict[str, Any], now: dict[str, Any]) -> Iterator[str]:
    for name, meaning in _FIELDS.items():
        if then.get(name) != now.get(name):
            was, is_ = then.get(name), now.get(name)
            if name in ("runs", "tasks") and isinstance(was, str) and isinstance(is_, str):
                was, is_ = was[:16], is_[:16]
            yield f"{meaning}: {_shown(was)} in the board, {_shown(is_)} now"


def _body(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k != "provenance"}


def _differences(then: Any, now: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """Where two JSON values differ, as (path, then, now); floats compared to the bit."""
    if isinstance(then, dict) and isinstance(now, dict):
        for key in dict.fromkeys(k for k in [*then, *now] if k not in _WHEN):
            yield from _differences(then.get(key), now.get(key), f"{path}.{key}" if path else key)
    elif isinstance(then, list) and isinstance(now, list) and len(then) == len(now):
        for index, (a, b) in enumerate(zip(then, now, strict=True)):
            yield from _differences(a, b, f"{path}[{index}]")
    elif then != now and not (_nan(then) and _nan(now)):
        yield path, then, now


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."
