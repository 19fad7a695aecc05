"""Collecting the components plugins register, once, with their owners.

Each ``arena_register_*`` implementation is called separately (rather than through
``pm.hook``) so that every component is attributed to the plugin that registered it: a
clash names both plugins and their distributions, and ``arena plugins`` lists who
registered what.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any, Generic, TypeVar

from attrs import frozen

from arena_core.config.settings import ScoringConfig
from arena_core.model.errors import (
    ArenaError,
    DuplicateComponentError,
    PluginError,
    UnknownComponentError,
    ValidationError,
    closest,
)
from arena_core.model.judging import JudgeProvider
from arena_core.model.prices import PriceSource
from arena_core.model.protocols import (
    Aggregator,
    CheckExecutor,
    CriterionChecker,
    DifficultyAdjuster,
    Importer,
    IntervalMethod,
    Metric,
)
from arena_core.model.records import WeightProfile
from arena_core.registry.manager import ArenaPluginManager
from arena_core.registry.options import plugin_options
from arena_core.workspace.confined import CommandRunner

__all__ = ["Components", "Family", "FAMILIES", "collect"]

C = TypeVar("C")


@frozen
class Family(Generic[C]):
    """One kind of component: the hook that registers it and how to tell a valid one."""

    label: str
    """How messages name one component, e.g. ``metric``."""
    hook: str
    """The registration hook."""
    key: str
    """The attribute holding the component's unique name (``name``, or ``type`` for checkers)."""
    check: Callable[[Any], bool]
    """True when an object has the shape the engine calls."""


FAMILIES: dict[str, Family[Any]] = {
    "metrics": Family("metric", "arena_register_metrics", "name", lambda c: isinstance(c, Metric)),
    "checkers": Family(
        "criterion checker", "arena_register_criterion_checkers", "type", lambda c: isinstance(c, CriterionChecker)
    ),
    "weight_profiles": Family(
        "weight profile", "arena_register_weight_profiles", "name", lambda c: isinstance(c, WeightProfile)
    ),
    "difficulty_adjusters": Family(
        "difficulty adjuster",
        "arena_register_difficulty_adjusters",
        "name",
        lambda c: isinstance(c, DifficultyAdjuster),
    ),
    "interval_methods": Family(
        "interval method", "arena_register_interval_methods", "name", lambda c: isinstance(c, IntervalMethod)
    ),
    "command_runners": Family(
        "command runner", "arena_register_command_runners", "name", lambda c: isinstance(c, CommandRunner)
    ),
    "importers": Family("importer", "arena_register_importers", "name", lambda c: isinstance(c, Importer)),
    "aggregators": Family("aggregator", "arena_register_aggregators", "name", lambda c: isinstance(c, Aggregator)),
    "check_executors": Family(
        "check executor", "arena_register_check_executors", "name", lambda c: isinstance(c, CheckExecutor)
    ),
    "price_sources": Family(
        "price source", "arena_register_price_sources", "name", lambda c: isinstance(c, PriceSource)
    ),
    "judge_providers": Family(
        "judge provider", "arena_register_judges", "name", lambda c: isinstance(c, JudgeProvider)
    ),
}


class Registry(Mapping[str, C]):
    """Components of one family by name, remembering which plugin registered each."""

    def __init__(self, family: Family[C], blocked: tuple[str, ...] = ()) -> None:
        self.family = family
        self._items: dict[str, C] = {}
        self._owners: dict[str, str] = {}
        #: Name to owning plugin of the components ``disabled_components`` left out.
        self.disabled: dict[str, str] = {}
        self._blocked = blocked

    def __getitem__(self, name: str) -> C:
        try:
            return self._items[name]
        except KeyError:
            raise UnknownComponentError(self._unknown(name)) from None

    def _unknown(self, name: str) -> str:
        known = ", ".join(sorted(self._items)) or "none"
        return (
            f"no {self.family.label} named {name!r} is registered{closest(name, self._items)} "
            f"(registered: {known}){self.absence(name)}"
        )

    def absence(self, name: str) -> str:
        """Why ``name`` may be absent although installed, for error messages: ``""``, or a note
        that it was disabled or that blocked plugins were not loaded."""
        if name in self.disabled:
            return f"; {name!r} of plugin {self.disabled[name]!r} is disabled by disabled_components (or --disable)"
        if self._blocked:
            return f"; blocked plugins, which may provide it, were not loaded: {', '.join(self._blocked)}"
        return ""

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def get(self, name: str, default: Any = None) -> Any:
        return self._items.get(name, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def owner(self, name: str) -> str:
        """Name of the plugin that registered ``name``."""
        return self._owners[name]

    def add(self, component: C, plugin: str, pm: ArenaPluginManager, disabled: Collection[str] = ()) -> None:
        label = self.family.label
        if not self.family.check(component):
            raise PluginError(f"{pm.describe(plugin)} registered {component!r}, which is not a valid {label}")
        name = getattr(component, self.family.key)
        if name in disabled:
            self.disabled[name] = plugin
            return
        if name in self._items:
            raise DuplicateComponentError(
                f"{label} {name!r} is registered by both {pm.describe(self._owners[name])} and {pm.describe(plugin)}"
            )
        self._items[name] = component
        self._owners[name] = plugin


@frozen
class Components:
    """Everything the registration hooks returned, by family."""

    metrics: Registry[Metric]
    checkers: Registry[CriterionChecker]
    weight_profiles: Registry[WeightProfile]
    difficulty_adjusters: Registry[DifficultyAdjuster]
    interval_methods: Registry[IntervalMethod]
    command_runners: Registry[CommandRunner]
    importers: Registry[Importer]
    aggregators: Registry[Aggregator]
    check_executors: Registry[CheckExecutor]
    price_sources: Registry[PriceSource]
    judge_providers: Registry[JudgeProvider]

    def by_plugin(self, *, disabled: bool = False) -> dict[str, dict[str, list[str]]]:
        """Plugin name -> family -> names it registered (with ``disabled``: the names of its
        components that ``disabled_components`` left out)."""
        out: dict[str, dict[str, list[str]]] = {}
        for family in FAMILIES:
            registry: Registry[Any] = getattr(self, family)
            owners = registry.disabled if disabled else {name: registry.owner(name) for name in registry}
            for name, owner in owners.items():
                out.setdefault(owner, {}).setdefault(family, []).append(name)
        return out


def collect(pm: ArenaPluginManager, config: ScoringConfig | None = None) -> Components:
    """Call every registration hook implementation once and gather the results.

    Each implementation gets the arguments it names: ``config`` and its own plugin's
    ``options`` (see :mod:`arena_core.registry.options`). Components named in
    ``config.disabled_components`` are left out, and remembered so that asking for one says so.

    :raises DuplicateComponentError: two plugins register the same name.
    :raises PluginError: a hook raises or returns something that is not a component.
    :raises ValidationError: a plugin's options are not valid, or ``disabled_components``
        names a component nobody registered.
    """
    config = config or ScoringConfig()
    options = plugin_options(pm, config)
    disabled = frozenset(config.disabled_components)
    blocked = tuple(pm.blocked_names())
    registries: dict[str, Registry[Any]] = {}
    for family_name, family in FAMILIES.items():
        registry: Registry[Any] = Registry(family, blocked)
        for impl in getattr(pm.hook, family.hook).get_hookimpls():
            if impl.hookwrapper or impl.wrapper:
                continue
            given = {"config": config, "options": options.get(impl.plugin_name, {})}
            try:
                returned = impl.function(**{name: given[name] for name in impl.argnames})
            except ArenaError:
                raise
            except Exception as exc:
                raise PluginError(f"{pm.describe(impl.plugin_name)} failed in {family.hook}: {exc!r}") from exc
            for component in returned or ():
                registry.add(component, impl.plugin_name, pm, disabled)
        registries[family_name] = registry
    found = {name for registry in registries.values() for name in registry.disabled}
    for name in config.disabled_components:
        if name not in found:
            every = [n for registry in registries.values() for n in registry]
            raise ValidationError(
                "configuration",
                "disabled_components",
                f"names of registered components{closest(name, every)} (see `arena plugins --all`)",
                name,
            )
    return Components(**registries)
