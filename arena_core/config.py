"""Which components score what: the engine's configuration.

With no configuration the engine reproduces the spec: each dimension is scored by the
metric of the same name, a task's category names its weight profile and its difficulty its
adjuster.
"""

from __future__ import annotations

from collections.abc import Mapping

from attrs import field, frozen

__all__ = ["ScoringConfig"]


def _mapping(value: Mapping[str, str] | None) -> Mapping[str, str]:
    return {} if value is None else dict(value)


def _names(value: object) -> tuple[str, ...]:
    return tuple(value) if value else ()  # type: ignore[call-overload]


@frozen
class ScoringConfig:
    """Selections by registered name; every name is checked when an Arena is built."""

    metrics: Mapping[str, str] = field(factory=dict, converter=_mapping)
    """Slot to metric name, e.g. ``{"token_efficiency": "token_efficiency_log"}``. A slot is a
    dimension (``efficiency``) or a part of a composite; unlisted slots use the metric of their name."""
    category_profiles: Mapping[str, str] = field(factory=dict, converter=_mapping)
    """Task category to weight profile name, e.g. ``{"code_editing": "default"}``."""
    difficulty_adjusters: Mapping[str, str] = field(factory=dict, converter=_mapping)
    """Task difficulty to difficulty adjuster name."""
    disabled_plugins: tuple[str, ...] = field(default=(), converter=_names)
    """Plugins never to load, by registered name (built-in or entry point)."""
