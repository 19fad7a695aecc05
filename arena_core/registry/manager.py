"""Finding, loading and blocking plugins.

Built-in plugins are ordinary plugins: modules listed in :data:`DEFAULT_PLUGINS`, registered
under short names with the same ``@hookimpl`` a third party uses, and blockable by the same
names. Third-party plugins come from the entry-point group ``arena_core``. Nothing is loaded at
import time: :func:`get_plugin_manager` does it, so a host decides when and what.

Blocking, as pytest's ``-p no:NAME``: names in ``blocked`` (the configuration's
``disabled_plugins``) and in ``ARENA_DISABLED_PLUGINS=a,b`` are blocked *before* loading, so
a blocked plugin is never imported. ``ARENA_DISABLE_PLUGIN_AUTOLOAD=1`` skips entry points
altogether (built-ins still load).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from collections.abc import Iterable

import pluggy
from attrs import frozen

from arena_core import hookspecs
from arena_core.config.settings import DISABLE_AUTOLOAD_ENV, DISABLED_PLUGINS_ENV
from arena_core.model.errors import PluginLoadError

__all__ = [
    "DEFAULT_PLUGINS",
    "DISABLED_PLUGINS_ENV",
    "DISABLE_AUTOLOAD_ENV",
    "ArenaPluginManager",
    "Distribution",
    "get_plugin_manager",
    "plugin_names",
]

#: Built-in plugins: registered name -> module. Each is blockable by its name.
DEFAULT_PLUGINS: dict[str, str] = {
    "metrics": "arena_plugins.metrics",
    "checkers": "arena_plugins.checkers",
    "weights": "arena_plugins.weights",
    "difficulty": "arena_plugins.difficulty",
    "intervals": "arena_plugins.intervals",
    "runners": "arena_plugins.runners",
    "sandbox": "arena_plugins.sandbox",
    "importers": "arena_plugins.importers",
    "aggregators": "arena_plugins.aggregators",
    "executors": "arena_plugins.executors",
    "prices": "arena_plugins.prices",
    "judges": "arena_plugins.judges",
}


@frozen
class Distribution:
    """The installed distribution a plugin came from."""

    name: str
    version: str


class ArenaPluginManager(pluggy.PluginManager):
    """A pluggy manager that remembers where each plugin came from.

    pluggy's own ``load_setuptools_entrypoints`` cannot say which entry point failed to
    import; :meth:`load_entrypoints` does the same walk but names the entry point and its
    distribution in the error.
    """

    def __init__(self) -> None:
        super().__init__(hookspecs.NAME)
        self.add_hookspecs(hookspecs)
        self._distributions: dict[str, Distribution] = {}
        self._blocked: list[str] = []

    def set_blocked(self, name: str) -> None:
        """Block ``name`` (unregistering it if loaded), and remember it for listings."""
        super().set_blocked(name)
        if name not in self._blocked:
            self._blocked.append(name)

    def register_builtins(self) -> None:
        """Register every built-in plugin that is not blocked."""
        for name, module in DEFAULT_PLUGINS.items():
            if not self.is_blocked(name) and not self.has_plugin(name):
                self.register(importlib.import_module(module), name=name)

    def load_entrypoints(self, group: str = hookspecs.NAME) -> None:
        """Import and register every plugin of entry-point ``group`` that is not blocked."""
        for dist in importlib.metadata.distributions():
            for ep in dist.entry_points:
                if ep.group != group or self.is_blocked(ep.name) or self.has_plugin(ep.name):
                    continue
                where = f"plugin {ep.name!r} (entry point {ep.value!r} of distribution {dist.metadata['name']} {dist.version})"
                try:
                    plugin = ep.load()
                except Exception as exc:
                    raise PluginLoadError(f"{where} failed to import: {type(exc).__name__}: {exc}") from exc
                try:
                    self.register(plugin, name=ep.name)
                except (ValueError, pluggy.PluginValidationError) as exc:
                    raise PluginLoadError(f"{where} could not be registered: {exc}") from exc
                self._distributions[ep.name] = Distribution(dist.metadata["name"], dist.version)

    def distribution(self, plugin_name: str) -> Distribution | None:
        """The distribution a plugin was loaded from; ``None`` for built-ins and hand-registered ones."""
        return self._distributions.get(plugin_name)

    def describe(self, plugin_name: str) -> str:
        """``plugin 'x' (distribution d 1.0)``: how errors name a plugin."""
        dist = self.distribution(plugin_name)
        if dist is not None:
            return f"plugin {plugin_name!r} (distribution {dist.name} {dist.version})"
        if plugin_name in DEFAULT_PLUGINS:
            return f"built-in plugin {plugin_name!r}"
        return f"plugin {plugin_name!r}"

    def blocked_names(self) -> list[str]:
        """Names blocked on this manager, in the order they were blocked."""
        return [name for name in self._blocked if self.is_blocked(name)]


def plugin_names(group: str = hookspecs.NAME) -> set[str]:
    """Names of the built-in plugins and of the installed entry-point plugins (none imported)."""
    return {*DEFAULT_PLUGINS, *(ep.name for ep in importlib.metadata.entry_points(group=group))}


def _names(value: str | None) -> list[str]:
    return [n.strip() for n in (value or "").split(",") if n.strip()]


def get_plugin_manager(*, autoload: bool | None = None, blocked: Iterable[str] = ()) -> ArenaPluginManager:
    """A manager with the built-ins and, unless disabled, the installed entry-point plugins.

    :param autoload: load entry-point plugins; ``None`` means "unless
        ``ARENA_DISABLE_PLUGIN_AUTOLOAD`` is set".
    :param blocked: plugin names never to load, added to those in ``ARENA_DISABLED_PLUGINS``.
    :raises PluginLoadError: naming the plugin and its distribution when one fails to load.
    """
    pm = ArenaPluginManager()
    for name in (*blocked, *_names(os.environ.get(DISABLED_PLUGINS_ENV))):
        pm.set_blocked(name)
    pm.register_builtins()
    if autoload is None:
        autoload = not os.environ.get(DISABLE_AUTOLOAD_ENV)
    if autoload:
        pm.load_entrypoints()
    pm.check_pending()
    return pm
