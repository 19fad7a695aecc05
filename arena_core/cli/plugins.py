"""``arena plugins``: what is loaded, from where, and what it registered."""

from __future__ import annotations

import json

import click

from arena_core.cli.app import State, command, main
from arena_core.io.table import render
from arena_core.model.serde import to_dict


@main.command()
@click.option("--all", "include_builtins", is_flag=True, help="Include the built-in plugins.")
@click.option("--hook", help="Only plugins implementing this hook.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@command
def plugins(state: State, include_builtins: bool, hook: str | None, as_json: bool) -> None:
    """List plugins: their distributions, the components each registered, and blocked ones.

    \b
    Examples:
      arena plugins
      arena plugins --all --hook arena_register_metrics
      ARENA_DISABLED_PLUGINS=example arena plugins
    """
    infos = [i for i in state.arena.plugins(include_builtins=include_builtins) if hook is None or hook in i.hooks]
    if as_json:
        click.echo(json.dumps([to_dict(i) for i in infos], indent=2))
        return
    rows = [
        [
            i.name,
            "blocked" if i.blocked else ("built-in" if i.builtin else f"{i.distribution} {i.version}"),
            "; ".join(
                f"{family}: {', '.join(_marked(n, i.per_record_only.get(family, ())) for n in names)}"
                for family, names in i.components.items()
            )
            + "".join(f"; disabled {family}: {', '.join(names)}" for family, names in i.disabled.items()),
        ]
        for i in infos
    ]
    click.echo(render(["Plugin", "Source", "Registers"], rows) if rows else "No third-party plugins installed.")
    if any(i.per_record_only for i in infos):
        click.echo("(per record): no batch form; tasks using it are scored one record at a time")


def _marked(name: str, per_record_only: tuple[str, ...]) -> str:
    return f"{name} (per record)" if name in per_record_only else name
