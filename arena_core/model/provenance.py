"""What produced a score: the profile, the algorithms and the plugin versions.

Two researchers comparing scores need to know they were made the same way, and a reader of a
paper needs enough to regenerate them. An :class:`Arena` builds one :class:`Provenance` when
it is constructed and every evaluation it makes refers to that same frozen object, so
recording it costs nothing per submission.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

import attrs
from attrs import field, frozen

if TYPE_CHECKING:
    from arena_core.config.settings import ScoringConfig
    from arena_core.registry.info import PluginInfo

__all__ = ["BoardProvenance", "Provenance", "arena_core_version", "config_digest"]


def _frozen(value: Mapping[str, str] | None) -> Mapping[str, str]:
    return dict(value or {})


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


@frozen
class Provenance:
    """How a set of evaluations was produced."""

    profile: str
    """The scoring profile's name (``default`` for the base configuration)."""
    config_digest: str
    """SHA-256 (first 16 hex digits) of the full configuration as canonical JSON: two runs with
    the same digest used the same settings, key for key."""
    algorithms: Mapping[str, str] = field(converter=_frozen)
    """Slot to the registered metric that filled it (``token_efficiency`` →
    ``token_efficiency_log``), plus ``confidence_interval``, ``baseline_scope`` and ``infra_failures``."""
    plugins: Mapping[str, str] = field(converter=_frozen)
    """Loaded plugin to its version: ``arena-core X.Y.Z`` for the built-ins, the distribution
    and version for installed plugins, ``unpackaged`` for plugins registered in code."""


def arena_core_version() -> str:
    try:
        return version("arena-core")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


#: Settings added after digests were first recorded, with their defaults: they enter the digest
#: only when set otherwise, so a configuration that does not use them keeps the digest it always had.
_ADDED_LATER = {
    "disabled_components": (),
    "plugins": {},
    "leaderboard_ranks": "paired_bootstrap",
    "model_aliases": {},
    "infra_failures": "fail",
    "cost_source": "reported",
    "difficulty_source": "label",
    "price_source": "genai-prices",
    "price_tables": (),
    "price_date": "",
    "cost_tolerance": 0.05,
    "judges": {},
    "allow_self_judging": False,
}
#: Settings that say where and how fast checks run, when to raise alerts, or what models' dates
#: are (which choose runs for a window, never change a score): not in the digest, so the same
#: scoring on threads or on a cluster has one digest.
_NOT_SCORING = (
    "check_concurrency", "check_executor", "dask_scheduler", "dask_allow_unauthenticated", "drift_threshold",
    "drift_top_k", "partition_rows", "judge_cache", "models",
)  # fmt: skip


def config_digest(config: ScoringConfig) -> str:
    settings = attrs.asdict(config)
    for name in _NOT_SCORING:
        del settings[name]
    for name, default in _ADDED_LATER.items():
        if settings[name] == default:
            del settings[name]
    canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"), default=list)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def build(profile: str, config: ScoringConfig, algorithms: Mapping[str, str], plugins: list[PluginInfo]) -> Provenance:
    """The provenance of an Arena: ``algorithms`` from its scorer, ``plugins`` from ``Arena.plugins()``."""
    core = f"arena-core {arena_core_version()}"
    versions: dict[str, str] = {}
    for info in plugins:
        if info.blocked:
            continue
        if info.builtin:
            versions[info.name] = core
        elif info.distribution:
            versions[info.name] = f"{info.distribution} {info.version}"
        else:
            versions[info.name] = "unpackaged"
    return Provenance(
        profile=profile,
        config_digest=config_digest(config),
        algorithms={
            **algorithms,
            "confidence_interval": config.confidence_interval,
            "baseline_scope": config.baseline_scope,
            "infra_failures": config.infra_failures,
        },
        plugins=versions,
    )


@frozen
class BoardProvenance:
    """What a board was computed from, so a reader can recompute it and see it is the same
    (``arena verify``): the runs and tasks it read after selection (their digests, see
    :mod:`arena_core.engine.fingerprints`, and counts), the configuration, the version and the
    window, and the command that made it."""

    runs: str
    """SHA-256 of the runs read, after selection (``--where``, ``--since``, ``--task`` ...)."""
    n_runs: int
    tasks: str
    """SHA-256 of the tasks read, after selection."""
    n_tasks: int
    config_digest: str
    """:func:`config_digest` of the configuration scored with."""
    profile: str
    arena_core: str
    """The version of arena-core that computed the board."""
    window: Mapping[str, str] = field(converter=_frozen)
    """``since``, ``until`` and ``window`` (``after-cutoff`` or ``after-release``) as given; empty: every task."""
    command: tuple[str, ...] = field(converter=_strings)
    """The command and its options, without the inputs: ``arena verify`` runs it again on the inputs it is given."""
