"""The provenance a JSON board carries: what it read, how it was configured, and the command.

Every command that prints a board as JSON (``leaderboard``, ``tasks``, ``pareto``, ``predict``,
``contamination``, ``trend``, ``compare``, ``card``) prints one object whose ``provenance``
is a :class:`~arena_core.model.provenance.BoardProvenance`. The command is recorded as it was
typed, less its inputs (the runs, ``--tasks``, ``--from``, ``--example``, ``--store``,
``--labels``, ``--votes``), its output options and ``--executor``, so ``arena verify`` can run it again on the
inputs it is given and compare.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from arena_core.engine.columns import Columns
from arena_core.engine.fingerprints import provenance_of, task_run_digests
from arena_core.model.provenance import BoardProvenance
from arena_core.model.records import Task
from arena_core.model.serde import to_dict

if TYPE_CHECKING:
    from arena_core.cli.app import State
    from arena_core.stats.windows import TimeWindow

__all__ = ["NOT_RECORDED", "RecordingCommand", "board_document", "board_provenance"]

#: The parameters that name a command's inputs, its output or where it runs, not the board it
#: computes: left out of the command a provenance records.
NOT_RECORDED = frozenset(
    {"submissions", "tasks_path", "from_format", "named_tool", "named_model", "example", "label_paths",
     "vote_paths", "store_path", "fmt", "output", "quiet", "executor"}
)  # fmt: skip
_ARGV = "arena.argv"


class RecordingCommand(click.Command):
    """A command that keeps the arguments it was given, for the provenance of what it prints."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[_ARGV] = list(args)
        return super().parse_args(ctx, args)


def board_provenance(state: State, tasks: Mapping[str, Task], window: TimeWindow | None = None) -> BoardProvenance:
    """The provenance of the board the current command computed from the runs it read."""
    read = state.runs_read
    per_task = read if isinstance(read, Mapping) else task_run_digests(read if read is not None else [])
    size = read.size if isinstance(read, Columns) else len(read) if isinstance(read, Sequence) else state.runs_count
    ctx = click.get_current_context()
    command = [ctx.info_name or "", *_board_arguments(ctx.command, ctx.meta.get(_ARGV, []))]
    return provenance_of(per_task, size, tasks, state.arena.provenance, window, command)


def board_document(
    state: State, tasks: Mapping[str, Task], body: Mapping[str, Any], window: Any = None
) -> dict[str, Any]:
    """``body`` with the board's provenance first."""
    return {"provenance": to_dict(board_provenance(state, tasks, window)), **body}


def _board_arguments(command: click.Command, args: Sequence[str]) -> list[str]:
    """``args`` without the inputs and output options (:data:`NOT_RECORDED`): the
    positional arguments that are not inputs (``arena card``'s id) first, then the options."""
    named = {o: p for p in command.params if isinstance(p, click.Option) for o in (*p.opts, *p.secondary_opts)}
    kept: list[str] = []
    positional: list[str] = []
    at = 0
    while at < len(args):
        token = args[at]
        at += 1
        if token == "--":
            positional += args[at:]
            break
        name, equals, _ = token.partition("=")
        option = named.get(name) if token.startswith("-") else None
        if option is None:
            positional.append(token)
            continue
        taken = [token]
        if not equals and not (option.is_flag or option.count):
            width = max(option.nargs, 1)
            if getattr(option, "_flag_needs_value", False) and (at >= len(args) or args[at].startswith("-")):
                width = 0  # an option whose value may be left out (--example)
            taken += args[at : at + width]
            at += width
        if option.name not in NOT_RECORDED:
            kept += taken
    return [*_not_inputs(command, positional), *kept]


def _not_inputs(command: click.Command, positional: list[str]) -> list[str]:
    """The positional arguments given to parameters that are not inputs, as click assigns them
    (in declared order; the one of any number takes what the others leave)."""
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    fixed = sum(max(p.nargs, 0) for p in arguments)
    kept: list[str] = []
    at = 0
    for argument in arguments:
        width = argument.nargs if argument.nargs >= 0 else max(len(positional) - fixed, 0)
        if argument.name not in NOT_RECORDED:
            kept += positional[at : at + width]
        at += width
    return kept
