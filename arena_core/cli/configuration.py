"""``arena config``: write a starter file, show the effective configuration."""

from __future__ import annotations

import json
from pathlib import Path

import click

from arena_core.cli.app import State, command, main
from arena_core.config.files import effective_lines, find_config, starter_toml
from arena_core.io.output import atomic_output
from arena_core.model.errors import ArenaError


@main.group()
def config() -> None:
    """Write or inspect the configuration file."""


@config.command("init")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False), default="arena.toml")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@command
def config_init(state: State, path: Path, force: bool) -> None:
    """Write a complete starter configuration (every key at its default, each explained).

    \b
    Examples:
      arena config init
      arena config init team-arena.toml
    """
    if path.exists() and not force:
        raise ArenaError(f"{path}: already exists (use --force to overwrite)")
    text = starter_toml(state.arena.scorer.slots())
    with atomic_output(path) as out:
        out.write(text)
    click.echo(f"Wrote {path}")


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@command
def config_show(state: State, as_json: bool) -> None:
    """Print the effective configuration and where each value came from.

    \b
    Examples:
      arena config show
      arena -c team-arena.toml config show --json
    """
    state.arena  # noqa: B018  (validates every configured name)
    lines = effective_lines(state.loaded)
    if as_json:
        click.echo(json.dumps([{"key": k, "value": v, "source": src} for k, v, src in lines], indent=2))
        return
    found = state.loaded.path or find_config()
    click.echo(f"# configuration file: {found or 'none found (all defaults)'}")
    for key, value, source in lines:
        click.echo(f"{key} = {json.dumps(value)}  # {source}")
