"""The input options every command that reads runs shares: SUBMISSIONS, ``--tasks``,
``--from``, ``--example``, and people's evidence about the runs, ``--labels`` and ``--votes``
(read when the Arena is built, :class:`~arena_core.cli.app.State`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import click
from attrs import frozen

from arena_core import examples
from arena_core.cli.app import State
from arena_core.cli.stores import PathOrTextParam
from arena_core.io.locations import is_url

__all__ = ["InputFiles", "inputs"]


@frozen
class InputFiles:
    """The input options of a command."""

    submissions: tuple[Path, ...]
    tasks: Path | None
    example: str | None
    """``--example NAME`` (``synthetic`` when given without a name)."""
    from_format: str | None
    """``--from FORMAT``: the importer that reads ``submissions``."""
    tool: str | None = None
    """``--tool NAME``: the tool of imported runs whose harness records none."""
    model: str | None = None
    """``--model NAME``: the model of imported runs whose harness records none."""


def inputs(*, tasks: str = "required") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """SUBMISSIONS..., --tasks, --from and --example, handed to the command as ``inputs``;
    ``tasks`` is ``required`` or ``optional``."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(function)  # keeps the options declared below, in ``__click_params__``
        def run(
            *args: Any,
            submissions: tuple[Path, ...],
            tasks_path: Path | None,
            example: str | None,
            from_format: str | None,
            label_paths: tuple[Path, ...],
            vote_paths: tuple[Path, ...],
            named_tool: str | None,
            named_model: str | None,
            **kwargs: Any,
        ) -> Any:
            state = click.get_current_context().find_object(State)
            if state is not None:  # read when the Arena is built, with the command's error handling
                state.label_paths = label_paths
                state.vote_paths = vote_paths
            given = InputFiles(submissions, tasks_path, example, from_format, named_tool, named_model)
            return function(*args, inputs=given, **kwargs)

        options = [
            click.argument("submissions", nargs=-1, type=_PathOrUrl()),
            click.option(
                "--tasks",
                "tasks_path",
                type=click.Path(path_type=Path, dir_okay=False),
                help="Tasks file (.json or .toml)"
                + ("; imported runs bring their own." if tasks == "required" else ", for task defaults."),
            ),
            click.option(
                "--from",
                "from_format",
                metavar="FORMAT",
                help="Read SUBMISSIONS as this harness's output (see `arena import --help`); detected when left out.",
            ),
            click.option(
                "--tool",
                "named_tool",
                metavar="NAME",
                help="The tool of a harness's runs that do not record one (a recorded tool is kept), as arena import --tool.",
            ),
            click.option(
                "--model",
                "named_model",
                metavar="NAME",
                help="The model of a harness's runs that do not record one (a recorded model is kept), as arena import --model.",
            ),
            click.option(
                "--example",
                type=click.Choice(examples.NAMES),
                is_flag=False,
                flag_value="synthetic",
                help="Use a bundled example: synthetic (the default) or aider (Aider's public leaderboard runs).",
            ),
            click.option(
                "--labels",
                "label_paths",
                multiple=True,
                type=click.Path(path_type=Path, dir_okay=False, exists=True),
                help="People's labels of the runs (JSON Lines: submission_id, requirement, label, rater), "
                "per label_policy: evidence about the judges, or the verdict of what they label. Repeatable.",
            ),
            click.option(
                "--votes",
                "vote_paths",
                multiple=True,
                type=click.Path(path_type=Path, dir_okay=False, exists=True),
                help="People's votes between two runs of a task (JSON Lines: id, task_id, a, b, winner, voter), "
                "scored by the community metric; see docs/community.md. Repeatable.",
            ),
        ]
        for option in reversed(options):
            run = option(run)
        return run

    return decorate


class _PathOrUrl(PathOrTextParam):
    """A local path, or a URL kept as text (a ``Path`` would fold ``s3://`` into ``s3:/``)."""

    name = "path"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path | str:
        return value if isinstance(value, str) and is_url(value) else Path(value)
