"""Plugin options: each ``[plugins.NAME]`` table, checked against what its plugin declares.

A plugin declares its options as an attrs class (the ``arena_plugin_options`` hook), the way
``llm`` plugins declare a model's options: the table is built into that class by the same
strict converter as the rest of the configuration, so a mistake in a plugin's table reads
like any other configuration error (``plugins.license.header_lines: expected a whole
number, got '5'``). The instance is what the plugin's registration hooks receive.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from arena_core.config.settings import ScoringConfig
from arena_core.model.errors import PluginError, ValidationError, closest
from arena_core.model.serde import structure
from arena_core.registry.manager import ArenaPluginManager

__all__ = ["plugin_options"]


def plugin_options(pm: ArenaPluginManager, config: ScoringConfig) -> dict[str, Any]:
    """Plugin name to the ``options`` its registration hooks receive.

    :raises ValidationError: a table names a plugin that is neither loaded nor blocked, has a
        key its plugin does not declare, or a value of the wrong type (record ``configuration``,
        field ``plugins.NAME.KEY``).
    :raises PluginError: a plugin's ``arena_plugin_options`` returns something other than an
        attrs class.
    """
    declared = {impl.plugin_name: impl.function for impl in pm.hook.arena_plugin_options.get_hookimpls()}
    loaded = [name for name, _ in pm.list_name_plugin()]
    for name in config.plugins:
        if name not in loaded and not pm.is_blocked(name):
            raise ValidationError(
                "configuration",
                f"plugins.{name}",
                f"the name of a loaded plugin{closest(name, loaded)} (loaded: {', '.join(sorted(loaded))})",
                name,
            )
    options: dict[str, Any] = {}
    for name in loaded:
        table = config.plugins.get(name, {})
        declare = declared.get(name)
        cls = declare() if declare is not None else None
        options[name] = dict(table) if cls is None else _build(pm, name, cls, table)
    return options


def _build(pm: ArenaPluginManager, plugin: str, cls: Any, table: Mapping[str, Any]) -> Any:
    if not attrs.has(cls):
        raise PluginError(f"{pm.describe(plugin)}: arena_plugin_options returned {cls!r}, not an attrs class")
    known = [a.name for a in attrs.fields(cls)]
    for key, value in table.items():
        if key not in known:
            raise ValidationError(
                "configuration",
                f"plugins.{plugin}.{key}",
                f"an option of plugin {plugin!r}{closest(key, known)} (options: {', '.join(known) or 'none'})",
                value,
            )
    try:
        return structure(dict(table), cls)
    except ValidationError as exc:
        field = f"plugins.{plugin}" + ("" if exc.field == "(record)" else f".{exc.field}")
        got = () if exc.missing else (exc.got,)
        raise ValidationError("configuration", field, exc.expected, *got, code=exc.code) from None
